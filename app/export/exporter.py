"""``export_session``: one session of a store to a file, in Markdown, HTML, JSONL or a support bundle.

Every export is a transaction (``app.export.atomic``): the target is either the previous file or the
complete new one.  Documents are streamed: the log is read once by the engine (its events stay
packed) and each transcript entry is encoded into the temporary file as it is reached, so a
200k-event session exports in a few seconds and well under 300 MB (``benchmarks/bench_export.py``).
An export only reads the session (``view``/``read_raw``); it never writes it, and it refuses a
target inside a JSONL root (a stray file there would be listed as a session problem) or one of a
SQLite store's own files.

It never clobbers: the target must be absent or a regular file, and an existing file is replaced
only when the caller says so (``force``: the command line's ``--force``, the window's confirmation).
A symbolic link at the target is refused, not followed and not replaced, even with ``force``: writing
through it would change a file the user never named, and replacing it would silently turn their link
into a file; refusing is the one choice that surprises nobody (export to the link's target instead).
FIFOs, sockets, devices and folders are refused too.  What appears at the target while the document
is encoded is not replaced either (``app.export.atomic``).  Every refusal is an ``ExportTargetError``.

May import: the standard library, ``app.export``'s own modules, ``app.insight.stats``,
``app.search.location``, ``app.redact`` and the public ``persistence``.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import BinaryIO, cast

from app.export.atomic import TargetTaken, atomic_output, describe
from app.export.bundle import write_bundle
from app.export.document import DocumentInfo, app_version
from app.export.html_page import write_html
from app.export.markdown import write_markdown
from app.export.raw import readable_view, write_jsonl
from app.export.transcript import transcript
from app.insight.stats import fold_stats
from app.redact import RedactionReport, Redactor
from app.search.location import inside_root
from persistence import CoordinatedPersistence, SessionArgumentError, store_files

FORMATS = ("md", "html", "jsonl", "bundle")
EXTENSIONS = {"md": ".md", "html": ".html", "jsonl": ".jsonl", "bundle": ".zip"}


class ExportTargetError(SessionArgumentError):
    """A target an export may not write (the engine's argument error; exit code 2 on the command line)."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class ExportResult:
    session_id: str
    fmt: str
    path: str
    bytes: int
    events: int  # events read (0 for a bundle of a log the engine refuses)
    redaction: RedactionReport | None = None  # what a redacted bundle replaced

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.session_id,
            "format": self.fmt,
            "path": self.path,
            "bytes": self.bytes,
            "events": self.events,
        }
        if self.redaction is not None:
            out["redaction"] = self.redaction.to_json()
        return out


def _refusal(out_path: str, target: str, what: str) -> ExportTargetError:
    if what == "a folder":
        return ExportTargetError(f"cannot export to {out_path}: it is a folder")
    if what == "a symbolic link":
        try:
            to = f" to {os.readlink(target)}"
        except OSError:
            to = ""
        return ExportTargetError(
            f"cannot export to {out_path}: it is a symbolic link{to}; an export never writes through or replaces a "
            "link (export to the file it points to, or to another name)"
        )
    return ExportTargetError(f"cannot export to {out_path}: it is {what}, not a regular file; an export replaces only a file")


def check_target(store: CoordinatedPersistence, out_path: str, *, force: bool = False) -> str:
    """The absolute target path, or ``ExportTargetError`` when it cannot be written as an export
    (an existing regular file only with ``force``; see the module docstring)."""
    target = os.path.abspath(out_path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise ExportTargetError(f"cannot export to {out_path}: the folder {folder} does not exist")
    what = describe(target)
    if what is not None:
        raise _refusal(out_path, target, what)
    if store.kind == "jsonl" and inside_root(target, store.root_path, store.kind):
        raise ExportTargetError(f"cannot export to {out_path}: it is inside the session root {store.root_path}")
    if store.kind != "jsonl" and os.path.realpath(target) in store_files(store.kind, os.path.realpath(store.root_path)):
        raise ExportTargetError(f"cannot export to {out_path}: it is the session store itself")
    if not force and os.path.lexists(target):
        raise ExportTargetError(f"cannot export to {out_path}: the file exists (pass --force to replace it)")
    return target


def suggested_name(session_id: str, fmt: str) -> str:
    """A file name for an export dialog: the id with path-unsafe characters replaced, plus the extension."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id).strip(".") or "session"
    return f"{safe[:120]}{EXTENSIONS.get(fmt, '')}"


async def export_session(
    store: CoordinatedPersistence,
    session_id: str,
    fmt: str,
    out_path: str,
    *,
    force: bool = False,
    redactor: Redactor | None = None,
) -> ExportResult:
    """Export ``session_id`` of ``store`` as ``fmt`` (md | html | jsonl | bundle) to ``out_path``, atomically;
    an existing regular file there is replaced only with ``force`` (anything else never).  ``redactor``
    (bundles only) replaces secrets; the result's ``redaction`` says what it replaced."""
    if fmt not in FORMATS:
        raise SessionArgumentError(f"unknown export format {fmt!r} (choose one of {', '.join(FORMATS)})")
    if redactor is not None and fmt != "bundle":
        raise ExportTargetError(f"redaction applies to support bundles only (--format bundle), not to {fmt}")
    target = check_target(store, out_path, force=force)
    try:
        return await _export(store, session_id, fmt, target, force, redactor)
    except TargetTaken:
        what = describe(target)
        if what is not None:
            raise _refusal(out_path, target, what) from None
        raise ExportTargetError(
            f"cannot export to {out_path}: a file appeared there while exporting; it was left as it is "
            "(pass --force to replace it)"
        ) from None


async def _export(
    store: CoordinatedPersistence, session_id: str, fmt: str, target: str, force: bool, redactor: Redactor | None
) -> ExportResult:
    version = app_version()
    events = 0
    if fmt in ("md", "html"):
        view = await readable_view(store, session_id)
        header = view.header.to_json() if view.header is not None else {}
        seed = header.get("seedLength")
        stats = fold_stats(view.stored, seed_length=seed if type(seed) is int else None)
        info = DocumentInfo(session_id, header, view.status, view.reason, stats, version)
        write = write_markdown if fmt == "md" else write_html
        with atomic_output(target, replace=force) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=False)
            try:
                write(text, info, transcript(view.stored))
                text.flush()
            finally:
                text.detach()  # the binary file is atomic_output's to close
        events = stats.events
    elif fmt == "jsonl":
        with atomic_output(target, replace=force) as raw:
            await write_jsonl(store, session_id, raw)
    else:
        with atomic_output(target, replace=force) as raw:
            events = await write_bundle(store, session_id, raw, version=version, redactor=redactor)
    report = redactor.report() if redactor is not None else None
    return ExportResult(session_id, fmt, target, os.lstat(target).st_size, events, report)


class _Discard:
    """A byte sink that keeps nothing (not seekable: the ZIP writer then streams)."""

    def write(self, data: bytes, /) -> int:
        return len(data)

    def flush(self) -> None:
        pass


async def preview_redaction(store: CoordinatedPersistence, session_id: str, *, home: str | None = None) -> RedactionReport:
    """What a redacted bundle of ``session_id`` would replace, writing nothing: the bundle is built the very
    same way into a sink that keeps nothing, so a preview's counts are the export's counts."""
    redactor = Redactor(home=home)
    await write_bundle(store, session_id, cast(BinaryIO, _Discard()), version=app_version(), redactor=redactor)
    return redactor.report()


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "ExportResult",
    "ExportTargetError",
    "check_target",
    "export_session",
    "preview_redaction",
    "suggested_name",
]

"""``export_session``: one session of a store to a file, in Markdown, HTML, JSONL or a support bundle.

Every export is a transaction (``app.export.atomic``): the target is either the previous file or the
complete new one.  Documents are streamed: the log is read once by the engine (its events stay
packed) and each transcript entry is encoded into the temporary file as it is reached, so a
200k-event session exports in a few seconds and well under 300 MB (``benchmarks/bench_export.py``).
An export only reads the session (``view``/``read_raw``); it never writes it, and it refuses a
target inside a JSONL root (a stray file there would be listed as a session problem) or one of a
SQLite store's own files.

May import: the standard library, ``app.export``'s own modules, ``app.insight.stats``,
``app.search.location`` and the public ``persistence``.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from app.export.atomic import atomic_output
from app.export.bundle import write_bundle
from app.export.document import DocumentInfo, app_version
from app.export.html_page import write_html
from app.export.markdown import write_markdown
from app.export.raw import readable_view, write_jsonl
from app.export.transcript import transcript
from app.insight.stats import fold_stats
from app.search.location import inside_root
from persistence import CoordinatedPersistence, SessionArgumentError

FORMATS = ("md", "html", "jsonl", "bundle")
EXTENSIONS = {"md": ".md", "html": ".html", "jsonl": ".jsonl", "bundle": ".zip"}


@dataclass(frozen=True, slots=True)
class ExportResult:
    session_id: str
    fmt: str
    path: str
    bytes: int
    events: int  # events read (0 for a bundle of a log the engine refuses)

    def to_json(self) -> dict[str, object]:
        return {"id": self.session_id, "format": self.fmt, "path": self.path, "bytes": self.bytes, "events": self.events}


def check_target(store: CoordinatedPersistence, out_path: str) -> str:
    """The absolute target path, or ``SessionArgumentError`` when it cannot be written as an export."""
    target = os.path.abspath(out_path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise SessionArgumentError(f"cannot export to {out_path}: the folder {folder} does not exist")
    if os.path.isdir(target):
        raise SessionArgumentError(f"cannot export to {out_path}: it is a folder")
    if store.kind == "jsonl" and inside_root(target, store.root_path, store.kind):
        raise SessionArgumentError(f"cannot export to {out_path}: it is inside the session root {store.root_path}")
    if store.kind == "sqlite":
        real, db = os.path.realpath(target), os.path.realpath(store.root_path)
        if real == db or (real.startswith(db) and real[len(db) :] in ("-wal", "-shm", "-journal")):
            raise SessionArgumentError(f"cannot export to {out_path}: it is the session store itself")
    return target


def suggested_name(session_id: str, fmt: str) -> str:
    """A file name for an export dialog: the id with path-unsafe characters replaced, plus the extension."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id).strip(".") or "session"
    return f"{safe[:120]}{EXTENSIONS.get(fmt, '')}"


async def export_session(store: CoordinatedPersistence, session_id: str, fmt: str, out_path: str) -> ExportResult:
    """Export ``session_id`` of ``store`` as ``fmt`` (md | html | jsonl | bundle) to ``out_path``, atomically."""
    if fmt not in FORMATS:
        raise SessionArgumentError(f"unknown export format {fmt!r} (choose one of {', '.join(FORMATS)})")
    target = check_target(store, out_path)
    version = app_version()
    events = 0
    if fmt in ("md", "html"):
        view = await readable_view(store, session_id)
        header = view.header.to_json() if view.header is not None else {}
        seed = header.get("seedLength")
        stats = fold_stats(view.stored, seed_length=seed if type(seed) is int else None)
        info = DocumentInfo(session_id, header, view.status, view.reason, stats, version)
        write = write_markdown if fmt == "md" else write_html
        with atomic_output(target) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=False)
            try:
                write(text, info, transcript(view.stored))
                text.flush()
            finally:
                text.detach()  # the binary file is atomic_output's to close
        events = stats.events
    elif fmt == "jsonl":
        with atomic_output(target) as raw:
            await write_jsonl(store, session_id, raw)
    else:
        with atomic_output(target) as raw:
            events = await write_bundle(store, session_id, raw, version=version)
    return ExportResult(session_id, fmt, target, os.path.getsize(target), events)


__all__ = ["EXTENSIONS", "FORMATS", "ExportResult", "check_target", "export_session", "suggested_name"]

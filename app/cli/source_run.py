"""A verb over a source (issue 23): whatever path the user names — a JSONL root, a SQLite store, a lone
transcript, a support bundle or a case folder — as the store(s) the verb's handler runs on.

- The session id is optional when the source holds exactly one session (``inspect customer.txt``);
  with two and none named, a typed usage error lists the ids (``AmbiguousSessionError``).
- A received file (transcript, bundle, case folder) is read-only: a verb that would write (``load``,
  ``repair`` without ``--dry-run``, ``restore``, ``fork``, ``resume``) is refused before anything is
  opened (``SessionReadOnlyError``); the engine refuses such writes again on its own.
- A verb without an id (``list``, ``verify``, ``search``) runs on every part of a case folder; the
  output is each part's under its label (``--json``: ``{"source", "kind", "parts": [...]}``).
- A bundle's manifest check is part of ``verify``'s verdict: a file whose SHA-256 does not match the
  manifest is named and the exit code is 1.  Other verbs say so on stderr.
- ``snapshots`` on a received source is lenient like ``list``: a session that cannot be listed is a row
  with its reason (``id\t(corrupt: ...)``; ``--json``: ``{"id", "status", "reason", "path"}``) and the exit
  code is 1, where the engine's ``list_snapshots`` (upstream's skipping ``listSnapshots``) would drop it
  without a word: a damaged transcript is what a support engineer was sent to look at.  On the user's
  own root or store it stays upstream's strict listing, the parity verb scripts compare revisions with.
- The user's own root or store (and any ``--backend``) opens exactly as before this module.

May import ``app.sources``, the other ``app.cli`` modules and the engine; never Qt.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from app.cli.list_rows import ListReport, list_rows, report_json
from app.cli.output import dump, error_payload, write_out
from app.cli.verbs import Verb
from app.sources import (
    OpenedSource,
    SourceKind,
    SourcePart,
    close_source,
    open_part_store,
    open_source,
    resolve_session,
)
from app.sources.model import check_words
from persistence import CoordinatedPersistence, SessionPersistenceError, SessionReadOnlyError, SessionUnreadableError, open_store

Output = str | Callable[[TextIO], None]
OWN_KINDS = (SourceKind.JSONL_ROOT, SourceKind.SQLITE_STORE)
# Verbs whose handler opens its sources itself from ``args`` (``diff PATH_A PATH_B``): run once, never per part.
SELF_OPENING = frozenset({"diff"})
Opener = Callable[..., CoordinatedPersistence]  # ``persistence.open_store``'s signature


async def _lenient_snapshots(store: CoordinatedPersistence, _args: argparse.Namespace) -> ListReport:
    return await list_rows(store)


def _snapshots_json(report: ListReport) -> list[dict[str, Any]]:
    return [
        {"header": r.header.to_json(), "revision": r.revision} if r.header is not None else row
        for r, row in zip(report.rows, report_json(report), strict=True)
    ]


def _snapshots_text(report: ListReport, _args: argparse.Namespace) -> str:
    lines = [
        f"{r.header.id}\t{r.revision}" if r.header is not None else f"{r.session_id}\t({r.status}: {r.reason})"
        for r in report.rows
    ]
    return "\n".join(lines) or "(no sessions)"


def _received_verb(verb: Verb) -> Verb:
    """The verb as it runs on a received source: ``snapshots`` lenient like ``list`` (see the docstring)."""
    if verb.name != "snapshots":
        return verb
    return dataclasses.replace(
        verb, handler=_lenient_snapshots, text=_snapshots_text, json=_snapshots_json, succeeded=lambda report: report.ok
    )


def _writes(verb: Verb, args: argparse.Namespace) -> bool:
    return not verb.opens_read_only(args)


def _own(src: OpenedSource) -> bool:
    """The user's own root or store (not a received file): opened exactly the old way."""
    return src.kind in OWN_KINDS and len(src.parts) == 1


def _open_part(
    part: SourcePart, verb: Verb, args: argparse.Namespace, src: OpenedSource, opener: Opener
) -> CoordinatedPersistence:
    if _own(src):
        # ``--backend`` honoured, read-only as the verb's table row says.
        return opener(args.root, args.backend, read_only=verb.opens_read_only(args), create=False)
    return open_part_store(part)


async def _one(verb: Verb, args: argparse.Namespace, store: CoordinatedPersistence) -> tuple[Any, int]:
    try:
        value = await verb.handler(store, args)
    finally:
        await store.close()
    return value, 0 if verb.succeeded is None or verb.succeeded(value) else 1


@dataclass(frozen=True, slots=True)
class PartFailure:
    """A part of a case folder the verb could not run on (a damaged store): printed as its typed error."""

    error: BaseException


async def _one_part(
    verb: Verb, args: argparse.Namespace, part: SourcePart, src: OpenedSource, opener: Opener, lenient: bool
) -> tuple[Any, int]:
    try:
        return await _one(verb, args, _open_part(part, verb, args, src, opener))
    except (SessionPersistenceError, OSError) as err:
        if not lenient:
            raise
        return PartFailure(err), 1


def _render(verb: Verb, args: argparse.Namespace, value: Any) -> Output:
    # Render fully before printing: a failure here still leaves stdout clean for the error.
    if isinstance(value, PartFailure):
        payload = error_payload(value.error)["error"]
        return dump({"error": payload}) + "\n" if args.json else f"error: {payload['class']}: {payload['message']}\n"
    if args.json:
        return dump(verb.json(value)) + "\n"
    if verb.stream is not None:
        return partial(verb.stream, value)  # the value is complete and checked: only writing is left
    text = verb.text(value, args)
    return text if text.endswith("\n") else text + "\n"


def _bundle_checks(src: OpenedSource) -> list[tuple[str, Any]]:
    """(label, check) of every bundle in the source, once each."""
    seen: dict[str, Any] = {}
    for part in src.parts:
        if part.check is not None:
            seen.setdefault(str(part.origin), part.check)
    if src.bundle_check is not None:
        seen.setdefault(str(src.path), src.bundle_check)
    return [(Path(origin).name, check) for origin, check in seen.items()]


def _check_ok(check: Any) -> bool:
    return bool(getattr(check, "ok", False))


def _check_json(name: str, check: Any) -> dict[str, Any]:
    problems = getattr(check, "problems", None)
    return {
        "bundle": name,
        "ok": _check_ok(check),
        "summary": check_words(check),
        "problems": list(problems()) if callable(problems) else [],
        "senderVerdict": getattr(check, "sender_says", None),
    }


def _check_text(name: str, check: Any) -> str:
    lines = [f"bundle {name}: {check_words(check)}"]
    problems = getattr(check, "problems", None)
    lines += [f"  {p}" for p in (problems() if callable(problems) else [])]
    sender = getattr(check, "sender_says", None)
    if sender is not None:
        lines.append(f"  the sender's verify said: {sender}")
    return "\n".join(lines) + "\n"


async def run_on_source(verb: Verb, args: argparse.Namespace, opener: Opener = open_store) -> tuple[Output, int]:
    """(what to print, exit code) of ``verb`` on the source ``args.root`` names; ``opener`` opens the
    user's own root or store (``open_store``)."""
    if args.backend is not None:
        # An explicit backend names the user's own store: no sniffing, the old behaviour exactly.
        store = opener(args.root, args.backend, read_only=verb.opens_read_only(args), create=False)
        value, code = await _one(verb, args, store)
        return _render(verb, args, value), code
    src = open_source(Path(args.root))
    try:
        output, code = await _run_opened(verb, args, src, opener)
    except SessionPersistenceError as err:
        _name_ours(src, err)  # the error names the received file, never our extraction of it
        raise
    if isinstance(output, str):
        output = src.shown(output)
    return output, code


def _name_ours(src: OpenedSource, err: SessionPersistenceError) -> None:
    shown = src.shown(err.message)
    if shown != err.message:
        err.message = shown
        err.args = (shown, *err.args[1:])
    if err.location:
        err.location = {k: src.shown(v) if isinstance(v, str) else v for k, v in err.location.items()}


async def _run_opened(verb: Verb, args: argparse.Namespace, src: OpenedSource, opener: Opener) -> tuple[Output, int]:
    scratch: str | None = None
    try:
        if src.read_only and _writes(verb, args):
            raise SessionReadOnlyError(
                f"{src.label()} is a received file, opened read-only; {verb.name} would write into it "
                "(export or copy the session first, and work on the copy)"
            )
        # A received source keeps no diagnosis cache either (``verify``/``list`` read it each time).
        args.received_source = src.kind not in OWN_KINDS
        if args.received_source:
            verb = _received_verb(verb)
        if verb.name == "search" and src.kind not in OWN_KINDS:
            # An index of a received source would pile up in the cache folder (a bundle's extraction has
            # a new path each time): this run's index lives in a scratch folder removed afterwards.
            scratch = tempfile.mkdtemp(prefix="sessionscope-search-")
            args.search_cache_dir = scratch
        checks = _bundle_checks(src)
        try:
            if verb.needs_id and _own(src) and args.id is not None:
                parts = list(src.parts)  # the store itself says whether it holds the id, as ever
            elif verb.needs_id:
                part, args.id = await resolve_session(src, getattr(args, "id", None))
                parts = [part]
            else:
                parts = list(src.parts)[:1] if verb.name in SELF_OPENING else list(src.parts)
            # Several parts (a case folder): one that cannot be read is its own error, the others still run.
            lenient = len(parts) > 1
            results = [(part, *await _one_part(verb, args, part, src, opener, lenient)) for part in parts]
        except SessionPersistenceError as err:
            # Tampering often leaves a bundle's session unreadable: then the mismatch is the news, so it leads.
            tampered = [f"{n}: {p}" for n, c in checks if not _check_ok(c) for p in getattr(c, "problems", tuple)()]
            if not tampered:
                raise
            raise SessionUnreadableError(f"{'; '.join(tampered)}; so its session cannot be read: {err}") from err
    finally:
        close_source(src)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    code = max((c for _p, _v, c in results), default=0)
    if verb.name == "verify" and any(not _check_ok(c) for _n, c in checks):
        code = max(code, 1)
    elif not args.json:
        for name, check in checks:
            if not _check_ok(check):
                write_out(sys.stderr, f"sessionscope: warning: {_check_text(name, check)}")
    return _combine(verb, args, src, results, checks), code


def _part_json(verb: Verb, part: SourcePart, value: Any) -> dict[str, Any]:
    if isinstance(value, PartFailure):
        return {"part": part.label, "error": error_payload(value.error)["error"]}
    return {"part": part.label, "result": verb.json(value)}


def _combine(
    verb: Verb,
    args: argparse.Namespace,
    src: OpenedSource,
    results: list[tuple[SourcePart, Any, int]],
    checks: list[tuple[str, Any]],
) -> Output:
    with_checks = verb.name == "verify" and bool(checks)
    single = src.kind is not SourceKind.CASE_FOLDER or verb.needs_id or verb.name in SELF_OPENING
    if len(results) == 1 and not with_checks and single:
        return _render(verb, args, results[0][1])
    if args.json:
        doc: dict[str, Any] = {"source": str(src.path), "kind": str(src.kind), "label": src.label()}
        if with_checks:
            doc["bundles"] = [_check_json(n, c) for n, c in checks]
        if len(results) == 1 and src.kind is not SourceKind.CASE_FOLDER:
            doc["result"] = verb.json(results[0][1])
        else:
            doc["parts"] = [_part_json(verb, p, v) for p, v, _c in results]
        return dump(doc) + "\n"
    outputs = [(p, _render(verb, args, v)) for p, v, _c in results]
    heads = len(outputs) > 1 or src.kind is SourceKind.CASE_FOLDER
    prefix = "".join(_check_text(n, c) for n, c in checks) if with_checks else ""

    def write(stream: TextIO) -> None:
        if prefix:
            write_out(stream, prefix)
        for part, out in outputs:
            if heads:
                write_out(stream, f"== {part.label}\n")
            if isinstance(out, str):
                write_out(stream, out)
            else:
                out(stream)

    if all(isinstance(o, str) for _p, o in outputs):
        return prefix + "".join((f"== {p.label}\n" if heads else "") + str(o) for p, o in outputs)
    return write


__all__ = ["run_on_source"]

"""``sessionscope export ROOT ID --format md|html|jsonl|bundle -o FILE``: what the verb does and prints.

Two shapes of one action, so the command line's verb table needs one row and nothing else:
``handle`` / ``result_text`` / ``result_json`` (a verb handler over an open store, and its two
renderers), and ``run_export`` for a caller without a store (tests, scripts): it opens the root
read-only, exports, and returns (text, exit code) with failures in the command line's typed shape.

May import: the standard library, ``app.export``'s own modules and the public ``persistence``.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from app.export.exporter import FORMATS, ExportResult, ExportTargetError, export_session
from persistence import CoordinatedPersistence, js_dumps_str, open_store, upstream_class_of


async def handle(store: CoordinatedPersistence, args: argparse.Namespace) -> ExportResult:
    """The verb handler: ``args.id``, ``args.format``, ``args.output`` and ``args.force``."""
    return await export_session(store, args.id, args.format, args.output, force=bool(getattr(args, "force", False)))


def result_text(result: ExportResult, _args: argparse.Namespace | None = None) -> str:
    return f"exported {result.fmt} of session {result.session_id} to {result.path} ({result.bytes:,} bytes)"


def result_json(result: ExportResult) -> Any:
    return result.to_json()


async def _export(root: str, session_id: str, fmt: str, out: str, backend: str | None, force: bool) -> ExportResult:
    # Read-only and never created: an export must not change, or make, a store.
    store = open_store(root, backend, read_only=True, create=False)
    try:
        return await export_session(store, session_id, fmt, out, force=force)
    finally:
        await store.close()


def run_export(
    root: str,
    session_id: str,
    fmt: str,
    out: str,
    *,
    backend: str | None = None,
    json_output: bool = False,
    force: bool = False,
) -> tuple[str, int]:
    """(what to print, exit code) of one export; a failure is ``sessionscope: <class>: <message>`` (or the
    ``{"error": {"class", "message"}}`` JSON with ``json_output``) and exit code 1 (2: a refused target)."""
    try:
        result = asyncio.run(_export(root, session_id, fmt, out, backend, force))
    except Exception as err:  # every failure in the typed form, never a traceback
        cls, message = upstream_class_of(err), str(err) or type(err).__name__
        code = 2 if isinstance(err, ExportTargetError) else 1
        if json_output:
            return js_dumps_str({"error": {"class": cls, "message": message}}) + "\n", code
        return f"sessionscope: {cls}: {message}\n", code
    if json_output:
        return js_dumps_str(result_json(result)) + "\n", 0
    return result_text(result) + "\n", 0


__all__ = ["FORMATS", "handle", "result_json", "result_text", "run_export"]

"""``sessionscope export ROOT ID --format FMT -o FILE [--redact] [--redact-home]``: what the verb does and prints.

Two shapes of one action, so the command line's verb table needs one row and nothing else:
``handle`` / ``result_text`` / ``result_json`` (a verb handler over an open store, and its two
renderers), and ``run_export`` for a caller without a store (tests, scripts): it opens the root
read-only, exports, and returns (text, exit code) with failures in the command line's typed shape.

May import: the standard library, ``app.export``'s own modules, ``app.redact`` and the public ``persistence``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from app.export.exporter import FORMATS, ExportResult, ExportTargetError, export_session
from app.redact import Redactor
from persistence import CoordinatedPersistence, error_fields, js_dumps_str, open_store


def redactor_for(redact: bool, redact_home: bool) -> Redactor | None:
    """The redactor ``--redact`` / ``--redact-home`` ask for (``--redact-home`` implies ``--redact``): the
    home folder is this user's (``$HOME``), the one a bundle made here would name."""
    if not (redact or redact_home):
        return None
    return Redactor(home=os.path.expanduser("~") if redact_home else None)


async def handle(store: CoordinatedPersistence, args: argparse.Namespace) -> ExportResult:
    """The verb handler: ``args.id``, ``args.format``, ``args.output``, ``args.force``, ``args.redact``, ``args.redact_home``."""
    redactor = redactor_for(bool(getattr(args, "redact", False)), bool(getattr(args, "redact_home", False)))
    return await export_session(
        store, args.id, args.format, args.output, force=bool(getattr(args, "force", False)), redactor=redactor
    )


def result_text(result: ExportResult, _args: argparse.Namespace | None = None) -> str:
    text = f"exported {result.fmt} of session {result.session_id} to {result.path} ({result.bytes:,} bytes)"
    if result.redaction is not None:
        text += f"\nredacted: {result.redaction.summary()}"
    return text


def result_json(result: ExportResult) -> Any:
    return result.to_json()


async def _export(
    root: str, session_id: str, fmt: str, out: str, backend: str | None, force: bool, redactor: Redactor | None
) -> ExportResult:
    # Read-only and never created: an export must not change, or make, a store.
    store = open_store(root, backend, read_only=True, create=False)
    try:
        return await export_session(store, session_id, fmt, out, force=force, redactor=redactor)
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
    redact: bool = False,
    redact_home: bool = False,
) -> tuple[str, int]:
    """(what to print, exit code) of one export; a failure is ``sessionscope: <class>: <message>`` (or the
    ``{"error": {"class", "message"}}`` JSON with ``json_output``) and exit code 1 (2: a refused target)."""
    try:
        result = asyncio.run(_export(root, session_id, fmt, out, backend, force, redactor_for(redact, redact_home)))
    except Exception as err:  # every failure in the typed form, never a traceback
        fields = error_fields(err)
        code = 2 if isinstance(err, ExportTargetError) else 1
        if json_output:
            return js_dumps_str({"error": fields}) + "\n", code
        return f"sessionscope: {fields['class']}: {fields['message']}\n", code
    if json_output:
        return js_dumps_str(result_json(result)) + "\n", 0
    return result_text(result) + "\n", 0


__all__ = ["FORMATS", "handle", "redactor_for", "result_json", "result_text", "run_export"]

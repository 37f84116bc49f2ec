"""Export: one session to a file a person can read or hand on (Markdown, HTML, JSONL, support bundle).

- ``exporter``   ``export_session(store, id, fmt, out)``: the one entry point (atomic, streaming, read-only)
- ``transcript`` the session as a stream of readable entries (both documents render it)
- ``markdown``, ``html_page``  the two documents; ``document`` their shared facts and text rules
- ``raw``        the JSONL export (``sessionscope raw``'s bytes); ``bundle`` the support ZIP
- ``atomic``     temporary file, fsync, atomic publish (never over what may not be replaced), cleanup on every failure
- ``command``    the ``sessionscope export`` verb's handler and renderers, and ``run_export``

Import rule: the standard library, ``app.insight``, ``app.records``, ``app.search.location``, ``app.redact``
and the public ``persistence`` package; never Qt, the window, the actions or the command line.
"""

from __future__ import annotations

from app.export.atomic import atomic_output
from app.export.command import run_export
from app.export.exporter import (
    EXTENSIONS,
    FORMATS,
    ExportResult,
    ExportTargetError,
    check_target,
    export_session,
    preview_redaction,
    suggested_name,
)

__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "ExportResult",
    "ExportTargetError",
    "atomic_output",
    "check_target",
    "export_session",
    "preview_redaction",
    "run_export",
    "suggested_name",
]

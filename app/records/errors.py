"""What a failed tool says: the line of its output that explains the failure, not only its code.

Why: a failed tool's row read "error EXIT_NONZERO" and its result's first line "F [100%]"; the cause
("AssertionError: assert None == []") sat several lines down.  The timeline's Info cell, the
Conversation tab and the command line all show the same explaining line, chosen here.  Stdlib only.
"""

from __future__ import annotations

import re
from typing import Any

ERROR_LINE_LIMIT = 160  # characters of the explaining line
SCAN_LINES = 400  # lines of output searched for it (a 200 KB result is not split whole)

# Lines that name the failure, best first: an exception ("E   AssertionError: …", "ValueError: bad"),
# then a tool's own "error: …" / "fatal: …" / "panic: …", then a summary ("FAILED tests/x.py::t - …").
_TELLING = (
    re.compile(r"^\s*(?:E\s+)?[\w.]*(?:Error|Exception|Failure)\b:"),
    re.compile(r"^\s*(?:error(?:\[\w+\])?|fatal|panic|ERROR|Error)\b:", re.IGNORECASE),
    re.compile(r"^\s*(?:FAILED|FAIL|failed)\b"),
)


def error_line(text: Any, error: Any = None, limit: int = ERROR_LINE_LIMIT) -> str:
    """The line that explains a failure: the error's own ``message`` when it has one, else the last
    telling line of the output's head ("AssertionError: …" beats "Traceback …" and "F [100%]"), else
    its first non-blank line; "" when there is nothing to say."""
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str) and message.strip():
        return _cut(message.strip().splitlines()[0], limit)
    if not isinstance(text, str) or not text.strip():
        return ""
    lines = text[: SCAN_LINES * 200].splitlines()[:SCAN_LINES]
    for pattern in _TELLING:
        telling = [ln for ln in lines if pattern.match(ln)]
        if telling:  # the last one: a traceback ends with the exception that was raised
            line = telling[-1].strip()
            return _cut(line[1:] if line.startswith("E ") else line, limit)
    return _cut(next(ln.strip() for ln in lines if ln.strip()), limit)


def _cut(line: str, limit: int) -> str:
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


__all__ = ["ERROR_LINE_LIMIT", "error_line"]

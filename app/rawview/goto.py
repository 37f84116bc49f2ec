"""Go to a line, an event seq or a file byte in the raw text: what the user typed, and the line it means.

Why Qt-free: the Raw tab's go-to bar only reads a kind and a text; parsing ("2,465", "0x9a1",
"seq 40", "@2465") and resolving (a byte inside a zstd frame goes to the frame's first line; a seq
no line carries says so) are plain functions of ``RawText`` that tests call directly.

May import: the standard library and ``app.rawview.raw_text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.rawview.raw_text import RawText

LINE, SEQ, BYTE = "line", "seq", "byte"
KINDS = (LINE, SEQ, BYTE)
_PREFIXES = {"line": LINE, "l": LINE, "seq": SEQ, "s": SEQ, "#": SEQ, "byte": BYTE, "b": BYTE, "@": BYTE, "offset": BYTE}
_TARGET = re.compile(r"\s*(?:(line|seq|byte|offset|l|s|b|#|@)\s*[:=]?\s*)?(0x[0-9a-f]+|[0-9][0-9,_ ]*)\s*\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class GoTarget:
    kind: str  # LINE (counted from 1, as shown), SEQ or BYTE (a file offset)
    value: int


@dataclass(frozen=True, slots=True)
class GoResult:
    """The line to select (-1: none) and a note saying why not, or what was found instead."""

    line: int
    note: str = ""


def parse_target(text: str, default_kind: str = LINE) -> GoTarget | None:
    """What ``text`` asks for: ``123`` (of ``default_kind``), ``line 12``, ``seq 40`` / ``#40``, ``byte 2,465`` /
    ``@2465`` / ``0x9a1`` (a hex number is a byte offset); None when it is none of these."""
    m = _TARGET.match(text)
    if m is None:
        return None
    prefix, number = m.group(1), m.group(2).lower()
    if number.startswith("0x"):
        kind = BYTE if prefix is None else _PREFIXES[prefix.lower()]
        return GoTarget(kind, int(number, 16))
    digits = re.sub(r"[,_ ]", "", number)
    kind = default_kind if prefix is None else _PREFIXES[prefix.lower()]
    return GoTarget(kind, int(digits))


def resolve(text: RawText, target: GoTarget) -> GoResult:
    """The line ``target`` names in ``text``."""
    n = len(text)
    if n == 0:
        return GoResult(-1, "nothing is shown")
    if target.kind == LINE:
        if 1 <= target.value <= n:
            return GoResult(target.value - 1)
        return GoResult(-1, f"line {target.value:,} is not there (lines 1–{n:,})")
    if target.kind == SEQ:
        line = text.line_for_seq(target.value)
        return GoResult(line) if line >= 0 else GoResult(-1, f"no line holds event seq {target.value:,}")
    if text.source == "rows" or text.rows.count:
        return GoResult(-1, "a SQLite session has no file bytes: go to a line or a seq")
    line = text.line_at_byte(target.value)
    if line < 0:
        return GoResult(-1, f"byte {target.value:,} is before the first line")
    frame = text.frame_of(line)
    if frame > 0:
        return GoResult(line, f"byte {target.value:,} is in frame {frame:,} (at byte {text.file_offset(line):,})")
    start = text.file_offset(line)
    if start != target.value:
        return GoResult(line, f"byte {target.value:,} is inside line {line + 1:,} (at byte {start:,})")
    return GoResult(line)


__all__ = ["BYTE", "KINDS", "LINE", "SEQ", "GoResult", "GoTarget", "parse_target", "resolve"]

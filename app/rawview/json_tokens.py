"""JSON text split into coloured token spans, one line at a time, and ``\\n`` in strings rendered on demand.

Why line by line with a carried state: the Raw tab colours its detail pane through a syntax
highlighter, which is handed one text block (line) at a time and remembers one integer per block.
A line is tokenized by one regex scan (C), never character by character in Python, so a 200 KB
record colours in a few milliseconds: its bulk is usually one long string, which is one token.
The only state carried between lines is "inside a string", which a rendered ``\\n``
(``render_newlines``) makes possible: the string then continues on the next lines.

May import: the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Token roles (the theme table in ``app.gui.style`` has a light and a dark colour for each).
KEY, STRING, NUMBER, LITERAL, PUNCTUATION = "key", "string", "number", "literal", "punctuation"
ROLES = (KEY, STRING, NUMBER, LITERAL, PUNCTUATION)

_TOKEN = re.compile(
    r'(?P<closed>"(?:[^"\\]|\\.)*")(?P<key>(?=\s*:))?'
    r'|(?P<open>"(?:[^"\\]|\\.)*\\?$)'
    r"|(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
    r"|(?P<literal>\btrue\b|\bfalse\b|\bnull\b)"
    r"|(?P<punct>[{}\[\],:])"
)
# The rest of a string that started on an earlier line: up to its closing quote, or the whole line.
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"')
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass(frozen=True, slots=True)
class Span:
    """``length`` characters from ``start`` of a line are one token of ``role``."""

    start: int
    length: int
    role: str


def tokenize_line(line: str, in_string: bool = False) -> tuple[list[Span], bool]:
    """The token spans of one line of JSON text, and whether a string is still open at its end.

    ``in_string``: the line continues a string opened on an earlier line (only text rendered by
    ``render_newlines`` has those).  Text that is not JSON is left uncoloured, never refused.
    """
    spans: list[Span] = []
    pos = 0
    if in_string:
        m = _STRING_REST.match(line)
        if m is None:
            return ([Span(0, len(line), STRING)] if line else []), True
        spans.append(Span(0, m.end(), STRING))
        pos = m.end()
    still_open = False
    for m in _TOKEN.finditer(line, pos):
        kind = m.lastgroup
        if kind == "closed" or kind == "key":
            spans.append(Span(m.start(), m.end("closed") - m.start(), KEY if m.group("key") is not None else STRING))
        elif kind == "open":
            spans.append(Span(m.start(), m.end() - m.start(), STRING))
            still_open = True
        elif kind == "number":
            spans.append(Span(m.start(), m.end() - m.start(), NUMBER))
        elif kind == "literal":
            spans.append(Span(m.start(), m.end() - m.start(), LITERAL))
        else:
            spans.append(Span(m.start(), 1, PUNCTUATION))
    return spans, still_open


def ends_in_string(line: str, in_string: bool = False) -> bool:
    """Whether a string is open at the end of ``line`` (as ``tokenize_line`` says), without tokenizing it.

    For a line off screen, which is only followed, not coloured: one C scan per string in the line
    (outside a string the next quote opens one; inside, the string runs to its unescaped quote).
    """
    pos = 0
    while True:
        if in_string:
            m = _STRING_REST.match(line, pos)
            if m is None:
                return True
            pos, in_string = m.end(), False
        else:
            i = line.find('"', pos)
            if i < 0:
                return False
            pos, in_string = i + 1, True


def _newlines_in(token: re.Match[str]) -> str:
    text = token.group(0)
    if "\\n" not in text:
        return text
    return _ESCAPE.sub(lambda e: "\n" if e.group(1) == "n" else e.group(0), text)


def render_newlines(json_text: str) -> str:
    """``json_text`` with each ``\\n`` escape inside a string shown as a line break (other escapes kept).

    For reading only (the result is no longer JSON): a tool's output or a file's text reads as it was.
    """
    if "\\n" not in json_text:
        return json_text
    return _STRING.sub(_newlines_in, json_text)


def fold_long_lines(text: str, width: int) -> tuple[str, bool]:
    """``text`` with every line longer than ``width`` shown in pieces of ``width`` characters; whether any was.

    Why: a text view lays a line out as one unit, and a 200 KB line (a tool's output with its line
    breaks escaped) took seconds to wrap; pieces lay out in milliseconds.  A piece never ends just
    after a backslash, so an escape stays whole and the next piece's colouring knows where a string ends.
    """
    if len(text) <= width:
        return text, False
    lines = text.split("\n")
    if max(map(len, lines)) <= width:
        return text, False
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        pos = 0
        while pos < len(line):
            end = min(len(line), pos + width)
            while end < len(line) and end - pos > 1 and line[end - 1] == "\\":
                end -= 1  # keep an escape (or a run of backslashes' last one) with what it escapes
            out.append(line[pos:end])
            pos = end
    return "\n".join(out), True


__all__ = [
    "KEY",
    "LITERAL",
    "NUMBER",
    "PUNCTUATION",
    "ROLES",
    "STRING",
    "Span",
    "ends_in_string",
    "fold_long_lines",
    "render_newlines",
    "tokenize_line",
]

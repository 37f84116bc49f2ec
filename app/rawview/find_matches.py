"""Find inside the open session: which raw lines hold a text, and which event seqs those lines carry.

A plain value and one worker-thread function (no Qt, no I/O).  The raw text is what the Raw tab
shows (a JSONL log's decoded lines, or a SQLite session's rows rendered as JSON lines), so a match
is a line, and the timeline finds its rows through the seqs each matching line carries (the same
mapping the timeline<->raw selection sync uses).

Matching: a case-insensitive substring (ASCII letters fold; other text is matched as typed, which
is what CJK and most paths need).  The text is searched as it is stored, JSON escapes included, so
the query is also tried in its JSON-escaped form (``"quoted"``, a backslash path, a tab).

Why by chunks: ``re`` holds the GIL while it scans, and a 100 MB log without a match would be one
long scan; ``CHUNK_BYTES`` at a time keeps each scan to a few milliseconds and lets the GUI thread
in between.  Each chunk is copied out (``bytes(data[a:b])``, ~0.1 ms per MiB) so the scan never
holds the live ``bytearray`` that the GUI thread appends to while following a live session.  After
a match the scan jumps to the end of its line: a common word costs one match per line, not one per
occurrence.

May import: the standard library and ``app.rawview.raw_text``.
"""

from __future__ import annotations

import json
import re
import threading
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from app.rawview.raw_text import DecodeCancelled, RawText

CHUNK_BYTES = 1 << 20  # bytes scanned per regex call (~1-3 ms each)
MAX_MATCHES = 100_000  # matching lines kept (past it, "100,000+" is shown and later lines are not found)
CANCEL_EVERY_ROWS = 2048  # rendered rows between two cancel checks (SQLite sessions)


@dataclass(frozen=True, slots=True)
class FindMatches:
    """The lines of a raw text that hold ``query``, in order, and the seq ranges they carry."""

    query: str
    lines: array = field(default_factory=lambda: array("q"))  # matching line numbers, ascending
    seq_ranges: tuple[tuple[int, int], ...] = ()  # (lo, hi) seqs of matching lines, sorted by lo, merged
    capped: bool = False  # MAX_MATCHES reached: later lines were not searched

    def __len__(self) -> int:
        return len(self.lines)

    def count_text(self, current: int | None) -> str:
        """``7 of 41`` (``41 matches`` before one is chosen, ``No matches``)."""
        n = len(self.lines)
        if n == 0:
            return "No matches"
        total = f"{n:,}+" if self.capped else f"{n:,}"
        return f"{current + 1:,} of {total}" if current is not None else f"{total} match{'es' if n != 1 else ''}"

    def has_line(self, line: int) -> bool:
        return self.index_of(line) is not None

    def index_of(self, line: int) -> int | None:
        """Index (into ``lines``) of ``line`` when it matches."""
        i = bisect_left(self.lines, line)
        return i if i < len(self.lines) and self.lines[i] == line else None

    def seq_matches(self, lo: int, hi: int) -> bool:
        """Whether any matching line carries a seq in ``[lo, hi]``."""
        r = self.seq_ranges
        i = bisect_right(r, (hi, 1 << 62)) - 1  # last range starting at or before hi
        return i >= 0 and r[i][1] >= lo

    def next_after(self, line: int) -> int | None:
        """Index (into ``lines``) of the first match after ``line`` (wrapping to the first)."""
        if not self.lines:
            return None
        i = bisect_right(self.lines, line)
        return i if i < len(self.lines) else 0

    def previous_before(self, line: int) -> int | None:
        """Index of the last match before ``line`` (wrapping to the last)."""
        if not self.lines:
            return None
        i = bisect_left(self.lines, line) - 1
        return i if i >= 0 else len(self.lines) - 1


def query_pattern(query: str) -> re.Pattern[bytes] | None:
    """The bytes pattern for ``query``: its UTF-8 text or its JSON-escaped form, ASCII case folded."""
    if not query:
        return None
    forms = {query, json.dumps(query, ensure_ascii=False)[1:-1]}
    alternatives = sorted((re.escape(f.encode("utf-8", "surrogatepass")) for f in forms), key=len, reverse=True)
    return re.compile(b"|".join(alternatives), re.IGNORECASE)


def find_in_raw(text: RawText, query: str, cancel: threading.Event | None = None) -> FindMatches:
    """Every line of ``text`` holding ``query`` (worker thread; ``DecodeCancelled`` when ``cancel`` is set)."""
    pattern = query_pattern(query)
    if pattern is None:
        return FindMatches(query)
    n = len(text)
    lines = array("q")
    capped = False
    if text.rows.count:
        capped = _find_in_rows(text, pattern, n, lines, cancel)
    else:
        capped = _find_in_data(text, pattern, n, lines, cancel)
    ranges: list[tuple[int, int]] = []
    for line in lines:
        seqs = text.seqs_of_line(line)
        if seqs is not None:
            ranges.append(seqs)
    return FindMatches(query, lines, _merged(ranges), capped)


def _find_in_data(text: RawText, pattern: re.Pattern[bytes], n: int, lines: array, cancel: threading.Event | None) -> bool:
    data = text.data
    starts, ends, markers = text.starts, text.ends, text.markers
    size = len(data)
    pos = 0
    while pos < size:
        if cancel is not None and cancel.is_set():
            raise DecodeCancelled()
        end = min(size, pos + CHUNK_BYTES)
        if end < size:
            nl = data.find(b"\n", end)  # whole lines per chunk: a match never straddles two chunks
            end = size if nl < 0 else nl + 1
        chunk = bytes(data[pos:end])
        at = 0
        while True:
            m = pattern.search(chunk, at)
            if m is None:
                break
            off = pos + m.start()
            # The last line starting at or before the match (a marker line shares its offset with the line
            # after it, which bisect_right picks).
            line = bisect_right(starts, off, 0, n) - 1
            if line < 0 or line in markers or off > ends[line]:
                at = m.start() + 1
                continue
            lines.append(line)
            if len(lines) >= MAX_MATCHES:
                return True
            at = max(m.end(), ends[line] - pos + 1)  # the rest of this line cannot add another matching line
        pos = end
    return False


def _find_in_rows(text: RawText, pattern: re.Pattern[bytes], n: int, lines: array, cancel: threading.Event | None) -> bool:
    for i in range(n):
        if not i % CANCEL_EVERY_ROWS and cancel is not None and cancel.is_set():
            raise DecodeCancelled()
        if i in text.markers:
            continue
        start = text.starts[i]
        line = text.rows.render(-1 - start) if start < 0 else bytes(text.data[start : text.ends[i]])
        if pattern.search(line) is not None:
            lines.append(i)
            if len(lines) >= MAX_MATCHES:
                return True
    return False


def _merged(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


__all__ = ["MAX_MATCHES", "FindMatches", "find_in_raw", "query_pattern"]

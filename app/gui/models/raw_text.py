"""The decoded text of a session artifact and an index of its lines (a plain value: no Qt, no I/O).

The raw tab never builds one giant text document: it keeps the decoded bytes once and an array of
line offsets, and a table model renders only the visible lines.  Decoding is the engine's and
lenient on purpose (``persistence.iter_raw``): a corrupt or torn log still shows every byte that can
be decoded, with marker lines saying where decoding stopped (the engine's ``read_raw`` refuses such
logs, and its zstd text leaves the torn frame out).

Each line also records the range of event seqs it holds (packed chunk rows hold many), so a
timeline row can find its line and a line can find its row.

May import: the public ``persistence`` package, orjson and the standard library.
"""

from __future__ import annotations

import re
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from persistence import RawDamage, RawDecodeCancelled, iter_raw, render_rows

MARKER_PREFIX = "⚠ "
# Line kinds, for colouring the raw view (one byte per line).
K_OTHER, K_HEADER, K_TURN, K_STEP, K_USER, K_ASSISTANT, K_CHUNK, K_TOOL, K_REQUEST = range(9)
_KIND_OF: dict[bytes, int] = {
    b"turn/start": K_TURN,
    b"turn/end": K_TURN,
    b"step/start": K_STEP,
    b"step/end": K_STEP,
    b"user/message": K_USER,
    b"assistant/message": K_ASSISTANT,
    b"assistant/chunk": K_CHUNK,
    b"text-chunks": K_CHUNK,
    b"reasoning-chunks": K_CHUNK,
    b"tool-call-chunks": K_CHUNK,
    b"tool/call": K_TOOL,
    b"tool/result": K_TOOL,
    b"request/header": K_REQUEST,
    b"request/context": K_REQUEST,
}
_LINE_HEAD = re.compile(rb'\{"type":"([^"]{0,80})","seq(0?)":(\d{1,16})[,}]')
_ROW_TAGS = (b"text-chunks", b"reasoning-chunks", b"tool-call-chunks")
DISPLAY_LIMIT = 4000
YIELD_SECONDS = 0.0005


class DecodeCancelled(Exception):
    pass


@dataclass(slots=True)
class RawText:
    """Decoded bytes plus per-line offsets and seq ranges.

    ``consumed`` is how far into the *file* decoding got through complete units (whole frames or
    whole lines): appending resumes from there.  Lines from ``tail_from`` on are provisional (a torn
    tail or marker lines) and are replaced when the artifact grows.
    """

    data: bytearray = field(default_factory=bytearray)
    starts: array = field(default_factory=lambda: array("q"))
    ends: array = field(default_factory=lambda: array("q"))
    seq_lo: array = field(default_factory=lambda: array("q"))
    seq_hi: array = field(default_factory=lambda: array("q"))
    kinds: bytearray = field(default_factory=bytearray)
    markers: dict[int, str] = field(default_factory=dict)  # line -> marker text (not from the artifact)
    consumed: int = 0
    tail_from: int = -1  # first provisional line, -1 when none
    compression: str = "none"
    source: str = "jsonl"

    def __len__(self) -> int:
        return len(self.starts)

    def line_text(self, i: int, limit: int | None = DISPLAY_LIMIT) -> str:
        if i in self.markers:
            return self.markers[i]
        end = self.ends[i]
        start = self.starts[i]
        if limit is not None and end - start > limit:
            return self.data[start : start + limit].decode("utf-8", "replace") + f" … (+{end - start - limit} bytes)"
        return self.data[start:end].decode("utf-8", "replace")

    def is_provisional(self, i: int) -> bool:
        return self.tail_from >= 0 and i >= self.tail_from

    def line_for_seq(self, seq: int) -> int:
        """The line holding event ``seq`` (-1 when none)."""
        lo, hi = 0, len(self.seq_lo)
        # seq ranges increase with the line number; lines without seqs hold -1 and are skipped.
        while lo < hi:
            mid = (lo + hi) // 2
            probe = mid
            while probe < hi and self.seq_lo[probe] < 0:
                probe += 1
            if probe == hi:
                hi = mid
                continue
            if self.seq_hi[probe] < seq:
                lo = probe + 1
            elif self.seq_lo[probe] > seq:
                hi = mid
            else:
                return probe
        return -1

    def kind(self, i: int) -> int:
        return self.kinds[i] if 0 <= i < len(self.kinds) else K_OTHER

    def seqs_of_line(self, i: int) -> tuple[int, int] | None:
        if 0 <= i < len(self.seq_lo) and self.seq_lo[i] >= 0:
            return self.seq_lo[i], self.seq_hi[i]
        return None

    # ------------------------------------------------------------ building

    def drop_provisional(self) -> None:
        if self.tail_from < 0:
            return
        cut = self.tail_from
        data_cut = self.starts[cut] if cut < len(self.starts) else len(self.data)
        for name in ("starts", "ends", "seq_lo", "seq_hi", "kinds"):
            arr = getattr(self, name)
            del arr[cut:]
        del self.data[data_cut:]
        self.markers = {k: v for k, v in self.markers.items() if k < cut}
        self.tail_from = -1

    def add_text(self, chunk: bytes, *, provisional: bool = False, cancel: threading.Event | None = None) -> None:
        """Append plaintext; every line (the last may lack its newline) becomes one indexed line."""
        if not chunk:
            return
        base = len(self.data)
        self.data += chunk
        if provisional and self.tail_from < 0:
            self.tail_from = len(self.starts)
        pos = 0
        n = len(chunk)
        find = chunk.find
        match = _LINE_HEAD.match
        starts, ends, lo_arr, hi_arr, kinds = self.starts, self.ends, self.seq_lo, self.seq_hi, self.kinds
        kind_of = _KIND_OF
        count = 0
        while pos < n:
            nl = find(b"\n", pos)
            end = n if nl < 0 else nl
            starts.append(base + pos)
            ends.append(base + end)
            lo = hi = -1
            kind = K_OTHER
            m = match(chunk, pos, end + 1 if nl >= 0 else end)
            if m is not None:
                lo = hi = int(m.group(3))
                kind = kind_of.get(m.group(1), K_OTHER)
                if m.group(2) and m.group(1) in _ROW_TAGS:
                    hi = lo + _row_members(chunk[pos:end]) - 1
            elif chunk.startswith(b'{"type":"session"', pos):
                kind = K_HEADER
            lo_arr.append(lo)
            hi_arr.append(hi)
            kinds.append(kind)
            pos = n if nl < 0 else nl + 1
            count += 1
            if not count & 2047:
                if cancel is not None and cancel.is_set():
                    raise DecodeCancelled()
                time.sleep(YIELD_SECONDS)  # let the GUI thread take the GIL (see worker_threads.checkpoint)

    def add_marker(self, text: str, *, provisional: bool = True) -> None:
        """A line that is not in the artifact, saying what could not be decoded (provisional at the tail)."""
        if provisional and self.tail_from < 0:
            self.tail_from = len(self.starts)
        i = len(self.starts)
        self.starts.append(len(self.data))
        self.ends.append(len(self.data))
        self.seq_lo.append(-1)
        self.seq_hi.append(-1)
        self.kinds.append(K_OTHER)
        self.markers[i] = MARKER_PREFIX + text


_DT = b'"dt":['
_INT_LIST = re.compile(rb"-?\d+(,-?\d+)*")


def _row_members(line: bytes) -> int:
    """Members of a packed chunk row: ``len(dt) + 1``, read without parsing the (large) texts.

    The writer puts ``dt`` (integers only) before ``texts``/``args``; an earlier ``"dt":[`` can only
    sit inside a string, where its quote is escaped.  Anything unexpected takes the full parse.
    """
    i = line.find(_DT)
    while i > 0 and line[i - 1 : i] == b"\\":
        i = line.find(_DT, i + 1)
    if i > 0:
        j = line.find(b"]", i + len(_DT))
        body = line[i + len(_DT) : j]
        if j > 0 and (not body or _INT_LIST.fullmatch(body)):
            return body.count(b",") + 1 + (1 if body else 0)
    try:
        value = orjson.loads(line)
        return len(value["data"]["dt"]) + 1
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return 1


# ---------------------------------------------------------------- indexing what the engine decodes


def decode_jsonl(
    raw: bytes | memoryview,
    compression: str,
    *,
    into: RawText | None = None,
    offset: int = 0,
    cancel: threading.Event | None = None,
    progress: Callable[[float], None] | None = None,
) -> RawText:
    """Index ``raw`` (the whole file, or its bytes from ``offset`` on) into ``into``, decoded by the engine.

    ``persistence.iter_raw`` does the lenient decoding (whole lines or zstd frames, damage as
    messages); this adds each piece's lines, seq ranges and kinds, and a marker line per damage.
    """
    text = into if into is not None else RawText(compression=compression)
    text.compression = compression
    text.drop_provisional()
    text.consumed = max(text.consumed, offset)

    def cancelled() -> bool:
        return cancel is not None and cancel.is_set()

    def every_64_frames(fraction: float) -> None:
        time.sleep(YIELD_SECONDS)  # let the GUI thread take the GIL (see worker_threads.checkpoint)
        if progress is not None:
            progress(fraction)

    try:
        for piece in iter_raw(raw, compression, offset=offset, cancelled=cancelled, progress=every_64_frames):
            if isinstance(piece, RawDamage):
                text.add_marker(piece.message, provisional=piece.provisional)
            elif piece.text:
                text.add_text(piece.text, provisional=piece.provisional, cancel=cancel)
            if not piece.provisional:
                text.consumed = max(text.consumed, piece.file_end)
    except RawDecodeCancelled:
        raise DecodeCancelled() from None
    return text


def decode_records(records: Sequence[dict[str, Any]], cancel: threading.Event | None = None) -> RawText:
    """Event rows (SQLite stores have no text artifact): one JSON line per event, as the engine returns it."""
    text = RawText(source="rows")
    try:
        rendered = render_rows(records, cancelled=None if cancel is None else cancel.is_set)
    except RawDecodeCancelled:
        raise DecodeCancelled() from None
    text.add_text(rendered, cancel=cancel)
    return text


__all__ = ["MARKER_PREFIX", "DecodeCancelled", "RawText", "decode_jsonl", "decode_records"]

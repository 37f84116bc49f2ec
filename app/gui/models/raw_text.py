"""The decoded text of a session artifact and an index of its lines (no Qt).

The raw tab never builds one giant text document: it keeps the decoded bytes once and an array of
line offsets, and a table model renders only the visible lines.  Decoding is lenient on purpose: a
corrupt or torn log still shows every byte that can be decoded, with marker lines saying where
decoding stopped (the engine's ``read_raw`` refuses such logs, and its zstd text leaves the torn
frame out).

Each line also records the range of event seqs it holds (packed chunk rows hold many), so a
timeline row can find its line and a line can find its row.
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

from persistence.jsonl import frames
from persistence.model.jsontext import js_dumps

MARKER_PREFIX = "⚠ "
# Line kinds, for colouring the raw view (one byte per line).
K_OTHER, K_HEADER, K_TURN, K_STEP, K_USER, K_ASSISTANT, K_CHUNK, K_TOOL, K_REQUEST = range(9)
_KIND_OF: dict[bytes, int] = {
    b"turn/start": K_TURN, b"turn/end": K_TURN, b"step/start": K_STEP, b"step/end": K_STEP,
    b"user/message": K_USER, b"assistant/message": K_ASSISTANT, b"assistant/chunk": K_CHUNK,
    b"text-chunks": K_CHUNK, b"reasoning-chunks": K_CHUNK, b"tool-call-chunks": K_CHUNK,
    b"tool/call": K_TOOL, b"tool/result": K_TOOL, b"request/header": K_REQUEST, b"request/context": K_REQUEST,
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
                time.sleep(YIELD_SECONDS)  # let the GUI thread take the GIL (see workers.checkpoint)

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


# ---------------------------------------------------------------- decoding artifacts


def decode_jsonl(raw: bytes | memoryview, compression: str, *, into: RawText | None = None, offset: int = 0,
                 cancel: threading.Event | None = None, progress: Callable[[float], None] | None = None) -> RawText:
    """Decode ``raw`` (the whole file, or its bytes from ``offset`` on) into ``into``."""
    text = into if into is not None else RawText(compression=compression)
    text.compression = compression
    text.drop_provisional()
    view = memoryview(raw)
    if compression == "none":
        _decode_lines(text, view, offset, cancel)
    else:
        _decode_frames(text, view, offset, cancel, progress)
    return text


def _decode_lines(text: RawText, view: memoryview, offset: int, cancel: threading.Event | None) -> None:
    chunk = bytes(view)
    last_nl = chunk.rfind(b"\n")
    complete = chunk[: last_nl + 1] if last_nl >= 0 else b""
    if complete:
        # The newline ending the last complete line is a separator, not an extra empty line.
        text.add_text(complete[:-1] if complete.endswith(b"\n") else complete, cancel=cancel)
    text.consumed = offset + len(complete)
    rest = chunk[last_nl + 1 :]
    if rest:
        text.add_text(rest, provisional=True, cancel=cancel)
        text.add_marker(f"torn tail: the last {len(rest)} byte(s) have no newline (not committed; repair would cut them)")


def _decode_frames(text: RawText, view: memoryview, offset: int, cancel: threading.Event | None,
                   progress: Callable[[float], None] | None) -> None:
    pos = 0
    n = len(view)
    frames_done = 0
    while pos < n:
        if cancel is not None and cancel.is_set():
            raise DecodeCancelled()
        try:
            ranges, torn = frames.scan_frames(view[pos:], max_frames=1)
        except Exception as err:  # a structural defect: show what came before, say where it stopped
            text.add_marker(f"undecodable bytes from file offset {offset + pos}: {err}")
            return
        if not ranges:
            if torn is not None:
                try:
                    plain = frames.decompress_prefix(view[pos:])
                except Exception as err:  # a torn frame past the decompression cap is damage, not a tail
                    text.add_marker(f"undecodable torn frame at file offset {offset + pos}: {err}")
                    return
                if plain:
                    text.add_text(plain.rstrip(b"\n"), provisional=True, cancel=cancel)
                text.add_marker(f"torn tail: an incomplete zstd frame of {n - pos} byte(s) at file offset {offset + pos} "
                                "(not committed; repair would cut it)")
            return
        start, end = ranges[0]
        try:
            plain = frames.decode_frame(view, pos + start, pos + end)
        except Exception as err:  # a damaged frame with an intact structure: say so, go on with the next one
            text.add_marker(f"frame at file offset {offset + pos} ({end - start} bytes) failed to decode: {err}",
                            provisional=False)
            plain = b""
        if plain:
            text.add_text(plain[:-1] if plain.endswith(b"\n") else plain, cancel=cancel)
        pos += end
        text.consumed = offset + pos
        frames_done += 1
        if not frames_done & 63:
            time.sleep(YIELD_SECONDS)
            if progress is not None:
                progress(pos / n)


def decode_records(records: Sequence[dict[str, Any]], cancel: threading.Event | None = None) -> RawText:
    """Event rows (SQLite stores have no text artifact): one JSON line per event, as the engine returns it."""
    text = RawText(source="rows")
    parts = []
    for i, rec in enumerate(records):
        parts.append(js_dumps(rec))
        if cancel is not None and i % 4096 == 0 and cancel.is_set():
            raise DecodeCancelled()
    text.add_text(b"\n".join(parts), cancel=cancel)
    return text


def read_file_from(path: str, offset: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read()


__all__ = ["MARKER_PREFIX", "DecodeCancelled", "RawText", "decode_jsonl", "decode_records", "read_file_from"]

"""The text of a session artifact and an index of its lines (a plain value: no Qt, no I/O).

The raw tab never builds one giant text document.  A JSONL artifact's decoded bytes are kept once,
with an array of line offsets; a SQLite session (rows, no text artifact) keeps its event records
and renders a line only when it is shown or copied.  A table model asks only for visible lines.
Rendering every row up front cost 2.6 s and ~1 GB peak for the 202k-event benchmark session
(``js_dumps`` of 202k records alone 1.4 s); now opening it costs a few arrays of 202k entries.

What a line holds (its kind, for colour, and the range of event seqs it carries, so a timeline row
can find its line and a line its row) is read from the line's head the first time someone asks,
not while indexing: that per-line regex was over half of decoding a 5 MB JSONL log (~55 of 90 ms).

Each line also keeps where it sits in the artifact file (its byte offset; in a zstd log the offset of
its frame, and the frame's number, counted from 1 as the damage wording does), so a support engineer
can go from a line to the bytes and back (``file_offset``, ``frame_of``, ``line_at_byte``).

Decoding is the engine's and lenient on purpose (``persistence.iter_raw``): a corrupt or torn log
still shows every byte that can be decoded, with marker lines saying where decoding stopped (the
engine's ``read_raw`` refuses such logs, and its zstd text leaves the torn frame out).

May import: the public ``persistence`` package, ``app.glossary`` (the damage lines' words), orjson and the standard library.
"""

from __future__ import annotations

import re
import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add
from typing import Any

import orjson

from app.glossary import damage_marker
from persistence import EventLog, LazyRows, RawDamage, RawDecodeCancelled, iter_raw

MARKER_PREFIX = "⚠ "
# Line kinds, for colouring the raw view (one byte per line).
K_OTHER, K_HEADER, K_TURN, K_STEP, K_USER, K_ASSISTANT, K_CHUNK, K_TOOL, K_REQUEST = range(9)
K_UNKNOWN = 255  # ``kinds[i]`` until line i is first looked at
SEQ_UNKNOWN = -2  # ``seq_lo[i]``/``seq_hi[i]`` until then (-1: the line holds no event)
NO_OFFSET = -1  # ``file_offs[i]`` of a line that is not in a file (a stored row) / ``frames[i]`` outside zstd
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
_HEADER_HEAD = b'{"type":"session"'
_ROW_TAGS = (b"text-chunks", b"reasoning-chunks", b"tool-call-chunks")
DISPLAY_LIMIT = 4000  # bytes of a line the table shows (the detail pane shows all of it)
YIELD_SECONDS = 0.0005
# Rendered rows kept for repaints: a repaint asks ~7 roles of each of ~50 visible cells, and a
# scroll back should not render again; the byte cap keeps a few huge tool results from pinning memory.
ROW_CACHE_LINES = 512
ROW_CACHE_BYTES = 16 * 1024 * 1024


class DecodeCancelled(Exception):
    pass


class _Rows:
    """Stored rows as JSON lines rendered on demand (``persistence.LazyRows``), in appended parts.

    Row numbers are global across parts (a follow appends a part per growth); a small cache keeps
    the lines painted last.
    """

    __slots__ = ("_cache", "_cached_bytes", "bounds", "count", "parts")

    def __init__(self) -> None:
        self.parts: list[LazyRows] = []
        self.bounds: list[int] = []  # first row number of each part
        self.count = 0
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cached_bytes = 0

    def add(self, records: Sequence[dict[str, Any]]) -> int:
        """Append ``records`` as rows; the first one's row number."""
        first = self.count
        self.parts.append(LazyRows(records))
        self.bounds.append(first)
        self.count += len(records)
        return first

    def render(self, r: int) -> bytes:
        """Row ``r`` as its JSON line (not cached: for walks over every row)."""
        k = bisect_right(self.bounds, r) - 1
        return self.parts[k][r - self.bounds[k]]

    def line(self, r: int) -> bytes:
        """Row ``r`` as its JSON line, kept among the last ``ROW_CACHE_LINES`` asked for."""
        cache = self._cache
        line = cache.get(r)
        if line is not None:
            cache.move_to_end(r)
            return line
        line = self.render(r)
        cache[r] = line
        self._cached_bytes += len(line)
        while len(cache) > ROW_CACHE_LINES or (self._cached_bytes > ROW_CACHE_BYTES and len(cache) > 1):
            _r, old = cache.popitem(last=False)
            self._cached_bytes -= len(old)
        return line


@dataclass(slots=True)
class RawText:
    """Decoded bytes and rendered-on-demand rows, with per-line offsets and (looked-up) seq ranges.

    ``starts[i] >= 0``: line i is ``data[starts[i]:ends[i]]``; ``starts[i] < 0``: line i is row
    ``-1 - starts[i]``, rendered when asked for.  ``consumed`` is how far into the *file* decoding got
    through complete units (whole frames or whole lines): appending resumes from there.  Lines from
    ``tail_from`` on are provisional (a torn tail or marker lines) and are replaced when the artifact
    grows.  Read lines through the methods: ``kinds``/``seq_lo``/``seq_hi`` hold ``K_UNKNOWN`` and
    ``SEQ_UNKNOWN`` until a line is first looked at.
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
    rows: _Rows = field(default_factory=_Rows)
    file_offs: array = field(default_factory=lambda: array("q"))  # line -> its byte offset in the file (-1: none)
    frames: array = field(default_factory=lambda: array("q"))  # line -> its zstd frame number from 1 (-1: none)
    frame_starts: array = field(default_factory=lambda: array("q"))  # file offset of each committed zstd frame

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def decoded_size(self) -> int | None:
        """Bytes of decoded text held, or None when rows are rendered on demand (their size is unknown)."""
        return None if self.rows.count else len(self.data)

    def line_bytes(self, i: int) -> bytes:
        """The bytes of line ``i`` (empty for a marker line)."""
        start = self.starts[i]
        if start < 0:
            return self.rows.line(-1 - start)
        return bytes(self.data[start : self.ends[i]])

    def line_size(self, i: int) -> int:
        start = self.starts[i]
        return len(self.rows.line(-1 - start)) if start < 0 else self.ends[i] - start

    def line_text(self, i: int, limit: int | None = DISPLAY_LIMIT) -> str:
        if i in self.markers:
            return self.markers[i]
        start = self.starts[i]
        if start < 0:
            buf: bytes | bytearray = self.rows.line(-1 - start)
            start, end = 0, len(buf)
        else:
            buf, end = self.data, self.ends[i]
        if limit is not None and end - start > limit:
            return buf[start : start + limit].decode("utf-8", "replace") + f" … (+{end - start - limit} bytes)"
        return buf[start:end].decode("utf-8", "replace")

    def file_offset(self, i: int) -> int:
        """Line ``i``'s byte offset in the artifact (its frame's in a zstd log); -1 for a stored row."""
        return self.file_offs[i] if 0 <= i < len(self.file_offs) else NO_OFFSET

    def frame_of(self, i: int) -> int:
        """Line ``i``'s zstd frame number (from 1); -1 in a plain log or for a stored row."""
        return self.frames[i] if 0 <= i < len(self.frames) else NO_OFFSET

    def line_at_byte(self, offset: int) -> int:
        """The line holding file byte ``offset`` (the first line of its frame in a zstd log); -1 when none.

        Offsets grow with the line number (markers share the offset of the damage they stand for), so
        this is a bisection; a byte past the last line's start belongs to the last line.
        """
        offs = self.file_offs
        n = len(offs)
        if n == 0 or offset < 0 or offs[0] < 0:
            return -1
        i = bisect_right(offs, offset) - 1
        if i < 0:
            return -1
        return bisect_left(offs, offs[i], 0, i + 1)  # the first line at that offset (a frame's first line)

    def is_provisional(self, i: int) -> bool:
        return self.tail_from >= 0 and i >= self.tail_from

    def _look(self, i: int) -> None:
        """Read line ``i``'s kind and seq range from its head (once; then they are in the arrays)."""
        lo = hi = -1
        kind = K_OTHER
        if i not in self.markers:
            start = self.starts[i]
            buf: bytes | bytearray
            if start < 0:
                buf = self.rows.line(-1 - start)
                start, end = 0, len(buf)
            else:
                buf, end = self.data, self.ends[i]
            m = _LINE_HEAD.match(buf, start, end)
            if m is not None:
                lo = hi = int(m.group(3))
                kind = _KIND_OF.get(m.group(1), K_OTHER)
                if m.group(2) and m.group(1) in _ROW_TAGS:
                    hi = lo + _row_members(bytes(buf[start:end])) - 1
            elif buf.startswith(_HEADER_HEAD, start, end):
                kind = K_HEADER
        self.seq_lo[i] = lo
        self.seq_hi[i] = hi
        self.kinds[i] = kind

    def _lo(self, i: int) -> int:
        if self.seq_lo[i] == SEQ_UNKNOWN:
            self._look(i)
        return self.seq_lo[i]

    def line_for_seq(self, seq: int) -> int:
        """The line holding event ``seq`` (-1 when none)."""
        lo, hi = 0, len(self.seq_lo)
        # seq ranges increase with the line number; lines without seqs hold -1 and are skipped.
        while lo < hi:
            mid = (lo + hi) // 2
            probe = mid
            while probe < hi and self._lo(probe) < 0:
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
        if not 0 <= i < len(self.kinds):
            return K_OTHER
        if self.kinds[i] == K_UNKNOWN:
            self._look(i)
        return self.kinds[i]

    def seqs_of_line(self, i: int) -> tuple[int, int] | None:
        if 0 <= i < len(self.seq_lo) and self._lo(i) >= 0:
            return self.seq_lo[i], self.seq_hi[i]
        return None

    def iter_lines(self, cancel: threading.Event | None = None) -> Iterator[bytes]:
        """Every line's bytes in order (marker lines empty), for whatever needs the whole text.

        Renders rows as it goes (off the GUI thread, please: 202k rows take over a second);
        raises ``DecodeCancelled`` when ``cancel`` is set.
        """
        for i in range(len(self.starts)):
            if not i & 2047 and cancel is not None and cancel.is_set():
                raise DecodeCancelled()
            start = self.starts[i]
            yield self.rows.render(-1 - start) if start < 0 else bytes(self.data[start : self.ends[i]])

    # ------------------------------------------------------------ building

    def _append_lines(self, starts: Sequence[int], ends: Sequence[int], offs: Sequence[int], frame: int = NO_OFFSET) -> None:
        n = len(starts)
        self.starts.extend(starts)
        self.ends.extend(ends)
        self.file_offs.extend(offs)
        self.frames.extend(array("q", [frame]) * n)
        unknown = array("q", [SEQ_UNKNOWN]) * n
        self.seq_lo.extend(unknown)
        self.seq_hi.extend(unknown)
        self.kinds.extend(bytes([K_UNKNOWN]) * n)

    def drop_provisional(self) -> None:
        if self.tail_from < 0:
            return
        cut = self.tail_from
        # Provisional lines are the artifact's bytes and markers (rows never are): cut the data there.
        data_cut = next((s for s in self.starts[cut:] if s >= 0), len(self.data))
        for name in ("starts", "ends", "seq_lo", "seq_hi", "kinds", "file_offs", "frames"):
            arr = getattr(self, name)
            del arr[cut:]
        del self.data[data_cut:]
        self.markers = {k: v for k, v in self.markers.items() if k < cut}
        self.tail_from = -1

    def add_text(
        self,
        chunk: bytes,
        *,
        provisional: bool = False,
        cancel: threading.Event | None = None,
        file_start: int | None = None,
        frame: bool = False,
    ) -> None:
        """Append plaintext; every line (the last may lack its newline) becomes one indexed line.

        ``file_start``: where ``chunk`` came from in the file (default: the text is the file, as in a
        plain log decoded from its start).  ``frame``: ``chunk`` is one zstd frame's text, whose lines
        all sit at ``file_start`` and carry the frame's number.
        """
        if not chunk:
            return
        if cancel is not None and cancel.is_set():
            raise DecodeCancelled()
        base = len(self.data)
        self.data += chunk
        if provisional and self.tail_from < 0:
            self.tail_from = len(self.starts)
        # Line lengths in C (split + accumulate): a Python loop over 202k lines took ~10x longer.
        lens = list(map(len, chunk.split(b"\n")))
        if chunk.endswith(b"\n"):
            lens.pop()  # a final newline ends the last line; it does not start another
        starts = array("q", accumulate(map(add, lens, repeat(1)), initial=base))
        starts.pop()
        at = base if file_start is None else file_start
        if frame:
            number = self._frame_number(at, provisional)
            self._append_lines(starts, array("q", map(add, starts, lens)), array("q", [at]) * len(starts), number)
        else:
            shift = at - base
            offs = starts if shift == 0 else array("q", map(add, starts, repeat(shift)))
            self._append_lines(starts, array("q", map(add, starts, lens)), offs)

    def _frame_number(self, at: int, provisional: bool) -> int:
        """The number (from 1) of the frame at file offset ``at``; a committed frame is remembered."""
        fs = self.frame_starts
        i = bisect_left(fs, at)
        if i < len(fs) and fs[i] == at:
            return i + 1
        if not provisional:
            fs.append(at)  # frames arrive in file order
            return len(fs)
        return len(fs) + 1  # a torn frame: numbered after the committed ones, not remembered

    def add_rows(self, records: Sequence[dict[str, Any]]) -> None:
        """Append one line per record, rendered as JSON (``js_dumps``) only when it is shown or copied."""
        n = len(records)
        if not n:
            return
        first = self.rows.add(records)
        rows = array("q", range(-1 - first, -1 - first - n, -1))
        self._append_lines(rows, rows, array("q", [NO_OFFSET]) * n)

    def add_marker(self, text: str, *, provisional: bool = True, file_offset: int = NO_OFFSET, frame: bool = False) -> None:
        """A line that is not in the artifact, saying what could not be decoded (provisional at the tail).

        ``file_offset``: where the damage starts in the file; ``frame``: it is a zstd frame's.
        """
        if provisional and self.tail_from < 0:
            self.tail_from = len(self.starts)
        i = len(self.starts)
        self.starts.append(len(self.data))
        self.ends.append(len(self.data))
        self.seq_lo.append(-1)
        self.seq_hi.append(-1)
        self.kinds.append(K_OTHER)
        self.file_offs.append(file_offset)
        self.frames.append(self._frame_number(file_offset, provisional) if frame and file_offset >= 0 else NO_OFFSET)
        self.markers[i] = MARKER_PREFIX + text

    def extend(self, delta: RawText) -> None:
        """Append ``delta``'s lines (its bytes, rows and markers) after this text's lines."""
        first = len(self.starts)
        base = len(self.data)
        row_base = self.rows.count
        self.data += delta.data

        def moved(s: int) -> int:
            return s + base if s >= 0 else s - row_base

        self.starts.extend(map(moved, delta.starts))
        self.ends.extend(map(moved, delta.ends))
        self.seq_lo.extend(delta.seq_lo)
        self.seq_hi.extend(delta.seq_hi)
        self.kinds.extend(delta.kinds)
        self.file_offs.extend(delta.file_offs)
        # A delta decoded on its own numbers its frames from 1: they come after this text's frames.
        known = len(self.frame_starts)
        self.frames.extend(f + known if f > 0 else f for f in delta.frames)
        self.frame_starts.extend(delta.frame_starts)
        for part in delta.rows.parts:
            self.rows.parts.append(part)
            self.rows.bounds.append(self.rows.count)
            self.rows.count += len(part)
        for k, v in delta.markers.items():
            self.markers[first + k] = v
        if delta.tail_from >= 0:
            self.tail_from = first + delta.tail_from
        self.consumed = delta.consumed


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
    messages); this adds each piece's lines and a marker line per damage.
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

    zstd = compression == "zstd"
    try:
        for piece in iter_raw(raw, compression, offset=offset, cancelled=cancelled, progress=every_64_frames):
            if isinstance(piece, RawDamage):
                number = text._frame_number(piece.file_offset, piece.provisional) if zstd else None
                what = damage_marker(piece.kind, piece.file_offset, piece.size, piece.message, number)  # the app's words
                text.add_marker(what, provisional=piece.provisional, file_offset=piece.file_offset, frame=zstd)
            elif piece.text:
                text.add_text(piece.text, provisional=piece.provisional, cancel=cancel, file_start=piece.file_start, frame=zstd)
            if not piece.provisional:
                text.consumed = max(text.consumed, piece.file_end)
    except RawDecodeCancelled:
        raise DecodeCancelled() from None
    return text


def decode_records(records: Sequence[dict[str, Any]] | EventLog, cancel: threading.Event | None = None) -> RawText:
    """Event rows (SQLite stores have no text artifact): one JSON line per event, as the engine renders it.

    Nothing is rendered here (the line count is ``len(records)``; a few arrays of that length are
    all it allocates); an ``EventLog`` is not expanded.  ``cancel`` is accepted for symmetry with
    ``decode_jsonl``.
    """
    del cancel  # nothing long-running to cancel any more
    text = RawText(source="rows")
    # ``record_table()``: records by index without expanding the log or caching an event per line.
    text.add_rows(records.record_table() if isinstance(records, EventLog) else records)
    return text


__all__ = ["MARKER_PREFIX", "DecodeCancelled", "RawText", "decode_jsonl", "decode_records"]

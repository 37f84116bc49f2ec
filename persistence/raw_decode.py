"""Lenient decoding of a session artifact into text lines, with markers where decoding stopped.

Why: the engine's ``read_raw`` follows upstream and refuses a damaged log (and leaves a torn zstd
frame out), but a viewer must show every byte that still decodes and say where and why the rest
does not.  The window used to decode zstd frames itself; this module is that decoding, pure and
Qt-free, so the window only indexes and paints what it is given.

Two shapes of the same decoding:
- ``iter_raw(data, compression)`` yields ``RawChunk`` (decoded plaintext made of whole lines) and
  ``RawDamage`` (what could not be decoded) in file order, for a consumer that indexes as it goes;
- ``decode_raw(...)`` collects them into ``RawLines``: the decoded text, each line's start and end
  offset in it, and the damage marker lines.
Pieces marked ``provisional`` are the artifact's tail (a torn line or frame and its marker): they
are replaced when the artifact grows; decoding of appended bytes resumes at ``consumed``.

A SQLite session has no text artifact: ``render_rows`` turns its stored rows into the JSON lines
the viewer shows (``LazyRows`` renders one line at a time, on demand).

Cancellation: ``cancelled()`` is asked before each zstd frame (and every ``ROWS_PER_CANCEL_CHECK``
rows); when it returns True, ``RawDecodeCancelled`` is raised.  A generator consumer may also just
stop iterating.

May import: ``persistence.jsonl.frames``, ``persistence.model.jsontext``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, overload

from persistence.jsonl import frames
from persistence.model.jsontext import js_dumps

# ``RawDamage.kind``
TORN_LINE = "torn-line"  # a raw log's bytes after its last newline (an uncommitted write)
TORN_FRAME = "torn-frame"  # a zstd log's incomplete final frame (an uncommitted write)
UNDECODABLE = "undecodable"  # structural damage: nothing from here on can be framed
UNDECODABLE_TORN_FRAME = "undecodable-torn-frame"  # an incomplete final frame that does not decompress either
BAD_FRAME = "bad-frame"  # one complete frame that fails to decode (checksum, bomb); decoding goes on after it

FRAMES_PER_PROGRESS = 64  # zstd frames decoded between two ``progress`` calls
ROWS_PER_CANCEL_CHECK = 4096  # rows rendered between two ``cancelled`` checks


class RawDecodeCancelled(Exception):
    """Decoding stopped because ``cancelled()`` returned True."""


@dataclass(frozen=True, slots=True)
class RawChunk:
    """Decoded plaintext of whole lines, without the newline ending the last one (empty: no line at all)."""

    text: bytes
    file_start: int  # the artifact bytes this text came from: [file_start, file_end)
    file_end: int
    provisional: bool = False  # the decodable part of a torn tail


@dataclass(frozen=True, slots=True)
class RawDamage:
    """Bytes that could not be decoded, and a one-line message a viewer shows in their place."""

    kind: str
    file_offset: int
    size: int | None  # bytes affected (the rest of the artifact for structural damage)
    message: str
    provisional: bool = True  # at the artifact's tail: replaced when it grows

    # The values of ``kind``, for callers that import only ``persistence``.
    TORN_LINE: ClassVar[str] = TORN_LINE
    TORN_FRAME: ClassVar[str] = TORN_FRAME
    UNDECODABLE: ClassVar[str] = UNDECODABLE
    UNDECODABLE_TORN_FRAME: ClassVar[str] = UNDECODABLE_TORN_FRAME
    BAD_FRAME: ClassVar[str] = BAD_FRAME

    @property
    def file_end(self) -> int:
        """File offset just past the damaged bytes."""
        return self.file_offset + (self.size or 0)


RawPiece = RawChunk | RawDamage


def iter_raw(
    data: bytes | bytearray | memoryview,
    compression: str,
    *,
    offset: int = 0,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[float], None] | None = None,
) -> Iterator[RawPiece]:
    """Decode ``data`` (the artifact's bytes from file offset ``offset`` on) into pieces, in file order.

    ``compression`` is ``"none"`` (raw lines) or ``"zstd"`` (frames).  ``progress(fraction)`` is
    called every ``FRAMES_PER_PROGRESS`` frames.
    """
    view = memoryview(data)
    if compression == "none":
        yield from _iter_lines(view, offset)
    else:
        yield from _iter_frames(view, offset, cancelled, progress)


def _iter_lines(view: memoryview, offset: int) -> Iterator[RawPiece]:
    chunk = bytes(view)
    last_nl = chunk.rfind(b"\n")
    complete = chunk[: last_nl + 1] if last_nl >= 0 else b""
    if complete:
        # The newline ending the last complete line is a separator, not an extra empty line.
        yield RawChunk(complete[:-1], offset, offset + len(complete))
    rest = chunk[last_nl + 1 :]
    if rest:
        start = offset + len(complete)
        yield RawChunk(rest, start, start + len(rest), provisional=True)
        yield RawDamage(
            TORN_LINE,
            start,
            len(rest),
            f"torn tail: the last {len(rest)} byte(s) have no newline (not committed; repair would cut them)",
        )


def _iter_frames(
    view: memoryview, offset: int, cancelled: Callable[[], bool] | None, progress: Callable[[float], None] | None
) -> Iterator[RawPiece]:
    pos = 0
    n = len(view)
    frames_done = 0
    while pos < n:
        if cancelled is not None and cancelled():
            raise RawDecodeCancelled()
        try:
            ranges, torn = frames.scan_frames(view[pos:], max_frames=1)
        except Exception as err:  # a structural defect: what came before stands, say where it stopped
            yield RawDamage(UNDECODABLE, offset + pos, n - pos, f"undecodable bytes from file offset {offset + pos}: {err}")
            return
        if not ranges:
            if torn is not None:
                try:
                    plain = frames.decompress_prefix(view[pos:])
                except Exception as err:  # a torn frame past the decompression cap is damage, not a tail
                    yield RawDamage(
                        UNDECODABLE_TORN_FRAME,
                        offset + pos,
                        n - pos,
                        f"undecodable torn frame at file offset {offset + pos}: {err}",
                    )
                    return
                if plain:
                    yield RawChunk(plain.rstrip(b"\n"), offset + pos, offset + n, provisional=True)
                yield RawDamage(
                    TORN_FRAME,
                    offset + pos,
                    n - pos,
                    f"torn tail: an incomplete zstd frame of {n - pos} byte(s) at file offset {offset + pos} "
                    "(not committed; repair would cut it)",
                )
            return
        start, end = ranges[0]
        try:
            text = frames.decode_frame(view, pos + start, pos + end)
        except Exception as err:  # a damaged frame with an intact structure: say so, go on with the next one
            yield RawDamage(
                BAD_FRAME,
                offset + pos,
                end,
                f"frame at file offset {offset + pos} ({end - start} bytes) failed to decode: {err}",
                provisional=False,
            )
        else:
            yield RawChunk(text[:-1] if text.endswith(b"\n") else text, offset + pos, offset + pos + end)
        pos += end
        frames_done += 1
        if progress is not None and not frames_done % FRAMES_PER_PROGRESS:
            progress(pos / n)


@dataclass(slots=True)
class RawLines:
    """Decoded text plus each line's [start, end) offsets in it; marker lines stand for damage.

    ``consumed`` is the file offset decoding got to through complete units (whole lines or frames):
    appended bytes are decoded from there.  Lines from ``tail_from`` on are provisional (-1: none).
    """

    compression: str = "none"
    data: bytearray = field(default_factory=bytearray)
    starts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))
    markers: dict[int, RawDamage] = field(default_factory=dict)  # line -> the damage it stands for
    consumed: int = 0
    tail_from: int = -1

    def __len__(self) -> int:
        return len(self.starts)

    def line(self, i: int) -> bytes:
        """The bytes of line ``i`` (empty for a marker line)."""
        return bytes(self.data[self.starts[i] : self.ends[i]])

    def text(self, i: int) -> str:
        """Line ``i`` as text (lossy UTF-8), or the message of the damage a marker line stands for."""
        damage = self.markers.get(i)
        if damage is not None:
            return damage.message
        return self.data[self.starts[i] : self.ends[i]].decode("utf-8", "replace")

    def add(self, piece: RawPiece) -> None:
        """Index one piece of ``iter_raw`` (chunks become lines, damage a marker line)."""
        if isinstance(piece, RawDamage):
            if piece.provisional and self.tail_from < 0:
                self.tail_from = len(self.starts)
            self.markers[len(self.starts)] = piece
            self.starts.append(len(self.data))
            self.ends.append(len(self.data))
        else:
            chunk = piece.text
            if chunk:
                base = len(self.data)
                self.data += chunk
                if piece.provisional and self.tail_from < 0:
                    self.tail_from = len(self.starts)
                for start, end in split_lines(chunk):
                    self.starts.append(base + start)
                    self.ends.append(base + end)
        if not piece.provisional:
            self.consumed = max(self.consumed, piece.file_end)


def split_lines(chunk: bytes) -> Iterator[tuple[int, int]]:
    """[start, end) of each line of ``chunk`` (the last one may lack its newline; a final newline ends it)."""
    pos = 0
    n = len(chunk)
    find = chunk.find
    while pos < n:
        nl = find(b"\n", pos)
        end = n if nl < 0 else nl
        yield pos, end
        pos = n if nl < 0 else nl + 1


def decode_raw(
    data: bytes | bytearray | memoryview,
    compression: str,
    *,
    offset: int = 0,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[float], None] | None = None,
) -> RawLines:
    """``iter_raw`` collected into lines with their offsets and damage markers (see ``RawLines``)."""
    out = RawLines(compression=compression, consumed=offset)
    for piece in iter_raw(data, compression, offset=offset, cancelled=cancelled, progress=progress):
        out.add(piece)
    return out


def render_rows(records: Sequence[dict[str, Any]], *, cancelled: Callable[[], bool] | None = None) -> bytes:
    """Stored rows (a SQLite session's events) as the JSON lines a viewer shows, joined by newlines."""
    parts = []
    for i, rec in enumerate(records):
        parts.append(js_dumps(rec))
        if cancelled is not None and i % ROWS_PER_CANCEL_CHECK == 0 and cancelled():
            raise RawDecodeCancelled()
    return b"\n".join(parts)


class LazyRows(Sequence[bytes]):
    """Stored rows as JSON lines rendered on access (a view that paints 50 of 200,000 renders 50)."""

    __slots__ = ("_records",)

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...
    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [js_dumps(r) for r in self._records[index]]
        return js_dumps(self._records[index])


__all__ = [
    "BAD_FRAME",
    "FRAMES_PER_PROGRESS",
    "ROWS_PER_CANCEL_CHECK",
    "TORN_FRAME",
    "TORN_LINE",
    "UNDECODABLE",
    "UNDECODABLE_TORN_FRAME",
    "LazyRows",
    "RawChunk",
    "RawDamage",
    "RawDecodeCancelled",
    "RawLines",
    "RawPiece",
    "decode_raw",
    "iter_raw",
    "render_rows",
    "split_lines",
]

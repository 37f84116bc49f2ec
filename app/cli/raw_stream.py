"""``sessionscope raw`` as bytes: the transcript's plaintext goes to stdout without becoming a ``str``.

Why: ``read_raw`` must return a ``str`` (contract), so the verb used to decode the whole text as
UTF-8, and the output layer then encoded it again: two passes and three copies of the text for
bytes that are already what stdout wants.  Here the engine's bytes-level read (``read_raw_bytes``)
and its frame decoder give the same plaintext; each chunk is checked (``isascii``, else a strict
decode that is dropped at once) and written as it is.  Invalid UTF-8 is replaced exactly as
``decode("utf-8", "replace")`` then ``encode`` would replace it.

The output is today's, byte for byte, or today's path is taken:
- every check ``read_raw`` makes is made first, with the engine's own functions: the root preflight
  (``read_stored_revision`` runs it), the complete zstd frames, the header line judged by
  ``read_header_outcome`` (and checked to be the very line read), the session id, the header value.
  Anything not plainly fine (an error, an absent log, a SQLite store) falls back to ``read_raw``
  itself, so a refusal keeps its exact class and message;
- nothing is written until all of the plaintext is decoded: a failure leaves stdout clean;
- a stream that is not UTF-8, has no byte buffer, or sits on a platform that translates newlines
  gets text, one chunk at a time (chunks end at newlines, so decoding them one by one equals
  decoding the whole: a newline is never part of a UTF-8 sequence).

May import the standard library, ``app.cli.output`` and the engine's public API.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

from app.cli.output import write_out
from persistence import (
    CoordinatedPersistence,
    SessionHeader,
    SessionRawArtifact,
    complete_plaintext,
    read_header_line,
    read_header_outcome,
)

# Bytes per write (cut at a newline): large enough that checks and writes are a few C calls per
# megabyte, small enough that a transient copy (a replaced chunk, a text-path str) stays small.
CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True, repr=False)
class RawPlain:
    """A transcript's plaintext as ``read_raw`` would decode it, still bytes (zstd: one piece per frame)."""

    pieces: tuple[bytes, ...]

    def __repr__(self) -> str:
        # Short on purpose: Python 3.11's ``asyncio.run`` formats the main task's result (this value)
        # while restoring its SIGINT handler, and the generated repr of 5 MB of bytes cost ~35 ms.
        return f"RawPlain(<{len(self.pieces)} pieces, {sum(map(len, self.pieces))} bytes>)"


async def read_raw_plain(store: CoordinatedPersistence, session_id: str) -> RawPlain | SessionRawArtifact | None:
    """The plaintext ``read_raw`` would decode, or ``read_raw``'s own answer when anything is unusual."""
    try:
        plain = await _plain_if_plainly_fine(store, session_id)
    except Exception:  # any doubt takes the contract path, which raises its own error
        plain = None
    if plain is not None:
        return plain
    return await store.read_raw(session_id)


async def _plain_if_plainly_fine(store: CoordinatedPersistence, session_id: str) -> RawPlain | None:
    if not store.supports_raw_artifacts:
        return None
    # ``read_raw`` starts with the root preflight, then finds the log: so does this (None: no log).
    if await store.read_stored_revision(session_id) is None:
        return None
    raw = await store.read_raw_bytes(session_id)
    if raw is None:
        return None
    pieces = complete_plaintext(raw)  # a torn final frame is left out, as read_raw does
    if not pieces:
        return None
    first = _first_line(pieces)
    meta, problem, _status, _detail = read_header_outcome(raw.path, raw.compression)
    if problem is not None or meta is None or meta.get("id") != session_id:
        return None
    if read_header_line(raw.path, raw.compression) != first:  # the line judged is the line read
        return None
    SessionHeader.from_json(meta)  # read_raw builds it: a header it cannot build is its error to raise
    return RawPlain(pieces)


def _first_line(pieces: tuple[bytes, ...]) -> bytes:
    """The plaintext up to its first newline (all of it when there is none), as ``read_raw`` reads it."""
    out = bytearray()
    for piece in pieces:
        nl = piece.find(b"\n")
        if nl >= 0:
            out += piece[:nl]
            return bytes(out)
        out += piece
    return bytes(out)


def newline_chunks(pieces: Iterable[bytes], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The concatenated ``pieces`` again, cut only just after newlines, in chunks of about ``size`` bytes."""
    carry = b""
    for piece in pieces:
        if carry:
            piece = carry + piece
        pos, n = 0, len(piece)
        while n - pos > size:
            cut = piece.rfind(b"\n", pos, pos + size)
            if cut < 0:
                cut = piece.find(b"\n", pos + size)
                if cut < 0:
                    break
            yield piece[pos : cut + 1]
            pos = cut + 1
        last = piece.rfind(b"\n", pos)
        if last >= 0:
            yield piece[pos : last + 1]
            pos = last + 1
        carry = piece[pos:]
    if carry:
        yield carry


def utf8_as_read_raw_writes_it(chunk: bytes) -> bytes:
    """``chunk.decode("utf-8", "replace").encode("utf-8")``, without the copies when it is valid."""
    if chunk.isascii():
        return chunk
    try:
        chunk.decode("utf-8")  # valid UTF-8 encodes back to exactly itself
    except UnicodeDecodeError:
        return chunk.decode("utf-8", "replace").encode("utf-8")
    return chunk


def _bytes_stream_ok(stream: TextIO) -> bool:
    """Whether bytes written to ``stream.buffer`` are what ``write_out`` would have produced."""
    if not hasattr(stream, "buffer") or os.linesep != "\n":
        return False
    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name == "utf-8"
    except LookupError:
        return False


def write_raw(value: RawPlain | SessionRawArtifact, stream: TextIO) -> None:
    """Print the transcript as ``raw`` always has: the text, plus a newline when it lacks a final one."""
    if not isinstance(value, RawPlain):
        text = value.content
        write_out(stream, text if text.endswith("\n") else text + "\n")
        return
    ends_with_newline = False
    if _bytes_stream_ok(stream):
        stream.flush()
        out = stream.buffer
        for chunk in newline_chunks(value.pieces):
            out.write(utf8_as_read_raw_writes_it(chunk))
            ends_with_newline = chunk.endswith(b"\n")
        if not ends_with_newline:
            out.write(b"\n")
        out.flush()
        return
    for chunk in newline_chunks(value.pieces):
        write_out(stream, chunk.decode("utf-8", "replace"))
        ends_with_newline = chunk.endswith(b"\n")
    if not ends_with_newline:
        write_out(stream, "\n")


__all__ = ["CHUNK_BYTES", "RawPlain", "newline_chunks", "read_raw_plain", "utf8_as_read_raw_writes_it", "write_raw"]

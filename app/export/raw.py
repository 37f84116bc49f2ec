"""The JSONL export: the decoded transcript, byte for byte what ``sessionscope raw`` prints.

How the bytes are made equal (not just similar): ``raw`` prints the text of the engine's
``read_raw`` (its streaming path is proven to print the same bytes, see ``app/cli/raw_stream.py``),
plus a newline when the text lacks a final one, encoded as UTF-8 with ``backslashreplace`` (what
``write_out`` does on a UTF-8 stream).  This module makes the same public call and the same
encoding, written in slices so no second full-size copy of the text is made.  A refusal of
``read_raw`` (a corrupt header, a missing session) is raised as it is, so the error is ``raw``'s too.

A SQLite store has no text artifact (``raw`` refuses it: "does not expose raw artifacts"), so its
JSONL is rendered from the session's stored rows as a JSONL transcript: the header line a JSONL
store would write (``SessionHeader.header_line``), then one event per line in the engine's
JS-compatible JSON (``js_dumps``, as the window's Raw tab renders rows), packed runs expanded one run
at a time.

May import: the standard library and the public ``persistence``.
"""

from __future__ import annotations

from typing import Protocol

from persistence import (
    CoordinatedPersistence,
    PackedRun,
    SessionPersistenceError,
    SessionView,
    js_dumps,
    not_found,
)

ENCODE_SLICE_CHARS = 1 << 20  # characters encoded per write: a 1M-character slice is a few MB at most


class ByteSink(Protocol):
    """Where bytes go: a file, a ZIP member, a hashing wrapper."""

    def write(self, data: bytes, /) -> object: ...


def write_text(out: ByteSink, text: str) -> int:
    """Write ``text`` as ``raw`` prints it (UTF-8, backslashreplace, final newline added); bytes written."""
    n = 0
    for start in range(0, len(text), ENCODE_SLICE_CHARS):
        piece = text[start : start + ENCODE_SLICE_CHARS]
        # A slice boundary could split a surrogate pair only in text that holds surrogates, which a
        # UTF-8 decode never makes; backslashreplace then escapes each one alone, exactly as a whole encode would.
        data = piece.encode("utf-8", "backslashreplace")
        out.write(data)
        n += len(data)
    if not text.endswith("\n"):
        out.write(b"\n")
        n += 1
    return n


def write_rows(out: ByteSink, view: SessionView) -> int:
    """A readable SQLite session as a JSONL transcript (header line, one event per line); bytes written."""
    if view.header is None:
        raise SessionPersistenceError(f'session "{view.session_id}" cannot be read ({view.status}): {view.reason}')
    n = 0
    line = js_dumps(view.header.header_line()) + b"\n"
    out.write(line)
    n += len(line)
    for item in view.stored.record_table().segments():
        if type(item) is PackedRun:
            data = b"".join(js_dumps(m) + b"\n" for m in item.members())
        else:
            data = js_dumps(item) + b"\n"
        out.write(data)
        n += len(data)
    return n


async def readable_view(store: CoordinatedPersistence, session_id: str) -> SessionView:
    """The session's view, or the engine's refusal as an error (missing: not found)."""
    view = await store.view(session_id)
    if view.status == "missing":
        raise not_found(session_id)
    if not view.readable:
        raise SessionPersistenceError(f'session "{session_id}" cannot be read ({view.status}): {view.reason}')
    return view


async def write_jsonl(store: CoordinatedPersistence, session_id: str, out: ByteSink) -> int:
    """The JSONL export of one session into ``out``; bytes written."""
    if store.supports_raw_artifacts:
        artifact = await store.read_raw(session_id)
        if artifact is None:
            raise not_found(session_id)
        return write_text(out, artifact.content)
    return write_rows(out, await readable_view(store, session_id))


__all__ = ["ByteSink", "readable_view", "write_jsonl", "write_rows", "write_text"]

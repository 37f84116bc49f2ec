"""Damaged logs whose readable part still names them, on every backend (issue 24 item 5).

``build_damaged(name, storage)`` writes two sessions into a fresh store of backend ``name``: ``CORRUPT``
(damage inside the committed region after its first turn: a broken line, a frame failing its checksum,
a row that does not decode) and ``UNSUPPORTED`` (format version 1, every byte readable).  Both hold a
``session/title`` and a prompt with a word of their own in the readable part, so a test can ask every
viewer (list, banner, lineage, search, stats, timeline, ``show``) whether it still shows them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import sessionkit as sk
from livekit import open_backend

from persistence import EventType
from persistence.jsonl.frames import compress_frame

BACKENDS = ("jsonl-zstd", "jsonl-none", "sqlite")
CORRUPT = "corrupt-titled"
UNSUPPORTED = "unsupported-titled"
TITLE = {CORRUPT: "Zebra corrupt title", UNSUPPORTED: "Quokka unsupported title"}
WORD = {CORRUPT: "zebrafish", UNSUPPORTED: "quokkaland"}
CWD = sk.WORK
READABLE_EVENTS = 7  # the first turn, the title among it
TOOL_OUTPUT = "line one of the output\nline two\nline three\nline four\nline five\nline six\nline seven"


def readable_turn(sid: str) -> list[dict[str, Any]]:
    """Turn 1 (seqs 0-6): the prompt with the session's word, its title, one step with a tool call and its result."""
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, f"please fix the {WORD[sid]} parser", f"{sid}-user"),
        sk.ev(EventType.SESSION_TITLE, 2, {"title": TITLE[sid], "messageSeqs": [1], "source": {"kind": "fallback"}}),
        sk.step_start(3, 1, 1),
        sk.tool_call(4, 1, 1, "call-1", "bash"),
        sk.tool_result(5, 1, 1, "call-1", TOOL_OUTPUT),
        sk.step_end(6, 1, 1),
    ]


def later_turn() -> list[dict[str, Any]]:
    """What follows the damage (seqs 7-10): never part of a readable prefix of ``CORRUPT``."""
    return [sk.turn_end(7, 1), sk.turn_start(8, 2), sk.user_message(9, "after the damage", "after-user"), sk.turn_end(10, 2)]


def compression_of(name: str) -> str:
    return "none" if name == "jsonl-none" else "zstd"


def storage_of(name: str, folder: Path) -> Path:
    return folder / "store.sqlite" if name == "sqlite" else folder / "root"


def build_damaged(name: str, storage: Path) -> None:
    """Write ``CORRUPT`` and ``UNSUPPORTED`` into ``storage`` (a root, or a SQLite file) and damage them."""

    async def write() -> None:
        store = open_backend(name, storage)
        try:
            for sid in (CORRUPT, UNSUPPORTED):
                await store.create(sk.meta(sid, CWD))
                await store.append(sid, readable_turn(sid))
                await store.append(sid, later_turn())
        finally:
            await store.close()

    sk.run(write())
    if name == "sqlite":
        con = sqlite3.connect(storage, timeout=5)
        try:
            with con:
                con.execute("UPDATE events SET data = ? WHERE session_id = ? AND seq = 7", ('{"turn":', CORRUPT))
                con.execute("UPDATE sessions SET version = 1 WHERE id = ?", (UNSUPPORTED,))
        finally:
            con.close()
        return
    compression = compression_of(name)
    for sid in (CORRUPT, UNSUPPORTED):
        path = sk.artifact(storage, CWD, sid, compression)
        version = 1 if sid == UNSUPPORTED else 0
        head = sk.encode_log(sk.header_line(sid, CWD, version=version), [readable_turn(sid)], compression)
        if sid == UNSUPPORTED:
            path.write_bytes(head + sk.encode_log(b"", [later_turn()], compression)[len(_empty(compression)) :])
        elif compression == "zstd":
            bad = bytearray(compress_frame(b"".join(_lines(later_turn()[:1]))))
            bad[-1] ^= 0xFF  # the frame's checksum fails; decoding goes on after it
            rest = sk.encode_log(b"", [later_turn()[1:]], compression)[len(_empty(compression)) :]
            path.write_bytes(head + bytes(bad) + rest)
        else:
            rest = b"".join(_lines(later_turn()[1:]))
            path.write_bytes(head + b'{"type":"turn/end","seq":7,\n' + rest)


def _empty(compression: str) -> bytes:
    return compress_frame(b"") if compression == "zstd" else b""


def _lines(events: list[dict[str, Any]]) -> list[bytes]:
    from persistence import js_dumps

    return [js_dumps(e) + b"\n" for e in events]

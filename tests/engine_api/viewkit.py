"""Stores holding one session per diagnosis status, on every backend (for the public read API tests).

``build_store(name, storage)`` writes, through the engine, sessions named after the status they end
up with, then damages some of them on disk the way a crash or a newer harness would:

- ``ok``: one balanced turn;               ``open-turn``: a second turn left open;
- ``torn-tail``: a record cut short after the committed ones (JSONL: a half line or a cut frame;
  SQLite: a row whose data does not decode);
- ``corrupt``: damage inside the committed region (JSONL: a broken line / a frame failing its
  checksum; SQLite: a header row that fails validation);
- ``unsupported``: the log says format version 1;  ``missing``: never written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from livekit import open_backend
from sessionkit import WORK, artifact, encode_log, header_line, meta, one_turn_log, open_turn2, run

from persistence.jsonl.frames import compress_frame

STATUSES = ("ok", "open-turn", "torn-tail", "corrupt", "unsupported", "missing")
WRITTEN = STATUSES[:-1]
# A torn, newline-less fragment of an assistant/chunk record (persistence-contract §9.0 corrupt_tail).
TORN_FRAGMENT = b'{"type":"assistant/chunk","seq":%d,"ti'


def compression_of(name: str) -> str:
    return "none" if name == "jsonl-none" else "zstd"


def build_store(name: str, storage: Path) -> None:
    """Write the sessions of ``STATUSES`` into ``storage`` for backend ``name`` and damage them."""

    async def write() -> None:
        store = open_backend(name, storage)
        try:
            for sid in WRITTEN:
                await store.create(meta(sid, WORK))
                await store.append(sid, one_turn_log() + (open_turn2() if sid == "open-turn" else []))
        finally:
            await store.close()

    run(write())
    if name == "sqlite":
        _damage_sqlite(storage)
    else:
        _damage_jsonl(storage, compression_of(name))


def _damage_jsonl(root: Path, compression: str) -> None:
    torn = artifact(root, WORK, "torn-tail", compression)
    fragment = TORN_FRAGMENT % 6
    with open(torn, "ab") as f:
        f.write(fragment if compression == "none" else compress_frame(fragment)[:-2])
    corrupt = artifact(root, WORK, "corrupt", compression)
    data = bytearray(corrupt.read_bytes())
    if compression == "zstd":
        data[-6] ^= 0xFF  # inside the last event frame: its content checksum no longer matches
    else:
        lines = bytes(data).split(b"\n")
        lines[3] = b'{"type":"step/start","seq":2,'  # a broken line inside the committed region
        data = bytearray(b"\n".join(lines))
    corrupt.write_bytes(bytes(data))
    future = artifact(root, WORK, "unsupported", compression)
    future.write_bytes(encode_log(header_line("unsupported", WORK, version=1), [one_turn_log()], compression))


def _damage_sqlite(db: Path) -> None:
    con = sqlite3.connect(db, timeout=5)
    try:
        with con:
            con.execute(
                "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, 'assistant/chunk', ?, ?)",
                ("torn-tail", 6, 7, '{"type":"text-delta","ind'),
            )
            con.execute("UPDATE sessions SET cwd = 'relative/dir' WHERE id = 'corrupt'")
            con.execute("UPDATE sessions SET version = 1 WHERE id = 'unsupported'")
    finally:
        con.close()

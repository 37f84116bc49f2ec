"""The floor for a read: the least work any engine must do to get the same bytes into Python objects.

Printed beside the engine's numbers so the distance to the limit is visible (issue 12). Each floor
uses only the libraries underneath the engine (zstandard, orjson, sqlite3) and skips everything the
engine adds on top: validation, normalization, crash closers, header checks and event objects.

- JSONL: read the file, decompress every zstd frame, ``orjson.loads`` every line.
- SQLite: ``SELECT`` every event row of the session, decode its ``data`` column (JSON text, or a zstd
  BLOB: ``persistence/sqlite/datacodec.py``) and ``orjson.loads`` it.
- Listings: walk the root (or ``SELECT`` the sessions table) and parse each header.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

import orjson
import zstandard

# Bytes read from the front of each transcript for a listing floor: a header frame (or line) is a
# few hundred bytes; 4 KiB covers it with room to spare and is one page read.
HEADER_READ_BYTES = 4096
SQLITE_FILENAME = "sessions.sqlite"
_TRANSCRIPTS = ("session.jsonl.zstd", "session.jsonl")


def read_plain(path: str, zstd: bool) -> bytes:
    """The transcript's JSONL text as bytes: every frame decompressed (zstd), or the file as is."""
    with open(path, "rb") as f:
        data = f.read()
    if zstd:
        # One decompressor object reading across frames: the transcript is one frame per append batch.
        return zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(data)
    return data


def jsonl_parse(path: str, zstd: bool) -> list[Any]:
    """Read + decompress + ``orjson.loads`` every line (header line included)."""
    loads = orjson.loads
    return [loads(line) for line in read_plain(path, zstd).split(b"\n") if line]


def jsonl_text(path: str, zstd: bool) -> str:
    """Read + decompress + UTF-8 decode: the floor for ``read_raw``, which returns ``str``."""
    return read_plain(path, zstd).decode("utf-8")


def jsonl_tail(path: str, zstd: bool, n_lines: int) -> list[Any]:
    """Read + decompress everything (a cold reader cannot seek by seq) + parse the last ``n_lines`` lines."""
    lines = read_plain(path, zstd).rstrip(b"\n").rsplit(b"\n", n_lines)[-n_lines:]
    return [orjson.loads(line) for line in lines]


def _connect_ro(db: str) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def sqlite_parse(db: str, session_id: str, from_seq: int = 0) -> list[Any]:
    """``SELECT`` the session's event rows (from ``from_seq``) + decode ``data`` + ``orjson.loads``."""
    loads = orjson.loads
    # Data BLOBs are single frames written with their content size, so the one-shot decompress applies.
    unzstd = zstandard.ZstdDecompressor().decompress
    con = _connect_ro(db)
    try:
        rows = con.execute(
            "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable FROM events "
            "WHERE session_id = ? AND seq >= ? ORDER BY seq",
            (session_id, from_seq),
        ).fetchall()
    finally:
        con.close()
    return [loads(row[3] if type(row[3]) is str else unzstd(row[3])) for row in rows]


def sqlite_list(db: str) -> list[Any]:
    """Every ``sessions`` row (header columns and revision): the floor for ``list`` and ``list_snapshots``."""
    con = _connect_ro(db)
    try:
        return con.execute("SELECT * FROM sessions").fetchall()
    finally:
        con.close()


def jsonl_list(root: str) -> list[Any]:
    """Walk ``root/<project>/<session>/``, read each transcript's first line (first frame) and parse it.

    ``fstat`` of each file stands in for the revision ``list_snapshots`` reports.
    """
    out: list[Any] = []
    with os.scandir(root) as projects:
        for project in projects:
            if not project.is_dir(follow_symlinks=False):
                continue
            with os.scandir(project.path) as sessions:
                for session in sessions:
                    if not session.is_dir(follow_symlinks=False):
                        continue
                    for name in _TRANSCRIPTS:
                        try:
                            f = open(os.path.join(session.path, name), "rb")
                        except FileNotFoundError:
                            continue
                        with f:
                            head = f.read(HEADER_READ_BYTES)
                            size = os.fstat(f.fileno()).st_size
                        if name.endswith(".zstd"):
                            # Without read_across_frames the object stops at the end of the header frame.
                            head = zstandard.ZstdDecompressor().decompressobj().decompress(head)
                        out.append((orjson.loads(head.split(b"\n", 1)[0]), size))
    return out

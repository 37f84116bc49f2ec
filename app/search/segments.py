"""Moving a finished FTS5 index from one file into another without tokenizing its text again.

Why: tokenizing is the cold build's floor.  On a 1,500-session root (27,000 rows, 9.4 M characters)
the trigram tokenizer alone took 2.4-3.1 s of one core, over 60% of the whole build, and one SQLite
file has one writer.  A parallel build therefore lets each worker process write its own small index
file (a *shard*: ``docs`` rows and the ``fts``/``cjk`` tables over them, rowids already the final
ones) and the indexer adopts each shard's segments: its ``docs`` rows are copied with one
``INSERT … SELECT`` and its FTS5 segments (``<table>_data`` pages, ``<table>_idx`` entries) are
copied under new segment ids and listed in the target's structure record.  Adopting a 250-session
shard costs a few milliseconds of copying where tokenizing it costs hundreds.

What this relies on, FTS5's on-disk format (``fts5_index.c``, stable since 3.9):

- ``<table>_data`` rowid 10 is the structure record: a 4-byte cookie, varints nLevel, nSegment,
  nWriteCounter, then per level nMerge, nSeg and per segment its id, first and last page.  A record
  in another shape (the V2 records of contentless-delete tables, an incremental merge in progress:
  nMerge > 0) is refused with ``UnsupportedStructure``; the caller then indexes the rows the slow way;
- rowid 1 holds the averages (varints: rows, then tokens per column), summed here;
- every other rowid is a page of a segment: segment id in the bits above 37, so a page moves to
  another segment id by replacing those bits; ``<table>_idx`` names segments by id too;
- the doclists hold the rows' rowids: the shard's rowids are the target's (the caller allocates them).

The adopting connection must not have used the target FTS5 table itself: FTS5 caches the structure per
connection and only notices other connections' commits (``PRAGMA data_version``).

May import: the standard library only.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

STRUCTURE_ROWID = 10
AVERAGES_ROWID = 1
SEGID_SHIFT = 37  # FTS5_DATA_PAGE_B + FTS5_DATA_HEIGHT_B + FTS5_DATA_DLI_B
MAX_SEGID = 65535  # FTS5_MAX_SEGMENT
PAGE_BITS = (1 << SEGID_SHIFT) - 1
MAX_LEVELS = 60  # below FTS5_MAX_LEVEL (64); past it adopted segments share the top level


class UnsupportedStructure(Exception):
    """A structure record this module does not know how to merge (the caller falls back to tokenizing)."""


@dataclass(frozen=True, slots=True)
class Segment:
    segid: int
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class Structure:
    cookie: bytes
    write_counter: int
    levels: tuple[tuple[Segment, ...], ...]

    def segids(self) -> set[int]:
        return {s.segid for level in self.levels for s in level}


def get_varint(data: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at ``data[i:]`` (big-endian 7-bit groups, a 9th byte of 8 bits): value, next offset."""
    value = 0
    for n in range(8):
        if i >= len(data):
            raise UnsupportedStructure("a truncated varint")
        b = data[i]
        i += 1
        value = (value << 7) | (b & 0x7F)
        if not b & 0x80:
            return value, i
        del n
    if i >= len(data):
        raise UnsupportedStructure("a truncated varint")
    return (value << 8) | data[i], i + 1


def put_varint(value: int) -> bytes:
    """SQLite's varint encoding of ``value`` (0 <= value < 2**64)."""
    if value < 0:
        raise ValueError(value)
    if value >= 1 << 56:
        out = [value & 0xFF]
        value >>= 8
        for _ in range(8):
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(out))
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(groups))


def parse_structure(data: bytes) -> Structure:
    if len(data) < 4 or data[:4] == b"\xff\x00\x00\x01":
        raise UnsupportedStructure("a version-2 structure record")
    n_level, i = get_varint(data, 4)
    n_segment, i = get_varint(data, i)
    counter, i = get_varint(data, i)
    levels = []
    total = 0
    for _ in range(n_level):
        merge, i = get_varint(data, i)
        n_seg, i = get_varint(data, i)
        if merge:
            raise UnsupportedStructure("an incremental merge in progress")
        segs = []
        for _ in range(n_seg):
            segid, i = get_varint(data, i)
            first, i = get_varint(data, i)
            last, i = get_varint(data, i)
            segs.append(Segment(segid, first, last))
        total += n_seg
        levels.append(tuple(segs))
    if total != n_segment or i != len(data):
        raise UnsupportedStructure("a structure record of another shape")
    return Structure(data[:4], counter, tuple(levels))


def encode_structure(s: Structure) -> bytes:
    out = [s.cookie, put_varint(len(s.levels)), put_varint(sum(len(lv) for lv in s.levels)), put_varint(s.write_counter)]
    for level in s.levels:
        out.append(put_varint(0))
        out.append(put_varint(len(level)))
        for seg in level:
            out += [put_varint(seg.segid), put_varint(seg.first), put_varint(seg.last)]
    return b"".join(out)


def _varints(data: bytes) -> list[int]:
    out = []
    i = 0
    while i < len(data):
        v, i = get_varint(data, i)
        out.append(v)
    return out


def _block(conn: sqlite3.Connection, schema: str, table: str, rowid: int) -> bytes | None:
    row = conn.execute(f"SELECT block FROM {schema}.{table}_data WHERE id = ?", (rowid,)).fetchone()
    return None if row is None else bytes(row[0])


def _structure(conn: sqlite3.Connection, schema: str, table: str) -> Structure:
    data = _block(conn, schema, table, STRUCTURE_ROWID)
    if data is None:
        raise UnsupportedStructure("no structure record")
    return parse_structure(data)


def check_mergeable(conn: sqlite3.Connection, schema: str, table: str) -> None:
    """Raise ``UnsupportedStructure`` unless ``schema.table``'s segments can be adopted (read only)."""
    _structure(conn, schema, table)


def adopt_segments(conn: sqlite3.Connection, table: str, shard: str) -> int:
    """Move the segments of FTS5 table ``table`` of the attached database ``shard`` into ``main.table``
    (inside the caller's transaction); the number of segments adopted.

    Both tables must have been created by the same statement; the shard's rowids must be new to the
    target.  Raises ``UnsupportedStructure`` (nothing written) when either structure is not one this
    module can merge.
    """
    target = _structure(conn, "main", table)
    source = _structure(conn, shard, table)
    used = target.segids()
    remap: dict[int, int] = {}
    candidate = 1
    for seg in sorted(source.segids()):
        while candidate in used:
            candidate += 1
        if candidate > MAX_SEGID:
            raise UnsupportedStructure("no free segment id")
        remap[seg] = candidate
        used.add(candidate)
        candidate += 1
    for old, new in remap.items():
        conn.execute(
            f"INSERT INTO main.{table}_data(id, block) SELECT (? << {SEGID_SHIFT}) | (id & {PAGE_BITS}), block "
            f"FROM {shard}.{table}_data WHERE id >= (? << {SEGID_SHIFT}) AND id < ((? + 1) << {SEGID_SHIFT})",
            (new, old, old),
        )
        conn.execute(
            f"INSERT INTO main.{table}_idx(segid, term, pgno) SELECT ?, term, pgno FROM {shard}.{table}_idx WHERE segid = ?",
            (new, old),
        )
    # The rows' own tables, where the FTS5 table keeps them (``cjk`` holds its content; ``fts`` is external).
    for suffix in ("content", "docsize"):
        name = f"{table}_{suffix}"
        if conn.execute(f"SELECT 1 FROM {shard}.sqlite_master WHERE name = ?", (name,)).fetchone():
            conn.execute(f"INSERT INTO main.{name} SELECT * FROM {shard}.{name}")
    mine, theirs = _block(conn, "main", table, AVERAGES_ROWID), _block(conn, shard, table, AVERAGES_ROWID)
    if theirs is not None:
        a, b = _varints(mine or b""), _varints(theirs)
        width = max(len(a), len(b))
        a += [0] * (width - len(a))
        b += [0] * (width - len(b))
        merged = b"".join(put_varint(x + y) for x, y in zip(a, b, strict=True))
        conn.execute(f"INSERT OR REPLACE INTO main.{table}_data(id, block) VALUES (?, ?)", (AVERAGES_ROWID, merged))
    # Each adopted segment on a level of its own, above the target's: FTS5 merges a level once it holds
    # ``automerge`` (4) segments, and all at once when it holds ``crisismerge`` (16), at the next write.
    # Adopted side by side on one level, 30 chunks made the first append after a cold build pay a whole
    # merge (0.8 s); one per level, later writes merge them a little at a time, as FTS5 does its own.
    levels = [list(lv) for lv in target.levels]
    while levels and not levels[-1]:
        levels.pop()
    for level in source.levels:
        for adopted in level:
            moved = Segment(remap[adopted.segid], adopted.first, adopted.last)
            if len(levels) < MAX_LEVELS:
                levels.append([moved])
            else:
                levels[-1].append(moved)
    merged_structure = Structure(target.cookie, target.write_counter + source.write_counter, tuple(tuple(lv) for lv in levels))
    conn.execute(f"UPDATE main.{table}_data SET block = ? WHERE id = ?", (encode_structure(merged_structure), STRUCTURE_ROWID))
    return len(remap)


__all__ = [
    "Segment",
    "Structure",
    "UnsupportedStructure",
    "adopt_segments",
    "check_mergeable",
    "encode_structure",
    "get_varint",
    "parse_structure",
    "put_varint",
]

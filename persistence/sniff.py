"""What a file holds, told by its first bytes, never by its name: a received transcript is often renamed
by a mail client (``transcript(1).zst``, ``customer log.txt``).

``open_store`` uses it to open a lone transcript file instead of refusing it as "not a SQLite
database"; the app's source opener (``app.sources``) uses it for every file of a case folder.  Reads
only: a plain ``open`` for reading, which changes neither the bytes nor the mtime.
"""

from __future__ import annotations

import os

from persistence.model.jsontext import JsonTextError, js_loads

# The first 16 bytes of every SQLite 3 database file (https://www.sqlite.org/fileformat.html §1.3.1).
SQLITE_MAGIC = b"SQLite format 3\x00"
# A Zstandard frame (RFC 8878 §3.1.1): every zstd transcript starts with its header frame.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# How much of a plain file is read looking for the end of its first line: a header is small; a first
# "line" longer than this is not a transcript header we would recognise.
SNIFF_LINE_LIMIT = 1 << 20


def _first_bytes(path: str, n: int) -> bytes:
    with open(path, "rb") as f:
        return f.read(n)


def transcript_compression(path: str | os.PathLike[str]) -> str | None:
    """``"zstd"`` or ``"none"`` when the regular file at ``path`` is a session transcript by its content,
    else None (a folder, a link, a database, text that is not a transcript).

    zstd: the frame magic (the header frame itself is checked when the transcript is read, with the
    engine's exact message).  Plain: the first line is a JSON object of ``"type": "session"``, the
    header record's mark (its other fields are judged by the read, so an unsupported version still
    opens and says so).  ``OSError`` (unreadable) propagates.
    """
    p = os.fspath(path)
    if os.path.islink(p) or not os.path.isfile(p):
        return None
    head = _first_bytes(p, 4)
    if head == ZSTD_MAGIC:
        return "zstd"
    if head[:1] != b"{":
        return None
    with open(p, "rb") as f:
        data = f.read(SNIFF_LINE_LIMIT)
    nl = data.find(b"\n")
    line = data if nl < 0 else data[:nl]
    try:
        value = js_loads(line)
    except (JsonTextError, ValueError):
        return None
    return "none" if type(value) is dict and value.get("type") == "session" else None


def is_sqlite_file(path: str | os.PathLike[str]) -> bool:
    """Whether the regular file at ``path`` starts with the SQLite 3 magic."""
    p = os.fspath(path)
    if os.path.islink(p) or not os.path.isfile(p):
        return False
    return _first_bytes(p, len(SQLITE_MAGIC)) == SQLITE_MAGIC


__all__ = ["SNIFF_LINE_LIMIT", "SQLITE_MAGIC", "ZSTD_MAGIC", "is_sqlite_file", "transcript_compression"]

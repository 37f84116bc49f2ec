"""``sniff(path)``: the kind of source a path is, by content (magic bytes, a header line), never by name.

May import the standard library, ``app.sources.model`` and the public ``persistence``.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.sources.model import SourceKind
from persistence import is_sqlite_file, transcript_compression

# A ZIP file's first local file header, or the end record of an empty archive (APPNOTE 4.3.7, 4.3.16).
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


def sniff(path: Path) -> SourceKind | None:
    """The source kind of the regular file at ``path`` by its content, or None for anything else
    (a folder, a symbolic link, a file SessionScope does not read).

    zstd magic ``28 b5 2f fd`` or a JSONL header line: TRANSCRIPT; ``SQLite format 3\\0``: SQLITE_STORE;
    ``PK\\x03\\x04``: BUNDLE (the bundle's own check says whether it is a SessionScope bundle).
    ``OSError`` (an unreadable file) propagates.  Reads only; changes no byte and no mtime.
    """
    p = os.fspath(path)
    if os.path.islink(p) or not os.path.isfile(p):
        return None
    with open(p, "rb") as f:
        head = f.read(4)
    if head in ZIP_MAGICS:
        return SourceKind.BUNDLE
    if is_sqlite_file(p):
        return SourceKind.SQLITE_STORE
    if transcript_compression(p) is not None:
        return SourceKind.TRANSCRIPT
    return None


__all__ = ["ZIP_MAGICS", "sniff"]

"""Store identity and revision tokens (spec §5).

The file part (dev, inode, birth time) tells copies of one database apart; ``store_id``
tells different databases apart.  Python 3.11 on Linux has no ``st_birthtime``, so the
birth time comes from ``statx`` through ctypes, which reproduces upstream's token exactly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterable
from typing import Any

_AT_FDCWD = -100
_STATX_BASIC_STATS = 0x7FF
_STATX_BTIME = 0x800
_BTIME_OFFSET = 80  # struct statx: stx_btime {i64 tv_sec; u32 tv_nsec; i32 pad} at byte 80
_STATX_SIZE = 256


def _load_statx() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.statx
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


_statx = _load_statx()


def birthtime_ns(path: str) -> int:
    """Birth time in ns like Node's ``birthtimeNs``; 0 (Node's value too) where the fs does not record it."""
    if _statx is None:
        return 0
    buf = ctypes.create_string_buffer(_STATX_SIZE)
    if _statx(_AT_FDCWD, os.fsencode(path), 0, _STATX_BASIC_STATS | _STATX_BTIME, buf) != 0:
        return 0
    raw = buf.raw
    mask = int.from_bytes(raw[0:4], "little")
    if not mask & _STATX_BTIME:
        return 0
    sec = int.from_bytes(raw[_BTIME_OFFSET : _BTIME_OFFSET + 8], "little", signed=True)
    nsec = int.from_bytes(raw[_BTIME_OFFSET + 8 : _BTIME_OFFSET + 12], "little")
    return sec * 1_000_000_000 + nsec


def file_store_identity(path: str, store_id: str) -> str:
    """The identity of a store file: device, inode, birth time and the stored store id."""
    st = os.stat(path)
    return f"file:{st.st_dev}:{st.st_ino}:{birthtime_ns(path)}:store:{store_id}"


def memory_store_identity(store_id: str) -> str:
    """The identity of an in-memory store."""
    return f"memory:store:{store_id}"


def revision_token(store_identity: str, incarnation: str, revision: int) -> str:
    """A session's opaque revision: the store identity, its incarnation and revision counter."""
    return f"{store_identity}:incarnation:{incarnation}:revision:{revision}"


def revision_tokens(store_identity: str, incarnations: Iterable[str], revisions: Iterable[int]) -> list[str]:
    """``revision_token`` for many rows of one store (one f-string per row: a listing makes thousands)."""
    head = f"{store_identity}:incarnation:"
    return [f"{head}{incarnation}:revision:{revision}" for incarnation, revision in zip(incarnations, revisions, strict=True)]

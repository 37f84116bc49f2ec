"""Layout and injective path encoding of a JSONL root (jsonl-backend §3)."""

from __future__ import annotations

import os
from functools import lru_cache

from persistence.errors import SessionPersistenceError

RAW_SUFFIX = ".jsonl"
ZSTD_SUFFIX = ".jsonl.zstd"
NO_CWD_DIR = "_no-cwd"
ARTIFACT_NAME = "session.jsonl"
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEPARATORS = frozenset("/\\:")


class PathEncodingError(SessionPersistenceError):
    pass


def _code_units(raw: str) -> list[int]:
    b = raw.encode("utf-16-le", "surrogatepass")
    return [b[i] | (b[i + 1] << 8) for i in range(0, len(b), 2)]


@lru_cache(maxsize=65536)
def encode_segment(raw: str) -> str:
    """Session-id directory name: injective over all JS strings."""
    if raw == "":
        raise PathEncodingError("cannot encode an empty path segment")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    if all(c in _SAFE for c in raw):
        return raw
    out = []
    for u in _code_units(raw):
        ch = chr(u) if u < 0x80 else ""
        out.append(ch if ch and ch in _SAFE else f"~{u:04X}")
    return "".join(out)


@lru_cache(maxsize=4096)
def project_key(cwd: str) -> str:
    """Readable, lossy, bounded project directory name for a cwd."""
    if cwd == "":
        raise PathEncodingError("cannot encode an empty project path")
    out = []
    in_sep = False
    for u in _code_units(cwd):
        ch = chr(u) if u < 0x80 else ""
        if ch and ch in _SEPARATORS:
            if not in_sep:
                out.append("-")
            in_sep = True
        elif ch and ch in _SAFE:
            out.append(ch)
            in_sep = False
        else:
            out.append(f"~{u:04X}")
            in_sep = False
    slug = "".join(out).lstrip("-") or "root"
    return "--" + slug[:251] + "--"


def suffix_for(compression: str) -> str:
    return ZSTD_SUFFIX if compression == "zstd" else RAW_SUFFIX


def opposite(compression: str) -> str:
    return "none" if compression == "zstd" else "zstd"


def project_dir(root: str, cwd: object) -> str:
    if cwd is None:
        return os.path.join(root, NO_CWD_DIR)
    if not isinstance(cwd, str):
        raise PathEncodingError("session header cwd must be a string to name a storage path")
    return os.path.join(root, project_key(cwd))


def session_dir(root: str, cwd: object, session_id: str) -> str:
    if not isinstance(session_id, str):
        raise PathEncodingError("session id must be a string to name a storage path")
    return os.path.join(project_dir(root, cwd), encode_segment(session_id))


def log_path(root: str, cwd: object, session_id: str, compression: str) -> str:
    return os.path.join(session_dir(root, cwd, session_id), "session" + suffix_for(compression))

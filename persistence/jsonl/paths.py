"""Layout and injective path encoding of a JSONL root (jsonl-backend §3).

``encode_segment`` is upstream's (a session id -> its folder name); ``decode_segment`` is its exact
inverse over the names it produces, so the window and ``verify`` name a session whose header cannot
be read by the id the engine would look it up by.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from persistence.errors import SessionPersistenceError

RAW_SUFFIX = ".jsonl"
ZSTD_SUFFIX = ".jsonl.zstd"
NO_CWD_DIR = "_no-cwd"
ARTIFACT_NAME = "session.jsonl"
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEPARATORS = frozenset("/\\:")


class PathEncodingError(SessionPersistenceError):
    """A header value that cannot name a storage path (empty id or cwd, a non-string)."""

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


_ESCAPE = re.compile(r"~([0-9A-F]{4})")


def decode_segment(name: str) -> str | None:
    """The session id whose ``encode_segment`` is ``name``; None when no id encodes to it.

    Upstream never decodes (ids come from headers), so the only compatible answer is the exact
    inverse: ``~XXXX`` (four uppercase hex digits) is one UTF-16 code unit, every other character
    must be one ``encode_segment`` keeps literally, and the result must encode back to ``name``
    (``~0041`` is not a folder upstream would write for ``A``; lone surrogates round-trip).
    """
    units = bytearray()
    i = 0
    while i < len(name):
        m = _ESCAPE.match(name, i)
        if m is not None:
            units += int(m.group(1), 16).to_bytes(2, "little")
            i = m.end()
        elif ord(name[i]) < 0x80:
            units += ord(name[i]).to_bytes(2, "little")
            i += 1
        else:
            return None  # encode_segment escapes every non-ASCII code unit
    try:
        raw = units.decode("utf-16-le", "surrogatepass")
        return raw if raw and encode_segment(raw) == name else None
    except (UnicodeDecodeError, ValueError):
        return None


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
    """The transcript suffix of an encoding: ``.jsonl.zstd`` or ``.jsonl``."""
    return ZSTD_SUFFIX if compression == "zstd" else RAW_SUFFIX


def opposite(compression: str) -> str:
    """The other encoding (a mixed root holds both)."""
    return "none" if compression == "zstd" else "zstd"


def project_dir(root: str, cwd: object) -> str:
    """The project folder of a cwd (``_no-cwd`` for a session without one)."""
    if cwd is None:
        return os.path.join(root, NO_CWD_DIR)
    if not isinstance(cwd, str):
        raise PathEncodingError("session header cwd must be a string to name a storage path")
    return os.path.join(root, project_key(cwd))


def session_dir(root: str, cwd: object, session_id: str) -> str:
    """The session folder of an id under its cwd's project folder."""
    if not isinstance(session_id, str):
        raise PathEncodingError("session id must be a string to name a storage path")
    return os.path.join(project_dir(root, cwd), encode_segment(session_id))


def log_path(root: str, cwd: object, session_id: str, compression: str) -> str:
    """The transcript path of a session in an encoding."""
    return os.path.join(session_dir(root, cwd, session_id), "session" + suffix_for(compression))

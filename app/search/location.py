"""Where a root's search index lives: one file per root in the user's cache folder, never in the root.

Why: the index is a cache (it can always be rebuilt from the logs), and issue 13 forbids writing
anything beside the user's logs.  A root is identified by its backend kind and its real path, so
two spellings of one folder (a symlink, a trailing slash) share one index and a JSONL root and a
SQLite store never do.

May import: the standard library and ``app.paths``.
"""

from __future__ import annotations

import hashlib
import os

from app.paths import cache_dir

INDEX_DIR_NAME = "search"  # below the cache folder
INDEX_PREFIX = "index-"
INDEX_SUFFIX = ".sqlite"
KEY_HEX_CHARS = 24  # 96 bits of SHA-256: no two roots of one user collide


def root_identity(root: str, kind: str) -> str:
    """``kind`` and the real path of ``root``: what one index file belongs to."""
    return f"{kind}:{os.path.realpath(root)}"


def index_key(root: str, kind: str) -> str:
    """The hex key of a root's index file name."""
    return hashlib.sha256(root_identity(root, kind).encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HEX_CHARS]


def index_path(root: str, kind: str, cache: str | None = None) -> str:
    """The index file of ``root`` (a JSONL root directory or a SQLite store file) below the cache folder."""
    base = os.path.join(cache if cache is not None else cache_dir(), INDEX_DIR_NAME)
    return os.path.join(base, f"{INDEX_PREFIX}{index_key(root, kind)}{INDEX_SUFFIX}")


def inside_root(path: str, root: str, kind: str) -> bool:
    """Whether ``path`` would be written inside the session root: below a JSONL root directory, or in the
    folder that holds a SQLite store (its ``-wal``/``-journal`` live there too)."""
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    if kind == "sqlite":
        base = os.path.dirname(base)
        return os.path.dirname(real) == base
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


__all__ = ["INDEX_DIR_NAME", "index_key", "index_path", "inside_root", "root_identity"]

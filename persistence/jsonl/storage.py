"""The JSONL backend's storage hooks: one class made of the reader (locate, read, list), the writer (write,
append, locks) and the backups, each in its own module (jsonl-backend §4-§13).
"""

from __future__ import annotations

from persistence.backend import CancelToken
from persistence.jsonl.backups import JsonlBackups


class JsonlStorage(JsonlBackups):
    """The hooks over a JSONL root: ``<root>/<project>/<session>/session.jsonl[.zstd]``."""


NEVER = CancelToken()

"""``JsonlSessionPersistence``: the service over a JSONL root."""

from __future__ import annotations

import os

from persistence.coordinator import DEFAULT_PREPARED_CACHE_SIZE, CoordinatedPersistence
from persistence.jsonl.storage import JsonlStorage


class JsonlSessionPersistence(CoordinatedPersistence):
    """Upstream-compatible JSONL root: one transcript per session, raw lines or checksummed zstd frames."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        compression: str = "zstd",
        pack_chunks: bool = True,
        prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE,
    ) -> None:
        super().__init__(
            JsonlStorage(root, compression=compression, pack_chunks=pack_chunks),
            prepared_session_cache_size=prepared_session_cache_size,
        )

    @property
    def root(self) -> str:
        """The root directory (same as ``root_path``)."""
        return self.backend.root_path

    @property
    def compression(self) -> str:
        """The transcripts' encoding: ``"zstd"`` or ``"none"``."""
        return self.backend.compression or "zstd"

"""``JsonlSessionPersistence``: the service over a JSONL root."""

from __future__ import annotations

import os

from persistence.coordinator import DEFAULT_PREPARED_CACHE_SIZE, CoordinatedPersistence
from persistence.jsonl.storage import JsonlStorage


class JsonlSessionPersistence(CoordinatedPersistence):
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
        return self.backend.root  # type: ignore[attr-defined, no-any-return]

    @property
    def compression(self) -> str:
        return self.backend.compression  # type: ignore[attr-defined, no-any-return]

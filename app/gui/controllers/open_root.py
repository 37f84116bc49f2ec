"""``OpenRoot``: the root the window shows, as the list controller hands it to the other controllers.

One value instead of loose fields: the session loader, the diagnosis pass and the session actions
each take the root's path, its read-only engine store and its backend from here, so nobody copies
``store``/``is_jsonl`` from one controller into another by hand.

May import: ``runtime.viewer_store`` (for the type) and the standard library; no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.gui.runtime.viewer_store import ViewerStore


@dataclass(frozen=True, slots=True)
class OpenRoot:
    """A root whose engine store is open (read-only): a JSONL root directory or a SQLite store file."""

    path: str  # absolute
    store: ViewerStore
    is_jsonl: bool  # a directory of transcripts (else a SQLite store file)

    @property
    def backend_text(self) -> str:
        """What the status bar says about the storage."""
        if not self.is_jsonl:
            return "SQLite store"
        return "JSONL, zstd frames" if self.store.compression == "zstd" else "JSONL, plain lines"


__all__ = ["OpenRoot"]

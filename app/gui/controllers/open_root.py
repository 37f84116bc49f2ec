"""``OpenRoot``: the root the window shows, as the list controller hands it to the other controllers.

One value instead of loose fields: the session loader, the diagnosis pass and the session actions
each take the root's path, its read-only engine store and its backend from here, so nobody copies
``store``/``is_jsonl`` from one controller into another by hand.

``shown_paths`` names a received source's files the way the user knows them: a support bundle is read
from its extraction in the cache folder (``…/bundles/7194-4987a6d0…/session/session.jsonl.zstd``), a
path the engine cites in its refusals ("(raw log: …)") and that is gone once the window closes; the
diagnosis pass and the session loader show ``case.zip: session/session.jsonl.zstd`` instead, as the
command line does.

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
    # (our path, the user's words for it), longest first (``app.sources.OpenedSource.shown_paths``)
    shown_paths: tuple[tuple[str, str], ...] = ()

    def shown(self, text: str) -> str:
        """``text`` naming the files of a received source as the user knows them (unchanged for a root of theirs)."""
        for ours, theirs in self.shown_paths:
            if ours in text:
                text = text.replace(ours, theirs)
        return text

    @property
    def backend_text(self) -> str:
        """What the status bar says about the storage."""
        if not self.is_jsonl:
            return "SQLite store"
        return "JSONL, zstd frames" if self.store.compression == "zstd" else "JSONL, plain lines"


__all__ = ["OpenRoot"]

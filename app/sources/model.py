"""The values of a source: what kind of thing the user named, and the stores it is made of.

Kept apart from the opening code so the window (helper K3), the command line and the bundle checks can
all name these types without pulling in any I/O.  May import the standard library and ``persistence``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from persistence import SessionArgumentError


class SourceKind(StrEnum):
    """What a path holds, decided by content (never by name or extension)."""

    JSONL_ROOT = "jsonl root"
    SQLITE_STORE = "SQLite store"
    TRANSCRIPT = "transcript"
    BUNDLE = "support bundle"
    CASE_FOLDER = "case folder"


# Kinds a received file can be: never written, whatever the file system allows.
RECEIVED_KINDS = frozenset({SourceKind.TRANSCRIPT, SourceKind.BUNDLE, SourceKind.CASE_FOLDER})


class SourceError(SessionArgumentError):
    """A path that is no source: absent, unreadable, or holding nothing SessionScope reads.

    A subclass of the engine's argument error, so every printer of typed errors shows it as such.
    """


class AmbiguousSessionError(SourceError):
    """No session id was given and the source holds more (or fewer) than one session: a usage error
    (exit code 2 on the command line), listing the ids to choose from."""

    exit_code = 2

    def __init__(self, path: Path, ids: list[str]) -> None:
        self.ids = list(ids)
        if ids:
            shown = ", ".join(ids[:20]) + (f", … ({len(ids)} in all)" if len(ids) > 20 else "")
            text = f"{path} holds {len(ids)} sessions; name one: {shown}"
        else:
            text = f"{path} holds no session"
        super().__init__(text)


@dataclass(frozen=True, slots=True)
class SourcePart:
    """One store inside a source.

    ``store_path`` is what ``persistence.open_store`` opens: a JSONL root folder, a SQLite store file or
    a lone transcript file (an extracted bundle's transcript included).  ``read_only`` parts are opened
    so that no write can reach them (the engine raises ``SessionReadOnlyError``).  ``origin`` is where
    the user can find it (for a bundle part: the ``.zip``, not the extraction); ``check`` is the bundle
    verification report of a bundle part (``app.sources.bundle``), else None.  ``shown_as`` names a
    ``store_path`` that is ours (an extraction, a private copy in the cache folder) the way the user
    knows it: ``case.zip: session/session.jsonl.zstd``, the received store's own path (None: the path is theirs).
    """

    label: str
    store_path: Path
    kind: SourceKind
    read_only: bool
    origin: Path
    check: object | None = None
    shown_as: str | None = None


@dataclass(frozen=True, slots=True)
class OpenedSource:
    """What ``open_source`` made of a path: its kind and the stores to read.

    ``read_only`` is True for received files (a transcript, a bundle, a case folder): nothing in them
    is ever written.  ``bundle_check`` is the verification report of a BUNDLE source (manifest
    SHA-256s; ``app.sources.bundle``).  ``extractions`` are handles of what ``open_source`` unpacked (a
    bundle's files in the cache folder), which ``close_source`` removes.
    """

    path: Path
    kind: SourceKind
    read_only: bool
    parts: tuple[SourcePart, ...]
    bundle_check: object | None = None
    extractions: tuple[object, ...] = field(default=(), compare=False, repr=False)

    def shown(self, text: str) -> str:
        """``text`` with every path of ours (a bundle's extraction, a private copy) named as the user knows it.

        The engine names the file it read, which for a bundle is a temporary file in the cache folder: an
        error saying ``invalid header line in "/home/ana/.cache/sessionscope/bundles/812-…/session/…"``
        points at a file that is gone once the command ends; shown, it reads ``case.zip: session/…``.
        """
        for old, new in self.shown_paths():
            if old in text:
                text = text.replace(old, new)
        return text

    def shown_paths(self) -> list[tuple[str, str]]:
        """(our path, the user's words for it), the files first, then their folders (longest first)."""
        pairs: dict[str, str] = {}
        for part in self.parts:
            if part.shown_as is None:
                continue
            path = os.fspath(part.store_path)
            pairs[path] = part.shown_as
            # The engine may name the folder of a lone transcript (its "root"): the bundle (or store) then.
            folder = part.shown_as.split(": ", 1)[0] if part.check is not None else os.fspath(part.origin.parent)
            pairs.setdefault(os.path.dirname(path), folder)
        return sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)

    def label(self) -> str:
        """One line for a title bar, a status bar or a report, e.g. ``case.zip — support bundle, verified``.

        Received files are named by their file name; a root or store by its path (home as ``~``).
        """
        name = self.path.name if self.kind in RECEIVED_KINDS else display_path(self.path)
        text = f"{name or self.path} — {self.kind}"
        if self.kind is SourceKind.BUNDLE:
            text += ", " + check_words(self.bundle_check)
        elif self.kind is SourceKind.CASE_FOLDER:
            text += f", {len(self.parts)} part{'s' if len(self.parts) != 1 else ''}"
        return text


def check_words(check: object | None) -> str:
    """``verified`` / ``NOT verified: ...`` for a bundle check report (duck-typed on ``ok``/``summary``)."""
    if check is None:
        return "not verified"
    summary = getattr(check, "summary", None)
    words = summary() if callable(summary) else summary
    if getattr(check, "ok", False):
        return str(words) if isinstance(words, str) and words else "verified"
    return str(words) if isinstance(words, str) and words else "NOT verified"


def display_path(path: Path) -> str:
    """``path`` with the home folder shown as ``~``."""
    text = os.fspath(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


__all__ = [
    "RECEIVED_KINDS",
    "AmbiguousSessionError",
    "OpenedSource",
    "SourceError",
    "SourceKind",
    "SourcePart",
    "check_words",
    "display_path",
]

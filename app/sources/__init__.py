"""Sources: "open anything" — whatever a support engineer is handed, as the stores SessionScope reads.

A **source** is a path the user names: a JSONL root, a SQLite store, a lone transcript file (raw or zstd,
recognised by content whatever its name: ``transcript(1).zst``, ``customer log.txt``), a SessionScope
support bundle (``.zip``) or a case folder holding any mix of these.  The contract, for the command line
and the window alike:

- ``sniff(path) -> SourceKind | None``: a file's kind by its first bytes (zstd magic ``28 b5 2f fd``, a
  JSONL header line, ``SQLite format 3\\0``, ZIP ``PK\\x03\\x04``), never by its name.
- ``open_source(path) -> OpenedSource``: its kind, ``read_only`` (True for a transcript, a bundle and a
  case folder: received files are never written) and ``parts``, each a ``SourcePart`` whose
  ``store_path`` goes to ``persistence.open_store`` (``open_part_store(part)`` does it, read-only for
  read-only parts, so every write raises ``SessionReadOnlyError``).  A path that is no source raises
  ``SourceError`` (a ``SessionArgumentError``).  Opening never writes into the path.
- ``OpenedSource.label()``: ``"case.zip — support bundle, verified"``, ``"customer log.txt — transcript"``,
  ``"~/.dsh/sessions — jsonl root"``; ``bundle_check`` is a bundle's verification report.
- ``source_sessions(src)``: every session (and every bad entry) of every part; ``resolve_session(src, id)``
  and ``store_for(src, id)``: the part / an open store holding ``id``, or the only session when ``id`` is
  None (else ``AmbiguousSessionError`` listing the ids).
- ``close_source(src)``: removes what opening made (a bundle's extraction in the cache folder).

Qt-free.  May import the standard library, its own modules and the public ``persistence``; the bundle
checks are ``app.sources.bundle``'s (reached through ``bundle_adapter``).
"""

from app.sources.model import (
    RECEIVED_KINDS,
    AmbiguousSessionError,
    OpenedSource,
    SourceError,
    SourceKind,
    SourcePart,
)
from app.sources.opening import (
    SourceSession,
    close_source,
    open_part_store,
    open_source,
    resolve_session,
    source_sessions,
    store_for,
)
from app.sources.sniff import sniff

__all__ = [
    "RECEIVED_KINDS",
    "AmbiguousSessionError",
    "OpenedSource",
    "SourceError",
    "SourceKind",
    "SourcePart",
    "SourceSession",
    "close_source",
    "open_part_store",
    "open_source",
    "resolve_session",
    "sniff",
    "source_sessions",
    "store_for",
]

"""SessionScope's persistence engine: read and write coding-agent session logs byte-compatibly
with the upstream harness.  No Qt anywhere in this package.

This package's namespace is the engine's public API: ``app/`` (the window, the command line and
the actions) imports only from here, never from a submodule (an import-linter contract keeps it
so).  What is exported, by concern:

- the service: ``open_store``, ``CoordinatedPersistence`` (and the JSONL class), ``SessionStore``,
  ``Session``, ``AbortSignal``, the value results and the typed errors;
- the event log: ``EventLog`` (immutable; events built when touched) and its records as a read-only
  ``EventTable`` (``record_table()``), whose ``segments()`` walk yields scalar records and
  ``PackedRun``s (a run of chunk deltas kept packed: one step for a timeline fold, a search index
  or a stats pass over a 200k-event log);
- the event vocabulary: ``EventType`` (every catalog type name as a constant: readers never spell
  one) and the record shapes ``EventRecord`` and ``TokenUsage`` (``TypedDict``s, for annotation);
- a viewer's reads: ``SessionView`` (``CoordinatedPersistence.view``: one read with the verdict,
  header, stored events, synthetic closers, torn facts and revision), ``SessionDiagnosis``,
  ``ArtifactInfo``/``RawBytes`` (``artifact``, ``read_raw_bytes``), ``ListedEntry``
  (``list_entries``), ``ReadablePrefix``/``PrefixStop`` (``readable_prefix``: a refused session's
  header as written and its events before the first damage, on every backend); the same listing
  in parts for worker processes (``listing_parts``, ``list_part``: paths in, ``ListedEntry`` rows out);
- lenient decoding of raw artifacts (``persistence.raw_decode``): ``iter_raw``, ``decode_raw``,
  ``render_rows`` and their values;
- JS-compatible JSON text (``js_dumps``, ``js_dumps_str``, ``js_number``, ``is_number``),
  ``decode_segment`` (a JSONL folder name back to its id), a transcript's stored bytes and its
  plaintext in both directions (``complete_plaintext``, ``stored_bytes``: no frame codec leaves the
  engine), crash closers (``interrupted_turn_closers``) and the error helpers
  ``upstream_class_of``/``not_found``;
- storage facts a caller would otherwise guess: ``containing_folder`` (what a file manager opens for a
  session), ``store_files``/``writer_files`` (an artifact with SQLite's -wal/-shm/-journal
  companions), ``newest_change`` and ``CoordinatedPersistence.schema_version()``; SQLite's own errors
  never leave the engine (each is a ``SessionPersistenceError``);
- content sniffing of received files: ``transcript_compression`` (a lone transcript, by its first
  bytes whatever its name) and ``is_sqlite_file``;
- ``jsonl_backups_beside``: the repair backups beside the transcripts a JSONL listing found (no second
  walk of the root);
- the repair guard's probes of other writers: ``jsonl_writer_holds`` (a live SessionScope session
  holds this transcript) and ``writer_lock_held`` (a SQLite write transaction is open);
- ``persistence.testing`` (a public module, not imported here): damaged logs made to order (torn
  tails, corrupt frames, bad headers) for tests and the demo.

Format internals (frame codecs, the JSONL walkers, the storage hooks) stay in the submodules; tests of
those internals import them from there.
"""

from persistence.artifact import (
    ArtifactInfo,
    RawBytes,
    containing_folder,
    copy_artifact_to,
    newest_change,
    store_files,
    writer_files,
)
from persistence.coordinator import CoordinatedPersistence, SessionPreparation
from persistence.diagnosis import READABLE_STATUSES, SessionDiagnosis, SessionView, TornFacts
from persistence.errors import (
    SessionAbortedError,
    SessionArgumentError,
    SessionConflictError,
    SessionFormatUnsupportedError,
    SessionLayoutError,
    SessionNotFoundError,
    SessionPersistenceCorruptionError,
    SessionPersistenceError,
    SessionReadOnlyError,
    SessionRollbackError,
    SessionStorageCorruptError,
    SessionUnreadableError,
    SessionValidationError,
    as_engine_error,
    error_fields,
    not_found,
    upstream_class_of,
)
from persistence.jsonl.backend import JsonlSessionPersistence
from persistence.jsonl.backups import backups_beside as jsonl_backups_beside
from persistence.jsonl.entries import HeaderCache, header_listing_problem, read_header_line, read_header_outcome
from persistence.jsonl.locks import writer_holds as jsonl_writer_holds
from persistence.jsonl.paths import decode_segment
from persistence.listing import ListedEntry
from persistence.lost import LostRecord
from persistence.model.catalog import EventRecord, EventType, TokenUsage
from persistence.model.event import EventLog, SessionEvent
from persistence.model.event_table import EventTable
from persistence.model.header import SESSION_FORMAT_VERSION, SessionHeader
from persistence.model.jsontext import is_number, js_dumps, js_dumps_str, js_number
from persistence.model.packed_run import PackedRun
from persistence.model.repair import interrupted_turn_closers
from persistence.open import open_store
from persistence.parts import list_part, listing_parts
from persistence.raw_decode import (
    LazyRows,
    RawChunk,
    RawDamage,
    RawDecodeCancelled,
    RawLines,
    RawPiece,
    decode_raw,
    iter_raw,
    render_rows,
)
from persistence.readable_prefix import PrefixStop, ReadablePrefix
from persistence.service import AbortSignal
from persistence.session import Session
from persistence.sniff import is_sqlite_file, transcript_compression
from persistence.sqlite.constants import SCHEMA_VERSION as SQLITE_SCHEMA_VERSION
from persistence.sqlite.facts import writer_lock_held
from persistence.store import SessionForkError, SessionStore
from persistence.stored_text import complete_plaintext, stored_bytes
from persistence.values import (
    ReadFromResult,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionRawArtifact,
)

__all__ = [
    "READABLE_STATUSES",
    "SESSION_FORMAT_VERSION",
    "SQLITE_SCHEMA_VERSION",
    "AbortSignal",
    "ArtifactInfo",
    "CoordinatedPersistence",
    "EventLog",
    "EventRecord",
    "EventTable",
    "EventType",
    "HeaderCache",
    "JsonlSessionPersistence",
    "LazyRows",
    "ListedEntry",
    "LostRecord",
    "PackedRun",
    "PrefixStop",
    "RawBytes",
    "RawChunk",
    "RawDamage",
    "RawDecodeCancelled",
    "RawLines",
    "RawPiece",
    "ReadFromResult",
    "ReadablePrefix",
    "Session",
    "SessionAbortedError",
    "SessionArgumentError",
    "SessionConflictError",
    "SessionDiagnosis",
    "SessionEvent",
    "SessionForkError",
    "SessionFormatUnsupportedError",
    "SessionHeader",
    "SessionInspection",
    "SessionLayoutError",
    "SessionLocation",
    "SessionNotFoundError",
    "SessionPersistenceCorruptionError",
    "SessionPersistenceError",
    "SessionPersistenceSnapshot",
    "SessionPreparation",
    "SessionRawArtifact",
    "SessionReadOnlyError",
    "SessionRollbackError",
    "SessionStorageCorruptError",
    "SessionStore",
    "SessionUnreadableError",
    "SessionValidationError",
    "SessionView",
    "TokenUsage",
    "TornFacts",
    "as_engine_error",
    "complete_plaintext",
    "containing_folder",
    "copy_artifact_to",
    "decode_raw",
    "decode_segment",
    "error_fields",
    "header_listing_problem",
    "interrupted_turn_closers",
    "is_number",
    "is_sqlite_file",
    "iter_raw",
    "js_dumps",
    "js_dumps_str",
    "js_number",
    "jsonl_backups_beside",
    "jsonl_writer_holds",
    "list_part",
    "listing_parts",
    "newest_change",
    "not_found",
    "open_store",
    "read_header_line",
    "read_header_outcome",
    "render_rows",
    "store_files",
    "stored_bytes",
    "transcript_compression",
    "upstream_class_of",
    "writer_files",
    "writer_lock_held",
]

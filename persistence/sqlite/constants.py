"""Schema-17 constants shared by the SQLite modules (sqlite-backend §0, §4.2).

Everything marked [compat] in the spec lives here so a reviewer can diff it against
upstream in one place.
"""

from __future__ import annotations

import re

SCHEMA_VERSION = 17
APPLICATION_ID = 0x44534850  # ASCII "DSHP" == 1146308688

MIN_PACKED_ROW_MEMBERS = 3
MAX_PACKED_ROW_MEMBERS = 1024
MAX_PACKED_DATA_BYTES = 1_048_576
ZSTD_DATA_THRESHOLD_BYTES = 4096
ZSTD_LEVEL = 3

DEFAULT_BUSY_TIMEOUT_MS = 5000
MAX_BUSY_TIMEOUT_MS = 2_147_483_647
JOURNAL_RETRY_INTERVAL_S = 0.010
TAIL_PROBE_ROWS = 2
JOURNAL_MODES = ("wal", "delete", "truncate", "persist")

BACKEND_NAME = "session-persistence-sqlite"
MEMORY_PATH = ":memory:"

TEXT_TAG = "text-chunks"
REASONING_TAG = "reasoning-chunks"
TOOL_TAG = "tool-call-chunks"
PACKED_TAGS = (TEXT_TAG, REASONING_TAG, TOOL_TAG)
PACKED_TAG_SET = frozenset(PACKED_TAGS)

# The exact upstream DDL, whitespace-collapsed (§4.2).  Upstream compares the whole
# normalized sqlite_schema listing textually, so these strings are a file-format fact.
DDL_EVENTS = (
    "CREATE TABLE events ( session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL, "
    "type TEXT NOT NULL, time INTEGER NOT NULL, data ANY NOT NULL, source_event_seqs ANY, surface_op TEXT, "
    "ignorable INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1)), PRIMARY KEY (session_id, seq) ) STRICT"
)
DDL_PERSISTENCE_STATE = (
    "CREATE TABLE persistence_state ( singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL ) STRICT"
)
DDL_SESSIONS = (
    "CREATE TABLE sessions ( id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at INTEGER NOT NULL, cwd TEXT, "
    "parent_session TEXT, seed_length INTEGER, origin TEXT, delegation_depth INTEGER, agent_preset TEXT, "
    "incarnation TEXT NOT NULL, revision INTEGER NOT NULL ) STRICT"
)
# Creation order matters only for the foreign key target; the comparison is ordered by name.
CREATE_STATEMENTS = (DDL_PERSISTENCE_STATE, DDL_SESSIONS, DDL_EVENTS)

SCHEMA_QUERY = "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT GLOB 'sqlite_*' ORDER BY type, name"

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.IGNORECASE)

"""``sessions`` row <-> SessionHeader (spec §6.1) [compat].

The reader validates every column; one bad row makes list()/listSnapshots() reject as a
whole, exactly like upstream.  A viewer that must show every other session uses the storage's
lenient ``list_entries`` instead, where such a row is one ``ListedEntry`` with a ``problem``.
The writer upserts the header but never touches ``incarnation``/``revision`` of an existing row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from persistence.errors import SessionStorageCorruptError
from persistence.model.jsontext import MAX_SAFE_INTEGER
from persistence.sqlite.constants import UUID_RE
from persistence.sqlite.rows import check_int_range

SESSION_COLUMNS = (
    "id, version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, agent_preset, incarnation, revision"
)
SELECT_SESSION = f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?"
# rowid order == insertion order, which is what upstream's plain full scan returns (§8, Q6).
SELECT_ALL_SESSIONS = f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY rowid"
SELECT_REVISION = "SELECT incarnation, revision FROM sessions WHERE id = ?"
UPSERT_SESSION = (
    "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, "
    "agent_preset, incarnation, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) "
    "ON CONFLICT(id) DO UPDATE SET version = excluded.version, created_at = excluded.created_at, cwd = excluded.cwd, "
    "parent_session = excluded.parent_session, seed_length = excluded.seed_length, origin = excluded.origin, "
    "delegation_depth = excluded.delegation_depth, agent_preset = excluded.agent_preset"
)
BUMP_REVISION = "UPDATE sessions SET revision = revision + 1 WHERE id = ?"

# (wire key, column index) in upstream's header key order (§6.1).
_OPTIONAL = (("cwd", 3), ("parentSession", 4), ("seedLength", 5), ("origin", 6), ("delegationDepth", 7), ("agentPreset", 8))


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A validated ``sessions`` row: the header, its incarnation and revision counter."""

    meta: dict[str, Any]
    incarnation: str
    revision: int


def row_id_text(row: tuple[Any, ...]) -> str:
    """The id column of a row that failed validation, as text (it may not even be a string)."""
    sid = row[0] if row else None
    return sid if type(sid) is str and sid else repr(sid)


def _bad(message: str) -> SessionStorageCorruptError:
    return SessionStorageCorruptError(f"stored session {message}")


def _nonneg_int(v: Any) -> bool:
    return type(v) is int and 0 <= v <= MAX_SAFE_INTEGER


def check_revision(incarnation: Any, revision: Any) -> None:
    """Refuse an incarnation that is not a UUID or a revision that is not a safe counter."""
    if type(incarnation) is not str or UUID_RE.fullmatch(incarnation) is None:
        raise _bad("incarnation must be a UUID")
    if not _nonneg_int(revision):
        raise _bad("revision must be a non-negative safe integer")


def session_from_row(row: tuple[Any, ...]) -> SessionRow:
    """Validate a ``sessions`` row column by column and build its header."""
    check_int_range(row)
    sid, version, created_at, cwd, parent, seed_length, origin, depth, preset, incarnation, revision = row
    if type(sid) is not str or not sid:
        raise _bad("id must be a non-empty string")
    if type(version) is not int:
        raise _bad("version must be a safe integer")
    if not _nonneg_int(created_at):
        raise _bad("created_at must be a non-negative safe integer")
    if cwd is not None:
        if type(cwd) is not str:
            raise _bad("cwd must be a string or null")
        if not os.path.isabs(cwd):
            raise _bad("cwd must be absolute")
    if parent is not None and type(parent) is not str:
        raise _bad("parent_session must be a string or null")
    if preset is not None and type(preset) is not str:
        raise _bad("agent_preset must be a string or null")
    if origin is not None and origin != "subagent":
        raise _bad("origin must be subagent or null")
    if seed_length is not None and not _nonneg_int(seed_length):
        raise _bad("seed_length must be a non-negative safe integer or null")
    if depth is not None and not _nonneg_int(depth):
        raise _bad("delegation_depth must be a non-negative safe integer or null")
    check_revision(incarnation, revision)
    meta: dict[str, Any] = {"version": version, "id": sid, "createdAt": created_at}
    for key, index in _OPTIONAL:
        value = row[index]
        if value is not None:  # NULL columns are absent keys; delegationDepth 0 survives
            meta[key] = value
    return SessionRow(meta, incarnation, revision)


def _int(v: Any) -> Any:
    return int(v) if type(v) is float and v.is_integer() else v


def upsert_params(meta: dict[str, Any], incarnation: str) -> tuple[Any, ...]:
    """The parameters of ``UPSERT_SESSION`` for a header."""
    return (
        meta.get("id"),
        _int(meta.get("version", 0)),
        _int(meta.get("createdAt")),
        meta.get("cwd"),
        meta.get("parentSession"),
        _int(meta.get("seedLength")),
        meta.get("origin"),
        _int(meta.get("delegationDepth")),
        meta.get("agentPreset"),
        incarnation,
    )

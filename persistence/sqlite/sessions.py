"""``sessions`` row <-> SessionHeader (spec §6.1) [compat].

The reader validates every column; one bad row makes list()/listSnapshots() reject as a
whole, exactly like upstream.  A viewer that must show every other session uses the storage's
lenient ``list_entries`` instead, where such a row is one ``ListedEntry`` with a ``problem``.
The writer upserts the header but never touches ``incarnation``/``revision`` of an existing row.

``read_listing`` is the fast reader behind ``list()``/``listSnapshots()``: it builds headers straight
from the rows and checks whole columns at once with C-level primitives, and it falls back to
``session_from_row`` row by row the moment anything looks off, so results and errors are exactly
that function's.  Why: per-row validation plus an intermediate header dict cost about 4.7 us a row,
three times SQLite's own fetch (a 10,000-session listing took 66 ms; upstream about 20 ms).
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from persistence.errors import SessionStorageCorruptError
from persistence.model.header import SessionHeader, frozen_from_columns, plain_headers
from persistence.model.jsontext import MAX_SAFE_INTEGER
from persistence.sqlite.column_fetch import Fetch, columns_query, fetch_columns
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
    check_session_row(row)
    meta: dict[str, Any] = {"version": row[1], "id": row[0], "createdAt": row[2]}
    for key, index in _OPTIONAL:
        value = row[index]
        if value is not None:  # NULL columns are absent keys; delegationDepth 0 survives
            meta[key] = value
    return SessionRow(meta, row[9], row[10])


def lenient_meta(row: tuple[Any, ...]) -> dict[str, Any]:
    """A ``sessions`` row's header as stored, unvalidated: what a viewer of a refused session shows
    (its id, cwd and parent), never what a read or a write trusts."""
    meta: dict[str, Any] = {"version": row[1], "id": row[0], "createdAt": row[2]}
    for key, index in _OPTIONAL:
        if row[index] is not None:
            meta[key] = row[index]
    return meta


def check_session_row(row: tuple[Any, ...]) -> None:
    """Refuse a ``sessions`` row, column by column, with the first failing column's error."""
    if not _surely_valid(row):
        _refuse_first_bad_column(row)


def _surely_valid(row: tuple[Any, ...]) -> bool:
    """Whether every column of ``row`` passes ``_refuse_first_bad_column``, tested in one expression.

    Why: rows are still judged one at a time where a whole column cannot be (a session read by id, the
    lenient ``list_entries`` of a store with a bad row, a listing whose column checks refused), and the
    column-by-column checks cost about 1.3 us a row in calls alone (50 rows: 64 -> 44 us).  Each
    test here is that function's test for a good value, with the integers' safe range folded in (which
    ``check_int_range`` checks there), so True never admits a row it refuses; False only means
    "ask it", which then raises the first failing column's error.
    """
    sid, version, created_at, cwd, parent, seed_length, origin, depth, preset, incarnation, revision = row
    return (
        type(sid) is str
        and sid != ""
        and type(version) is int
        and -MAX_SAFE_INTEGER <= version <= MAX_SAFE_INTEGER
        and type(created_at) is int
        and 0 <= created_at <= MAX_SAFE_INTEGER
        and (cwd is None or (type(cwd) is str and os.path.isabs(cwd)))
        and (parent is None or type(parent) is str)
        and (seed_length is None or (type(seed_length) is int and 0 <= seed_length <= MAX_SAFE_INTEGER))
        and (origin is None or (type(origin) is str and origin == "subagent"))
        and (depth is None or (type(depth) is int and 0 <= depth <= MAX_SAFE_INTEGER))
        and (preset is None or type(preset) is str)
        and type(incarnation) is str
        and UUID_RE.fullmatch(incarnation) is not None
        and type(revision) is int
        and 0 <= revision <= MAX_SAFE_INTEGER
    )


def _refuse_first_bad_column(row: tuple[Any, ...]) -> None:
    """Raise the error of ``row``'s first bad column (upstream's order: integer range first)."""
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


# ------------------------------------------------------------ the fast listing

# Rows with a header field beyond cwd (a subagent's parent/origin/depth, a seed length, a preset) or a
# version other than the integer 0 (SESSION_FORMAT_VERSION; any other is refused by every read) are
# "rich"; a store without any needs only these five columns of each row.  Each column read costs (rows
# through Python's sqlite3, about 0.1 us a cell: 10,000 rows of 11 cells 10.8 ms, of 5 cells 6.6 ms;
# as JSON arrays, ``column_fetch``, 5 columns 3.3 ms), so the six whose value a plain row fixes are
# skipped.  A store with any rich row is read whole and checked by column: a third of 10,000 rows rich
# 30 -> 20 ms as rows, 17 ms as columns, against reading the rich rows apart and merging them row by
# row.  The optional columns are tested last to first: SQLite then decodes each record's header once
# (0.59 against 0.69 ms for that scan).
CORE_COLUMNS = "id, created_at, cwd, incarnation, revision"
SELECT_CORE_SESSIONS = f"SELECT {CORE_COLUMNS} FROM sessions ORDER BY rowid"
CORE_COLUMNS_JSON = columns_query(CORE_COLUMNS.split(", "))
ALL_COLUMNS_JSON = columns_query(SESSION_COLUMNS.split(", "))
SELECT_ANY_RICH_SESSION = (
    "SELECT 1 FROM sessions WHERE agent_preset IS NOT NULL OR delegation_depth IS NOT NULL "
    "OR origin IS NOT NULL OR seed_length IS NOT NULL OR parent_session IS NOT NULL "
    "OR typeof(version) <> 'integer' OR version <> 0 LIMIT 1"
)
# At most this many rows make a listing "tiny": cheap enough to run on the caller's thread (the event
# loop) instead of paying the hop to a worker thread (about 85 us, more than a one-session listing).
# Read with ``exact_listing`` (a fresh instance's 50-row listing: 0.21 ms, fetch included), 64 rows stay
# near 0.25 ms; a bigger store costs the loop one fetch of 65 rows (about 0.1 ms) before it goes to a worker.
TINY_LISTING_ROWS = 64
SELECT_FIRST_SESSIONS = f"{SELECT_ALL_SESSIONS} LIMIT ?"

_UUID_CHARS = b"0123456789abcdefABCDEF-\n"  # hex digits, dashes and the record separator


@dataclass(frozen=True, slots=True)
class Listing:
    """Every ``sessions`` row, validated: the headers in list order with each row's incarnation and revision."""

    headers: list[SessionHeader]
    incarnations: Sequence[str]
    revisions: Sequence[int]


def empty_listing() -> Listing:
    """The listing of a store without sessions (a new list each time: callers own what they get)."""
    return Listing([], (), ())


def read_listing(fetch: Fetch) -> Listing:
    """The listing ``session_from_row`` would give (same headers, same first error), read fast.

    ``fetch`` runs one query; every call must see one snapshot (the caller holds a read transaction),
    because whether a store has rich rows is asked by a separate query.
    """
    if not fetch(SELECT_ANY_RICH_SESSION):
        columns = _plain_columns(fetch)
        if columns is not None:
            ids, created, cwds, incarnations, revisions = columns
            return Listing(plain_headers([0] * len(ids), ids, created, cwds), incarnations, revisions)
    else:
        every = fetch_columns(fetch, ALL_COLUMNS_JSON)
        if every is not None and every[0] and _all_columns_valid(every, len(every[0])):
            return _listing_of(every)
    # Rows, and their checks one by one, name the first bad row with its own values.
    return exact_listing(fetch(SELECT_ALL_SESSIONS))


def exact_listing(rows: list[tuple[Any, ...]]) -> Listing:
    """``SELECT_ALL_SESSIONS`` rows checked one by one (``check_session_row``: what ``session_from_row``
    raises for the first bad row), the headers built straight from the columns: for a few rows, and
    whenever a column check fails.

    Every column is first checked whole (``_all_columns_valid``: 50 rows 54 -> 22 us); the rows are
    checked one by one only when that refuses, to raise the first bad row's error (or to accept a
    valid store the column checks were too strict for).
    """
    if not rows:
        return empty_listing()
    columns = tuple(zip(*rows, strict=True))
    if not _all_columns_valid(columns, len(rows)):
        for r in rows:
            check_session_row(r)
    return _listing_of(columns)


def _listing_of(columns: Sequence[Sequence[Any]]) -> Listing:
    """The listing of the ``SESSION_COLUMNS`` columns of validated rows."""
    sid, version, created_at, cwd, parent, seed_length, origin, depth, preset, incarnations, revisions = columns
    headers = frozen_from_columns(
        SessionHeader,
        {
            "version": version,
            "id": sid,
            "created_at": created_at,
            "cwd": cwd,
            "parent_session": parent,
            "seed_length": seed_length,
            "origin": origin,
            "delegation_depth": depth,
            "agent_preset": preset,
        },
    )
    return Listing(headers, incarnations, revisions)


def _plain_columns(fetch: Fetch) -> Sequence[Sequence[Any]] | None:
    """The ``CORE_COLUMNS`` of a plain store when every row surely passes ``session_from_row``, else None.

    Read as columns (``column_fetch``) where SQLite can; else as rows, which die here: only their
    columns live on while the headers are built (10,000 fewer objects for the collector to walk).

    Whole columns at a time (type sets, sum/min/max, one byte scan of all incarnations): about 0.3 us
    a row against 2.4 us for the column-by-column checks of each row.  It may refuse a valid store
    (then the exact path runs) but never accepts a row ``session_from_row`` would refuse: each test in
    ``_core_columns_valid`` is that function's test or a stricter one, for a row whose version is the
    integer 0 and whose five optional columns other than cwd are NULL (``SELECT_ANY_RICH_SESSION``
    found no other row).
    """
    columns: Sequence[Sequence[Any]] | None = fetch_columns(fetch, CORE_COLUMNS_JSON)
    if columns is None:
        rows = fetch(SELECT_CORE_SESSIONS)
        columns = tuple(zip(*rows, strict=True)) if rows else ((),) * 5
    n = len(columns[0])
    if n == 0:
        return columns
    ids, created, cwds, incarnations, revisions = columns
    return columns if _core_columns_valid(ids, created, cwds, incarnations, revisions, n) else None


def _core_columns_valid(
    ids: Sequence[Any], created: Sequence[Any], cwds: Sequence[Any], incarnations: Sequence[Any], revisions: Sequence[Any], n: int
) -> bool:
    """Whether ``check_session_row`` surely accepts these five columns of ``n`` rows (False: maybe not)."""
    if set(map(type, ids)) != {str} or not all(ids):
        return False  # id: a non-empty string
    if not _safe_integers(created, 0) or not _safe_integers(revisions, 0):
        return False  # created_at, revision: non-negative safe integers
    places = set(cwds)
    places.discard(None)
    if not set(map(type, places)) <= {str} or not all(map(os.path.isabs, places)):
        return False  # cwd: NULL or an absolute path (each distinct value tested once)
    return _uuid_column(incarnations, n)


def _all_columns_valid(columns: Sequence[Sequence[Any]], n: int) -> bool:
    """Whether ``check_session_row`` surely accepts every ``SELECT_ALL_SESSIONS`` row of these columns
    (False: maybe not; each test is that function's, or a stricter one, on a whole column at once)."""
    sid, version, created, cwd, parent, seed_length, origin, depth, preset, incarnations, revisions = columns
    if not _core_columns_valid(sid, created, cwd, incarnations, revisions, n):
        return False
    if not _safe_integers(version, -MAX_SAFE_INTEGER):
        return False  # version: a safe integer
    if not set(map(type, parent)) <= _TEXT_OR_NULL or not set(map(type, preset)) <= _TEXT_OR_NULL:
        return False  # parent_session, agent_preset: NULL or text
    if not set(origin) <= _ORIGINS:
        return False  # origin: NULL or exactly "subagent" (cells are None, int, float, str or bytes)
    for column in (seed_length, depth):
        # Not a set: 0, 0.0 and False are one member of a set, and a REAL must be seen.
        values = list(filter(_IS_NOT_NULL, column))
        if values and not _safe_integers(values, 0):
            return False  # seed_length, delegation_depth: NULL or a non-negative safe integer
    return True


_IS_NOT_NULL = partial(operator.is_not, None)


_TEXT_OR_NULL = {str, type(None)}
_ORIGINS = {None, "subagent"}


def _safe_integers(column: Iterable[Any], lowest: int) -> bool:
    """Whether ``column`` (not empty) holds only integers from ``lowest`` to ``MAX_SAFE_INTEGER``.

    ``sum`` and ``min`` raise TypeError on text, bytes or NULL among them, and a REAL makes the sum a
    float: three C-level passes instead of a type test per value.
    """
    try:
        return type(sum(column)) is int and min(column) >= lowest and max(column) <= MAX_SAFE_INTEGER
    except TypeError:
        return False


def _uuid_column(values: Sequence[Any], n: int) -> bool:
    """Whether every value is a string ``UUID_RE`` accepts, tested on all of them at once.

    ``UUID_RE``: 36 characters, hex digits in any case, dashes at 8/13/18/23, a version digit 1-8 at
    14 and a variant 8/9/a/b at 19.  Joined by newlines into one ASCII byte string of 37-byte records,
    each rule is one C-level scan: a stride slice per fixed position, ``translate`` for the classes.
    """
    if n == 0:
        return True
    try:
        joined = "\n".join(values).encode("ascii")  # TypeError: a value that is not text
    except (TypeError, UnicodeEncodeError):
        return False
    # Every value is 36 characters: the length is 37n - 1, and the n - 1 newlines (so none inside a
    # value) are exactly the bytes at 36, 73, ...: the k-th value ends where the k-th record does.
    if len(joined) != 37 * n - 1 or joined.count(b"\n") != n - 1 or joined[36::37] != b"\n" * (n - 1):
        return False
    dashes = b"-" * n
    return (
        not joined.translate(None, _UUID_CHARS)
        and joined.count(b"-") == 4 * n  # so no dash outside the four fixed places
        and joined[8::37] == dashes
        and joined[13::37] == dashes
        and joined[18::37] == dashes
        and joined[23::37] == dashes
        and not joined[14::37].translate(None, b"12345678")
        and not joined[19::37].translate(None, b"89abAB")
    )

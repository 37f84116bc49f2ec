"""Open sequence, schema ownership and filesystem preparation (spec §2-§5; cases E1-E20)."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from sessionkit import meta, one_turn_log, run
from sqlite_helpers import T, append, db_path, private_dir, raw, service, storage

from persistence.errors import SessionLayoutError, SessionPersistenceError
from persistence.sqlite import connection as connection_module
from persistence.sqlite.constants import APPLICATION_ID, CREATE_STATEMENTS, SCHEMA_VERSION
from persistence.sqlite.errors import SqliteBusyError, SqliteStoreError


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _valid_db(path: Path, *, journal: str = "wal") -> None:
    """A correct schema-17 file built by hand (as another writer would)."""
    with raw(path) as con:
        con.execute("BEGIN")
        for ddl in CREATE_STATEMENTS:
            con.execute(ddl)
        con.execute("INSERT INTO persistence_state VALUES (1, ?)", (str(uuid.uuid4()),))
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        con.execute("COMMIT")
        con.execute(f"PRAGMA journal_mode = {journal}")
    os.chmod(path, 0o600)


def _first_op_error(path: Path, **kw: Any) -> BaseException:
    st = storage(path, **kw)
    with pytest.raises((SessionPersistenceError, OSError)) as info:
        st.list_headers(T)
    # A failed open stays failed (memoized): the next call reports the very same error.
    with pytest.raises(type(info.value)) as again:
        st.list_headers(T)
    assert str(again.value) == str(info.value)
    st.close()
    return info.value


def test_e1_e2_lazy_file_creation(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "sessions.sqlite"
    st = storage(path)
    assert not path.exists()  # validated and the folder made, but no file before the first operation
    assert _mode(path.parent) == 0o700 and _mode(path.parent.parent) == 0o700
    assert st.list_headers(T) == []
    assert path.exists() and _mode(path) == 0o600
    st.close()
    unused = tmp_path / "unused" / "sessions.sqlite"
    storage(unused).close()
    assert not unused.exists()


def test_e3_new_file_identity_and_pragmas(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    st.list_headers(T)
    con = st.db.connection()
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert con.execute("PRAGMA trusted_schema").fetchone()[0] == 0
    assert con.execute("PRAGMA mmap_size").fetchone()[0] == 0
    assert con.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with raw(path) as other:
        assert other.execute("PRAGMA user_version").fetchone()[0] == 17
        assert other.execute("PRAGMA application_id").fetchone()[0] == 1146308688
        state = other.execute("SELECT singleton, store_id FROM persistence_state").fetchall()
        names = other.execute("SELECT type, name FROM sqlite_schema WHERE name NOT GLOB 'sqlite_*' ORDER BY name").fetchall()
    assert len(state) == 1 and state[0][0] == 1 and uuid.UUID(state[0][1]).version == 4
    assert names == [("table", "events"), ("table", "persistence_state"), ("table", "sessions")]
    st.close()


@pytest.mark.parametrize("mode", ["wal", "delete", "truncate", "persist"])
def test_e4_journal_modes(tmp_path: Path, mode: str) -> None:
    path = db_path(tmp_path)
    st = storage(path, journal_mode=mode)
    append(st, meta("s", "/p"), one_turn_log(), materialized=False)
    assert st.db.connection().execute("PRAGMA journal_mode").fetchone()[0] == mode
    st.close()
    mem = storage(":memory:", journal_mode=mode)
    append(mem, meta("s", "/p"), one_turn_log(), materialized=False)
    assert mem.db.connection().execute("PRAGMA journal_mode").fetchone()[0] == "memory"
    assert mem.list_snapshots(T)[0][1].startswith("memory:store:")
    mem.close()


def test_bad_config_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="journalMode"):
        storage(db_path(tmp_path), journal_mode="wal2")
    with pytest.raises(TypeError, match="busyTimeoutMs"):
        storage(db_path(tmp_path), busy_timeout_ms=-1)


def test_e5_unrelated_table(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    with raw(path) as con:
        con.execute("CREATE TABLE unrelated (value TEXT)")
    os.chmod(path, 0o600)
    err = _first_op_error(path)
    assert isinstance(err, SessionLayoutError)
    assert "has an unversioned schema or application identity" in str(err)


@pytest.mark.parametrize("version", [15, 16, 18])
def test_e6_older_or_newer_user_version(tmp_path: Path, version: int) -> None:
    path = db_path(tmp_path)
    with raw(path) as con:
        con.execute(f"PRAGMA user_version = {version}")
        con.execute("PRAGMA application_id = 12345")  # the version is reported first
    os.chmod(path, 0o600)
    err = _first_op_error(path)
    assert isinstance(err, SessionLayoutError)
    assert f"has schema version {version}, incompatible with this build (17)" in str(err)


def test_e7_bad_application_id(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    _valid_db(path)
    with raw(path) as con:
        con.execute("PRAGMA application_id = 12345")
    err = _first_op_error(path)
    assert isinstance(err, SessionLayoutError) and "has application id 12345, expected 1146308688" in str(err)


# A valid schema-17 file changed by these statements no longer holds exactly the required schema objects.
SCHEMA_DRIFT: dict[str, list[str]] = {
    "e8-extra-column": ["ALTER TABLE events ADD COLUMN unexpected TEXT"],
    "e8-extra-index-or-table": ["CREATE INDEX convenience ON events (type)"],
    "e9-non-strict-events-table": ["DROP TABLE events", CREATE_STATEMENTS[2].replace(" STRICT", "")],
}


@pytest.mark.parametrize("statements", list(SCHEMA_DRIFT.values()), ids=list(SCHEMA_DRIFT))
def test_e8_e9_schema_drift_is_refused(tmp_path: Path, statements: list[str]) -> None:
    path = db_path(tmp_path)
    _valid_db(path)
    with raw(path) as con:
        for statement in statements:
            con.execute(statement)
    assert "does not contain the required schema objects" in str(_first_op_error(path))


def test_e10_any_typed_tables_without_constraints(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    with raw(path) as con:
        con.execute("CREATE TABLE persistence_state (singleton ANY, store_id ANY)")
        con.execute(
            "CREATE TABLE sessions (id ANY, version ANY, created_at ANY, cwd ANY, parent_session ANY, seed_length ANY,"
            " origin ANY, delegation_depth ANY, agent_preset ANY, incarnation ANY, revision ANY)"
        )
        con.execute(
            "CREATE TABLE events (session_id ANY, seq ANY, type ANY, time ANY, data ANY, source_event_seqs ANY,"
            " surface_op ANY, ignorable ANY)"
        )
        con.execute("INSERT INTO persistence_state VALUES (1, ?)", (str(uuid.uuid4()),))
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute("PRAGMA user_version = 17")
    os.chmod(path, 0o600)
    assert "does not contain the required schema objects" in str(_first_op_error(path))


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM persistence_state",
        "UPDATE persistence_state SET store_id = ''",
        "UPDATE persistence_state SET store_id = 'not-a-uuid'",
    ],
)
def test_e11_no_valid_store_identity(tmp_path: Path, damage: str) -> None:
    path = db_path(tmp_path)
    _valid_db(path)
    with raw(path) as con:
        con.execute(damage)
    err = _first_op_error(path)
    assert isinstance(err, SessionLayoutError) and "has no valid store identity" in str(err)


def test_e12_revalidation_before_mutation(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    append(st, meta("s", "/p"), one_turn_log()[:3], materialized=False)
    with raw(path) as con:
        con.execute("PRAGMA user_version = 16")
    with pytest.raises(SessionLayoutError, match=r"schema changed before mutation \(expected 17, got 16\)"):
        append(st, meta("s", "/p"), one_turn_log()[3:])
    with raw(path) as con:
        con.execute("PRAGMA user_version = 17")
        con.execute("PRAGMA application_id = 12345")
    with pytest.raises(SessionLayoutError, match=r"application id changed before mutation \(expected 1146308688, got 12345\)"):
        append(st, meta("s", "/p"), one_turn_log()[3:])
    st.close()


def test_e13_foreign_file_is_never_converted_to_wal(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    _valid_db(path, journal="delete")
    with raw(path) as con:
        con.execute("PRAGMA application_id = 999")
    _first_op_error(path)
    assert not Path(str(path) + "-wal").exists()
    with raw(path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


class _BusyJournal:
    """Connection proxy whose ``PRAGMA journal_mode = ...`` fails ``failures`` times with a given error code."""

    def __init__(self, con: sqlite3.Connection, failures: int, code: int) -> None:
        self._con, self.failures, self.code, self.attempts = con, failures, code, 0

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("PRAGMA journal_mode ="):
            self.attempts += 1
            if self.failures != 0:
                self.failures -= 1
                err = sqlite3.OperationalError("database is locked" if self.code == 5 else "database table is locked")
                err.sqlite_errorcode = self.code  # type: ignore[attr-defined]
                raise err
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


class _Clock:
    """The open sequence's clock, stopped: only its own ``sleep`` moves it, so the retry count depends on the
    budget and the retry interval alone, never on how long the work before the journal switch took."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize(
    ("failures", "code", "budget", "ok", "attempts", "stall_s"),
    [
        (1, 5, 5000, True, (2, 2), 0.0),  # BUSY once: retried
        (1, 5, 0, False, (1, 1), 0.0),  # no time budget: no retry
        (1, 6, 5000, False, (1, 1), 0.0),  # SQLITE_LOCKED is not retried
        (-1, 5, 50, False, (2, 6), 0.0),  # BUSY forever: retried every 10 ms until the deadline
        # The same on a loaded machine: the open before the journal switch takes longer than the whole budget
        # (real time; it failed with 1 attempt while the test read the wall clock).
        (-1, 5, 50, False, (2, 6), 0.08),
    ],
)
def test_e14_journal_busy_retry(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    failures: int,
    code: int,
    budget: int,
    ok: bool,
    attempts: tuple[int, int],
    stall_s: float,
) -> None:
    proxies: list[_BusyJournal] = []
    real = connection_module.Database._connect

    def connect(self: connection_module.Database) -> Any:
        proxies.append(_BusyJournal(real(self), failures, code))
        time.sleep(stall_s)
        return proxies[-1]

    monkeypatch.setattr(connection_module.Database, "_connect", connect)
    monkeypatch.setattr(connection_module, "time", _Clock())
    st = storage(db_path(tmp_path), busy_timeout_ms=budget)
    if ok:
        assert st.list_headers(T) == []
    else:
        with pytest.raises(SqliteStoreError, match="locked") as info:
            st.list_headers(T)
        assert isinstance(info.value, SqliteBusyError) == (code == 5)
    assert attempts[0] <= proxies[0].attempts <= attempts[1]
    st.close()


def test_e15_path_is_a_directory(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    path.mkdir(mode=0o700)
    assert "must be a regular file, not a symbolic link" in str(_first_op_error(path))


def test_e16_symlinked_file(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    real = path.parent / "real.sqlite"
    real.touch(mode=0o600)
    path.symlink_to(real)
    assert "not a symbolic link" in str(_first_op_error(path))


def test_e17_symlinked_parent(tmp_path: Path) -> None:
    target = private_dir(tmp_path, "target")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert "must be a real directory" in str(_first_op_error(link / "sessions.sqlite"))


def test_e18_permissions(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    _valid_db(path)
    os.chmod(path, 0o644)
    assert "accessible only by that user" in str(_first_op_error(path))
    loose = tmp_path / "loose"
    loose.mkdir()
    os.chmod(loose, 0o770)
    assert "not group/world-writable" in str(_first_op_error(loose / "sessions.sqlite"))


def test_e19_nul_in_path_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="NUL"):
        service(str(tmp_path / "a\0b.sqlite"))


def test_e20_parent_replaced_after_validation(tmp_path: Path) -> None:
    folder = private_dir(tmp_path, "gone")
    st = storage(folder / "sessions.sqlite")
    folder.rmdir()
    folder.write_text("now a file")
    with pytest.raises(OSError):
        st.list_headers(T)
    st.close()


def test_foreign_file_content_is_a_typed_error(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    path.write_bytes(b"this is not a database, just text" * 200)
    os.chmod(path, 0o600)
    err = _first_op_error(path)
    assert isinstance(err, SqliteStoreError) and "not a database" in str(err)


def test_service_laziness_and_reopen(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        store = service(path)
        assert not path.exists()
        assert await store.list() == []
        await store.close()
        assert sorted(p.name for p in path.parent.iterdir()) == ["sessions.sqlite"]  # WAL removed on clean close

    run(body())

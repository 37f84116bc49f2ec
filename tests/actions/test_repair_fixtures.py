"""Repair of every upstream crash fixture reproduces upstream's ``after/`` artifact.

JSONL: byte for byte.  SQLite: the same rows (store ids excluded).  Each scenario is repaired
through the function, through the in-process command line and once through ``python -m app``;
``--dry-run`` changes no byte; the backup holds the original bytes.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from actionkit import (
    BACKUP_RE,
    assert_untouched,
    backups_under,
    cli,
    content_digest,
    copy_private,
    expected_of,
    main_json,
    run,
    scenario_dir,
    scenario_params,
    sha256,
    sqlite_rows,
    store_path,
    tree_digest,
)

from app.actions import repair
from persistence import open_store
from persistence.jsonl.frames import scan_frames
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.timeout(60)


class Scenario:
    """A private copy of one fixture's ``before/root`` (and ``after/root`` for comparison)."""

    def __init__(self, backend: str, scenario: str, tmp: Path) -> None:
        self.backend = backend
        self.src = scenario_dir(backend, scenario)
        self.expected = expected_of(self.src)
        self.sid: str = self.expected["sessions"][0]["id"]
        self.root = copy_private(self.src / "before" / "root", tmp / "work" / "root")
        self.after = copy_private(self.src / "after" / "root", tmp / "after" / "root")
        self.target = store_path(backend, self.root)

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"

    def artifact(self, root: Path | None = None) -> Path:
        """The transcript (JSONL) or the database file under ``root``."""
        base = root or self.root
        if self.is_sqlite:
            return base / "sessions.sqlite"
        rel = self.expected["sessions"][0]["artifact"].replace("<ROOT>/", "", 1)
        return base / rel

    def plaintext(self, data: bytes) -> bytes:
        if self.backend != "jsonl-zstd":
            return data
        import zstandard

        ranges, _torn = scan_frames(data)
        return b"".join(zstandard.ZstdDecompressor().decompressobj().decompress(data[s:e]) for s, e in ranges)

    def assert_matches_upstream_after(self) -> None:
        if self.is_sqlite:
            assert sqlite_rows(self.artifact()) == sqlite_rows(self.artifact(self.after))
            return
        got = self.artifact().read_bytes()
        want = self.artifact(self.after).read_bytes()
        assert got == want, f"repaired artifact differs from upstream after/ ({len(got)} vs {len(want)} bytes)"
        want_sha = {a["path"]: a["sha256"] for a in self.expected["artifactsAfter"]}
        rel = "after/root/" + str(self.artifact().relative_to(self.root))
        assert want_sha[rel] == sha256(self.artifact())

    def assert_backup_is_original(self, backup: str | None, original: dict[str, Any]) -> None:
        assert backup is not None
        b = Path(backup)
        assert b.is_file()
        assert b.parent == self.artifact().parent
        assert b.name.startswith(self.artifact().name + ".bak-")
        assert BACKUP_RE.search(b.name), b.name
        assert stat.S_IMODE(b.stat().st_mode) == 0o600
        assert backups_under(self.root) == [b]
        if self.is_sqlite:
            # The online backup reads through the crash's -wal: the original rows, as one self-contained file.
            assert sqlite_rows(b) == original["rows"]
            con = sqlite3.connect(f"file:{b}?mode=ro", uri=True)
            try:
                assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            finally:
                con.close()
        else:
            assert b.read_bytes() == original["bytes"]

    def original(self) -> dict[str, Any]:
        if self.is_sqlite:
            probe = copy_private(self.root, self.root.parent.parent / "probe" / "root")
            return {"rows": sqlite_rows(probe / "sessions.sqlite")}
        return {"bytes": self.artifact().read_bytes()}


def _preview_facts(sc: Scenario, prev: repair.RepairPreview, before: bytes | None) -> None:
    """Everything the preview promises, checked against the bytes that repair then writes."""
    assert prev.repairable
    assert prev.session_id == sc.sid
    assert prev.artifact is not None and Path(prev.artifact.path) == sc.artifact()
    if prev.status == "open-turn":
        assert prev.cut_from is None and prev.cut_bytes is None and prev.recovered_count == 0
        assert prev.closers, "an open turn is repaired by appending closers"
    else:
        assert prev.status == "torn-tail"
        if not sc.is_sqlite:
            assert before is not None
            assert isinstance(prev.cut_from, int) and 0 < prev.cut_from < len(before)
            assert prev.cut_bytes == len(before) - prev.cut_from


@pytest.mark.parametrize(("backend", "scenario"), scenario_params())
def test_repair_function_reproduces_upstream_after(backend: str, scenario: str, tmp_path: Path) -> None:
    sc = Scenario(backend, scenario, tmp_path)
    original = sc.original()
    before = None if sc.is_sqlite else sc.artifact().read_bytes()

    async def go() -> tuple[repair.RepairPreview, repair.RepairResult, Any, Any]:
        store = open_store(sc.target)
        try:
            prev = await repair.preview_repair(store, sc.sid)
            res = await repair.repair_session(store, sc.sid)
            loaded = await store.load(sc.sid)
            diag = await store.diagnose(sc.sid)
            return prev, res, loaded, diag
        finally:
            await store.close()

    prev, res, loaded, diag = run(go())
    _preview_facts(sc, prev, before)
    if sc.is_sqlite and prev.status == "torn-tail":
        # Rows to cut: the session's rows from the torn marker's seq on; they are gone afterwards.
        cut = [r for r in original["rows"]["events"] if r[0] == sc.sid and r[1] >= prev.cut_from]
        assert prev.cut_rows == len(cut) >= 1
        kept = [r for r in original["rows"]["events"] if r[0] == sc.sid and r[1] < prev.cut_from]
        now = [r for r in sqlite_rows(sc.artifact())["events"] if r[0] == sc.sid]
        assert now[: len(kept)] == kept and len(now) == len(kept) + len(prev.closers)
    elif sc.is_sqlite:
        assert prev.cut_rows is None
    sc.assert_matches_upstream_after()
    sc.assert_backup_is_original(res.backup, original)
    assert res.status_after == "ok" and diag.status == "ok"
    events = loaded.events.to_json()
    assert res.events_after == len(events)
    assert [e["seq"] for e in events] == list(range(len(events)))

    # The preview's synthetic events are exactly what load committed: same dicts, same tail of the log.
    closers = [dict(c) for c in prev.closers]
    assert events[len(events) - len(closers) :] == closers
    assert events[-1]["type"] == "turn/end" or not closers
    if closers:
        assert events[-1]["data"]["reason"] == {"kind": "interrupted"}
    if not sc.is_sqlite:
        assert before is not None
        after = sc.artifact().read_bytes()
        cut = len(before) if prev.cut_from is None else prev.cut_from
        # Committed bytes are never rewritten: the kept prefix is the original's, then one appended suffix.
        assert after[:cut] == before[:cut]
        text = sc.plaintext(after)
        suffix_lines = text.splitlines(keepends=True)[-len(closers) :] if closers else []
        assert suffix_lines == [js_dumps(c) + b"\n" for c in closers]
        if sc.backend == "jsonl-zstd":
            ranges, torn = scan_frames(after)
            assert torn is None and ranges[-1][1] == len(after)
            # One new frame at most (recovered records + closers), nothing when only a torn tail was cut.
            n_before = len(scan_frames(before)[0])
            assert len(ranges) == n_before + (1 if closers or prev.recovered_count else 0)
        else:
            assert after.endswith(b"\n")


@pytest.mark.parametrize(("backend", "scenario"), scenario_params())
def test_dry_run_changes_no_byte_then_cli_repair_matches(
    backend: str, scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = Scenario(backend, scenario, tmp_path)
    original = sc.original()
    before = tree_digest(sc.root)

    code, out, err = main_json(capsys, "repair", str(sc.target), sc.sid, "--dry-run")
    assert code == 0, err
    assert_untouched(sc.root, before)  # sha256 and mtime of every file
    assert backups_under(sc.root) == []
    assert out["backup"] is None
    prev = out["preview"]
    assert set(prev) == {"id", "status", "reason", "artifact", "cutFrom", "cutBytes", "cutRows", "recoveredCount", "closers"}
    assert prev["id"] == sc.sid and prev["status"] in ("open-turn", "torn-tail")
    assert prev["artifact"] == {"kind": "sqlite" if sc.is_sqlite else "jsonl", "path": str(sc.artifact())}
    assert out["statusAfter"] == prev["status"]
    if sc.is_sqlite and prev["status"] == "torn-tail":
        assert isinstance(prev["cutRows"], int) and prev["cutRows"] >= 1
    dry_closers = prev["closers"]

    code, out, err = main_json(capsys, "repair", str(sc.target), sc.sid)
    assert code == 0, err
    assert out["statusAfter"] == "ok"
    assert out["preview"]["closers"] == dry_closers
    sc.assert_matches_upstream_after()
    sc.assert_backup_is_original(out["backup"], original)

    # Repairing again finds nothing to do: no second backup, no byte changes.
    settled = content_digest(sc.root)
    code, out, err = main_json(capsys, "repair", str(sc.target), sc.sid)
    assert code == 0, err
    assert out["preview"]["status"] == "ok" and out["backup"] is None
    assert content_digest(sc.root) == settled
    assert len(backups_under(sc.root)) == 1


@pytest.mark.parametrize(
    ("backend", "scenario"),
    [p for p in scenario_params() if p.id in ("jsonl-zstd/torn-tail/cut-multiblock-frame", "jsonl-none/interrupted")],
)
def test_python_m_app_repair_text_output(backend: str, scenario: str, tmp_path: Path) -> None:
    sc = Scenario(backend, scenario, tmp_path)
    original = sc.original()
    dry = cli("repair", str(sc.target), sc.sid, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "dry run: nothing was written" in dry.stdout
    assert backups_under(sc.root) == []
    for line in ("append synthetic turn/end seq",):
        assert line in dry.stdout
    done = cli("repair", str(sc.target), sc.sid)
    assert done.returncode == 0, done.stderr
    m = re.search(r"backup: (\S+)", done.stdout)
    assert m, done.stdout
    assert "repaired: status now ok" in done.stdout
    sc.assert_backup_is_original(m.group(1), original)
    sc.assert_matches_upstream_after()
    if scenario.startswith("torn-tail"):
        assert re.search(r"cut \d+ byte\(s\) from offset \d+; 33 record\(s\) re-appended", dry.stdout), dry.stdout


def test_backup_is_taken_before_load_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the engine's commit fails, the backup already exists and the transcript is untouched."""
    sc = Scenario("jsonl-zstd", "interrupted", tmp_path)
    before = sc.artifact().read_bytes()
    seen: list[bool] = []

    async def failing_commit(self: Any, session_id: str, **_kw: Any) -> Any:
        seen.append(bool(backups_under(sc.root)))
        raise OSError("disk full (simulated)")

    from persistence.coordinator import CoordinatedPersistence

    # The repair commits through the engine's pinned ``repair`` (no longer upstream's ``load`` loop).
    monkeypatch.setattr(CoordinatedPersistence, "repair", failing_commit)

    async def go() -> None:
        store = open_store(sc.target)
        try:
            await repair.repair_session(store, sc.sid)
        finally:
            await store.close()

    with pytest.raises(OSError, match="simulated"):
        run(go())
    assert seen == [True]
    assert sc.artifact().read_bytes() == before
    [b] = backups_under(sc.root)
    assert b.read_bytes() == before
    assert os.stat(b).st_size == len(before)

"""``sessionscope list``: title, status, events and modified for a person; --status/--since/--cwd/--title (issue 23)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import comparekit as ck
import pytest
from sessionkit import ev, run

from app.cli import main
from app.cli.list_view import modified_text, parse_since
from persistence import open_store

pytestmark = pytest.mark.usefixtures("fast_fsync")

NOW_MS = int(time.time() * 1000)
DAY_MS = 86_400_000


def _at(events: list[dict[str, Any]], start_ms: int) -> list[dict[str, Any]]:
    """The events timed from ``start_ms``, one ms apart."""
    return [{**e, "time": start_ms + i} for i, e in enumerate(events)]


def _titled(events: list[dict[str, Any]], title: str) -> list[dict[str, Any]]:
    seq = len(events)
    return [*events, ev("session/title", seq, {"title": title, "messageSeqs": [1], "source": {"kind": "fallback"}})]


SESSIONS: dict[str, tuple[str, list[dict[str, Any]], int]] = {
    # id: (cwd, events, first event time)
    "fresh": ("/home/dev/shop", _titled(ck.log(("add a Login page", "ok", ("bash",), 10)), "Login page"), NOW_MS - 3_600_000),
    "old": ("/home/dev/shop", _titled(ck.log(("fix the build", "ok", (), 10)), "Fix the build"), NOW_MS - 10 * DAY_MS),
    # A turn left open (no turn/end): status open-turn.
    "crashed": ("/home/dev/parser", ck.log(("parse it", "ok", (), 10))[:-1], NOW_MS - 2 * DAY_MS - 3_600_000),
}


@pytest.fixture(params=["jsonl-zstd", "sqlite"])
def root(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    backend = str(request.param)
    path = tmp_path / "store" / "sessions.sqlite" if backend == "sqlite" else tmp_path / "root"
    path.parent.mkdir(parents=True, exist_ok=True)

    async def body() -> None:
        store = open_store(str(path), backend)
        try:
            for sid, (cwd, events, start) in SESSIONS.items():
                await store.create({"version": 0, "id": sid, "createdAt": start, "cwd": cwd})
                await store.append(sid, _at(events, start))
        finally:
            await store.close()

    run(body())
    return path


def _last_ms(sid: str) -> int:
    _cwd, events, start = SESSIONS[sid]
    return start + len(events) - 1


def _list(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["list", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_long_shows_title_status_events_and_a_readable_modified_date(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _list(capsys, str(root), "--long")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "TITLE", "STATUS", "EVENTS", "MODIFIED", "CWD"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(SESSIONS)
    for sid, (cwd, events, _start) in SESSIONS.items():
        line = rows[sid]
        assert modified_text(_last_ms(sid)) in line and line.endswith(cwd)
        assert f" {len(events)} " in line
    assert "Login page" in rows["fresh"] and " ok " in rows["fresh"]
    assert "(untitled)" in rows["crashed"] and " open-turn " in rows["crashed"]


def test_a_terminal_gets_the_table_and_a_pipe_the_rows_scripts_read(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, piped, _err = _list(capsys, str(root))
    assert code == 0
    assert sorted(piped.splitlines()) == sorted(f"{sid}\t{cwd}\t{start}" for sid, (cwd, _e, start) in SESSIONS.items())
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, table, _err = _list(capsys, str(root))
    assert code == 0 and table.splitlines()[0].split()[:3] == ["ID", "TITLE", "STATUS"]


def test_filters(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def ids(*flags: str) -> set[str]:
        code, out, err = _list(capsys, str(root), "--json", *flags)
        assert (code, err) == (0, ""), flags
        return {r["id"] for r in json.loads(out)}

    assert ids() == set(SESSIONS)
    assert ids("--status", "open-turn") == {"crashed"}
    assert ids("--status", "ok,torn-tail") == {"fresh", "old"}
    assert ids("--since", "1d") == {"fresh"}
    assert ids("--since", "3d") == {"fresh", "crashed"}
    day = time.strftime("%Y-%m-%d", time.localtime((NOW_MS - 5 * DAY_MS) / 1000))
    assert ids("--since", day) == {"fresh", "crashed"}
    assert ids("--cwd", "/home/dev/shop") == {"fresh", "old"}
    assert ids("--title", "LOGIN") == {"fresh"}
    assert ids("--cwd", "shop", "--since", "2d") == {"fresh"}


def test_json_keeps_the_header_shape_and_long_adds_the_details(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _err = _list(capsys, str(root), "--json")
    plain = {r["id"]: r for r in json.loads(out)}
    assert {"version", "id", "createdAt", "cwd"} <= set(plain["fresh"])  # upstream's header, as before
    assert not {"title", "status", "events", "modified"} & set(plain["fresh"])
    _code, out, _err = _list(capsys, str(root), "--json", "--long")
    rows = {r["id"]: r for r in json.loads(out)}
    for sid, (_cwd, events, _start) in SESSIONS.items():
        assert {k: rows[sid][k] for k in plain[sid]} == plain[sid]
        assert rows[sid]["events"] == len(events) and rows[sid]["modified"] == _last_ms(sid)
    assert (rows["fresh"]["title"], rows["fresh"]["status"]) == ("Login page", "ok")
    assert (rows["crashed"]["title"], rows["crashed"]["status"]) == (None, "open-turn")


def test_a_since_that_is_no_date_is_a_usage_error(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _list(capsys, str(root), "--since", "tomorrowish")
    assert code == 2 and out == ""
    assert "--since 'tomorrowish' is neither a date" in err


def test_parse_since_durations_and_dates() -> None:
    now = 1_000_000.0
    assert parse_since("90m", now) == int((now - 5400) * 1000)
    assert parse_since("2d", now) == int((now - 2 * 86400) * 1000)
    assert parse_since("1w", now) == int((now - 604800) * 1000)
    assert parse_since("2026-12-01", now) == int(time.mktime((2026, 12, 1, 0, 0, 0, 0, 0, -1)) * 1000)

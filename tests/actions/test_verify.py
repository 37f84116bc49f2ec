"""``verify``: an fsck over a root. Each session gets a verdict with its reason; exit 0 only when all are ok."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import (
    assert_untouched,
    cli,
    copy_private,
    expected_of,
    main_json,
    main_text,
    needs_shared,
    needs_sqlite,
    privatize,
    run,
    scenario_dir,
    sqlite_rows,
    tree_digest,
)
from hypothesis import given
from hypothesis import strategies as st

from app.actions.verify import decode_segment, verify_root
from persistence import JsonlSessionPersistence, open_store
from persistence.jsonl.frames import compress_frame
from persistence.jsonl.paths import encode_segment

pytestmark = pytest.mark.timeout(60)

ROW_KEYS = {"id", "verdict", "status", "reason", "path"}


def _write(root: Path, compression: str, sessions: dict[str, list[dict[str, Any]]]) -> None:
    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for sid, events in sessions.items():
                await store.create(sk.meta(sid, sk.WORK))
                await store.append(sid, events)
        finally:
            await store.close()

    run(go())


def _reencode(path: Path, compression: str, header: bytes, body: bytes) -> None:
    path.write_bytes(compress_frame(header) + compress_frame(body) if compression == "zstd" else header + body)


def mixed_root(tmp: Path, compression: str) -> tuple[Path, dict[str, tuple[str, str, str]]]:
    """A root with one session per verdict (and per kind of damage); returns id -> (verdict, status, reason)."""
    tmp.mkdir(parents=True, exist_ok=True)
    os.chmod(tmp, 0o700)
    root = tmp / "root"
    two_turns = sk.one_turn_log() + sk.completed_turn2()
    names = ("ok", "open", "torn", "flipped", "garbage-header", "v1")
    _write(root, compression, {sid: (sk.one_turn_log() + sk.open_turn2() if sid == "open" else two_turns) for sid in names})
    art = {sid: sk.artifact(root, sk.WORK, sid, compression) for sid in names}

    torn_at = art["torn"].stat().st_size
    with open(art["torn"], "ab") as f:  # a crash mid-append: a bare frame magic / half a line
        f.write(b"\x28\xb5\x2f\xfd" if compression == "zstd" else b'{"type":"turn/start","seq":8,')

    data = bytearray(art["flipped"].read_bytes())
    if compression == "zstd":
        data[-6] ^= 0xFF  # inside the last event frame: its content checksum no longer matches
        flipped_reason = "corrupt Zstandard session log: frame at byte"
    else:
        lines = bytes(data).split(b"\n")
        lines[3] = lines[3][:-5] + b"\x00" + lines[3][-4:]  # a NUL inside a committed JSON line
        data = bytearray(b"\n".join(lines))
        flipped_reason = "corrupt session log: unparsable committed event at line 3"
    art["flipped"].write_bytes(bytes(data))

    plain = sk.plaintext(art["garbage-header"].read_bytes(), compression)
    _reencode(art["garbage-header"], compression, b"this is not a session header\n", plain[plain.index(b"\n") + 1 :])

    plain = sk.plaintext(art["v1"].read_bytes(), compression)
    nl = plain.index(b"\n") + 1
    _reencode(art["v1"], compression, plain[:nl].replace(b'"version":0', b'"version":1', 1), plain[nl:])
    privatize(root)
    expect = {
        "ok": ("ok", "ok", "balanced log"),
        "open": ("repairable", "open-turn", "interrupted turn: 2 synthetic closer(s) would be appended"),
        "torn": ("repairable", "torn-tail", f"damaged tail after byte/row {torn_at} will be cut"),
        "flipped": ("corrupt", "corrupt", flipped_reason),
        "garbage-header": (
            "corrupt",
            "corrupt",
            "the first line is not a readable session header, so the session "
            "cannot be listed (corrupt session log: header line is not valid JSON)",
        ),
        "v1": (
            "unsupported",
            "unsupported",
            'session "v1" uses log format v1, but this harness reads only v0: the log was written by a newer harness',
        ),
    }
    return root, expect


def _check_rows(rows: list[dict[str, Any]], expect: dict[str, tuple[str, str, str]], root: Path, compression: str) -> None:
    by_id = {r["id"]: r for r in rows}
    assert sorted(by_id) == sorted(expect) and len(rows) == len(expect)
    for sid, (verdict, status, reason) in expect.items():
        row = by_id[sid]
        assert set(row) == ROW_KEYS
        assert (row["verdict"], row["status"]) == (verdict, status), row
        assert row["reason"].startswith(reason), row
        assert row["path"] == str(sk.artifact(root, sk.WORK, sid, compression))


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_verify_mixed_root_reports_each_verdict_and_exits_1(
    compression: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, expect = mixed_root(tmp_path, compression)
    before = tree_digest(root)
    code, out, err = main_json(capsys, "verify", str(root))
    assert code == 1, err
    assert set(out) == {"ok", "rootError", "sessions"}
    assert out["ok"] is False and out["rootError"] is None
    _check_rows(out["sessions"], expect, root, compression)
    # Listed sessions come first in upstream's list order; the unlistable one is appended.
    assert [r["id"] for r in out["sessions"]] == ["flipped", "ok", "open", "torn", "v1", "garbage-header"]

    code, text, err = main_text(capsys, "verify", str(root))
    assert code == 1 and err == ""
    lines = text.splitlines()
    assert lines[-1] == "corrupt: 2, ok: 1, repairable: 2, unsupported: 1"
    for sid, (verdict, _status, reason) in expect.items():
        assert any(line.startswith(f"{verdict:<12} {sid}  {reason}") for line in lines), (sid, lines)
    assert_untouched(root, before)  # verify only reads


def test_verify_names_a_session_whose_header_frame_breaks_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream's list() throws for the whole root on one damaged header frame; verify still reports per session."""
    root, expect = mixed_root(tmp_path, "zstd")
    _write(root, "zstd", {"bad-header-frame": sk.one_turn_log()})
    art = sk.artifact(root, sk.WORK, "bad-header-frame", "zstd")
    data = bytearray(art.read_bytes())
    data[10] ^= 0xFF
    art.write_bytes(bytes(data))
    privatize(root)

    async def listing() -> None:
        store = open_store(root)
        try:
            await store.list()
        finally:
            await store.close()

    with pytest.raises(Exception, match="corrupt Zstandard session log: header frame failed validation"):
        run(listing())
    code, out, err = main_json(capsys, "verify", str(root))
    assert code == 1, err
    assert out["rootError"] is None
    expect["bad-header-frame"] = ("corrupt", "corrupt", "corrupt Zstandard session log: frame at byte 0 failed validation")
    expect["garbage-header"] = ("corrupt", "corrupt", "corrupt session log: header line is not valid JSON")
    _check_rows(out["sessions"], expect, root, "zstd")


def test_verify_root_error_for_a_foreign_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _write(root, "none", {"a": sk.one_turn_log()})
    flat = root / "--w--" / "flat.jsonl"
    flat.write_bytes(b"")
    code, out, _err = main_json(capsys, "verify", str(root))
    assert code == 1
    assert out["ok"] is False and out["sessions"] == []
    assert out["rootError"].startswith(f'Error: session artifact "{flat}" uses the unsupported flat-file layout')
    code, text, _err = main_text(capsys, "verify", str(root))
    assert code == 1
    assert text.splitlines()[0].startswith("root error: Error: session artifact")
    assert text.splitlines()[-1] == "no sessions"


def test_verify_empty_and_missing_roots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _err = main_json(capsys, "verify", str(empty))
    assert (code, out) == (0, {"ok": True, "rootError": None, "sessions": []})
    # A root that does not exist is an error, not an empty root (issue 21 item 8), and is not created.
    code, text, err = main_text(capsys, "verify", str(tmp_path / "absent"))
    assert (code, text, err) == (2, "", f"sessionscope: Error: no session root at {tmp_path / 'absent'}\n")
    assert not (tmp_path / "absent").exists()


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
@needs_shared
def test_verify_all_ok_roots_exit_0(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = scenario_dir(backend, "many-sessions")
    root = copy_private(d / "root", tmp_path / "root")
    listed = next(c for c in expected_of(d)["calls"] if c["op"] == "list")["result"]
    code, out, err = main_json(capsys, "verify", str(root))
    assert code == 0, err
    assert out["ok"] is True and out["rootError"] is None
    assert [r["id"] for r in out["sessions"]] == [h["id"] for h in listed]  # upstream's list order
    assert {r["verdict"] for r in out["sessions"]} == {"ok"} and len(out["sessions"]) == 50
    for r in out["sessions"]:
        assert Path(r["path"]).is_file() and Path(r["path"]).parent.name == encode_segment(r["id"])
    done = cli("verify", str(copy_private(scenario_dir(backend, "balanced") / "root", tmp_path / "b" / "root")))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "ok: 1"


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
@needs_shared
def test_verify_upstream_refusals(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """future-version (v1 / v-1 headers) and unknown-event fixtures: the verdicts follow upstream's refusals."""
    verdicts: dict[str, str] = {}
    for scenario in ("future-version", "unknown-event"):
        d = scenario_dir(backend, scenario)
        root = copy_private(d / "root", tmp_path / scenario / "root")
        code, out, err = main_json(capsys, "verify", str(root))
        assert code == 1, err
        loads = {c["args"][0]: c for c in expected_of(d)["calls"] if c["op"] == "inspect"}
        for row in out["sessions"]:
            verdicts[row["id"]] = row["verdict"]
            up = loads.get(row["id"])
            if up is None:
                continue
            if up["ok"]:
                assert row["verdict"] in ("ok", "repairable"), row
            else:
                assert up["error"]["class"] == "SessionFormatUnsupportedError"
                assert row["verdict"] == "unsupported"
                assert row["reason"] == up["error"]["message"].replace("<ROOT>", str(root)), row
    assert sorted(verdicts.values()).count("unsupported") >= 3


def test_verify_root_function_on_a_store(tmp_path: Path) -> None:
    root, expect = mixed_root(tmp_path, "zstd")

    async def go() -> tuple[list[Any], str | None]:
        store = open_store(root)
        try:
            return await verify_root(store)
        finally:
            await store.close()

    rows, root_error = run(go())
    assert root_error is None
    _check_rows([r.to_json() for r in rows], expect, root, "zstd")


@needs_shared
@needs_sqlite
def test_verify_sqlite_without_touching_the_crashed_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_private(scenario_dir("sqlite", "interrupted") / "before" / "root", tmp_path / "root")
    db = root / "sessions.sqlite"
    before = tree_digest(root)
    code, out, err = main_json(capsys, "verify", str(db))
    assert code == 1, err
    [row] = out["sessions"]
    assert (row["verdict"], row["status"]) == ("repairable", "open-turn")
    assert row["reason"] == "interrupted turn: 4 synthetic closer(s) would be appended" and row["path"] is None
    assert_untouched(root, before)  # the -wal is still there, nothing checkpointed into the database
    balanced = copy_private(scenario_dir("sqlite", "balanced") / "root", tmp_path / "balanced" / "root")
    rows = sqlite_rows(balanced / "sessions.sqlite")
    code, out, err = main_json(capsys, "verify", str(balanced / "sessions.sqlite"))
    assert code == 0, err
    assert [r["verdict"] for r in out["sessions"]] == ["ok"]
    assert sqlite_rows(balanced / "sessions.sqlite") == rows


@given(st.text(min_size=1, max_size=12))
def test_decode_segment_inverts_encode_segment(raw: str) -> None:
    try:
        seg = encode_segment(raw)
    except UnicodeEncodeError:  # lone surrogates cannot be file names here
        return
    assert decode_segment(seg) == raw


def test_decode_segment_rejects_names_encode_never_makes() -> None:
    for name in ("~zz", "~002e", "a~00", "é", "", "~0061"):
        assert decode_segment(name) is None, name
    assert decode_segment("~002E~002E") == ".."
    assert decode_segment("weird~0020id~002Fwith~003Aslash~0020~007Etilde") == "weird id/with:slash ~tilde"

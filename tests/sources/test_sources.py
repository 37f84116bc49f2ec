"""Open anything (issue 23): every source kind on every backend, found by content whatever its name, read
through the engine's own validation and recovery, and never written."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from sessionkit import artifact, encode_log, header_line, one_turn_log, open_turn2, run
from sourcekit import (
    BACKENDS,
    bundle_of,
    fingerprint,
    own_store,
    skip_without_bundles,
    transcript_bytes,
)

from app.cli import main
from app.sources import (
    AmbiguousSessionError,
    SourceError,
    SourceKind,
    SourcePart,
    close_source,
    open_part_store,
    open_source,
    sniff,
    source_sessions,
    store_for,
)
from persistence import SessionLayoutError, SessionReadOnlyError, open_store
from persistence.jsonl.frames import compress_frame

TORN_FRAGMENT = b'{"type":"assistant/chunk","seq":%d,"ti'


def inspect_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["inspect", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- sniffing


@pytest.mark.parametrize("name", ["transcript(1).zst", "customer log.txt", "no-extension", "looks-like.db", "x.zip"])
@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_transcript_is_found_by_content_whatever_its_name(tmp_path: Path, name: str, compression: str) -> None:
    path = tmp_path / name
    path.write_bytes(encode_log(header_line("s1", "/p"), [one_turn_log()], compression))
    assert sniff(path) is SourceKind.TRANSCRIPT
    src = open_source(path)
    assert (src.kind, src.read_only, len(src.parts)) == (SourceKind.TRANSCRIPT, True, 1)
    assert src.label() == f"{name} — transcript"


def test_stores_and_bundles_are_found_by_content(tmp_path: Path) -> None:
    store = own_store(tmp_path, "sqlite", {"s1": one_turn_log()})
    renamed = tmp_path / "notes.txt"
    shutil.copyfile(store, renamed)
    assert sniff(renamed) is SourceKind.SQLITE_STORE
    zipped = tmp_path / "attachment.dat"
    zipped.write_bytes(b"PK\x03\x04" + b"\0" * 60)
    assert sniff(zipped) is SourceKind.BUNDLE
    for text in (b"", b"hello\n", b'{"type":"turn/start","seq":0}\n', b"\x28\xb5\x2f"):
        other = tmp_path / "other"
        other.write_bytes(text)
        assert sniff(other) is None
    assert sniff(tmp_path) is None


def test_a_path_that_is_no_source_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file or folder"):
        open_source(tmp_path / "absent")
    text = tmp_path / "readme.txt"
    text.write_bytes(b"just words\n")
    with pytest.raises(SessionLayoutError, match="is not a SQLite database"):
        open_source(text)  # the engine's own words, as for any store path
    assert text.read_bytes() == b"just words\n" and sorted(p.name for p in tmp_path.iterdir()) == ["readme.txt"]


# ---------------------------------------------------------------- every kind on every backend


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_source_kind_reads_the_same_session(tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "own").mkdir()
    (tmp_path / "t").mkdir()
    store = own_store(tmp_path / "own", backend, {"s1": one_turn_log()})
    expected = inspect_json([str(store), "s1"], capsys)
    case = tmp_path / "case"
    case.mkdir()
    lone = case / "customer log.txt"
    lone.write_bytes(transcript_bytes(tmp_path / "t", backend, "s1", one_turn_log()))
    kinds = {
        str(store): SourceKind.SQLITE_STORE if backend == "sqlite" else SourceKind.JSONL_ROOT,
        str(lone): SourceKind.TRANSCRIPT,
    }
    for path, kind in kinds.items():
        src = open_source(Path(path))
        try:
            assert src.kind is kind and src.read_only == (kind is SourceKind.TRANSCRIPT)
            assert [s.session_id for s in run(source_sessions(src))] == ["s1"]
            store_obj, sid = run(store_for(src))
            run(store_obj.close())
            assert sid == "s1"
        finally:
            close_source(src)
        # The id is optional: the source holds one session.
        assert inspect_json([path], capsys)["events"] == expected["events"]
    folder = open_source(case)
    assert (folder.kind, folder.read_only, [p.kind for p in folder.parts]) == (
        SourceKind.CASE_FOLDER,
        True,
        [SourceKind.TRANSCRIPT],
    )
    assert inspect_json([str(case)], capsys)["events"] == expected["events"]


@skip_without_bundles
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bundle_reads_like_the_session_it_was_made_from(
    tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = own_store(tmp_path, backend, {"s1": one_turn_log()})
    expected = inspect_json([str(store), "s1"], capsys)
    bundle = bundle_of(store, "s1", tmp_path / "case.zip")
    before = fingerprint(tmp_path)
    src = open_source(bundle)
    try:
        assert (src.kind, src.read_only) == (SourceKind.BUNDLE, True)
        assert src.label() == "case.zip — support bundle, verified"
        assert [s.session_id for s in run(source_sessions(src))] == ["s1"]
        extraction = src.parts[0].store_path
        assert extraction.exists() and tmp_path not in extraction.parents  # unpacked into the cache folder
    finally:
        close_source(src)
    assert not extraction.exists()
    assert inspect_json([str(bundle)], capsys)["events"] == expected["events"]
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_case_folder_holds_a_mix(tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "case"
    case.mkdir()
    own_store(case / "sub", backend, {"a": one_turn_log(), "b": one_turn_log()})
    (case / "mail").mkdir()
    (case / "mail" / "transcript(1).zst").write_bytes(encode_log(header_line("c", "/q"), [one_turn_log()], "zstd"))
    (case / "customer log.txt").write_bytes(encode_log(header_line("d", "/q"), [one_turn_log()], "none"))
    (case / "notes.md").write_text("what the customer said\n")
    src = open_source(case)
    assert src.kind is SourceKind.CASE_FOLDER and src.read_only and all(p.read_only for p in src.parts)
    assert sorted(s.session_id for s in run(source_sessions(src))) == ["a", "b", "c", "d"]
    assert src.label() == f"case — case folder, {len(src.parts)} parts"
    with pytest.raises(AmbiguousSessionError, match="holds 4 sessions; name one: "):
        run(store_for(src))
    capsys.readouterr()
    assert main(["inspect", str(case), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["class"] == "TypeError" and all(sid in error["message"] for sid in "abcd")
    assert inspect_json([str(case), "c"], capsys)["meta"]["id"] == "c"
    # Every part opens read-only, a root or a SQLite store included: the engine refuses a write.
    before = fingerprint(case)

    async def write(part: SourcePart) -> None:
        store = open_part_store(part)
        try:
            assert store.read_only
            await store.create({"version": 0, "id": "new", "createdAt": 1, "cwd": "/proj"})
            await store.append("new", one_turn_log())
        finally:
            await store.close()

    for part in src.parts:
        with pytest.raises(SessionReadOnlyError):
            run(write(part))
    assert fingerprint(case) == before


# ---------------------------------------------------------------- a lone damaged transcript


def _damaged(kind: str, compression: str) -> bytes:
    header = header_line("s1", "/p")
    if kind == "crashed":
        return encode_log(header, [one_turn_log(), open_turn2()], compression)
    if kind == "torn":
        fragment = TORN_FRAGMENT % 6
        tail = fragment if compression == "none" else compress_frame(fragment)[:-2]
        return encode_log(header, [one_turn_log()], compression) + tail
    # corrupt: a record that is not JSON between two good ones (not a torn tail: records follow it)
    events = one_turn_log()
    return encode_log(header, [events[:3], b"{not json\n", events[3:]], compression)


@pytest.mark.parametrize("kind", ["crashed", "torn", "corrupt"])
@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_lone_damaged_transcript_gets_the_verdict_it_gets_in_a_root(tmp_path: Path, kind: str, compression: str) -> None:
    data = _damaged(kind, compression)
    root = tmp_path / "root"
    in_root_path = artifact(root, "/p", "s1", compression)
    in_root_path.parent.mkdir(parents=True)
    in_root_path.write_bytes(data)
    lone = tmp_path / "received" / "whatever it was called"
    lone.parent.mkdir()
    lone.write_bytes(data)

    async def verdict(path: Path) -> tuple[str, str | None, list[dict], int]:
        store = open_store(path, read_only=True, create=False)
        try:
            view = await store.view("s1")
            d = view.diagnosis
            return d.status, d.reason, [dict(c) for c in d.closers], d.event_count
        finally:
            await store.close()

    in_root = run(verdict(root))
    assert in_root[0] == {"crashed": "open-turn", "torn": "torn-tail", "corrupt": "corrupt"}[kind]
    got = run(verdict(lone))
    assert got[0] == in_root[0] and got[2:] == in_root[2:]
    assert (got[1] or "").replace(str(lone), "PATH") == (in_root[1] or "").replace(str(in_root_path), "PATH")

    before = fingerprint(lone.parent)

    async def repair() -> None:
        store = open_store(lone, create=False)
        try:
            view = await store.view("s1")
            await store.repair("s1", expected_revision=view.diagnosis.revision or "")
        finally:
            await store.close()

    if kind != "corrupt":
        with pytest.raises(SessionReadOnlyError, match="received transcript, opened read-only"):
            run(repair())
    assert main(["repair", str(lone), "--force"]) == 1  # refused before anything is opened for writing
    assert fingerprint(lone.parent) == before


def test_a_lone_transcript_refuses_every_write(tmp_path: Path) -> None:
    lone = tmp_path / "t.txt"
    lone.write_bytes(encode_log(header_line("s1", "/p"), [one_turn_log(), open_turn2()], "none"))
    before = fingerprint(tmp_path)

    async def writes() -> list[str]:
        store = open_store(lone)
        failures = []
        try:
            assert store.read_only
            for attempt in (
                lambda: store.append("s1", [{"type": "turn/start", "seq": 8, "time": 9, "data": {"turn": 3}}]),
                lambda: store.create({"version": 0, "id": "new", "createdAt": 1}),
                lambda: store.load("s1"),  # an interrupted turn: loading would commit the closers
            ):
                try:
                    await attempt()
                except SessionReadOnlyError as err:
                    failures.append(str(err))
        finally:
            await store.close()
        return failures

    assert len(run(writes())) == 3
    assert fingerprint(tmp_path) == before


def test_an_explicit_sqlite_backend_still_refuses_a_transcript(tmp_path: Path) -> None:
    lone = tmp_path / "t.jsonl"
    lone.write_bytes(encode_log(header_line("s1", "/p"), [one_turn_log()], "none"))
    with pytest.raises(SessionLayoutError, match="is not a SQLite database"):
        open_store(lone, "sqlite", read_only=True, create=False)


def test_a_sqlite_part_of_a_case_folder_is_never_written(tmp_path: Path) -> None:
    case = tmp_path / "case"
    case.mkdir()
    db = own_store(case, "sqlite", {"s1": one_turn_log()})
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=DELETE")  # as a received file arrives: no -wal beside it
    con.close()
    (case / "other.txt").write_bytes(encode_log(header_line("s2", "/p"), [one_turn_log()], "none"))
    before = fingerprint(case)
    src = open_source(case)
    sqlite_part = next(p for p in src.parts if p.kind is SourceKind.SQLITE_STORE)

    async def attempt() -> None:
        store = open_part_store(sqlite_part)
        try:
            await store.append("s1", [{"type": "turn/start", "seq": 6, "time": 9, "data": {"turn": 2}}])
        finally:
            await store.close()

    with pytest.raises(SessionReadOnlyError):
        run(attempt())
    assert fingerprint(case) == before


def test_a_part_that_cannot_be_read_is_a_row_not_a_failed_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    (case / "log.txt").write_bytes(encode_log(header_line("c", "/q"), [one_turn_log()], "none"))
    src = open_source(case)
    try:
        rows = run(source_sessions(src))
    finally:
        close_source(src)
    good = [r for r in rows if not r.failed]
    bad = [r for r in rows if r.failed]
    assert [r.session_id for r in good] == ["c"]
    assert len(bad) == 1 and bad[0].part.origin == case / "broken.db" and not bad[0].entry.ok
    assert bad[0].entry.problem and "broken.db" in bad[0].entry.session_id
    assert inspect_json([str(case)], capsys)["meta"]["id"] == "c"  # the one session that reads

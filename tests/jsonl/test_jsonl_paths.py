"""JSONL path helpers (jsonl-backend §3, §15.1 cases 1-9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sessionkit import meta, one_turn_log, run

from persistence import JsonlSessionPersistence, SessionPersistenceError
from persistence.jsonl.paths import encode_segment, log_path, project_dir, project_key

pytestmark = pytest.mark.usefixtures("fast_fsync")


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [
        ("..", "~002E~002E"),
        (".", "~002E"),
        ("a/b", "a~002Fb"),
        ("/etc/passwd", "~002Fetc~002Fpasswd"),
        ("a\0b", "a~0000b"),
        ("plain-ID_1.2", "plain-ID_1.2"),
        ("a~b", "a~007Eb"),
        ("...", "..."),
        ("😀", "~D83D~DE00"),
        ("é", "~00E9"),
        ("a b", "a~0020b"),
    ],
)
def test_case_01_encode_segment(raw: str, encoded: str) -> None:
    """§15 case 1 (+ §3.1: non-BMP as two escapes, ``...`` literal)."""
    assert encode_segment(raw) == encoded


def test_case_02_lone_surrogates_and_injectivity() -> None:
    """§15 case 2."""
    assert encode_segment("\ud800") == "~D800"
    assert encode_segment("\udc00") == "~DC00"
    assert encode_segment("~002F") == "~007E002F"
    assert encode_segment("~002F") != encode_segment("/")


def test_case_03_empty_segment() -> None:
    """§15 case 3."""
    with pytest.raises(SessionPersistenceError, match="cannot encode an empty path segment"):
        encode_segment("")


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        ("/Users/qyj/" + "work/deepseek-harness", "--Users-qyj-work-deepseek-harness--"),
        ("C:\\work\\agent", "--C-work-agent--"),
        ("/开发/~agent", "--~5F00~53D1-~007Eagent--"),
        ("/", "--root--"),
        ("a-/b", "--a--b--"),
        ("//x//y::z", "--x-y-z--"),
        ("/-x", "--x--"),
        ("/a/b-c", "--a-b-c--"),
        ("/a-b/c", "--a-b-c--"),
    ],
)
def test_cases_04_05_06_project_key(cwd: str, key: str) -> None:
    """§15 cases 4, 5 (same key for /a/b-c and /a-b/c) and 6."""
    assert project_key(cwd) == key


def test_case_07_project_key_bounds() -> None:
    """§15 case 7: the key is at most 255 chars; an empty cwd is refused."""
    key = project_key("/" + "x" * 1000)
    assert len(key) == 255
    assert key == "--" + "x" * 251 + "--"
    with pytest.raises(SessionPersistenceError, match="empty project path"):
        project_key("")


def test_project_key_truncation_may_cut_an_escape() -> None:
    """§3.2 step 4: plain prefix truncation of the ASCII slug."""
    key = project_key("/" + "x" * 249 + "é")
    assert key == "--" + "x" * 249 + "~0" + "--"


def test_no_cwd_project_dir(tmp_path: Path) -> None:
    """§3.2: absent cwd -> ``_no-cwd``."""
    assert project_dir(str(tmp_path), None) == str(tmp_path / "_no-cwd")
    assert log_path(str(tmp_path), None, "x", "zstd") == str(tmp_path / "_no-cwd" / "x" / "session.jsonl.zstd")


def test_case_05_colliding_project_keys_store_side_by_side(tmp_path: Path) -> None:
    """§15 case 5: /a/b-c and /a-b/c share ``--a-b-c--``; both sessions are stored and listed."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        for sid, cwd in (("left", "/a/b-c"), ("right", "/a-b/c")):
            await store.create(meta(sid, cwd))
            await store.append(sid, one_turn_log())
        assert sorted(os.listdir(tmp_path / "--a-b-c--")) == ["left", "right"]
        listed = {h.id: h.cwd for h in await JsonlSessionPersistence(tmp_path, compression="none").list()}
        assert listed == {"left": "/a/b-c", "right": "/a-b/c"}
        assert (await store.load("right")).meta.cwd == "/a-b/c"

    run(body())


def test_case_08_relative_root_locate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§15 case 8: the root is resolved to an absolute path once; ``locate`` is pure."""
    monkeypatch.chdir(tmp_path)
    store = JsonlSessionPersistence("relative-root", compression="none")
    loc = store.locate(meta("relative-location", "/proj"))
    assert loc is not None
    assert loc.to_json() == {
        "kind": "jsonl",
        "path": str(tmp_path / "relative-root" / "--proj--" / "relative-location" / "session.jsonl"),
    }
    assert not (tmp_path / "relative-root").exists()
    zstd = JsonlSessionPersistence("relative-root")
    assert zstd.locate(meta("x")).path.endswith("/relative-root/_no-cwd/x/session.jsonl.zstd")  # type: ignore[union-attr]


def test_locate_rejects_unencodable_meta(tmp_path: Path) -> None:
    """§3.3: locate raises the encoding errors for an empty id or empty cwd."""
    store = JsonlSessionPersistence(tmp_path)
    with pytest.raises(SessionPersistenceError, match="empty path segment"):
        store.locate(meta(""))
    with pytest.raises(SessionPersistenceError, match="empty project path"):
        store.locate(meta("x", ""))


def test_case_09_traversal_id_stays_under_root(tmp_path: Path) -> None:
    """§15 case 9: only a whole ``.``/``..`` id is special; ``../../etc/pwn`` stays under the root."""
    root = tmp_path / "root"

    async def body() -> None:
        store = JsonlSessionPersistence(root, compression="none")
        for sid in ("../../etc/pwn", "..", "."):
            await store.create(meta(sid, "/proj"))
            await store.append(sid, one_turn_log())
        assert {h.id for h in await store.list()} == {"../../etc/pwn", "..", "."}

    run(body())
    created = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert all(p == "root" or p.startswith("root/") for p in created)
    assert sorted(os.listdir(root / "--proj--")) == ["..~002F..~002Fetc~002Fpwn", "~002E", "~002E~002E"]

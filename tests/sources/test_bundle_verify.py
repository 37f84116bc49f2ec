"""A support bundle as received: our own export verifies on every backend, a tampered, missing or unlisted
file is reported by name, the sender's verify.json comes back beside our check, older and unknown
versions get a clear typed error, and the extraction lives (privately) in the cache folder only while open."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import bundlekit as bk
import orjson
import pytest
import sessionkit as sk

from app.sources.bundle import (
    BUNDLE_VERSION,
    BundleError,
    BundleVersionError,
    close_bundle,
    extractions_root,
    is_bundle,
    open_bundle,
)
from persistence import SessionUnreadableError


@pytest.mark.parametrize("backend", bk.BACKENDS)
def test_our_own_export_verifies(tmp_path: Path, backend: str) -> None:
    zpath = bk.exported_bundle(tmp_path, backend)
    before = (zpath.read_bytes(), zpath.stat().st_mtime_ns)
    members = bk.members(zpath)
    listed = orjson.loads(members["manifest.json"])["files"]
    cache = tmp_path / "cache"
    opened = open_bundle(zpath, cache_root=cache)
    try:
        check = opened.check
        assert check.ok and check.problems() == () and check.summary() == "verified"
        assert check.files_checked == len(listed) == 3 and (check.mismatches, check.missing, check.extra) == ((), (), ())
        assert check.version == BUNDLE_VERSION and check.written_by and check.session_id == "s1"
        assert check.sender_verdict is not None and check.sender_verdict["verdict"] == "ok" and check.sender_says == "ok"
        assert check.redacted is not True  # an export without --redact is never called redacted
        (session,) = opened.session_paths
        (name,) = [n for n in members if n.startswith("session/")]
        assert session == opened.folder / name and session.read_bytes() == members[name]
        assert opened.folder.parent == extractions_root(cache)
        for path in opened.folder.rglob("*"):
            mode = path.lstat().st_mode
            assert stat.S_IMODE(mode) == (0o700 if stat.S_ISDIR(mode) else 0o600), path
        assert stat.S_IMODE(opened.folder.stat().st_mode) == 0o700
    finally:
        close_bundle(opened)
    assert not opened.folder.exists() and bk.leftovers(cache) == []
    close_bundle(opened)  # idempotent
    assert (zpath.read_bytes(), zpath.stat().st_mtime_ns) == before  # a read never writes


def test_default_cache_folder_is_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", str(tmp_path / "user-cache"))
    opened = open_bundle(bk.exported_bundle(tmp_path))
    try:
        assert opened.folder.parent == tmp_path / "user-cache" / "bundles"
    finally:
        close_bundle(opened)


def test_one_tampered_byte_is_named(tmp_path: Path) -> None:
    good = bk.exported_bundle(tmp_path)

    def flip(name: str, data: bytes) -> bytes:
        if name != "session/session.jsonl":
            return data
        return data[:40] + bytes([data[40] ^ 0x01]) + data[41:]

    bad = bk.rewrite(good, tmp_path / "bad.zip", change=flip)
    opened = open_bundle(bad, cache_root=tmp_path / "cache")
    try:
        check = opened.check
        assert not check.ok and check.summary().startswith("NOT verified")
        (m,) = check.mismatches
        assert m.name == "session/session.jsonl" and m.actual_sha256 != m.expected_sha256 and m.actual_bytes == m.expected_bytes
        assert check.problems() == (m.describe(),)
        assert "session/session.jsonl: its SHA-256 does not match the manifest" in m.describe()
        assert check.files_checked == 3 and opened.session_paths  # still opened: seeing the damage is the point
    finally:
        close_bundle(opened)


def test_missing_and_unlisted_files(tmp_path: Path) -> None:
    good = bk.exported_bundle(tmp_path)
    bad = bk.rewrite(
        good, tmp_path / "bad.zip", change=lambda name, data: None if name == "header.json" else data, add={"notes.txt": b"hi"}
    )
    opened = open_bundle(bad, cache_root=tmp_path / "cache")
    try:
        check = opened.check
        assert not check.ok and check.missing == ("header.json",) and check.extra == ("notes.txt",) and check.mismatches == ()
        assert check.problems() == (
            "header.json: listed in the manifest but missing from the bundle",
            "notes.txt: in the bundle but not in the manifest (not verified)",
        )
    finally:
        close_bundle(opened)


def test_the_sender_verdict_is_returned_as_sent(tmp_path: Path) -> None:
    # verify.json is the sender's word, shown beside ours: a corrupt verdict in a consistent bundle is theirs.
    good = bk.exported_bundle(tmp_path)
    verdict = orjson.loads(bk.members(good)["verify.json"])
    assert verdict["verdict"] == "ok"
    opened = open_bundle(good, cache_root=tmp_path / "cache")
    try:
        assert dict(opened.check.sender_verdict or {}) == verdict
    finally:
        close_bundle(opened)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda m: {**m, "bundleVersion": BUNDLE_VERSION + 1}, ["bundle version 2", "newer", "upgrade SessionScope"]),
        (lambda m: {**m, "bundleVersion": "two"}, ["unknown bundle version 'two'"]),
        (lambda m: {**m, "bundleVersion": 0}, ["unknown bundle version 0"]),
        (lambda m: {k: v for k, v in m.items() if k != "files"}, ["older bundle layout", "cannot be verified"]),
        (lambda m: {k: v for k, v in m.items() if k != "sessionscope"}, ["names no SessionScope version"]),
        (lambda m: {**m, "sessionFormatVersion": 3}, ["log format v3", "newer", "upgrade"]),
        (lambda m: {**m, "sessionFormatVersion": -1}, ["log format v-1", "older"]),
    ],
)
def test_older_and_unknown_versions_get_a_clear_message(tmp_path: Path, edit: object, words: list[str]) -> None:
    bad = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "v.zip", manifest=edit)  # type: ignore[arg-type]
    cache = tmp_path / "cache"
    with pytest.raises(BundleVersionError) as err:
        open_bundle(bad, cache_root=cache)
    assert isinstance(err.value, SessionUnreadableError) and str(err.value).startswith("v.zip: ")
    for w in words:
        assert w in str(err.value)
    assert bk.leftovers(cache) == []


@pytest.mark.parametrize("backend", bk.BACKENDS)
def test_an_export_names_its_bundle_version_and_reads_back(tmp_path: Path, backend: str) -> None:
    zpath = bk.exported_bundle(tmp_path, backend)
    manifest = orjson.loads(bk.members(zpath)["manifest.json"])
    assert manifest["bundleVersion"] == BUNDLE_VERSION == 1
    opened = open_bundle(zpath, cache_root=tmp_path / "cache")
    close_bundle(opened)
    assert opened.check.ok and opened.check.version == BUNDLE_VERSION


def test_a_first_layout_bundle_without_a_version_still_opens(tmp_path: Path) -> None:
    """The bundles written before ``bundleVersion`` existed read as version 1, exactly as before."""
    unversioned = lambda m: {k: v for k, v in m.items() if k != "bundleVersion"}  # noqa: E731
    old = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "old.zip", manifest=unversioned)
    opened = open_bundle(old, cache_root=tmp_path / "cache")
    close_bundle(opened)
    assert opened.check.ok and opened.check.version == BUNDLE_VERSION


def test_a_bundle_version_we_read_opens(tmp_path: Path) -> None:
    ok = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "v1.zip", manifest=lambda m: {**m, "bundleVersion": BUNDLE_VERSION})
    opened = open_bundle(ok, cache_root=tmp_path / "cache")
    close_bundle(opened)
    assert opened.check.ok


@pytest.mark.parametrize(
    ("block", "redacted"),
    [
        ({"redaction": {"redacted": True, "rules": ["api-key"], "counts": {"api-key": 2}}}, True),
        ({"redaction": {"redacted": False}}, False),
        ({"redacted": True}, True),
        ({}, None),
    ],
)
def test_what_the_manifest_says_of_redaction(tmp_path: Path, block: dict[str, object], redacted: bool | None) -> None:
    def edit(m: dict[str, object]) -> dict[str, object]:
        return {**{k: v for k, v in m.items() if k not in ("redaction", "redacted")}, **block}

    zpath = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "r.zip", manifest=edit)
    opened = open_bundle(zpath, cache_root=tmp_path / "cache")
    close_bundle(opened)
    assert opened.check.redacted is redacted and opened.check.ok
    assert opened.check.redaction == block.get("redaction")


@pytest.mark.parametrize("backend", bk.BACKENDS)
def test_a_redacted_export_verifies_and_says_so(tmp_path: Path, backend: str) -> None:
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    events = sk.one_turn_log()
    events[1] = sk.user_message(1, f"my key is {secret}, mail me at someone@example.com", "one-turn-user")
    zpath = bk.exported_bundle(tmp_path, backend, events=events, redact=True)
    opened = open_bundle(zpath, cache_root=tmp_path / "cache")
    try:
        check = opened.check
        assert check.ok and check.redacted is True and check.redaction is not None
        assert check.redaction["counts"]["api-key"] >= 1 and check.redaction["counts"]["email"] >= 1
        (session,) = opened.session_paths
        text = sk.plaintext(session.read_bytes(), "zstd" if session.name.endswith(".zstd") else "none")
        assert secret.encode() not in text and b"[redacted:api-key#1]" in text
    finally:
        close_bundle(opened)


def test_not_a_bundle(tmp_path: Path) -> None:
    no_manifest = bk.plain_zip(tmp_path / "other.zip", {"a.txt": b"x"})
    text = tmp_path / "t.txt"
    text.write_text("hello")
    assert is_bundle(bk.exported_bundle(tmp_path)) and not is_bundle(no_manifest) and not is_bundle(text)
    assert not is_bundle(tmp_path / "absent.zip") and not is_bundle(tmp_path)
    with pytest.raises(BundleError, match=r"no manifest\.json"):
        open_bundle(no_manifest, cache_root=tmp_path / "cache")
    with pytest.raises(BundleError, match="not a ZIP file"):
        open_bundle(text, cache_root=tmp_path / "cache")
    with pytest.raises(BundleError, match="cannot be read"):
        open_bundle(tmp_path / "absent.zip", cache_root=tmp_path / "cache")
    bad_json = bk.plain_zip(tmp_path / "j.zip", {"manifest.json": b"{not json"})
    with pytest.raises(BundleError, match=r"manifest\.json is not valid JSON"):
        open_bundle(bad_json, cache_root=tmp_path / "cache")
    assert bk.leftovers(tmp_path / "cache") == []


CHILD = (
    "import os, sys; from pathlib import Path; from app.sources.bundle import open_bundle; "
    "b = open_bundle(Path(sys.argv[1]), cache_root=Path(sys.argv[2])); print(b.folder, flush=True); "
    "sys.stdin.readline(); os._exit(0) if sys.argv[3] == 'crash' else sys.exit(0)"
)


def _child(zpath: Path, cache: Path, how: str) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(zpath), str(cache), how], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_a_live_extraction_stays_and_a_crashed_one_is_swept(tmp_path: Path) -> None:
    zpath = bk.exported_bundle(tmp_path)
    cache = tmp_path / "cache"
    crashing, orphan = _child(zpath, cache, "crash")
    living, held = _child(zpath, cache, "exit")
    try:
        crashing.communicate("\n", timeout=60)  # os._exit: no clean-up runs, as in a crash or a kill
        assert orphan.parent == extractions_root(cache) and any(orphan.iterdir())
        mine = open_bundle(zpath, cache_root=cache)  # sweeps: the orphan's lock is free, the living one's held
        close_bundle(mine)
        assert not orphan.exists() and not orphan.with_name(orphan.name + ".lock").exists()
        assert held.exists() and any(held.iterdir())
    finally:
        living.communicate("\n", timeout=60)  # a clean exit removes its own extraction
    assert living.returncode == 0 and not held.exists()
    assert bk.leftovers(cache) == []

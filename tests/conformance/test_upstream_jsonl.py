"""Conformance with the upstream-written JSONL fixtures (``<repo>/../shared/fixtures/upstream/jsonl-*``).

* every recorded upstream call (``calls``, ``callsOnAfter``) replays with the same results/errors;
* our writer, fed each artifact's events in upstream's batches, writes the same bytes (raw), the
  same plaintext and frame boundaries (zstd) and - for frames upstream's writer produced - the
  same compressed bytes;
* ``load`` repairs ``interrupted`` and ``torn-tail/*`` into upstream's ``after/`` bytes exactly;
* ``python -m app raw`` prints upstream's raw content verbatim.

Fixtures are copied to a private temp dir before use; they are never modified or copied into the repo.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from replay import FIXTURES, copy_private, fixtures_available, replay_calls, scenario_dirs
from sessionkit import files_under, run

from persistence import JsonlSessionPersistence
from persistence.jsonl.frames import compress_frame, scan_frames
from persistence.model.chunk_rows import decode_storage_record
from persistence.model.jsontext import js_loads

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(not fixtures_available(), reason=f"upstream fixtures not found at {FIXTURES} (../shared is absent)"),
    pytest.mark.usefixtures("fast_fsync"),
]

SCENARIOS = scenario_dirs("jsonl-")
REPAIR_SCENARIOS = [d for d in SCENARIOS if (d / "before").is_dir() and (d / "after").is_dir()]


def _id(d: Path) -> str:
    return str(d.relative_to(FIXTURES))


def _expected(d: Path) -> dict[str, Any]:
    return json.loads((d / "expected.json").read_text())  # type: ignore[no-any-return]


def _root_of(d: Path) -> Path:
    return d / "root" if (d / "root").is_dir() else d / "before" / "root"


# ---------------------------------------------------------------- recorded calls


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_recorded_calls_replay(scenario: Path, tmp_path: Path) -> None:
    expected = _expected(scenario)
    root = tmp_path / "root"
    copy_private(_root_of(scenario), root)
    assert expected["calls"], "fixture without calls"
    assert replay_calls(expected, root, expected["calls"]) == []
    if "callsOnAfter" in expected:
        after = tmp_path / "after"
        copy_private(scenario / "after" / "root", after)
        assert replay_calls(expected, after, expected["callsOnAfter"]) == []


@pytest.mark.parametrize("scenario", [d for d in SCENARIOS if _expected(d).get("revisionFacts")], ids=_id)
def test_revision_facts(scenario: Path, tmp_path: Path) -> None:
    """``load`` changes a session's revision exactly when upstream's did; a second load never does."""
    expected = _expected(scenario)
    root = tmp_path / "root"
    copy_private(_root_of(scenario), root)

    async def body() -> None:
        store = JsonlSessionPersistence(root, compression=expected["config"]["compression"])
        for session_id, facts in expected["revisionFacts"].items():
            before = await store.read_stored_revision(session_id)
            try:
                await store.load(session_id)
            except Exception:
                assert not facts.get("revisionChangedByLoad"), f"{session_id}: load failed but upstream repaired"
                continue
            after = await store.read_stored_revision(session_id)
            assert (before != after) == facts["revisionChangedByLoad"], session_id
            await JsonlSessionPersistence(root, compression=expected["config"]["compression"]).load(session_id)
            assert await store.read_stored_revision(session_id) == after

    run(body())


# ---------------------------------------------------------------- writer reproduction


def _decode_frames(data: bytes) -> list[tuple[bytes, bytes]]:
    """(compressed frame, plaintext) of every complete frame."""
    import zstandard

    ranges, torn = scan_frames(data)
    assert torn is None, "artifact has a torn frame"
    out = []
    for start, end in ranges:
        d = zstandard.ZstdDecompressor().decompressobj()
        out.append((data[start:end], d.decompress(data[start:end])))
    return out


def _events(plain: bytes) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in plain.split(b"\n")[:-1]:
        events.extend(decode_storage_record(js_loads(line)))
    return events


def _writable_artifacts() -> list[tuple[Path, Path]]:
    """(zstd artifact written by upstream's writer, its fixture root) for every complete artifact."""
    out = []
    for d in scenario_dirs("jsonl-zstd"):
        roots = [d / "root", d / "after" / "root"]
        if "torn-tail" not in str(d):
            roots.append(d / "before" / "root")
        for root in roots:
            out.extend((p, root) for p in sorted(root.rglob("session.jsonl.zstd")) if root.is_dir())
    return out


WRITABLE = _writable_artifacts()


def _artifact_id(item: tuple[Path, Path]) -> str:
    path, _root = item
    return str(path.relative_to(FIXTURES))


def _write_batches(root: Path, compression: str, header: dict[str, Any], batches: list[list[dict[str, Any]]]) -> Path:
    meta = {k: v for k, v in header.items() if k != "type"}

    async def body() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        await store.create(meta)
        for batch in batches:
            await store.append(meta["id"], batch)

    run(body())
    written = [p for p in root.rglob("session.jsonl*")]
    assert len(written) == 1
    return written[0]


@pytest.mark.parametrize("item", WRITABLE, ids=_artifact_id)
def test_writer_reproduces_upstream_artifact(item: tuple[Path, Path], tmp_path: Path) -> None:
    """Frame boundaries = batches. zstd: same plaintext per frame, and the same compressed bytes for every
    frame upstream's writer produced (descriptor 0x04; hand re-encoded headers differ). Raw twin: same file."""
    upstream_path, fixture_root = item
    frames = _decode_frames(upstream_path.read_bytes())
    header = js_loads(frames[0][1][:-1])
    batches = [_events(plain) for _compressed, plain in frames[1:]]
    assert batches and all(batches)

    ours_path = _write_batches(tmp_path / "zstd", "zstd", header, batches)
    assert ours_path.relative_to(tmp_path / "zstd") == upstream_path.relative_to(fixture_root)
    ours = _decode_frames(ours_path.read_bytes())
    assert [plain for _c, plain in ours] == [plain for _c, plain in frames]
    for (ours_c, _), (up_c, _) in zip(ours, frames, strict=True):
        if up_c[4] == 0x04:
            assert ours_c == up_c
    if all(up_c[4] == 0x04 for up_c, _ in frames):
        assert ours_path.read_bytes() == upstream_path.read_bytes()
    # The compressor alone reproduces upstream's frames from their plaintext too (§9.1 recipe).
    assert all(compress_frame(plain) == up_c for up_c, plain in frames if up_c[4] == 0x04)

    raw_twin = Path(str(upstream_path).replace("/jsonl-zstd/", "/jsonl-none/", 1)).with_suffix("")
    if raw_twin.is_file():
        raw_ours = _write_batches(tmp_path / "none", "none", header, batches)
        assert raw_ours.read_bytes() == raw_twin.read_bytes()
        assert raw_twin.read_bytes() == b"".join(plain for _c, plain in frames)


def test_writer_reproduction_covers_every_scenario() -> None:
    scenarios = {str(p.relative_to(FIXTURES)).split("/")[1] for p, _root in WRITABLE}
    assert {"balanced", "fork", "interrupted", "many-sessions", "unknown-event", "future-version", "torn-tail"} <= scenarios
    assert len(WRITABLE) >= 50


# ---------------------------------------------------------------- repair bytes


@pytest.mark.parametrize("scenario", REPAIR_SCENARIOS, ids=_id)
def test_load_repair_matches_upstream_after(scenario: Path, tmp_path: Path) -> None:
    expected = _expected(scenario)
    root = tmp_path / "root"
    copy_private(scenario / "before" / "root", root)
    before = files_under(root)
    want = files_under(scenario / "after" / "root")
    assert before != want

    async def body() -> None:
        store = JsonlSessionPersistence(root, compression=expected["config"]["compression"])
        for session in expected["sessions"]:
            await store.load(session["id"])

    run(body())
    got = files_under(root)
    assert sorted(got) == sorted(want)
    for rel, data in want.items():
        assert got[rel] == data, f"{rel}: repaired bytes differ from upstream's after/"


# ---------------------------------------------------------------- CLI raw


def _raw_call(expected: dict[str, Any]) -> tuple[str, str]:
    for call in expected["calls"]:
        if call["op"] == "readRaw" and call["ok"] and call["result"]:
            return call["args"][0], expected["rawContents"][call["result"]["content"]["$raw"]]
    raise AssertionError("no readRaw call recorded")


@pytest.mark.parametrize("scenario", [d for d in scenario_dirs("jsonl-zstd") if (d / "root").is_dir()][:3], ids=_id)
def test_cli_raw_prints_upstream_raw_content(scenario: Path, tmp_path: Path) -> None:
    session_id, content = _raw_call(_expected(scenario))
    root = tmp_path / "root"
    copy_private(scenario / "root", root)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "raw", str(root), session_id], cwd=REPO, capture_output=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == content.encode("utf-8")
    assert files_under(root) == files_under(scenario / "root")  # raw never writes

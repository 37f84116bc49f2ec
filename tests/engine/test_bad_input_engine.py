"""Bad input on the engine's read side (issue 10 items 12-14).

* Decompression bombs: every zstd frame (header, event, torn tail) and every SQLite data BLOB is
  decoded with a bounded output; past the cap it is corruption, refused without allocating it.
  Small bombs run in-process with the cap patched lower (tracemalloc shows the peak); one real
  1 GiB bomb per kind runs in a child process under ``RLIMIT_AS``.
* Huge headers: ``read_first_line`` is linear in the header's size, and a header past the cap is
  corruption.
* Non-database files: ``open_store`` refuses an existing file that is not a SQLite database (an
  empty one included) before SQLite touches it, and ``create=False`` never creates a store.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from sessionkit import (
    artifact,
    encode_log,
    header_line,
    meta,
    one_turn_log,
    open_turn2,
    plant,
    run,
    turn_end,
    turn_start,
    user_message,
)

from app.cli import main
from persistence import JsonlSessionPersistence, SessionStorageCorruptError, open_store
from persistence.errors import SessionLayoutError, SessionPersistenceError
from persistence.jsonl import files as storage
from persistence.jsonl import frames
from persistence.jsonl.files import read_first_line
from persistence.model.jsontext import js_dumps
from persistence.sqlite import datacodec
from persistence.sqlite.backend import SqliteSessionPersistence
from persistence.sqlite.errors import RowDecodeError

pytestmark = pytest.mark.usefixtures("fast_fsync")

REPO = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024
SMALL_CAP = 1 * MiB  # the cap the in-process tests patch in
BOMB = 16 * MiB  # plaintext of an in-process bomb: 16x the patched cap, about 500 compressed bytes


def zeros_frame(size: int, *, checksum: bool = True, content_size: bool = False) -> bytes:
    """One level-3 frame of ``size`` zero bytes, built 1 MiB at a time (a 1 GiB bomb is about 32 KiB)."""
    cctx = zstandard.ZstdCompressor(level=3, write_checksum=checksum, write_content_size=content_size)
    co = cctx.compressobj(size=size if content_size else -1)
    block = bytes(min(size, MiB))
    parts = [co.compress(block) for _ in range(size // MiB)]
    parts.append(co.compress(bytes(size % MiB)))
    parts.append(co.flush())
    return b"".join(parts)


def peak_bytes(action: Callable[[], Any]) -> tuple[int, BaseException | None]:
    """(peak traced allocation while ``action`` ran, the error it raised)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            action()
            error = None
        except BaseException as err:  # returned to the test, which asserts on it
            error = err
        return tracemalloc.get_traced_memory()[1], error
    finally:
        tracemalloc.stop()


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    # raising=False: the same tests, run against the code before the caps existed, fail on what they assert.
    monkeypatch.setattr(frames, "MAX_FRAME_PLAINTEXT_BYTES", SMALL_CAP, raising=False)
    monkeypatch.setattr(datacodec, "MAX_DATA_PLAINTEXT_BYTES", SMALL_CAP, raising=False)
    return SMALL_CAP


HEADER = js_dumps(header_line("s1", "/proj")) + b"\n"


def plant_zstd(root: Path, parts: list[bytes]) -> Path:
    """A zstd transcript of session s1 (cwd /proj) made of the given frames, byte for byte."""
    path = artifact(root, "/proj", "s1", "zstd")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(parts))
    return path


def body_frame(events: list[dict[str, Any]]) -> bytes:
    return frames.compress_frame(b"".join(js_dumps(e) + b"\n" for e in events))


def load_error(root: Path) -> SessionPersistenceError:
    async def body() -> SessionPersistenceError:
        with pytest.raises(SessionPersistenceError) as info:
            await JsonlSessionPersistence(root).load("s1")
        return info.value

    return run(body())


# ---------------------------------------------------------------- item 12: zstd bombs (in-process, cap patched)


def test_header_frame_bomb_is_refused_by_the_header_read(tmp_path: Path, small_cap: int) -> None:
    path = plant_zstd(tmp_path, [zeros_frame(BOMB), body_frame(one_turn_log())])
    peak, err = peak_bytes(lambda: read_first_line(str(path), "zstd"))
    assert isinstance(err, SessionStorageCorruptError)
    assert str(err) == f"corrupt Zstandard session log: header frame decodes to more than {small_cap} bytes"
    assert peak < small_cap + 2 * MiB  # never the 16 MiB the frame declares


def _header_bomb() -> tuple[list[bytes], str]:
    return [zeros_frame(BOMB), body_frame(one_turn_log())], "frame at byte 0"


def _event_bomb() -> tuple[list[bytes], str]:
    head, body = frames.compress_frame(HEADER), body_frame(one_turn_log())
    return [head, body, zeros_frame(BOMB)], f"frame at byte {len(head) + len(body)}"


def _torn_bomb() -> tuple[list[bytes], str]:
    # A torn tail is cut by load's repair: a bomb missing its checksum must neither be decoded nor cut.
    head, body = frames.compress_frame(HEADER), body_frame(one_turn_log() + open_turn2())
    return [head, body, zeros_frame(BOMB)[:-1]], "torn final frame"


# Each case: the planted frames, and where the error says the bomb sits.
LOAD_BOMBS: dict[str, Callable[[], tuple[list[bytes], str]]] = {
    "header-frame": _header_bomb,
    "event-frame": _event_bomb,
    "torn-frame": _torn_bomb,
}


@pytest.mark.parametrize("case", list(LOAD_BOMBS))
def test_frame_bomb_is_corruption_on_load(tmp_path: Path, small_cap: int, case: str) -> None:
    parts, where = LOAD_BOMBS[case]()
    path = plant_zstd(tmp_path, parts)
    before = path.read_bytes()
    errors: list[SessionPersistenceError] = []
    peak, _ = peak_bytes(lambda: errors.append(load_error(tmp_path)))
    assert isinstance(errors[0], SessionStorageCorruptError)
    assert f"corrupt Zstandard session log: {where} decodes to more than {small_cap} bytes" in str(errors[0])
    assert peak < small_cap + 4 * MiB
    assert path.read_bytes() == before  # nothing cut, nothing appended (the same bytes, so the same size)


def test_torn_frame_within_the_cap_still_recovers(tmp_path: Path) -> None:
    head, body = frames.compress_frame(HEADER), body_frame(one_turn_log())
    torn = body_frame(open_turn2())[:-1]  # only the checksum is missing: both records are recoverable
    plant_zstd(tmp_path, [head, body, torn])

    async def body_() -> list[int]:
        ins = await JsonlSessionPersistence(tmp_path).inspect("s1")
        return [e["seq"] for e in ins.to_json()["events"]]

    assert run(body_())[:8] == list(range(8))


def test_big_frame_within_the_ratio_allowance_still_loads(tmp_path: Path, small_cap: int) -> None:
    """A fork's seed is one frame for the whole parent log: a frame past the flat cap that compresses
    like real text (well under 256x) still decodes."""
    events = [turn_start(0, 1)]
    events += [user_message(i, os.urandom(600).hex(), f"u{i}") for i in range(1, 2001)]
    events.append(turn_end(2001, 1))
    big = body_frame(events)
    plain = b"".join(js_dumps(e) + b"\n" for e in events)
    assert len(plain) > 2 * small_cap and len(plain) < frames.MAX_FRAME_EXPANSION_RATIO * len(big)
    plant_zstd(tmp_path, [frames.compress_frame(HEADER), big])

    async def body() -> int:
        return len((await JsonlSessionPersistence(tmp_path).load("s1")).events)

    assert run(body()) == 2002


@pytest.mark.parametrize("variant", ["checksum", "no-checksum", "content-size"])
def test_decompress_bounded_never_holds_the_bomb(variant: str) -> None:
    bomb = zeros_frame(BOMB, checksum=variant != "no-checksum", content_size=variant == "content-size")
    peak, err = peak_bytes(lambda: frames.decompress_bounded(bomb, SMALL_CAP))
    assert err is None and frames.decompress_bounded(bomb, SMALL_CAP) is None
    assert peak < SMALL_CAP + MiB
    plain, ended, used = frames.decompress_bounded(bomb + b"rest", BOMB)  # type: ignore[misc]
    assert plain == bytes(BOMB) and ended and used == len(bomb)


def test_lying_content_size_is_bounded_too() -> None:
    """A frame may declare fewer bytes than it holds (zstandard 0.25 then decodes them all)."""
    bomb = bytearray(zeros_frame(BOMB, content_size=True))
    assert bomb[4] >> 6 == 2  # a 4-byte content size right after the window descriptor
    bomb[6:10] = (SMALL_CAP // 2).to_bytes(4, "little")
    peak, err = peak_bytes(lambda: frames.decompress_bounded(bytes(bomb), SMALL_CAP))
    assert peak < SMALL_CAP + MiB
    assert err is None or isinstance(err, zstandard.ZstdError)


# ---------------------------------------------------------------- item 12: SQLite data BLOB bombs


def sqlite_store_with(tmp_path: Path, blob: bytes, seq: int = 1) -> Path:
    """A store holding one_turn_log() of session s1 whose scalar row ``seq`` has ``blob`` as its data."""
    d = tmp_path / "db"
    d.mkdir(mode=0o700)
    path = d / "sessions.sqlite"

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())
        await store.close()

    run(body())
    con = sqlite3.connect(path, isolation_level=None)
    try:
        assert con.execute("UPDATE events SET data = ? WHERE seq = ?", (blob, seq)).rowcount == 1
    finally:
        con.close()
    return path


def sqlite_load_error(path: Path, *, read_only: bool = True) -> SessionPersistenceError:
    async def body() -> SessionPersistenceError:
        store = SqliteSessionPersistence(path, read_only=read_only)
        try:
            with pytest.raises(SessionPersistenceError) as info:
                await (store.inspect("s1") if read_only else store.load("s1"))
            return info.value
        finally:
            await store.close()

    return run(body())


@pytest.mark.parametrize("content_size", [True, False])
@pytest.mark.parametrize("seq", [1, 5])  # mid-log, and the last row (which a decode failure would make a torn tail)
def test_sqlite_scalar_blob_bomb_is_corruption(tmp_path: Path, small_cap: int, content_size: bool, seq: int) -> None:
    path = sqlite_store_with(tmp_path, zeros_frame(BOMB, checksum=False, content_size=content_size), seq)
    errors: list[SessionPersistenceError] = []
    peak, _ = peak_bytes(lambda: errors.append(sqlite_load_error(path)))
    assert isinstance(errors[0], SessionStorageCorruptError)
    assert f"corrupt session log: a stored data BLOB decodes to more than {small_cap} bytes" in str(errors[0])
    assert peak < small_cap + 4 * MiB
    assert isinstance(sqlite_load_error(path, read_only=False), SessionStorageCorruptError)  # load repairs nothing
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 6
    finally:
        con.close()


def test_sqlite_packed_blob_bound_holds_no_more_than_its_limit() -> None:
    """Packed rows keep Node's 1 MiB maxOutputLength (a decode failure), now without a 16 MiB detour."""
    bomb = zeros_frame(BOMB, checksum=False)
    peak, err = peak_bytes(lambda: datacodec.packed_data_text(bomb, "text"))
    assert isinstance(err, RowDecodeError) and "exceeds 1048576 bytes" in str(err)
    assert peak < 2 * MiB


def test_sqlite_blob_within_the_cap_still_decodes() -> None:
    text = b'{"turn":1,"text":"' + b"a" * (3 * MiB) + b'"}'
    blob = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(text)
    assert datacodec.decode_scalar_data(blob) == {"turn": 1, "text": "a" * (3 * MiB)}
    two = blob + zstandard.ZstdCompressor(level=3).compress(b" ")  # Node concatenates consecutive frames
    assert datacodec.zstd_plaintext(two, None) == text + b" "


# ---------------------------------------------------------------- item 12: real 1 GiB bombs under a memory limit

_CHILD = r"""
import asyncio, resource, sys
from persistence import JsonlSessionPersistence, SessionPersistenceError
from persistence.jsonl.files import read_first_line
from persistence.sqlite.backend import SqliteSessionPersistence

mode, target, headroom = sys.argv[1], sys.argv[2], int(sys.argv[3])

def vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")

async def load(store):
    try:
        await store.inspect("s1")
    finally:
        await store.close()

if mode == "jsonl":
    store = JsonlSessionPersistence(target)
elif mode == "sqlite":
    store = SqliteSessionPersistence(target, read_only=True)
resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + headroom, resource.RLIM_INFINITY))
try:
    if mode == "header":
        read_first_line(target, "zstd")
    else:
        asyncio.run(load(store))
    print("NO ERROR")
except SessionPersistenceError as err:
    print("REFUSED", type(err).__name__, err)
except MemoryError:
    print("MEMORY ERROR")
"""

GiB_BOMB = 1 << 30
HEADROOM = 384 * MiB  # room for the 64 MiB cap and its 4 MiB decode steps; far below the 1 GiB bomb


@pytest.fixture(scope="module")
def gib_bomb() -> bytes:
    return zeros_frame(GiB_BOMB)


def run_child(mode: str, target: Path) -> str:
    env = dict(os.environ, MALLOC_ARENA_MAX="2", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(target), str(HEADROOM)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, f"child died with {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout.strip()


needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")


@needs_linux
def test_real_header_bomb_refused_under_a_memory_limit(tmp_path: Path, gib_bomb: bytes) -> None:
    assert len(gib_bomb) < 64 * 1024
    path = plant_zstd(tmp_path, [gib_bomb])
    assert run_child("header", path) == (
        f"REFUSED SessionStorageCorruptError corrupt Zstandard session log: header frame decodes to more than {64 * MiB} bytes"
    )


@needs_linux
def test_real_event_bomb_refused_under_a_memory_limit(tmp_path: Path, gib_bomb: bytes) -> None:
    head, body = frames.compress_frame(HEADER), body_frame(one_turn_log())
    plant_zstd(tmp_path, [head, body, gib_bomb])
    out = run_child("jsonl", tmp_path)
    assert out.startswith(
        "REFUSED SessionStorageCorruptError corrupt Zstandard session log: "
        f"frame at byte {len(head) + len(body)} decodes to more than "
    ), out


@needs_linux
def test_real_sqlite_blob_bomb_refused_under_a_memory_limit(tmp_path: Path) -> None:
    path = sqlite_store_with(tmp_path, zeros_frame(GiB_BOMB, checksum=False))
    out = run_child("sqlite", path)
    assert out.startswith("REFUSED SessionStorageCorruptError corrupt session log: a stored data BLOB decodes to more than "), out


# ---------------------------------------------------------------- item 13: huge headers


def big_header(pad: int) -> bytes:
    return js_dumps(header_line("big", "/proj", pad="a" * pad)) + b"\n"


@pytest.mark.timeout(15)
def test_huge_raw_header_line_is_read_in_linear_time(tmp_path: Path) -> None:
    """32 MB: the quadratic re-scan took minutes (16 MB took 9.8 s); linear takes well under a second."""
    line = big_header(32 * MiB)
    path = plant(tmp_path, "p/big", line + b'{"x":1}\n', "none")
    assert read_first_line(str(path), "none") == line[:-1]


def raw_block_frame(plain: bytes) -> bytes:
    """A frame storing ``plain`` as one-byte raw blocks (4 bytes each): the most block headers per byte."""
    out = bytearray(frames.MAGIC + b"\x00\x00")  # no checksum, no content size, window descriptor 0 (1 KiB)
    last = len(plain) - 1
    for i, byte in enumerate(plain):
        out += ((1 << 3) | (1 if i == last else 0)).to_bytes(3, "little")
        out.append(byte)
    return bytes(out)


@pytest.mark.timeout(20)
def test_header_frame_of_many_blocks_is_walked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block header is walked once in all, not once per 8 KiB chunk read."""
    line = big_header(300_000)
    frame = raw_block_frame(line)
    path = plant_zstd(tmp_path, [frame])
    calls = 0
    walk = frames._block_at

    def counting(buf: Any, offset: int) -> Any:
        nonlocal calls
        calls += 1
        return walk(buf, offset)

    monkeypatch.setattr(frames, "_block_at", counting)
    assert read_first_line(str(path), "zstd") == line[:-1]
    chunks = len(frame) // storage.HEADER_CHUNK + 1
    # Per block: one look while reading, one while planning the bounded decode; plus one incomplete look per
    # chunk. (Re-scanning from byte 0 per chunk would be about 147 * 300,000 / 2.)
    assert calls <= 2 * len(line) + chunks


def test_raw_header_past_the_cap_is_corruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "MAX_FRAME_PLAINTEXT_BYTES", 64 * 1024, raising=False)
    path = plant(tmp_path, "p/big", big_header(100_000), "none")
    with pytest.raises(SessionStorageCorruptError, match=r"^corrupt session log: header line exceeds 65536 bytes$"):
        read_first_line(str(path), "none")
    unended = plant(tmp_path, "p/unended", b"x" * 200_000, "none")  # no newline at all: refused at the cap
    with pytest.raises(SessionStorageCorruptError, match="header line exceeds 65536 bytes"):
        read_first_line(str(unended), "none")
    assert read_first_line(str(unended), "none", limit=8192) is None  # the window's bounded read is unchanged


def test_zstd_header_past_the_cap_is_corruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "MAX_FRAME_PLAINTEXT_BYTES", 64 * 1024, raising=False)
    path = plant_zstd(tmp_path, [frames.compress_frame(big_header(100_000))])  # compresses to ~100 bytes
    with pytest.raises(
        SessionStorageCorruptError, match=r"^corrupt Zstandard session log: header frame decodes to more than 65536 bytes$"
    ):
        read_first_line(str(path), "zstd")


def test_zstd_header_frame_larger_than_the_cap_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "MAX_FRAME_PLAINTEXT_BYTES", 64 * 1024, raising=False)
    incompressible = js_dumps(header_line("big", "/proj", pad=os.urandom(2 * MiB).hex())) + b"\n"
    path = plant_zstd(tmp_path, [frames.compress_frame(incompressible)])
    read_bytes = 0
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        nonlocal read_bytes
        got = real_read(fd, n)
        read_bytes += len(got)
        return got

    monkeypatch.setattr(storage.os, "read", counting)
    with pytest.raises(SessionStorageCorruptError, match="header frame exceeds 65536 bytes"):
        read_first_line(str(path), "zstd")
    assert read_bytes < 64 * 1024 + 2 * storage.HEADER_CHUNK  # not the 2 MiB of the frame


# ---------------------------------------------------------------- item 14: files that are not databases


def stamp(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_size


@pytest.mark.parametrize("content", [b"", b"this is not a database, just text\n" * 50, b"SQLite format 3"])
@pytest.mark.parametrize("backend", [None, "sqlite"])
@pytest.mark.parametrize(("read_only", "create"), [(True, False), (False, False), (False, True)])
def test_open_store_refuses_a_file_that_is_not_a_database(
    tmp_path: Path, content: bytes, backend: str | None, read_only: bool, create: bool
) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(content)
    os.chmod(path, 0o600)
    before = stamp(path)
    with pytest.raises(SessionLayoutError, match=r"store\.db is not a SQLite database \(") as info:
        open_store(path, backend, read_only=read_only, create=create)
    assert ("it is empty" in str(info.value)) == (content == b"")
    assert stamp(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.db"]  # no -journal, -wal or -shm either


def test_open_store_create_false_never_creates_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "new" / "sessions.sqlite"
    for read_only in (False, True):
        with pytest.raises(SessionLayoutError, match="does not exist; refusing to create a session store"):
            open_store(missing, "sqlite", read_only=read_only, create=False)
    assert not missing.parent.exists()


def test_open_store_still_creates_and_reopens_a_real_store(tmp_path: Path) -> None:
    path = tmp_path / "new" / "sessions.sqlite"

    async def write() -> None:
        store = open_store(path, "sqlite")  # a writer may create a new store where nothing exists
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())
        await store.close()

    async def read(read_only: bool) -> list[str]:
        store = open_store(path, read_only=read_only, create=False)
        try:
            return [h.id for h in await store.list()]
        finally:
            await store.close()

    run(write())
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    assert run(read(True)) == ["s1"] and run(read(False)) == ["s1"]


@pytest.mark.parametrize("verb", [["load"], ["list"], ["inspect"], ["repair", "--dry-run"]])
def test_cli_never_turns_an_empty_file_into_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    empty = tmp_path / "EMPTYFILE"
    empty.write_bytes(b"")
    os.chmod(empty, 0o600)  # private, as a store would be: only the missing magic can refuse it
    before = stamp(empty)
    argv = [verb[0], str(empty)] + ([] if verb[0] == "list" else ["some-id"]) + verb[1:] + ["--json"]
    assert main(argv) == 1
    assert "is not a SQLite database (it is empty)" in capsys.readouterr().out
    assert stamp(empty) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["EMPTYFILE"]


def test_jsonl_roots_are_unaffected(tmp_path: Path) -> None:
    path = artifact(tmp_path, "/proj", "s1", "none")
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_log(header_line("s1", "/proj"), [one_turn_log()], "none"))

    async def body() -> list[str]:
        store = open_store(tmp_path, create=False)
        return [h.id for h in await store.list()]

    assert run(body()) == ["s1"]

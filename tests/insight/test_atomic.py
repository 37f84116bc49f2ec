"""Every export is a transaction: failures injected at random points (a write, fsync, the rename, Ctrl+C)
and kills at random moments leave either no file or the previous file intact, never a part; a killed
export's temporary file is removed by the next export to that folder."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import insightkit as ik
import pytest

from app.export import atomic
from app.export.atomic import TEMP_SUFFIX, atomic_output, stale_temps, temp_name

FORMATS = ("md", "html", "jsonl", "bundle")
PREVIOUS = b"PREVIOUS EXPORT\n"


class _Failing:
    """A temporary file that raises after ``budget`` bytes (or at flush/close when ``at`` says so)."""

    def __init__(self, real: Any, budget: int, exc: BaseException) -> None:
        self._real = real
        self._budget = budget
        self._exc = exc

    def write(self, data: Any) -> int:
        n = len(data)
        if n > self._budget:
            self._real.write(bytes(data[: self._budget]))
            raise self._exc
        self._budget -= n
        return int(self._real.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _leftovers(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = ik.store_path(tmp_path_factory.mktemp("atomic"), "jsonl-zstd")
    ik.run(ik.write_sessions(path, "jsonl-zstd", {"s": (ik.rich_session(17, 8), {})}))
    return path


def _export(path: str, fmt: str, out: Path) -> Any:
    from app.export import export_session

    async def go() -> Any:
        store = ik.reader(path, "jsonl-zstd")
        try:
            return await export_session(store, "s", fmt, str(out), force=True)  # over PREVIOUS: agreed
        finally:
            await store.close()

    return ik.run(go())


@pytest.mark.parametrize("fmt", FORMATS)
def test_failures_at_random_writes_leave_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_root: str, fmt: str
) -> None:
    clean = tmp_path / f"clean.{fmt}"
    size = _export(store_root, fmt, clean).bytes
    rng = random.Random(fmt)
    real_open = atomic._open_temp
    for k, budget in enumerate([0, 1, size // 2, size - 1, *(rng.randrange(size) for _ in range(8))]):
        exc: BaseException = KeyboardInterrupt() if k % 4 == 3 else OSError(28, "No space left on device")
        monkeypatch.setattr(atomic, "_open_temp", lambda p, b=budget, e=exc: _Failing(real_open(p), b, e))
        with_previous = k % 2 == 0
        target = tmp_path / f"out{k}.{fmt}"
        if with_previous:
            target.write_bytes(PREVIOUS)
        with pytest.raises(type(exc)):
            _export(store_root, fmt, target)
        if with_previous:
            assert target.read_bytes() == PREVIOUS
        else:
            assert not target.exists()
        assert _leftovers(tmp_path) == []
    monkeypatch.setattr(atomic, "_open_temp", real_open)
    target = tmp_path / f"final.{fmt}"
    target.write_bytes(PREVIOUS)
    _export(store_root, fmt, target)
    if fmt != "bundle":  # a bundle's manifest carries the export time
        assert target.read_bytes() == clean.read_bytes()


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_failures_at_fsync_or_rename_leave_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_root: str, where: str
) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(PREVIOUS)

    def boom(*_a: Any) -> None:
        raise OSError(5, f"I/O error at {where}")

    monkeypatch.setattr(atomic.os, where, boom)
    with pytest.raises(OSError, match=where):
        _export(store_root, "md", target)
    monkeypatch.undo()
    assert target.read_bytes() == PREVIOUS and _leftovers(tmp_path) == []


def test_a_clean_exit_replaces_and_an_exception_does_not(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    with atomic_output(str(target)) as f:
        f.write(b"one")
    assert target.read_bytes() == b"one"
    with pytest.raises(ValueError), atomic_output(str(target), replace=True) as f:
        f.write(b"two")
        raise ValueError("stop")
    assert target.read_bytes() == b"one" and _leftovers(tmp_path) == []
    assert os.stat(target).st_mode & 0o777 == 0o600  # a transcript may hold secrets


def test_stale_temps_of_dead_processes_only(tmp_path: Path) -> None:
    target = str(tmp_path / "x.html")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = temp_name(target, dead.pid)
    alive = temp_name(target, os.getppid())
    mine = temp_name(target)
    for p in (stale, alive, mine):
        Path(p).write_bytes(b"part")
    Path(tmp_path / ".x.html.notapid.ab.export-tmp").write_bytes(b"?")
    assert stale_temps(target) == [stale]
    with atomic_output(target) as f:
        f.write(b"new")
    assert not os.path.exists(stale) and os.path.exists(alive) and os.path.exists(mine)


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from app.export import export_session
    from persistence import open_store

    async def loop(path, out):
        store = open_store(path, "jsonl-zstd", read_only=True, create=False)
        print("ready", flush=True)
        while True:
            await export_session(store, "s", "md", out, force=True)

    asyncio.run(loop(sys.argv[1], sys.argv[2]))
    """
)


def test_kills_at_random_moments_leave_the_previous_or_the_complete_file(tmp_path: Path) -> None:
    path = ik.store_path(tmp_path, "jsonl-zstd")
    ik.run(ik.write_sessions(path, "jsonl-zstd", {"s": (ik.rich_session(23, 150), {})}))
    expected = tmp_path / "expected.md"
    _export(path, "md", expected)
    complete = expected.read_bytes()
    target = tmp_path / "out" / "s.md"
    target.parent.mkdir()
    target.write_bytes(PREVIOUS)
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    rng = random.Random(5)
    seen = set()
    killed_mid_write = 0
    # Kill until both cases were hit (a kill mid-write, one after a completed export), at least 6 times and
    # at most 40: the moments are random, the verdict of every single kill is not.
    for attempt in range(40):
        if attempt >= 6 and killed_mid_write and True in seen:
            break
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, path, str(target)], stdout=subprocess.PIPE, env=env, cwd=str(repo)
        )
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.4))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        data = target.read_bytes()
        assert data in (PREVIOUS, complete)  # never a part
        seen.add(data == complete)
        killed_mid_write += bool(_leftovers(target.parent))  # the child sweeps earlier leftovers when it starts writing
    # Whatever temporary file a kill left, the next export removes it.
    _export(path, "md", target)
    assert target.read_bytes() == complete and _leftovers(target.parent) == []
    assert True in seen and killed_mid_write  # both cases were exercised

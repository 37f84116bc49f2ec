"""An export never clobbers (issue 21 item 5): the target must be absent or a regular file; an existing file
is replaced only with ``force`` (``--force``; the window asks first); a FIFO, a socket, a folder or a
symbolic link (dangling or not) is refused even with ``force`` and left as it was, never written through.
A file that appears at the target while the export runs is not replaced either: the last step publishes
without replacing (``renameat2(RENAME_NOREPLACE)``, else a hard link, else a check just before the
rename), and each of those paths is exercised.  Refusals are ``ExportTargetError`` (an engine argument
error): the command line prints the typed ``{"error": ...}`` form and exits 2."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import insightkit as ik
import pytest
import sessionkit as sk

from app.cli import main
from app.export import ExportTargetError, atomic, check_target, export_session, run_export
from app.export.atomic import TEMP_SUFFIX
from persistence import SessionArgumentError

pytestmark = pytest.mark.timeout(120)

PREVIOUS = b"PREVIOUS FILE\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = ik.store_path(tmp_path_factory.mktemp("export-target"), "jsonl-zstd")
    ik.run(ik.write_sessions(path, "jsonl-zstd", {"s": (sk.one_turn_log(), {})}))
    return path


def export(root: str, out: Path, *, force: bool = False, fmt: str = "md") -> Any:
    async def go() -> Any:
        store = ik.reader(root, "jsonl-zstd")
        try:
            return await export_session(store, "s", fmt, str(out), force=force)
        finally:
            await store.close()

    return ik.run(go())


def leftovers(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]


def test_an_existing_file_is_replaced_only_with_force(root: str, tmp_path: Path) -> None:
    out = tmp_path / "s.md"
    out.write_bytes(PREVIOUS)
    with pytest.raises(ExportTargetError, match=r"exists.*--force"):
        export(root, out)
    assert out.read_bytes() == PREVIOUS and leftovers(tmp_path) == []
    result = export(root, out, force=True)
    assert out.read_bytes() != PREVIOUS and result.bytes == out.stat().st_size
    assert issubclass(ExportTargetError, SessionArgumentError)  # the engine's argument error: typed everywhere


@pytest.mark.parametrize("force", [False, True])
def test_special_files_and_links_are_refused_and_left_as_they_were(root: str, tmp_path: Path, force: bool) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock.md"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(sock_path))
        elsewhere = tmp_path / "elsewhere.md"
        elsewhere.write_bytes(PREVIOUS)
        link = tmp_path / "link.md"
        link.symlink_to(elsewhere)
        dangling = tmp_path / "dangling.md"
        dangling.symlink_to(tmp_path / "nowhere.md")
        folder_link = tmp_path / "folder-link"
        folder_link.symlink_to(tmp_path)
        for target, why in (
            (fifo, "FIFO"),
            (sock_path, "socket"),
            (link, "symbolic link"),
            (dangling, "symbolic link"),
            (folder_link, "symbolic link"),
            (tmp_path, "is a folder"),
        ):
            with pytest.raises(ExportTargetError, match=why):
                export(root, target, force=force)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISSOCK(os.lstat(sock_path).st_mode)
        assert os.readlink(link) == str(elsewhere) and elsewhere.read_bytes() == PREVIOUS  # not written through
        assert os.readlink(dangling) == str(tmp_path / "nowhere.md") and not (tmp_path / "nowhere.md").exists()
        assert leftovers(tmp_path) == []
    finally:
        sock.close()


@pytest.fixture(params=["renameat2", "link", "check-then-rename"])
def publish_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each way the last step can publish without replacing (a machine may lack the first two)."""
    if request.param != "renameat2":
        monkeypatch.setattr(atomic, "_renameat2", None)
    if request.param == "check-then-rename":

        def no_link(*_a: Any, **_k: Any) -> None:
            raise OSError(errno.EPERM, "hard links are not supported here")

        monkeypatch.setattr(atomic.os, "link", no_link)
    yield request.param


def test_a_file_that_appears_during_the_export_is_not_replaced(
    root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, publish_path: str
) -> None:
    if publish_path == "renameat2" and atomic._renameat2 is None:
        pytest.skip("this C library has no renameat2")
    out = tmp_path / "s.md"
    real_open = atomic._open_temp

    def open_and_race(path: str) -> Any:
        # Someone writes the target after the export checked it and while the document is encoded.
        out.write_bytes(PREVIOUS)
        return real_open(path)

    monkeypatch.setattr(atomic, "_open_temp", open_and_race)
    with pytest.raises(ExportTargetError, match="appeared"):
        export(root, out)
    assert out.read_bytes() == PREVIOUS and leftovers(tmp_path) == []
    # Absent at the end: published, and only the complete file is there.
    monkeypatch.setattr(atomic, "_open_temp", real_open)
    out.unlink()
    result = export(root, out)
    assert out.stat().st_size == result.bytes > 0 and leftovers(tmp_path) == [] and stat.S_ISREG(os.lstat(out).st_mode)


def test_a_link_that_appears_during_a_forced_export_is_not_written_through(
    root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "s.md"
    out.write_bytes(PREVIOUS)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes(PREVIOUS)
    real_open = atomic._open_temp

    def open_and_swap(path: str) -> Any:
        out.unlink()
        out.symlink_to(elsewhere)
        return real_open(path)

    monkeypatch.setattr(atomic, "_open_temp", open_and_swap)
    with pytest.raises(ExportTargetError, match="symbolic link"):
        export(root, out, force=True)
    assert os.readlink(out) == str(elsewhere) and elsewhere.read_bytes() == PREVIOUS and leftovers(tmp_path) == []


def test_the_command_line_refuses_with_the_typed_error_and_exit_2(root: str, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "s.md"
    out.write_bytes(PREVIOUS)
    code = main(["export", root, "s", "--format", "md", "-o", str(out), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 2 and printed["error"]["class"] == "TypeError" and "--force" in printed["error"]["message"]
    assert out.read_bytes() == PREVIOUS
    code = main(["export", root, "s", "--format", "md", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("sessionscope: TypeError: cannot export to") and err.count("\n") == 1
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    code = main(["export", root, "s", "--format", "md", "-o", str(fifo), "--force", "--json"])
    assert code == 2 and "FIFO" in json.loads(capsys.readouterr().out)["error"]["message"]
    code = main(["export", root, "s", "--format", "md", "-o", str(out), "--force", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["path"] == str(out) and out.read_bytes() != PREVIOUS
    # ``run_export`` (scripts) in the same shape.
    text, code = run_export(root, "s", "md", str(out), json_output=True)
    assert code == 2 and "exists" in json.loads(text)["error"]["message"]
    text, code = run_export(root, "s", "md", str(out), force=True)
    assert code == 0 and text.startswith("exported md of session s")


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null on this system")
def test_a_device_node_is_refused_before_anything_is_written(root: str) -> None:
    # ``check_target`` only looks (lstat): nothing here can write to, or rename over, the device.
    async def go() -> None:
        store = ik.reader(root, "jsonl-zstd")
        try:
            for force in (False, True):
                with pytest.raises(ExportTargetError, match="character device"):
                    check_target(store, "/dev/null", force=force)
        finally:
            await store.close()

    ik.run(go())
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)

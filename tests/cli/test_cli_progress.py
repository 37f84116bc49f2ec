"""Long verbs show progress on stderr as one updating line when it is a terminal, and nothing when piped (issue 23)."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest
from sessionkit import meta, one_turn_log, run

import app.cli.progress as progress
from app.cli import main
from app.cli.progress import ProgressLine
from app.paths import CACHE_DIR_ENV
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.usefixtures("fast_fsync")


class FakeTty(io.StringIO):
    """A terminal as far as ``isatty()`` goes."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def draw_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A verb on a tiny root ends within the line's usual delay: draw at once, redraw often.
    monkeypatch.setattr(progress, "SHOW_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(progress, "REDRAW_SECONDS", 0.01)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"

    async def body() -> None:
        store = JsonlSessionPersistence(folder)
        for sid in ("s1", "s2"):
            await store.create(meta(sid, "/w/proj"))
            await store.append(sid, one_turn_log())
        await store.close()

    run(body())
    return folder


def test_a_line_is_drawn_in_place_and_erased_on_a_terminal() -> None:
    tty = FakeTty()
    with ProgressLine("verify", tty) as line:
        line.update(2, 5, "s1")
        deadline = time.monotonic() + 5
        while line.draws < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    out = tty.getvalue()
    assert "\rverify: 2 / 5 s1 · " in out
    assert "\n" not in out  # one line, redrawn with \r
    width = len(line.line())
    assert out.endswith("\r" + " " * width + "\r")  # erased: what follows starts on a clean line


def test_nothing_is_written_when_piped() -> None:
    piped = io.StringIO()
    with ProgressLine("verify", piped) as line:
        line.update(1, 2, "s1")
        time.sleep(0.05)
    assert piped.getvalue() == "" and line.draws == 0


@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["verify", "{root}"], "\rverify: "),
        (["search", "{root}", "hello"], "\rsearch: "),
        (["export", "{root}", "s1", "--format", "md", "-o", "{out}"], "\rexport: md of s1"),
    ],
)
def test_long_verbs_show_progress_on_a_terminal_only(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], label: str
) -> None:
    def args(n: int) -> list[str]:
        return [a.format(root=root, out=tmp_path / f"out{n}.md") for a in argv]

    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    code = main(args(1))
    piped_out = capsys.readouterr().out
    assert "\r" not in piped.getvalue()  # piped: exactly what it printed before, no progress

    tty = FakeTty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(args(2)) == code
    assert label in tty.getvalue()
    assert tty.getvalue().split(label, 1)[1].count("\n") == tty.getvalue().count("\n")  # the line has no newline of its own
    tty_out = capsys.readouterr().out
    if argv[0] != "export":  # stdout is the verb's own output, the same either way
        assert tty_out == piped_out

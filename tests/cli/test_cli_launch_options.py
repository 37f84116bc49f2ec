"""``--tab`` and ``--theme`` (and ``--size``) on the launch line, so each view can be checked from the command line
(issue 24 item 11): parsed and refused as usage errors, and handed to the window's launch."""

from __future__ import annotations

from typing import Any

import pytest

import app.gui.launch as gui_launch
from app.cli import run as cli_run
from app.cli.parser import TAB_KEYS, THEMES, build_parser, parse_window_size


@pytest.fixture
def run_app_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The window is never opened here: ``run_app``'s arguments are recorded instead."""
    calls: list[dict[str, Any]] = []

    def fake_run_app(**kwargs: Any) -> int:
        calls.append(kwargs)
        return 0

    monkeypatch.setattr(gui_launch, "run_app", fake_run_app)
    return calls


def test_the_options_parse() -> None:
    args = build_parser().parse_args(["--demo", "--tab", "raw", "--theme", "dark", "--size", "1024x700", "--screenshot", "x.png"])
    assert (args.tab, args.theme, args.size) == ("raw", "dark", (1024, 700))
    args = build_parser().parse_args([])
    assert (args.tab, args.theme, args.size) == (None, None, None)
    assert set(TAB_KEYS) == {"header", "timeline", "conversation", "raw", "stats"}
    assert {"light", "dark"} <= set(THEMES)


@pytest.mark.parametrize("text", ["1024", "0x700", "axb", "1024x", "99999x700", "-5x7"])
def test_a_bad_size_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_window_size(text)


@pytest.mark.parametrize(
    ("argv", "word"), [(["--tab", "chat"], "--tab"), (["--theme", "blue"], "--theme"), (["--size", "big"], "--size")]
)
def test_a_bad_value_is_a_usage_error(argv: list[str], word: str, run_app_calls: list[dict[str, Any]], capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli_run.main(["--demo", *argv])
    assert exit_.value.code == 2 and run_app_calls == []
    err = capsys.readouterr().err
    assert word in err and "Traceback" not in err


def test_the_window_is_launched_with_them(run_app_calls: list[dict[str, Any]]) -> None:
    assert cli_run.main(["--demo", "--tab", "stats", "--theme", "light", "--size", "1400x900", "--screenshot", "s.png"]) == 0
    (call,) = run_app_calls
    assert (call["tab"], call["theme"], call["size"], call["screenshot"], call["demo"]) == (
        "stats",
        "light",
        (1400, 900),
        "s.png",
        True,
    )
    run_app_calls.clear()
    assert cli_run.main(["--demo"]) == 0
    assert (run_app_calls[0]["tab"], run_app_calls[0]["theme"], run_app_calls[0]["size"]) == (None, None, None)

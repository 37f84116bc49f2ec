"""A ``sessionscope://`` link that names no openable place is one clean message and exit 1, never the window
and never a traceback (issue 21 item 9): a NUL (``%00``) in the root or the session id, a root that is not
UTF-8 or not a path this system can name, an empty or relative root, a malformed URL."""

from __future__ import annotations

import argparse
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import run as cli_run
from app.links import LinkError, check_openable, make_link, parse_link

BAD_LINKS = {
    "NUL root": ("sessionscope://open?root=%00&session=s", "NUL"),
    "NUL inside the root": ("sessionscope://open?root=%2Ftmp%2Fa%00b&session=s&seq=3", "NUL"),
    "NUL in the session": ("sessionscope://open?root=%2Ftmp&session=a%00b", "NUL"),
    "root not UTF-8": ("sessionscope://open?root=%2F%FF%FE&session=s", "not UTF-8"),
    "lone surrogate root": ("sessionscope://open?root=%2F%ED%A0%80&session=s", "system can name"),
    "empty root": ("sessionscope://open?root=&session=s", "needs a root"),
    "relative root": ("sessionscope://open?root=sessions&session=s", "absolute path"),
    "malformed URL": ("sessionscope://[open?root=%2Ftmp&session=s", "malformed"),
}


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """The window is never really opened here: each launch is recorded instead."""
    calls: list[argparse.Namespace] = []

    def fake_launch(args: argparse.Namespace) -> int:
        calls.append(args)
        return 0

    monkeypatch.setattr(cli_run, "launch_gui", fake_launch)
    return calls


@pytest.mark.parametrize("name", list(BAD_LINKS))
def test_a_bad_link_is_one_message_and_exit_1(name: str, launched: list[argparse.Namespace], capsys: Any) -> None:
    url, why = BAD_LINKS[name]
    code = cli_run.main([url])
    out, err = capsys.readouterr()
    assert code == 1 and launched == []
    assert err.startswith("sessionscope: cannot open the link: ") and why in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and "ValueError" not in err and out == ""
    with pytest.raises(LinkError, match=why):
        check_openable(parse_link(url))


def test_a_good_link_still_opens_the_window(launched: list[argparse.Namespace], tmp_path: Any) -> None:
    url = make_link(str(tmp_path), "5f31cbc4", 7)
    assert cli_run.main([url]) == 0
    assert [(a.root, a.session, a.seq) for a in launched] == [(str(tmp_path), "5f31cbc4", 7)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(max_size=60) | st.binary(max_size=40).map(lambda b: "root=" + "".join(f"%{x:02X}" for x in b) + "&session=s")
)
def test_any_link_opens_a_nameable_place_or_says_why(query: str, launched: list[argparse.Namespace], capsys: Any) -> None:
    launched.clear()
    code = cli_run.main([f"sessionscope://open?{query}"])  # never raises
    _out, err = capsys.readouterr()
    if code == 0:
        (args,) = launched
        assert os.path.isabs(args.root) and "\x00" not in args.root and "\x00" not in args.session
        os.fsencode(args.root)  # a path this system can name
    else:
        assert code == 1 and launched == [] and err.startswith("sessionscope: cannot open the link: ")
        assert "Traceback" not in err

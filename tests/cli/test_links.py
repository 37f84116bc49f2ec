"""``sessionscope://`` links and the command-line form (``app.links``): round trips and refusals."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.links import EventLink, LinkError, is_link, make_link, parse_link


def test_round_trip_and_command_line() -> None:
    url = make_link("/home/ana/.dsh/sessions", "5f31cbc4-6d33-4b09", 412)
    assert url == "sessionscope://open?root=%2Fhome%2Fana%2F.dsh%2Fsessions&session=5f31cbc4-6d33-4b09&seq=412"
    link = parse_link(url)
    assert link == EventLink("/home/ana/.dsh/sessions", "5f31cbc4-6d33-4b09", 412)
    assert link.command() == "sessionscope --root /home/ana/.dsh/sessions --session 5f31cbc4-6d33-4b09 --seq 412"
    assert link.argv() == ["--root", "/home/ana/.dsh/sessions", "--session", "5f31cbc4-6d33-4b09", "--seq", "412"]
    assert link.clipboard_text() == f"{url}\n{link.command()}"
    assert parse_link(make_link("/r", "s")) == EventLink("/r", "s", None)
    assert "--seq" not in EventLink("/r", "s").command()


def test_awkward_paths_and_ids_survive() -> None:
    for root, session in (
        ("/tmp/a b/c+d&e=f?g#h%20", "id?x=1&y"),
        ("/home/ana/メモ/sessions", "東京-セッション"),
        ("C:\\Users\\ana\\sessions", "s"),
        ("/r", "\udcff-not-utf8-name"),  # a non-UTF-8 folder name read with surrogateescape
    ):
        link = parse_link(make_link(root, session, 0))
        assert (link.root, link.session, link.seq) == (root, session, 0)
        if "\udcff" not in root + session:
            assert shlex.split(link.command()) == ["sessionscope", "--root", root, "--session", session, "--seq", "0"]


def test_accepted_variants() -> None:
    assert parse_link("SessionScope://OPEN?session=s&root=%2Fr&seq=7&future=1") == EventLink("/r", "s", 7)
    assert parse_link("sessionscope:open?root=%2Fr&session=s") == EventLink("/r", "s")
    assert parse_link("sessionscope://open/?root=%2Fr&session=s&seq=") == EventLink("/r", "s")
    assert is_link("sessionscope://open?x") and is_link("SESSIONSCOPE:x") and not is_link("/home/sessionscope")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://open?root=%2Fr&session=s", "not a sessionscope:// link"),
        ("sessionscope://delete?root=%2Fr&session=s", "unknown link action"),
        ("sessionscope://open?session=s", "needs a root"),
        ("sessionscope://open?root=%2Fr", "needs a session id"),
        ("sessionscope://open?root=%2Fr&session=s&seq=-1", "non-negative integer"),
        ("sessionscope://open?root=%2Fr&session=s&seq=1.5", "non-negative integer"),
        ("sessionscope://open?root=%2Fr&session=s&seq=%EF%BC%91", "non-negative integer"),  # a fullwidth digit
        ("sessionscope://open?root=%2Fr&root=%2Fx&session=s", "more than once"),
        ("sessionscope://open?root=%FF&session=s", "not UTF-8"),
        ("sessionscope://open?root=%2Fr&session=s&x=" + "a" * 70_000, "characters long"),
    ],
)
def test_refusals_say_why(url: str, said: str) -> None:
    with pytest.raises(LinkError, match=said):
        parse_link(url)


def test_make_link_refuses_what_parse_would() -> None:
    for args in (("", "s", 1), ("/r", "", 1), ("/r", "s", -1), ("/r", "s", True)):
        with pytest.raises(LinkError):
            make_link(*args)  # type: ignore[arg-type]


@given(
    root=st.text(min_size=1, max_size=40),
    session=st.text(min_size=1, max_size=40),
    seq=st.none() | st.integers(min_value=0, max_value=2**53),
)
def test_any_text_round_trips(root: str, session: str, seq: int | None) -> None:
    assert parse_link(make_link(root, session, seq)) == EventLink(root, session, seq)


def test_the_desktop_entry_registers_the_scheme() -> None:
    from pathlib import Path

    entry = (Path(__file__).resolve().parents[2] / "packaging" / "sessionscope.desktop").read_text()
    lines = entry.splitlines()
    assert "MimeType=x-scheme-handler/sessionscope;" in lines
    assert "Exec=sessionscope %u" in lines  # the URL is the first argument (run.open_link)

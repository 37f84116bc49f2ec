"""The argument parser, built from the verb table, and the check of ids that came from argv.

A usage error is a ``UsageError`` (the engine's argument error), not argparse's usage text and exit:
``run`` prints it in the typed form like every other failure (issue 21 item 6).  ``--`` is handled
here, not by argparse, whose treatment of ``--`` before a subcommand's positionals has changed between
Python releases: after it every token is a positional (``search ROOT -- -foo``).

May import the standard library, ``app.about`` (the version), ``app.cli.verbs`` and the engine's error classes.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from app.about import version_line
from app.cli.verbs import VERBS
from persistence import SessionArgumentError

BACKENDS = ("jsonl", "jsonl-zstd", "jsonl-none", "sqlite")
PROG = "sessionscope"
# The window's content tabs by key (``app.gui.window.tabs`` and the features' own), for ``--tab``: listed here
# so that a mistyped one is a usage error before Qt is imported.
TAB_KEYS = ("header", "timeline", "conversation", "raw", "stats")
THEMES = ("light", "dark", "system")  # ``app.gui.theme``'s choices
MAX_WINDOW_SIDE = 16384


def parse_window_size(text: str) -> tuple[int, int]:
    """``1400x900`` as (1400, 900); ValueError for anything else (each side 200 to 16384 pixels)."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if m is None:
        raise ValueError(f"not WIDTHxHEIGHT: {text!r}")
    width, height = int(m[1]), int(m[2])
    if not (200 <= width <= MAX_WINDOW_SIDE and 200 <= height <= MAX_WINDOW_SIDE):
        raise ValueError(f"each side must be 200 to {MAX_WINDOW_SIDE} pixels: {text!r}")
    return width, height


def _size_argument(text: str) -> tuple[int, int]:
    try:
        return parse_window_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


class UsageError(SessionArgumentError):
    """Arguments the parser refuses (a missing or unknown argument, a bad value): exit code 2."""

    exit_code = 2


class CliParser(argparse.ArgumentParser):
    """argparse, except that a usage error raises ``UsageError`` (one line, with where to find the usage)."""

    def error(self, message: str) -> NoReturn:
        verb = self.prog.removeprefix(PROG).strip()
        text = " ".join(message.split())
        raise UsageError(f"{verb}: {text} (see {self.prog} --help)" if verb else f"{text} (see {PROG} --help)")


# A token after ``--`` that argparse would read as an option is handed over as this placeholder (plus its
# index) and put back afterwards.  NUL cannot occur in argv, so no real argument looks like one.
_HIDDEN = "\x00sessionscope-argument-"
_HIDDEN_RE = re.compile(re.escape(_HIDDEN) + r"(\d+)")
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse's own test: such a token is a positional


def parse_argv(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)`` where every token after the first ``--`` is a positional, on any Python.

    argparse never sees the ``--``: a token after it that starts with a dash is replaced by a
    placeholder, then restored in the result (and in any error message).
    """
    tokens = list(argv)
    if "--" not in tokens:
        return parser.parse_args(tokens)
    cut = tokens.index("--")
    hidden: list[str] = []
    rest: list[str] = []
    for token in tokens[cut + 1 :]:
        if token.startswith("-") and token != "-" and not _NEGATIVE_NUMBER.match(token):
            rest.append(f"{_HIDDEN}{len(hidden)}")
            hidden.append(token)
        else:
            rest.append(token)

    def restore(value: Any) -> Any:
        if isinstance(value, str):
            return _HIDDEN_RE.sub(lambda m: hidden[int(m[1])], value)
        if isinstance(value, list):
            return [restore(v) for v in value]
        return value

    try:
        args = parser.parse_args(tokens[:cut] + rest)
    except UsageError as err:
        raise UsageError(restore(err.message)) from None
    for name, value in vars(args).items():
        setattr(args, name, restore(value))
    return args


def json_requested(argv: Sequence[str]) -> bool:
    """Whether ``--json`` was asked for (before any ``--``): how to print a usage error, parsed or not."""
    tokens = list(argv)
    if "--" in tokens:
        tokens = tokens[: tokens.index("--")]
    # argparse accepts an unambiguous prefix of an option (``--js``); no other option starts with ``--j``.
    return any(len(t) >= 3 and "--json".startswith(t) for t in tokens if t.startswith("--"))


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="sessionscope",
        description="Browse, inspect and repair coding-agent session logs (JSONL roots or SQLite stores).",
        epilog="A sessionscope://open?root=...&session=...&seq=N link as the only argument opens the window there; "
        "a PATH as the first argument (a root, a store, a transcript, a support bundle or a case folder) opens it.",
    )
    # argparse prints it and exits 0 before anything else is looked at: no Qt, no store opened.
    parser.add_argument("--version", action="version", version=version_line(), help="print the version and exit")
    parser.add_argument("--root", help="session root for the window (default $DSH_HOME/sessions or ~/.dsh/sessions)")
    parser.add_argument("--demo", action="store_true", help="open the window on the demo root (built once)")
    parser.add_argument("--session", metavar="ID", help="open this session directly")
    parser.add_argument("--seq", metavar="N", type=int, help="with --session: open the session at this event")
    parser.add_argument("--screenshot", metavar="FILE", help="save a PNG of the loaded window and exit")
    parser.add_argument(
        "--screenshot-of",
        choices=("window", "about", "crash"),
        default="window",
        help="with --screenshot: the window, Help > About, or the crash dialog of a deliberate error",
    )
    parser.add_argument("--tab", choices=TAB_KEYS, help="the content tab to show (with --screenshot: the one saved)")
    parser.add_argument("--theme", choices=THEMES, help="the window's theme for this run (View > Theme keeps the saved one)")
    parser.add_argument("--size", metavar="WxH", type=_size_argument, help="the window's size, e.g. 1024x700 (for --screenshot)")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb in VERBS:
        p = sub.add_parser(verb.name, help=verb.help)
        p.add_argument(
            "root",
            metavar="PATH",
            help="a source: a JSONL root, a SQLite store, a transcript file, a support bundle or a case folder",
        )
        if verb.needs_id:
            p.add_argument("id", metavar="ID", nargs="?", default=None, help="session id (optional when PATH holds one session)")
        p.add_argument("--backend", choices=BACKENDS, default=None)
        p.add_argument("--json", action="store_true", help="print the upstream-shaped JSON result")
        for a in verb.arguments:
            p.add_argument(*a.flags, **a.options)
    return parser


def argv_text(value: str, what: str) -> str:
    """An id from argv as the text the user meant, or a typed refusal before anything is opened.

    Python hands over argv bytes that are not UTF-8 as lone surrogates U+DC80-U+DCFF
    (surrogateescape). Bytes that are WTF-8 (UTF-8 extended to lone surrogates, which a JS
    string may hold) become that string; any other byte sequence is refused, so no verb (fork!)
    ever writes a session under an id the user did not type.
    """
    if not any("\udc80" <= ch <= "\udcff" for ch in value):
        return value
    raw = os.fsencode(value)
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise SessionArgumentError(f"{what} is not valid UTF-8: {raw!r}") from None
    # Encoded surrogate halves that form a pair are one character, as in JS.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def check_argv(args: argparse.Namespace) -> None:
    """Turn every id in ``args`` into the text the user meant (see ``argv_text``), or refuse."""
    for attr, what in (("id", "session id"), ("new_id", "new session id")):
        value = getattr(args, attr, None)
        if isinstance(value, str):
            setattr(args, attr, argv_text(value, what))

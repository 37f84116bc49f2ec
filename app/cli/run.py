"""One run of ``sessionscope``: parse, open the store the verb's table row asks for, render, print.

Without a verb the window opens (Qt is imported only then, so the command line works on machines
without a display), on the source a PATH first argument names (``sessionscope case.zip``); so does a
``sessionscope://`` link given as the only argument (the desktop entry
registers the scheme and passes the URL: ``app.links``).  Every failure ends as the typed error of
``app.cli.output``, never a traceback.
May import the other ``app.cli`` modules, ``app.links``, ``app.gui.launch`` (lazily) and the engine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from app.cli.output import NoSessionRoot, report_error, write_out
from app.cli.parser import UsageError, build_parser, check_argv, json_requested, parse_argv
from app.cli.source_run import run_on_source
from app.cli.verbs import VERBS_BY_NAME, Verb
from app.links import LinkError, check_openable, is_link, parse_link
from persistence import open_store

# What a verb prints: its text, or a writer that prints a value already read in full (``raw``'s bytes).
Output = str | Callable[[TextIO], None]


def require_root(path: str) -> None:
    """Refuse a root that does not exist (a dangling link included) before anything is opened or indexed.

    A JSONL root that is absent would read as an empty one, and ``search`` would index it: a typo'd
    path must say so (issue 21 item 8), and no verb creates a root or a store.
    """
    if not os.path.exists(path):
        raise NoSessionRoot(path)


async def run_verb(verb: Verb, args: argparse.Namespace) -> tuple[Output, int]:
    """(what to print, exit code) of one verb, on the source ``args.root`` names (``source_run``)."""
    require_root(args.root)
    # No verb creates a store: a missing or non-database file is refused, never turned into one.
    # The user's own root or store opens through this module's ``open_store`` (looked up per call).
    return await run_on_source(verb, args, lambda *a, **kw: open_store(*a, **kw))


def launch_gui(args: argparse.Namespace) -> int:
    try:
        from app.gui.launch import run_app
    except ImportError:
        build_parser().print_help()
        return 0
    options: dict[str, Any] = {}
    if getattr(args, "source", None) is not None:
        options["source"] = args.source  # ``sessionscope PATH``: the window on that source
    for name in ("tab", "theme", "size"):  # absent from a link's arguments
        options[name] = getattr(args, name, None)
    return int(
        run_app(
            root=args.root,
            demo=args.demo,
            session=args.session,
            screenshot=args.screenshot,
            seq=args.seq,
            screenshot_of=args.screenshot_of,
            **options,
        )
    )


def source_argv(argv: list[str]) -> tuple[str | None, list[str]]:
    """(the source path, the other arguments) of ``sessionscope PATH [options]``; (None, argv) otherwise.

    A first argument that is neither a verb nor an option, and is a path (it exists, or names a folder:
    ``./x``, ``dir/case.zip``), is a source to open in the window; any other word is a mistyped verb.
    """
    first = argv[0] if argv else ""
    if first and first not in VERBS_BY_NAME and not first.startswith("-") and (os.path.lexists(first) or os.sep in first):
        return argv[0], argv[1:]
    return None, argv


def open_link(argv: Sequence[str]) -> int:
    """``sessionscope sessionscope://open?...``: the window at the linked event (exit 1 on a bad link)."""
    if len(argv) != 1:
        write_out(sys.stderr, "sessionscope: a sessionscope:// link must be the only argument\n")
        return 2
    try:
        link = check_openable(parse_link(argv[0]))
    except LinkError as err:
        write_out(sys.stderr, f"sessionscope: cannot open the link: {err}\n")
        return 1
    args = argparse.Namespace(
        root=link.root, demo=False, session=link.session, seq=link.seq, screenshot=None, screenshot_of="window"
    )
    return launch_gui(args)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and is_link(argv[0]):
        return open_link(argv)
    parser = build_parser()
    source, argv = source_argv(argv)
    try:
        args = parse_argv(parser, argv)
        args.source = source
        if source is not None and args.verb is not None:
            parser.error(f"a PATH to open comes after the verb: sessionscope {args.verb} {source} ...")
        if args.verb is None:
            if args.seq is not None and args.session is None:
                parser.error("--seq needs --session ID (the session the event belongs to)")
            if args.seq is not None and args.seq < 0:
                parser.error(f"--seq must be a non-negative integer, got {args.seq}")
    except UsageError as err:
        # Exit 2 as argparse does (callers of main() see the same SystemExit), but in the typed form.
        raise SystemExit(report_error(None, err, json_text=json_requested(argv))) from None
    if args.verb is None:
        if source is not None and not os.path.exists(source):
            return report_error(None, NoSessionRoot(source))
        return launch_gui(args)
    try:
        check_argv(args)  # before any store is opened: a refused id has written nothing
        output, code = asyncio.run(run_verb(VERBS_BY_NAME[args.verb], args))
    except Exception as err:  # last line of defense: every failure is printed in the typed form
        return report_error(args, err)
    if isinstance(output, str):
        write_out(sys.stdout, output, json_text=args.json)
    else:
        output(sys.stdout)
    return code

"""The verbs of ``sessionscope``: one table row and one small handler each.

A row says everything the command line needs to know about a verb: its name and help, its own
arguments, the handler (``store, args -> value``), how to render the value (``--json`` and text, or
a writer that streams it), and whether the store is opened read-only.  ``read_only`` lives here and
nowhere else: a read-only SQLite store cannot checkpoint or change a database another process is
writing.  No verb creates a store (``run`` opens every one with ``create=False``).

Actions (repair, restore, fork, resume) call the same plan/execute pairs of ``app.actions`` as the
window; the flags stand in for the window's dialogs.  ``search`` calls ``app.search.search_store``
(the index lives in the user's cache folder, never in the root).
May import ``app.actions``, ``app.search``, the other ``app.cli`` modules and the engine; never Qt.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from app.actions import backups, fork, repair, resume, verify
from app.actions.liveness import DEFAULT_QUIET_SECONDS
from app.cli import diff_verb, list_view, render, show_verb, stats_verb
from app.cli.list_rows import ListReport, list_rows
from app.cli.output import write_out
from app.cli.progress import ProgressLine
from app.cli.raw_stream import read_raw_plain, write_raw
from app.cli.results import Loaded, RepairReport, VerifyReport
from app.export import command as export_command
from app.export.exporter import FORMATS as EXPORT_FORMATS
from app.search import KINDS, SearchOutcome, search_store
from app.search.command import DEFAULT_CLI_LIMIT
from persistence import CoordinatedPersistence, not_found

Handler = Callable[[CoordinatedPersistence, argparse.Namespace], Awaitable[Any]]
JsonRenderer = Callable[[Any], Any]
TextRenderer = Callable[[Any, argparse.Namespace], str]
StreamWriter = Callable[[Any, TextIO], None]


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of a verb: ``argparse.add_argument(*flags, **options)``."""

    flags: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


def arg(*flags: str, **options: Any) -> Arg:
    return Arg(flags, options)


@dataclass(frozen=True, slots=True)
class Verb:
    name: str
    help: str
    handler: Handler
    text: TextRenderer
    json: JsonRenderer = render.value_json
    read_only: bool = False  # open the store read-only
    read_only_if: str | None = None  # ...or when this flag is set (``repair --dry-run``)
    needs_id: bool = True  # takes a session ID after ROOT
    arguments: tuple[Arg, ...] = ()
    succeeded: Callable[[Any], bool] | None = None  # False: exit 1, the output is still printed (verify)
    stream: StreamWriter | None = None  # text output written straight to stdout instead of ``text`` (raw)

    def opens_read_only(self, args: argparse.Namespace) -> bool:
        return self.read_only or (self.read_only_if is not None and bool(getattr(args, self.read_only_if)))


def _quiet_seconds() -> Arg:
    return arg(
        "--quiet-seconds",
        type=float,
        default=DEFAULT_QUIET_SECONDS,
        metavar="S",
        help="refuse when the artifact changed less than S seconds ago (default 10)",
    )


# ---------------------------------------------------------------- read verbs


async def list_headers(store: CoordinatedPersistence, _args: argparse.Namespace) -> ListReport:
    # Every session, a bad one as a row of its own (``list_rows``), not upstream's skipping ``list()``.
    return await list_rows(store)


async def list_sessions(store: CoordinatedPersistence, args: argparse.Namespace) -> list_view.ListView:
    # ``list_headers`` read further (title, status, events, modified) when shown or filtered: ``list_view``.
    return await list_view.list_view(store, args)


async def list_snapshots(store: CoordinatedPersistence, _args: argparse.Namespace) -> Any:
    return await store.list_snapshots()


async def inspect_session(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    return await store.inspect(args.id)


async def read_from(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    return await store.read_from(args.id, args.seq)


async def raw(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    # Text output streams the plaintext as bytes (``raw_stream``); ``--json`` needs the str anyway.
    artifact = await (store.read_raw(args.id) if args.json else read_raw_plain(store, args.id))
    if artifact is None:
        raise not_found(args.id)
    return artifact


async def locate(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    meta = next((h for h in await store.list() if h.id == args.id), None)
    if meta is None:
        raise not_found(args.id)
    return store.locate(meta)


async def load(store: CoordinatedPersistence, args: argparse.Namespace) -> Loaded:
    before = await store.read_stored_revision(args.id)
    inspection = await store.load(args.id)
    after = await store.read_stored_revision(args.id)
    return Loaded(inspection, before != after)


async def verify_root(store: CoordinatedPersistence, args: argparse.Namespace) -> VerifyReport:
    # A big root takes a while: one updating line on a terminal's stderr (``progress``), nothing when piped.
    # Verdicts come from the root's diagnosis cache unless --no-cache (a received source has none: its
    # extraction is a new folder each time); what the cache says of itself (rebuilt) goes to stderr.
    notes: list[str] = []
    use_cache = not getattr(args, "no_cache", False) and not getattr(args, "received_source", False)
    with ProgressLine("verify", detail="listing the sessions") as line:
        # A clean JSONL root's walk also finds its backups (``backups_found``): the root is walked once.
        # Otherwise the engine looks for them after the check; a bad root's are not looked at (as before).
        found: list[list[tuple[str, str]]] = []
        rows, root_error = await verify.verify_root(
            store,
            lambda done, total, sid: line.update(done, total, sid),
            use_cache=use_cache,
            messages=notes,
            backups_found=found.append,
        )
        lost: list[tuple[str, backups.BackupInfo]] = []
        if root_error is None:
            line.update(detail="looking for records only a backup holds")
            lost = await backups.find_lost_records(store, found[0] if found else None)
    if notes:
        write_out(sys.stderr, "".join(f"sessionscope verify: {m}\n" for m in notes))
    return VerifyReport(rows, root_error, lost)


async def search(store: CoordinatedPersistence, args: argparse.Namespace) -> SearchOutcome:
    # The verb's whole logic is app.search's (index up to date, then query); a bad query is its
    # SearchOutcome with exit code 1 and one line for stderr, never an exception.  A first search
    # indexes every session: its progress is one updating line on a terminal's stderr.
    with ProgressLine("search", detail="updating the index") as line:
        return await search_store(
            store,
            args.query,
            project=args.project,
            kind=args.kind,
            tool=args.tool,
            status=args.status,
            limit=args.limit,
            json=args.json,
            reindex=args.reindex,
            cache_dir=getattr(args, "search_cache_dir", None),  # a received source's index: a scratch folder
            progress=lambda p: line.update(p.done, p.total, "sessions indexed"),
        )


async def export(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    # A large session's export reads and writes for a while: the elapsed time on a terminal's stderr.
    with ProgressLine("export", detail=f"{args.format} of {getattr(args, 'id', None) or 'the session'}"):
        return await export_command.handle(store, args)


# ---------------------------------------------------------------- actions


async def repair_session(store: CoordinatedPersistence, args: argparse.Namespace) -> RepairReport:
    # A dry run is the plan (the guard's verdict included) plus the refusals; a real run does not
    # assess the guard twice: execute runs it on fresh evidence.
    plan = await repair.plan_repair(store, args.id, quiet_seconds=args.quiet_seconds, assess=args.dry_run)
    result = await repair.execute_repair(
        store, plan, force=args.force, dry_run=args.dry_run, quiet_seconds=args.quiet_seconds, accept_loss=args.accept_loss
    )
    return RepairReport(result, args.dry_run, plan.liveness)


async def list_backups(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    return await backups.list_backups(store, args.id)


async def restore_backup(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    return await backups.restore_backup(store, args.id, args.backup, force=args.force, quiet_seconds=args.quiet_seconds)


async def fork_session(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    plan = await fork.plan_fork(store, args.id, args.after_turn)
    return await fork.execute_fork(store, plan, args.new_id)


async def resume_session(store: CoordinatedPersistence, args: argparse.Namespace) -> Any:
    # --force stands for both boxes of the window's dialog: "repair it first" and "no agent is running".
    plan = await resume.plan_resume(store, args.id, args.template or resume.DEFAULT_TEMPLATE, quiet_seconds=args.quiet_seconds)
    return await resume.execute_resume(
        store,
        plan,
        repair_confirmed=args.force,
        force=args.force,
        open_terminal=not args.print_only,
        quiet_seconds=args.quiet_seconds,
    )


# ---------------------------------------------------------------- the table


VERBS: tuple[Verb, ...] = (
    Verb(
        name="list",
        help="list the session headers of a store (a session that cannot be listed is a row with its reason; exit 1 then)",
        handler=list_sessions,
        text=list_view.view_text,
        json=list_view.view_json,
        read_only=True,
        needs_id=False,
        arguments=(
            arg("--long", "-l", action="store_true", help="title, status, events and modified date (the default on a terminal)"),
            arg(
                "--status",
                metavar="S",
                help="only sessions with these statuses (comma-separated: ok, open-turn, torn-tail, corrupt, ...)",
            ),
            arg(
                "--since",
                metavar="WHEN",
                help="only sessions modified since WHEN: a date (2026-12-01[T09:30]) or a duration (90m, 12h, 2d, 1w)",
            ),
            arg("--cwd", metavar="TEXT", help="only sessions whose working folder contains TEXT"),
            arg("--title", metavar="TEXT", help="only sessions whose title contains TEXT (any case)"),
        ),
        succeeded=lambda view: view.ok,
    ),
    Verb(
        name="snapshots",
        help="list headers with their opaque revisions",
        handler=list_snapshots,
        text=render.snapshots_text,
        json=render.each_json,
        read_only=True,
        needs_id=False,
    ),
    Verb(
        name="inspect",
        help="read a session with in-memory crash closers (never writes)",
        handler=inspect_session,
        text=render.inspection_text,
        read_only=True,
    ),
    Verb(
        name="read-from",
        help="events from SEQ on (no closers, never writes)",
        handler=read_from,
        text=render.read_from_text,
        read_only=True,
        arguments=(arg("seq", metavar="SEQ", type=int),),
    ),
    Verb(
        name="raw",
        help="print the raw JSONL artifact verbatim",
        handler=raw,
        text=render.raw_text,
        stream=write_raw,
        read_only=True,
    ),
    Verb(
        name="locate",
        help="where the session's artifact lives",
        handler=locate,
        text=render.location_text,
        read_only=True,
    ),
    Verb(
        name="load",
        help="load a session, committing crash repair if it needs one",
        handler=load,
        text=render.loaded_text,
        json=render.loaded_json,
    ),
    Verb(
        name="repair",
        help="close an interrupted turn / cut a torn tail, after a backup (preview with --dry-run)",
        handler=repair_session,
        text=render.repair_text,
        json=render.repair_json,
        read_only_if="dry_run",
        arguments=(
            arg("--dry-run", action="store_true", help="show what would change; write nothing"),
            arg("--force", action="store_true", help="skip the liveness guard (artifact changed recently)"),
            _quiet_seconds(),
            arg(
                "--accept-loss",
                action="store_true",
                help="also cut intact records that follow damage (refused by default; they stay in the backup)",
            ),
        ),
    ),
    Verb(
        name="backups",
        help="list the repair backups of a session and what each holds that the log lacks",
        handler=list_backups,
        text=render.backups_text,
        json=render.backups_json,
        read_only=True,
    ),
    Verb(
        name="restore",
        help="put a backup back as the session's log (the current log is backed up first)",
        handler=restore_backup,
        text=render.restore_text,
        json=render.restore_json,
        arguments=(
            arg("--backup", required=True, metavar="PATH", help="the backup file (see `sessionscope backups`)"),
            arg("--force", action="store_true", help="skip the liveness guard"),
            _quiet_seconds(),
        ),
    ),
    Verb(
        name="fork",
        help="create a new session seeded with the log through a completed turn",
        handler=fork_session,
        text=render.fork_text,
        arguments=(
            arg("--after-turn", type=int, required=True, metavar="N"),
            arg("--id", dest="new_id", metavar="NEW", help="id of the new session (default: a new uuid4)"),
        ),
    ),
    Verb(
        name="resume",
        help="commit pending repair, then run the harness resume command in a terminal",
        handler=resume_session,
        text=render.resume_text,
        arguments=(
            arg("--print", dest="print_only", action="store_true", help="print the command instead of running it"),
            arg("--force", action="store_true", help="commit a pending repair, and go on while the liveness guard objects"),
            _quiet_seconds(),
            arg("--template", default=None, help="command template ({id}, {cwd}, {root})"),
        ),
    ),
    Verb(
        name="verify",
        help="check every session like fsck; exit 0 only when all are ok",
        handler=verify_root,
        text=render.verify_text,
        json=render.verify_json,
        read_only=True,
        needs_id=False,
        arguments=(
            arg(
                "--no-cache",
                action="store_true",
                help="read every log instead of reusing the verdicts kept for unchanged logs (the cache is left as is)",
            ),
        ),
        succeeded=lambda report: report.ok,
    ),
    Verb(
        name="search",
        help="full-text search of every session (one hit per line: id, seq, kind, snippet)",
        handler=search,
        text=render.search_text,
        json=render.search_json,
        stream=render.write_search,
        read_only=True,
        needs_id=False,
        arguments=(
            arg("query", metavar="QUERY", help='terms (all must match), "a phrase", word*, AND / OR / NOT, ( )'),
            arg("--project", metavar="P", help="only sessions whose cwd contains P"),
            arg("--kind", metavar="K", help=f"only hits of these kinds (comma-separated): {', '.join(KINDS)}"),
            arg("--tool", metavar="NAME", help="only tool calls and results of this tool"),
            arg("--status", metavar="S", help="only sessions with this status (ok, open-turn, torn-tail, corrupt, ...)"),
            arg("--limit", type=int, default=DEFAULT_CLI_LIMIT, metavar="N", help=f"hits printed (default {DEFAULT_CLI_LIMIT})"),
            arg("--reindex", action="store_true", help="rebuild the root's search index first"),
        ),
        succeeded=lambda outcome: outcome.code == 0,
    ),
    Verb(
        name="export",
        help="export one session as Markdown, HTML, JSONL or a support bundle (never writes the session)",
        handler=export,
        text=export_command.result_text,
        json=export_command.result_json,
        read_only=True,
        arguments=(
            arg("--format", required=True, choices=EXPORT_FORMATS),
            arg(
                "-o",
                "--output",
                required=True,
                metavar="FILE",
                help="written to a temporary file, then renamed to FILE (a new file; never a link, FIFO or device)",
            ),
            arg("--force", action="store_true", help="replace FILE when it is an existing regular file"),
            arg(
                "--redact",
                action="store_true",
                help="bundle only: replace API keys, tokens, passwords, private keys and e-mail addresses with "
                "placeholders such as [redacted:api-key#1]",
            ),
            arg("--redact-home", action="store_true", help="bundle only: also hide your home folder's name (implies --redact)"),
        ),
    ),
)

VERBS += (
    Verb(
        name="diff",
        help="compare two sessions turn by turn, aligned by their prompts (exit 1 when they differ)",
        handler=diff_verb.diff,
        text=diff_verb.diff_text,
        json=diff_verb.diff_json,
        read_only=True,
        needs_id=False,
        arguments=(
            arg("path_b", nargs="?", metavar="PATH_B", help="the other session's source (default: PATH again)"),
            arg("--id-a", metavar="ID", help="the session of PATH (needed when it holds more than one)"),
            arg("--id-b", metavar="ID", help="the session of PATH_B (needed when it holds more than one)"),
        ),
        succeeded=lambda report: report.same,
    ),
    Verb(
        name="stats",
        help="the numbers of the window's Stats tab: turns, steps, tools, tokens, time (and cost with a price table)",
        handler=stats_verb.stats,
        text=stats_verb.stats_text,
        json=stats_verb.stats_json,
        read_only=True,
    ),
    Verb(
        name="show",
        help="the conversation as text to read: prompts, answers, tool calls and their results (folded), errors",
        handler=show_verb.show,
        text=show_verb.show_text,
        json=show_verb.show_json,
        read_only=True,
        arguments=(
            arg("--full", action="store_true", help="unfold long results and show reasoning"),
            arg(
                "--color",
                choices=show_verb.COLOR_CHOICES,
                default="auto",
                help="ANSI colours (auto: on a terminal, unless NO_COLOR is set)",
            ),
        ),
    ),
)

VERBS_BY_NAME: Mapping[str, Verb] = {v.name: v for v in VERBS}

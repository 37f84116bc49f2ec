"""``sessionscope list``: the columns a person reads (title, status, events, modified) and the filters.

Why a module beside ``list_rows``: ``list_rows`` says which sessions a store holds (one row each, a
bad one included), from headers alone.  What a person needs to pick a session (its title, whether it
is ok, how long it is, when it last changed) needs each session's log: its verdict
(``app.diagnosis.verdicts``, what the window's list and ``verify`` show too), taken from the root's
diagnosis cache while the log is unchanged and read otherwise (in worker processes when many are
new), done only when the output or a filter needs it.

The output: on a terminal (or with ``--long``) a table, ``ID  TITLE  STATUS  EVENTS  MODIFIED  CWD``,
``MODIFIED`` as a local date and time; piped, the tab-separated rows scripts already read
(``id, cwd, createdAt``), now filtered.  ``--json`` keeps upstream's header shape; with ``--long`` each
good row also has ``title``, ``status``, ``events`` and ``modified`` (ms since the epoch).

Filters: ``--status S[,S]`` (ok, open-turn, torn-tail, corrupt, unsupported, unreadable, ...),
``--since WHEN`` (a date ``2026-12-01``, a date and time ``2026-12-01T09:30``, or a duration back from
now: ``90m``, ``12h``, ``2d``, ``1w``), ``--cwd TEXT`` (the header's cwd contains it) and ``--title
TEXT`` (the title contains it, any case).  A bad row has no title, cwd or date: it passes only a
status filter naming its status.

May import the standard library, ``app.cli.list_rows``, ``app.cli.output``, ``app.listing`` and the public engine.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.cli.list_rows import ListReport, ListRow, list_rows
from app.cli.list_rows import report_json as rows_json
from app.cli.list_rows import report_text as rows_text
from app.cli.output import write_out
from app.diagnosis.cache import sqlite_place
from app.diagnosis.parallel import judge_all, open_cache, place_of
from app.diagnosis.verdicts import READABLE, Verdict
from persistence import CoordinatedPersistence, SessionArgumentError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*$", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_NO_EVENTS = ("corrupt", "unsupported", "missing")  # statuses whose log has no events to count
TITLE_CHARS = 48  # characters of a title in the table (the whole title is in --json --long)


class FilterError(SessionArgumentError):
    """A filter value ``list`` cannot read (``--since tomorrowish``): a usage error, exit code 2."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Details:
    """What one good session's log says: its title, verdict, stored events and last change."""

    title: str | None
    status: str
    events: int | None
    modified_ms: int | None

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "status": self.status, "events": self.events, "modified": self.modified_ms}


@dataclass(frozen=True, slots=True)
class ListView:
    """The rows ``list`` prints (filtered), their details when read, and whether to print the table."""

    report: ListReport  # every row, for the exit code (a bad row filtered out still fails the listing)
    rows: list[ListRow]
    details: dict[str, Details] | None
    long: bool

    @property
    def ok(self) -> bool:
        return self.report.ok


def parse_since(text: str, now_s: float | None = None) -> int:
    """``--since`` as ms since the epoch: a duration back from now, or a local date / date and time."""
    now = time.time() if now_s is None else now_s
    m = _DURATION.match(text)
    if m is not None:
        return int((now - float(m[1]) * _UNIT_S[m[2].lower()]) * 1000)
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise FilterError(
            f"list: --since {text!r} is neither a date (2026-12-01, 2026-12-01T09:30) nor a duration (90m, 12h, 2d, 1w)"
        ) from None
    return int(when.timestamp() * 1000)


def modified_text(ms: int | None) -> str:
    """A local date and time a person reads (``2026-12-03 21:14``)."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def details_from(verdict: Verdict, row: ListRow) -> Details:
    """What ``list`` shows of a session's verdict (a refused log: the title and times of its readable part)."""
    last = verdict.last_time
    if last is None and row.header is not None:
        last = row.header.created_at
    if verdict.status in READABLE:
        events = verdict.events
    else:
        events = None if verdict.status in _NO_EVENTS else 0
    return Details(verdict.title, verdict.status, events, last)


async def details_of_rows(store: CoordinatedPersistence, rows: list[ListRow], *, use_cache: bool = True) -> dict[str, Details]:
    """The details of every good row: verdicts from the root's diagnosis cache when their log is
    unchanged, the rest read (one read-only ``view`` each, in worker processes when there are many)."""
    good = [r for r in rows if r.header is not None]
    where = sqlite_place(store.root_path) if store.kind == "sqlite" else ""
    wanted = [(r.session_id, place_of(store, r.path, where), r.revision) for r in good]
    cache = await asyncio.to_thread(open_cache, store, use=use_cache)
    try:
        verdicts = await judge_all(store, wanted, cache=cache)
    finally:
        if cache is not None:
            if cache.messages:
                write_out(sys.stderr, "".join(f"sessionscope list: {m}\n" for m in cache.messages))
            cache.close()
    return {r.session_id: details_from(verdicts[(sid, place)], r) for r, (sid, place, _) in zip(good, wanted, strict=True)}


def _wanted(args: argparse.Namespace) -> tuple[set[str] | None, int | None]:
    statuses = {s.strip() for s in args.status.split(",") if s.strip()} if args.status else None
    since = parse_since(args.since) if args.since else None
    return statuses, since


def wants_long(args: argparse.Namespace, isatty: Callable[[], bool] | None = None) -> bool:
    """The table when asked (``--long``) or when a person reads stdout (a terminal), never with ``--json``."""
    if args.json:
        return bool(args.long)
    return bool(args.long) or (isatty or sys.stdout.isatty)()


async def list_view(store: CoordinatedPersistence, args: argparse.Namespace) -> ListView:
    """``list``: every row (``list_rows``), read further when the output or a filter needs it, filtered."""
    statuses, since = _wanted(args)  # a bad --since is refused before any log is read
    report = await list_rows(store)
    long = wants_long(args)
    need = long or statuses is not None or since is not None or args.title is not None
    details: dict[str, Details] | None = None
    if need:
        wanted = [r for r in report.rows if r.header is not None and (args.cwd is None or args.cwd in (r.header.cwd or ""))]
        received = getattr(args, "received_source", False)
        details = await details_of_rows(store, wanted, use_cache=not received)
    rows: list[ListRow] = []
    for row in report.rows:
        if row.header is None:
            if statuses is None or (row.status in statuses and since is None and args.title is None and args.cwd is None):
                rows.append(row)
            continue
        if args.cwd is not None and args.cwd not in (row.header.cwd or ""):
            continue
        if details is not None:
            d = details[row.session_id]
            if statuses is not None and d.status not in statuses:
                continue
            if since is not None and (d.modified_ms is None or d.modified_ms < since):
                continue
            if args.title is not None and args.title.casefold() not in (d.title or "").casefold():
                continue
        rows.append(row)
    return ListView(report, rows, details, long)


def view_json(view: ListView) -> list[dict[str, Any]]:
    out = rows_json(ListReport(view.rows))
    if view.long and view.details is not None:
        for item, row in zip(out, view.rows, strict=True):
            d = view.details.get(row.session_id)
            if d is not None and row.header is not None:
                item.update(d.to_json())
    return out


def _cell(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def view_text(view: ListView, args: argparse.Namespace) -> str:
    if not view.long or view.details is None:
        return rows_text(ListReport(view.rows), args)
    table: list[tuple[str, ...]] = [("ID", "TITLE", "STATUS", "EVENTS", "MODIFIED", "CWD")]
    for r in view.rows:
        d = view.details.get(r.session_id)
        if r.header is None or d is None:
            table.append((r.session_id, f"({r.reason})", r.status or "corrupt", "-", "-", r.path or "-"))
            continue
        events = f"{d.events:,}" if d.events is not None else "-"
        table.append(
            (
                r.session_id,
                _cell(d.title or "(untitled)", TITLE_CHARS),
                d.status,
                events,
                modified_text(d.modified_ms),
                r.header.cwd or "-",
            )
        )
    if len(table) == 1:
        return "(no sessions)" if not view.report.rows else "(no session matches)"
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    lines = []
    for row in table:
        cells = [c.rjust(widths[i]) if i == 3 else c.ljust(widths[i]) for i, c in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines)


__all__ = [
    "Details",
    "ListView",
    "details_from",
    "details_of_rows",
    "list_view",
    "modified_text",
    "parse_since",
    "view_json",
    "view_text",
    "wants_long",
]

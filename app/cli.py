"""The ``sessionscope`` command line.

Read-mostly verbs over any store ``open_store`` accepts.  No Qt is imported unless the
window is asked for, so the command line works on machines without a display.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from persistence import CoordinatedPersistence, open_store
from persistence.errors import upstream_class_of
from persistence.model.jsontext import js_number

READ_VERBS = ("list", "snapshots", "inspect", "read-from", "raw", "locate", "load")


def default_root() -> str:
    home = os.environ.get("DSH_HOME")
    if home:
        return os.path.join(home, "sessions")
    return os.path.join(os.path.expanduser("~"), ".dsh", "sessions")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sessionscope",
        description="Browse, inspect and repair coding-agent session logs (JSONL roots or SQLite stores).",
    )
    parser.add_argument("--root", help="session root for the window (default $DSH_HOME/sessions or ~/.dsh/sessions)")
    parser.add_argument("--demo", action="store_true", help="open the window on the demo root (built once)")
    parser.add_argument("--session", metavar="ID", help="open this session directly")
    parser.add_argument("--screenshot", metavar="FILE", help="save a PNG of the loaded window and exit")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")

    def verb(name: str, help_text: str, *, needs_id: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("root", metavar="ROOT", help="a JSONL root directory or a SQLite store file")
        if needs_id:
            p.add_argument("id", metavar="ID", help="session id")
        p.add_argument("--backend", choices=("jsonl", "jsonl-zstd", "jsonl-none", "sqlite"), default=None)
        p.add_argument("--json", action="store_true", help="print the upstream-shaped JSON result")
        return p

    verb("list", "list the session headers of a store", needs_id=False)
    verb("snapshots", "list headers with their opaque revisions", needs_id=False)
    verb("inspect", "read a session with in-memory crash closers (never writes)")
    rf = verb("read-from", "events from SEQ on (no closers, never writes)")
    rf.add_argument("seq", metavar="SEQ", type=int)
    verb("raw", "print the raw JSONL artifact verbatim")
    verb("locate", "where the session's artifact lives")
    verb("load", "load a session, committing crash repair if it needs one")
    rp = verb("repair", "close an interrupted turn / cut a torn tail, after a backup (preview with --dry-run)")
    rp.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    rp.add_argument("--force", action="store_true", help="skip the liveness guard (artifact changed recently)")
    rp.add_argument("--quiet-seconds", type=float, default=10.0, metavar="S",
                    help="refuse when the artifact changed less than S seconds ago (default 10)")
    fk = verb("fork", "create a new session seeded with the log through a completed turn")
    fk.add_argument("--after-turn", type=int, required=True, metavar="N")
    fk.add_argument("--id", dest="new_id", metavar="NEW", help="id of the new session (default: a new uuid4)")
    rs = verb("resume", "commit pending repair, then run the harness resume command in a terminal")
    rs.add_argument("--print", dest="print_only", action="store_true", help="print the command instead of running it")
    rs.add_argument("--force", action="store_true", help="commit a pending repair without the liveness guard")
    rs.add_argument("--template", default=None, help="command template ({id}, {cwd}, {root})")
    verb("verify", "check every session like fsck; exit 0 only when all are ok", needs_id=False)
    return parser


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def _event_line(ev: dict[str, Any]) -> str:
    data = ev.get("data")
    summary = ""
    if isinstance(data, dict):
        bits = [f"{k}={data[k]}" for k in ("turn", "step") if k in data]
        summary = " ".join(bits)
    return f"{ev.get('seq'):>7}  {ev.get('type'):<28} {summary}"


async def run_verb(args: argparse.Namespace) -> tuple[Any, str]:
    """(json result, human text) of one verb."""
    # Read verbs never write: a SQLite store is then opened read-only, so browsing a database
    # another process is writing cannot checkpoint or change it.
    read_only = args.verb in ("list", "snapshots", "inspect", "read-from", "raw", "locate", "verify")
    store: CoordinatedPersistence = open_store(args.root, args.backend, read_only=read_only)
    try:
        if args.verb == "list":
            headers = await store.list()
            result: Any = [h.to_json() for h in headers]
            text = "\n".join(f"{h.id}\t{h.cwd or '-'}\t{h.created_at}" for h in headers) or "(no sessions)"
        elif args.verb == "snapshots":
            snaps = await store.list_snapshots()
            result = [s.to_json() for s in snaps]
            text = "\n".join(f"{s.header.id}\t{s.revision}" for s in snaps) or "(no sessions)"
        elif args.verb in ("inspect", "load"):
            if args.verb == "load":
                before = await store.read_stored_revision(args.id)
            ins = await (store.inspect(args.id) if args.verb == "inspect" else store.load(args.id))
            result = ins.to_json()
            lines = [f"session {ins.meta.id}  ({len(ins.events)} events)"]
            lines += [_event_line(e) for e in result["events"]]
            if args.verb == "load":
                after = await store.read_stored_revision(args.id)
                lines.append("repair committed: the log was changed" if before != after else "no repair was needed")
            text = "\n".join(lines)
        elif args.verb == "read-from":
            rf = await store.read_from(args.id, args.seq)
            result = rf.to_json()
            text = "\n".join(_event_line(e) for e in result["events"]) or "(no events)"
        elif args.verb == "raw":
            raw = await store.read_raw(args.id)
            if raw is None:
                from persistence.errors import not_found

                raise not_found(args.id)
            result = raw.to_json()
            text = raw.content
        elif args.verb == "locate":
            meta = None
            for h in await store.list():
                if h.id == args.id:
                    meta = h
                    break
            if meta is None:
                from persistence.errors import not_found

                raise not_found(args.id)
            loc = store.locate(meta)
            result = None if loc is None else loc.to_json()
            text = "(not locatable)" if loc is None else f"{loc.kind}\t{loc.path}"
        else:
            result, text = await run_action(store, args)
            if args.verb == "verify" and not result["ok"]:
                raise VerifyFailed(result, text)
    finally:
        await store.close()
    return result, text


class VerifyFailed(Exception):
    """verify found a session that is not ok (exit 1, but the report is printed normally)."""

    def __init__(self, result: Any, text: str) -> None:
        super().__init__("not every session is ok")
        self.result = result
        self.text = text


async def run_action(store: CoordinatedPersistence, args: argparse.Namespace) -> tuple[Any, str]:
    from app.actions import fork, repair, resume, verify

    if args.verb == "repair":
        res = await repair.repair_session(store, args.id, force=args.force, dry_run=args.dry_run,
                                          quiet_seconds=args.quiet_seconds)
        p = res.preview
        lines = [f"session {p.session_id}: {p.status} ({p.reason})"]
        if p.cut_bytes:
            lines.append(f"  cut {p.cut_bytes} byte(s) from offset {p.cut_from}; {p.recovered_count} record(s) re-appended")
        if p.cut_rows:
            lines.append(f"  delete {p.cut_rows} damaged row(s) from seq {p.cut_from}; "
                         f"{p.recovered_count} record(s) re-appended")
        for c in p.closers:
            lines.append(f"  append synthetic {c['type']} seq {c['seq']}")
        lines.extend("  " + n for n in res.notes)
        if res.backup:
            lines.append(f"  backup: {res.backup}")
            lines.append(f"  repaired: status now {res.status_after}, {res.events_after} events")
        return res.to_json(), "\n".join(lines)
    if args.verb == "fork":
        out = await fork.fork_after_turn(store, args.id, args.after_turn, args.new_id)
        return out, f"forked {args.id} after turn {out['afterTurn']} -> {out['id']} ({out['events']} events)"
    if args.verb == "resume":
        prev = await repair.preview_repair(store, args.id)
        if prev.status in ("corrupt", "unsupported", "missing"):
            raise repair.RepairRefused(f'cannot resume "{args.id}": {prev.reason}')
        prev_cwd = (await store.inspect(args.id)).meta.cwd
        # Resolve the command (and that a harness and terminal exist) before anything is written.
        root = getattr(store.backend, "root", None) or getattr(store.backend, "path", "")
        cmd = resume.build_command(args.template or resume.DEFAULT_TEMPLATE, session_id=args.id, cwd=prev_cwd,
                                   root=str(root))
        if not args.print_only:
            resume.terminal_argv(cmd)
        backup = None
        if prev.repairable:
            if not args.force:
                raise repair.RepairRefused(
                    f'session "{args.id}" needs repair first ({prev.reason}); run `sessionscope repair` to preview it, '
                    "or pass --force to repair (with a backup) and resume"
                )
            res = await repair.repair_session(store, args.id, force=True)
            backup = res.backup
        # prepare() commits nothing further here (repair already ran) and checks the log is resumable.
        with await store.prepare(args.id):
            pass
        out = {"id": args.id, "command": cmd.argv, "cwd": cmd.cwd, "backup": backup, "launched": False}
        if args.print_only:
            return out, cmd.text
        resume.launch(cmd)
        out["launched"] = True
        return out, f"started in a terminal: {cmd.text}"
    if args.verb == "verify":
        rows, root_error = await verify.verify_root(store)
        ok = root_error is None and all(r.verdict == "ok" for r in rows)
        result = {"ok": ok, "rootError": root_error, "sessions": [r.to_json() for r in rows]}
        lines = [f"{r.verdict:<12} {r.session_id}  {r.reason}" for r in rows]
        if root_error:
            lines.insert(0, f"root error: {root_error}")
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        lines.append(", ".join(f"{v}: {n}" for v, n in sorted(counts.items())) or "no sessions")
        return result, "\n".join(lines)
    raise SystemExit(2)


def _error_json(err: BaseException) -> str:
    return _dump({"error": {"class": upstream_class_of(err), "message": str(err)}})


def launch_gui(args: argparse.Namespace) -> int:
    try:
        from app.gui.launch import run_app  # type: ignore[import-not-found]
    except ImportError:
        build_parser().print_help()
        return 0
    return int(run_app(root=args.root, demo=args.demo, session=args.session, screenshot=args.screenshot))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verb is None:
        return launch_gui(args)
    extra = getattr(sys.modules[__name__], "EXTRA_VERBS", {})
    if args.verb in extra:
        return int(extra[args.verb](args))
    try:
        result, text = asyncio.run(run_verb(args))
    except VerifyFailed as failed:
        sys.stdout.write((_dump(failed.result) if args.json else failed.text) + "\n")
        return 1
    except Exception as err:  # every failure becomes a typed message, never a traceback
        if args.json:
            print(_error_json(err))
        else:
            print(f"sessionscope: {upstream_class_of(err)}: {err}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(_dump(result) + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


__all__ = ["default_root", "js_number", "main"]


if __name__ == "__main__":
    raise SystemExit(main())

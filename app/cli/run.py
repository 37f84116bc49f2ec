"""The ``sessionscope`` command line.

Read-mostly verbs over any store ``open_store`` accepts.  No Qt is imported unless the
window is asked for, so the command line works on machines without a display.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from persistence import CoordinatedPersistence, SessionArgumentError, open_store
from persistence.errors import upstream_class_of
from persistence.model.jsontext import is_number, js_dumps_str, js_number

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
    rp.add_argument("--accept-loss", action="store_true",
                    help="also cut intact records that follow damage (refused by default; they stay in the backup)")
    verb("backups", "list the repair backups of a session and what each holds that the log lacks")
    rt = verb("restore", "put a backup back as the session's log (the current log is backed up first)")
    rt.add_argument("--backup", required=True, metavar="PATH", help="the backup file (see `sessionscope backups`)")
    rt.add_argument("--force", action="store_true", help="skip the liveness guard")
    rt.add_argument("--quiet-seconds", type=float, default=10.0, metavar="S",
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
    # The engine's JS-compatible serializer, not orjson: numbers print as JavaScript does (1e20 is
    # 100000000000000000000), lone surrogates become \udXXX escapes as in our own files, and nesting
    # of any depth works (orjson stops at 255 levels).
    return js_dumps_str(value)


def _brief(value: Any, limit: int = 80) -> str:
    """A scalar as JavaScript would show it; a container only by its size (a summary line never
    serializes a value, which may be nested 100,000 deep)."""
    if type(value) is str:
        text = value
    elif is_number(value):
        text = js_number(value)
    elif isinstance(value, Mapping):
        text = f"{{{len(value)} keys}}"
    elif isinstance(value, Sequence):
        text = f"[{len(value)} items]"
    else:
        text = js_dumps_str(value)  # true, false, null
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _event_line(ev: dict[str, Any]) -> str:
    data = ev.get("data")
    summary = ""
    if isinstance(data, dict):
        bits = [f"{k}={_brief(data[k])}" for k in ("turn", "step") if k in data]
        summary = " ".join(bits)
    return f"{_brief(ev.get('seq')):>7}  {_brief(ev.get('type')):<28} {summary}"


# ---------------------------------------------------------------- argv, output and errors


def _argv_text(value: str, what: str) -> str:
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


def _check_argv(args: argparse.Namespace) -> None:
    for attr, what in (("id", "session id"), ("new_id", "new session id")):
        value = getattr(args, attr, None)
        if isinstance(value, str):
            setattr(args, attr, _argv_text(value, what))


def _json_escape(err: UnicodeError) -> tuple[str, int]:
    """Encode error handler for JSON text: an unencodable character becomes its \\uXXXX escape(s)."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for ch in err.object[err.start : err.end]:
        o = ord(ch)
        if o > 0xFFFF:
            o -= 0x10000
            out.append(f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}")
        else:
            out.append(f"\\u{o:04x}")
    return "".join(out), err.end


codecs.register_error("sessionscope.jsonescape", _json_escape)


def write_out(stream: TextIO, text: str, *, json_text: bool = False) -> None:
    """Write ``text`` so that no character can crash the write.

    A character the stream cannot encode (a lone surrogate from a log, or anything outside a
    narrow locale) is written as an escape: ``\\udXXX`` in text, like the engine's own files; a
    JSON ``\\uXXXX`` escape in JSON, so the output stays valid JSON that decodes to the same data.
    """
    encoding = getattr(stream, "encoding", None) or "utf-8"
    handler = "sessionscope.jsonescape" if json_text else "backslashreplace"
    stream.write(text.encode(encoding, handler).decode(encoding))
    stream.flush()


_LONG_TOKEN = re.compile(r"[^\s\"']{1001,}")


def _elide(message: str) -> str:
    # A 10,000-character id or path is noise in a message: keep both ends of any token longer
    # than 1,000 characters (longer than any real path a user would read).
    return _LONG_TOKEN.sub(lambda m: f"{m[0][:120]}\u2026[{len(m[0]) - 200} characters]\u2026{m[0][-80:]}", message)


def error_payload(err: BaseException) -> dict[str, Any]:
    """The upstream-shaped ``{"error": {"class", "message"}}`` of any failure."""
    message = str(err) or type(err).__name__
    return {"error": {"class": upstream_class_of(err), "message": _elide(message)}}


def report_error(args: argparse.Namespace, err: BaseException) -> int:
    """Print a failure in the typed form (``--json``: on stdout; else one line on stderr); exit code 1."""
    payload = error_payload(err)["error"]
    if getattr(args, "json", False):
        write_out(sys.stdout, _dump({"error": payload}) + "\n", json_text=True)
    else:
        message = " ".join(payload["message"].splitlines())
        write_out(sys.stderr, f"sessionscope: {payload['class']}: {message}\n")
    return 1


async def run_verb(args: argparse.Namespace) -> tuple[Any, str]:
    """(json result, human text) of one verb."""
    # Read verbs never write: a SQLite store is then opened read-only, so browsing a database
    # another process is writing cannot checkpoint or change it.
    read_only = args.verb in ("list", "snapshots", "inspect", "read-from", "raw", "locate", "verify", "backups") or (
        args.verb == "repair" and args.dry_run)
    # No verb creates a store: a missing or non-database file is refused, never turned into one.
    store: CoordinatedPersistence = open_store(args.root, args.backend, read_only=read_only, create=False)
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
    from app.actions import backups, fork, repair, resume, verify

    if args.verb == "repair":
        res = await repair.repair_session(store, args.id, force=args.force, dry_run=args.dry_run,
                                          quiet_seconds=args.quiet_seconds, accept_loss=args.accept_loss)
        p = res.preview
        lines = [f"session {p.session_id}: {p.status} ({p.reason})"]
        if args.dry_run and p.repairable and p.artifact is not None:
            verdict = await repair.assess_session(store, p, quiet_seconds=args.quiet_seconds)
            lines.append(f"  liveness guard: {verdict.reason or 'quiet (no sign of a running agent)'}")
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
    if args.verb == "backups":
        found = await backups.list_backups(store, args.id)
        result = [{"path": b.path, "size": b.size, "records": b.records, "lacking": b.lacking, "problem": b.problem}
                  for b in found]
        lines = [f"{b.path}\t{b.records} records\t" + (f"unreadable: {b.problem}" if b.problem else
                 f"{b.lacking} missing from the log" if b.lacking else "all in the log") for b in found]
        return result, "\n".join(lines) or "(no backups)"
    if args.verb == "restore":
        rr = await backups.restore_backup(store, args.id, args.backup, force=args.force, quiet_seconds=args.quiet_seconds)
        out = {"id": rr.session_id, "restoredFrom": rr.restored_from, "backupOfCurrent": rr.backup_of_current}
        return out, f"restored {rr.session_id} from {rr.restored_from}; the replaced log is backed up at {rr.backup_of_current}"
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
        lost = [] if root_error is not None else await backups.find_lost_records(store)
        ok = root_error is None and all(r.verdict == "ok" for r in rows) and not lost
        result = {"ok": ok, "rootError": root_error, "sessions": [r.to_json() for r in rows]}
        lines = [f"{r.verdict:<12} {r.session_id}  {r.reason}" for r in rows]
        if lost:
            result["lostRecords"] = [{"id": sid, "backup": b.path, "records": b.records, "lacking": b.lacking}
                                     for sid, b in lost]
            lines += [f"{'backup':<12} {sid}  {b.path} holds {b.lacking} record(s) the log lacks: "
                      f"sessionscope restore {args.root} {sid} --backup {b.path}" for sid, b in lost]
        if root_error:
            lines.insert(0, f"root error: {root_error}")
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        lines.append(", ".join(f"{v}: {n}" for v, n in sorted(counts.items())) or "no sessions")
        return result, "\n".join(lines)
    raise SystemExit(2)


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
    code = 0
    try:
        _check_argv(args)  # before any store is opened: a refused id has written nothing
        try:
            result, text = asyncio.run(run_verb(args))
        except VerifyFailed as failed:
            result, text, code = failed.result, failed.text, 1
        # Render fully before printing: a failure here still leaves stdout clean for the error.
        output = _dump(result) + "\n" if args.json else (text if text.endswith("\n") else text + "\n")
    except Exception as err:  # last line of defense: every failure is printed in the typed form
        return report_error(args, err)
    write_out(sys.stdout, output, json_text=args.json)
    return code


__all__ = ["default_root", "error_payload", "js_number", "main", "report_error", "write_out"]


if __name__ == "__main__":
    raise SystemExit(main())

"""Each verb's output: the ``--json`` result (upstream-shaped) and the text a person reads.

A renderer only formats: it never opens a store or reads a file.  Summary lines never serialize a
value (event data may be nested 100,000 deep): containers show only their size.
May import the standard library, ``app.actions``, ``app.cli.results``, ``app.cli.output`` (``write_search``
writes two streams), ``app.search``'s values and the engine's values.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from app.actions.backups import BackupInfo, RestoreResult
from app.actions.fork import ForkResult
from app.actions.liveness import verdict_json
from app.actions.resume import ResumeOutcome
from app.cli.output import write_out
from app.cli.results import Loaded, RepairReport, VerifyReport
from app.glossary import EVENT, plural
from app.search import SearchOutcome
from persistence import (
    ReadFromResult,
    SessionHeader,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionRawArtifact,
    is_number,
    js_dumps_str,
    js_number,
)

# Longest summary of one value on an event line, in characters (longer ones end in an ellipsis).
BRIEF_CHARS = 80


def brief(value: Any, limit: int = BRIEF_CHARS) -> str:
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


def event_line(ev: dict[str, Any]) -> str:
    """``seq  type  turn=N step=M`` of one event."""
    data = ev.get("data")
    summary = ""
    if isinstance(data, dict):
        bits = [f"{k}={brief(data[k])}" for k in ("turn", "step") if k in data]
        summary = " ".join(bits)
    return f"{brief(ev.get('seq')):>7}  {brief(ev.get('type')):<28} {summary}"


def value_json(value: Any) -> Any:
    """The JSON of a value that has ``to_json`` (None stays null)."""
    return None if value is None else value.to_json()


def each_json(values: Sequence[Any]) -> list[Any]:
    return [v.to_json() for v in values]


# ---------------------------------------------------------------- read verbs


def headers_text(headers: Sequence[SessionHeader], _args: argparse.Namespace) -> str:
    return "\n".join(f"{h.id}\t{h.cwd or '-'}\t{h.created_at}" for h in headers) or "(no sessions)"


def snapshots_text(snaps: Sequence[SessionPersistenceSnapshot], _args: argparse.Namespace) -> str:
    return "\n".join(f"{s.header.id}\t{s.revision}" for s in snaps) or "(no sessions)"


def _inspection_lines(ins: SessionInspection) -> list[str]:
    lines = [f"session {ins.meta.id}  ({plural(len(ins.events), EVENT)})"]
    lines += [event_line(e) for e in ins.to_json()["events"]]
    return lines


def inspection_text(ins: SessionInspection, _args: argparse.Namespace) -> str:
    return "\n".join(_inspection_lines(ins))


def loaded_json(loaded: Loaded) -> Any:
    return loaded.inspection.to_json()


def loaded_text(loaded: Loaded, _args: argparse.Namespace) -> str:
    lines = _inspection_lines(loaded.inspection)
    lines.append("repair committed: the log was changed" if loaded.repaired else "no repair was needed")
    return "\n".join(lines)


def read_from_text(rf: ReadFromResult, _args: argparse.Namespace) -> str:
    return "\n".join(event_line(e) for e in rf.to_json()["events"]) or "(no events)"


def raw_text(raw: SessionRawArtifact, _args: argparse.Namespace) -> str:
    return raw.content


def location_text(loc: SessionLocation | None, _args: argparse.Namespace) -> str:
    return "(not locatable)" if loc is None else f"{loc.kind}\t{loc.path}"


# ---------------------------------------------------------------- actions


def repair_json(report: RepairReport) -> Any:
    out = report.result.to_json()
    if report.dry_run:
        # The conversation's view of the change (the preview object and a real run's output keep their shape).
        out["story"] = report.result.preview.story
        out["lostEvents"] = [e.to_json() for e in report.result.preview.lost]
        # The verdict a real run would meet, with every signal that fired (null: nothing would be written).
        out["liveness"] = None if report.liveness is None else verdict_json(report.liveness)
    return out


def repair_text(report: RepairReport, _args: argparse.Namespace) -> str:
    res = report.result
    p = res.preview
    lines = [f"session {p.session_id}: {p.status} ({p.reason})"]
    verdict = report.liveness
    if verdict is not None:
        if verdict.live:
            lines.append(f"  liveness guard: {verdict.reason}")
        else:
            # Quiet is not crashed: say what was seen; running the repair is the user's confirmation.
            idle = f": {verdict.idle}; repairing it confirms that" if verdict.idle else ""
            lines.append(f"  liveness guard: quiet (no sign of a running agent){idle}")
    if p.cut_bytes or p.cut_rows or p.closers:
        # What the repair does to the conversation first (issue 24 item 8), then the bytes or rows.
        lines.append(f"  {p.story}")
        lines.extend(f"    lost: {line}" for line in p.lost_lines)
    if p.cut_bytes:
        lines.append(f"  cut {p.cut_bytes} byte(s) from offset {p.cut_from}; {p.recovered_count} record(s) re-appended")
    if p.cut_rows:
        lines.append(
            f"  delete {plural(p.cut_rows, 'damaged row')} from seq {p.cut_from}; "
            f"{plural(p.recovered_count, 'record')} re-appended"
        )
    for c in p.closers:
        lines.append(f"  append synthetic {c['type']} seq {c['seq']}")
    lines.extend("  " + n for n in res.notes)
    if res.backup:
        lines.append(f"  backup: {res.backup}")
        lines.append(f"  repaired: status now {res.status_after}, {plural(res.events_after or 0, EVENT)}")
    return "\n".join(lines)


def backups_json(found: Sequence[BackupInfo]) -> Any:
    return [{"path": b.path, "size": b.size, "records": b.records, "lacking": b.lacking, "problem": b.problem} for b in found]


def backups_text(found: Sequence[BackupInfo], _args: argparse.Namespace) -> str:
    lines = [
        f"{b.path}\t{b.records} records\t"
        + (f"unreadable: {b.problem}" if b.problem else f"{b.lacking} missing from the log" if b.lacking else "all in the log")
        for b in found
    ]
    return "\n".join(lines) or "(no backups)"


def restore_json(rr: RestoreResult) -> Any:
    return {"id": rr.session_id, "restoredFrom": rr.restored_from, "backupOfCurrent": rr.backup_of_current}


def restore_text(rr: RestoreResult, _args: argparse.Namespace) -> str:
    return f"restored {rr.session_id} from {rr.restored_from}; the replaced log is backed up at {rr.backup_of_current}"


def fork_text(fr: ForkResult, args: argparse.Namespace) -> str:
    out = fr.to_json()
    return f"forked {args.id} after turn {out['afterTurn']} -> {out['id']} ({out['events']} events)"


def resume_text(outcome: ResumeOutcome, _args: argparse.Namespace) -> str:
    cmd = outcome.command
    return f"started in a terminal: {cmd.text}" if outcome.launched else cmd.text


def verify_json(report: VerifyReport) -> Any:
    result: dict[str, Any] = {"ok": report.ok, "rootError": report.root_error, "sessions": [r.to_json() for r in report.rows]}
    if report.lost:
        result["lostRecords"] = [
            {"id": sid, "backup": b.path, "records": b.records, "lacking": b.lacking} for sid, b in report.lost
        ]
    return result


def verify_text(report: VerifyReport, args: argparse.Namespace) -> str:
    lines = [f"{r.verdict:<12} {r.session_id}  {r.reason}" for r in report.rows]
    lines += [
        f"{'backup':<12} {sid}  {b.path} holds {plural(b.lacking, 'record')} the log lacks: "
        f"sessionscope restore {args.root} {sid} --backup {b.path}"
        for sid, b in report.lost
    ]
    if report.root_error:
        lines.insert(0, f"root error: {report.root_error}")
    counts: dict[str, int] = {}
    for r in report.rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    lines.append(", ".join(f"{v}: {n}" for v, n in sorted(counts.items())) or "no sessions")
    return "\n".join(lines)


def search_json(outcome: SearchOutcome) -> Any:
    """``search --json``: the grouped result (with the index's messages), or ``{"error": ...}``."""
    return outcome.value


def search_text(outcome: SearchOutcome, _args: argparse.Namespace) -> str:
    """One hit per line (session id, seq, kind, snippet; tab-separated)."""
    return outcome.text


def write_search(outcome: SearchOutcome, stream: TextIO) -> None:
    """Hits on ``stream``; the index's notes, the count line ("214 hits in 37 sessions") or what was
    wrong with the query on stderr, so ``sessionscope search ... | cut -f1`` sees hits only."""
    if outcome.text:
        write_out(stream, outcome.text)
    if outcome.notes:
        write_out(sys.stderr, outcome.notes)

"""``sessionscope list``: every session of a store as one row, a bad one included.

Why not the engine's ``list()``: it follows upstream, which skips a log whose first line is not a
header and fails the whole root for one damaged header (a decompression bomb, a header naming another
session) or, in SQLite, for one row that fails validation.  The window and ``verify`` show each of
those as one bad row; ``list`` does too, from the same engine listing (``list_entries``), so all three
count the same sessions (issue 21 item 7).  A good row prints as before (the header); a bad row has a
``status`` (corrupt, unsupported, unreadable) and a ``reason``.  The exit code is ``verify``'s
policy: 0 only when every row is good, the rows printed either way.  What the spec makes a root-level
error (a flat file, mixed encodings, one id in two folders) is still the engine's error for the root,
as ``verify`` reports it.

May import the engine (public names only).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from persistence import CoordinatedPersistence, ListedEntry, SessionHeader, SessionPersistenceError, decode_segment

# Listed entries that make the engine refuse the whole root (upstream's layout errors).
_ROOT_LEVEL = (ListedEntry.FLAT_FILE,)


@dataclass(frozen=True, slots=True)
class ListRow:
    """One session: its header (a good row) or why it cannot be listed (a bad row)."""

    session_id: str
    header: SessionHeader | None
    status: str | None = None  # a bad row: corrupt | unsupported | unreadable
    reason: str | None = None
    path: str | None = None  # JSONL: the transcript or the entry at fault
    revision: str | None = None  # a good row: the revision the listing saw (what the diagnosis cache is keyed by)

    @property
    def ok(self) -> bool:
        return self.header is not None

    def to_json(self) -> dict[str, Any]:
        if self.header is not None:
            return self.header.to_json()  # upstream's header shape, as ``list`` always printed it
        return {"id": self.session_id, "status": self.status, "reason": self.reason, "path": self.path}


@dataclass(frozen=True, slots=True)
class ListReport:
    """Every row of ``list`` in the store's list order."""

    rows: list[ListRow]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)


def _bad(entry: ListedEntry, reason: str | None = None, status: str | None = None, *, by_folder: bool = False) -> ListRow:
    """The bad row of ``entry`` (``by_folder``: named by the id its folder encodes, not its header's)."""
    sid = entry.session_id
    if by_folder and entry.folder_name:
        sid = decode_segment(entry.folder_name) or entry.folder_name
    return ListRow(sid, None, status or entry.status or "corrupt", reason or entry.problem or entry.kind, entry.path)


def _identity_problem(store: CoordinatedPersistence, entry: ListedEntry, meta: dict[str, Any]) -> str | None:
    """Why a JSONL transcript's header does not belong where it lies (another id or cwd), else None."""
    if entry.path is None:
        return None
    try:
        loc = store.locate(meta)
    except (SessionPersistenceError, TypeError, ValueError) as err:
        return f"the header cannot name a storage path: {err}"
    if loc is None or loc.path == entry.path:
        return None
    return f'corrupt session log "{entry.path}": header id "{meta.get("id")}" and cwd identify "{loc.path}"'


async def list_rows(store: CoordinatedPersistence) -> ListReport:
    """Every session and bad entry of ``store`` as one row (the engine's lenient listing)."""
    entries = await store.list_entries()
    jsonl = store.kind == "jsonl"
    seen: dict[str, str | None] = {}
    refused = False  # an entry that makes the engine refuse the whole root
    rows: list[ListRow] = []
    for e in entries:
        if e.kind in _ROOT_LEVEL:
            refused = True
            rows.append(_bad(e))
            continue
        if jsonl and e.compression is not None and e.compression != store.compression:
            refused = True
            mixed = f"a {e.compression} transcript in a root of {store.compression} logs (mixed encodings)"
            rows.append(_bad(e, mixed, "unsupported"))
            continue
        header = SessionHeader.from_listing(e.meta) if e.kind == ListedEntry.SESSION and e.meta is not None else None
        if header is None:
            rows.append(_bad(e))
            continue
        problem = _identity_problem(store, e, e.meta) if jsonl and e.meta is not None else None
        if problem is not None:
            rows.append(_bad(e, problem, "corrupt", by_folder=True))
            continue
        if header.id in seen:
            refused = True
            rows.append(_bad(e, f'session id "{header.id}" is also listed at {seen[header.id]}', "unsupported"))
            continue
        seen[header.id] = e.path
        rows.append(ListRow(header.id, header, path=e.path, revision=e.revision))
    if refused:
        await store.list()  # the engine's own error for the root, as verify reports it
    return ListReport(rows)


def report_json(report: ListReport) -> list[dict[str, Any]]:
    return [r.to_json() for r in report.rows]


def report_text(report: ListReport, _args: argparse.Namespace) -> str:
    lines = []
    for r in report.rows:
        if r.header is not None:
            lines.append(f"{r.header.id}\t{r.header.cwd or '-'}\t{r.header.created_at}")
        else:
            lines.append(f"{r.session_id}\t({r.status}: {r.reason})")
    return "\n".join(lines) or "(no sessions)"

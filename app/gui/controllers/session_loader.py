"""Opens the selected session into the timeline and raw models, and follows its appends.

One job at a time: selecting another session cancels the running load (engine calls and worker
threads alike).  The first view comes from the tail (newest blocks derived first); the rest of the
timeline is indexed in the background afterwards.  When the artifact grows, only the new events are
read (``read_from``), only the last block is re-derived and merged, and only the new bytes are decoded.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.gui.engine import EngineGate
from app.gui.gcpolicy import settle
from app.gui.jobs import Jobs
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.timeline import TimelineModel
from app.gui.rawtext import RawText, decode_jsonl, decode_records, read_file_from
from app.gui.rows import READABLE, SessionRow
from app.gui.workers import Progress, checkpoint, in_thread
from persistence import SessionDiagnosis, SessionPersistenceError
from persistence.model.repair import interrupted_turn_closers
from persistence.timeline import TimelineNode, block_spans, derive, tail_first_span

log = logging.getLogger(__name__)
PREVIEW_EVENTS = 3000  # events of the tail shown before the whole log is read
PREVIEW_PAINT_S = 0.04


@dataclass(slots=True)
class OpenSession:
    row: SessionRow
    diagnosis: SessionDiagnosis | None = None
    stored_count: int = 0
    timeline_error: str | None = None
    raw_error: str | None = None
    size: int | None = None
    dev_ino: str | None = None
    loaded: bool = False
    previewed: bool = False  # the timeline first showed a tail read

    @property
    def key(self) -> str:
        return self.row.key


# ---------------------------------------------------------------- worker-thread functions


def split_stored(records: Sequence[dict[str, Any]], hint: int) -> int:
    """How many of ``inspect``'s events are stored (the rest are its in-memory crash closers).

    ``hint`` is the closer count ``diagnose`` reported; it is checked, because the log may have
    changed between the two calls.
    """
    n = len(records)
    for k in dict.fromkeys((hint, 0, *range(1, 64))):
        if k > n:
            continue
        if interrupted_turn_closers(list(records[: n - k])) == list(records[n - k :]):
            return n - k
    return n


def derive_tail(records: Sequence[dict[str, Any]], stored: int) -> tuple[list[tuple[int, int]], int, list[TimelineNode]]:
    spans = block_spans(records)
    if not spans:
        return [], 0, []
    first = tail_first_span(spans)
    nodes = derive(records, spans[first][0], len(records), stored_count=stored)
    if len(nodes) != len(spans) - first:  # one node per block is an invariant of the fold; stay safe anyway
        log.warning("timeline fold gave %d nodes for %d blocks", len(nodes), len(spans) - first)
        nodes = derive(records, 0, len(records), stored_count=stored)
        return [(0, len(records))] * len(nodes), 0, nodes
    return spans, first, nodes


def preview_records(tail: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int] | None:
    """A tail cut to start at a ``turn/start`` (so no block is folded from its middle), plus crash closers."""
    start = next((i for i, r in enumerate(tail) if r.get("type") == "turn/start"), None)
    if start is None:
        return None
    stored = list(tail[start:])
    return stored + interrupted_turn_closers(stored), len(stored)


def load_artifact_text(path: str, compression: str, progress: Progress) -> tuple[RawText, int, str]:
    st = os.stat(path)
    with open(path, "rb") as f:
        data = f.read()
    text = decode_jsonl(data, compression, cancel=progress.cancel,
                        progress=lambda x: progress.set(x, "Decoding raw artifact …"))
    return text, len(data), f"{st.st_dev}:{st.st_ino}"


# ---------------------------------------------------------------- the loader


class SessionLoader(QObject):
    opened = Signal(object)  # OpenSession, once the diagnosis is known
    timeline_ready = Signal(str)
    timeline_replacing = Signal(str)  # a previewed tail is about to give way to the full timeline
    raw_ready = Signal(str)
    loaded = Signal(str)  # key: first view complete (timeline tail + raw text)
    indexed = Signal(str)  # key: background full index complete
    grew = Signal(str)
    stopped_early = Signal(str)  # key: the load was cancelled while only the tail preview was shown
    progress_started = Signal(object)
    progress_finished = Signal(object)

    def __init__(self, jobs: Jobs, timeline: TimelineModel, raw: RawLinesModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.timeline = timeline
        self.raw = raw
        self.store: EngineGate | None = None
        self.is_jsonl = True
        self.current: OpenSession | None = None
        self._follow_again = False

    # ------------------------------------------------------------ control

    def open(self, row: SessionRow) -> asyncio.Task[Any]:
        self.jobs.cancel("follow")
        return self.jobs.spawn(self._open(row), name=f"open {row.session_id}", key="session")

    def close(self) -> None:
        self.jobs.cancel("session")
        self.jobs.cancel("follow")
        self.current = None
        self.timeline.clear()
        self.raw.clear()

    def cancel(self) -> None:
        self.jobs.cancel("session")

    def follow(self, row: SessionRow) -> None:
        """The open session's artifact changed: bring the views up to date."""
        cur = self.current
        if cur is None or cur.key != row.key:
            return
        cur.row = row
        if not cur.loaded or self.jobs.running("session"):
            return  # the running load reads the newest state anyway; a later change will follow
        if self.jobs.running("follow"):
            self._follow_again = True
            return
        self.jobs.spawn(self._follow(), name="follow", key="follow")

    # ------------------------------------------------------------ opening

    async def _open(self, row: SessionRow) -> None:
        store = self.store
        if store is None:
            return
        cur = OpenSession(row)
        self.current = cur
        self.timeline.clear()
        self.raw.clear()
        progress = Progress(f"Opening {row.session_id} …")
        self.progress_started.emit(progress)
        try:
            await self._open_with(store, cur, progress)
        except asyncio.CancelledError:
            progress.cancel.set()
            if cur.previewed and not cur.loaded:
                self.stopped_early.emit(cur.key)
            raise
        finally:
            self.progress_finished.emit(progress)

    async def _open_with(self, store: EngineGate, cur: OpenSession, progress: Progress) -> None:
        row = cur.row
        records: list[dict[str, Any]] = []
        if row.problem_status is None and row.meta is not None:
            await self._preview_tail(store, cur, progress)
            progress.set(None, "Diagnosing …")
            cur.diagnosis = await store.diagnose(row.session_id)
        self.opened.emit(cur)
        raw_task = asyncio.ensure_future(self._load_raw(cur, progress, store))
        try:
            spans: list[tuple[int, int]] = []
            first = 0
            if cur.diagnosis is not None and cur.diagnosis.status in READABLE:
                progress.set(None, "Reading events …")
                try:
                    ins = await store.inspect(row.session_id)
                except SessionPersistenceError as err:
                    cur.timeline_error = str(err)
                    self.timeline.clear()
                else:
                    records = ins.events.records()  # the engine's list: read-only here, never copied
                    progress.set(None, "Indexing the newest turns …")
                    stored = await in_thread(split_stored, records, len(cur.diagnosis.closers), cancel=progress.cancel)
                    cur.stored_count = stored
                    spans, first, tail = await in_thread(derive_tail, records, stored, cancel=progress.cancel)
                    if cur.previewed:
                        self.timeline_replacing.emit(row.key)
                    self.timeline.load(records, stored, spans, tail, first)
            else:
                cur.timeline_error = cur.diagnosis.reason if cur.diagnosis is not None else row.reason
                self.timeline.clear()  # a preview of the tail is no view of a log the engine refuses
            self.timeline_ready.emit(row.key)
            await raw_task
        finally:
            if not raw_task.done():
                raw_task.cancel()
        settle()
        cur.loaded = True
        self.loaded.emit(row.key)
        if first > 0:
            end = spans[first][0]
            step = checkpoint(progress, end, "Indexing older turns …")
            nodes = await in_thread(lambda: derive(records, 0, end, checkpoint=step), cancel=progress.cancel)
            self.timeline.set_full_index(nodes, first)
            settle()
        self.indexed.emit(row.key)

    async def _preview_tail(self, store: EngineGate, cur: OpenSession, progress: Progress) -> None:
        """Show the newest turns from a tail read before the whole log is parsed (a huge log's first view).

        Only worth it when the log is longer than the tail: a short log is shown by the full read at once.
        The preview is replaced by the full read's timeline (or cleared, if the engine refuses the log).
        """
        progress.set(None, "Reading the newest events …")
        try:
            rf = await store.read_tail(cur.row.session_id, PREVIEW_EVENTS)
        except SessionPersistenceError:
            return
        tail = rf.events.records()
        if not tail or tail[0].get("seq") == 0 or self.current is not cur:
            return
        view = await in_thread(preview_records, tail, cancel=progress.cancel)
        if view is None or self.current is not cur:
            return
        records, stored = view
        spans, first, nodes = await in_thread(derive_tail, records, stored, cancel=progress.cancel)
        if self.current is not cur:
            return
        self.timeline.load(records, stored, spans, nodes, first)
        cur.previewed = True
        self.timeline_ready.emit(cur.key)
        # Let the preview paint before the whole-log parse starts competing with it for the GIL.
        await asyncio.sleep(PREVIEW_PAINT_S)

    async def _load_raw(self, cur: OpenSession, progress: Progress, store: EngineGate) -> None:
        row = cur.row
        try:
            if self.is_jsonl and row.path and row.compression:
                text, size, dev_ino = await in_thread(load_artifact_text, row.path, row.compression, progress,
                                                      cancel=progress.cancel)
                cur.size, cur.dev_ino = size, dev_ino
            elif cur.diagnosis is not None and cur.diagnosis.status in READABLE:
                ins = await store.inspect(row.session_id)
                records = list(ins.events.records())
                n_stored = len(records) - len(cur.diagnosis.closers)
                text = await in_thread(decode_records, records[:n_stored], progress.cancel, cancel=progress.cancel)
            else:
                text = RawText()
                text.add_marker(f"no raw text: {row.reason}")
        except (OSError, SessionPersistenceError) as err:
            cur.raw_error = str(err)
            text = RawText()
            text.add_marker(f"cannot read the artifact: {err}")
        self.raw.set_text(text)
        self.raw_ready.emit(row.key)

    # ------------------------------------------------------------ following appends

    async def _follow(self) -> None:
        while True:
            self._follow_again = False
            cur = self.current
            store = self.store
            if cur is None or store is None:
                return
            if not await self._grow(cur, store):
                # Not a plain append (rewritten, truncated, repaired): reopen, the views reload.
                self.jobs.spawn(self._open(cur.row), name=f"reopen {cur.row.session_id}", key="session")
                return
            self.grew.emit(cur.key)
            if not self._follow_again:
                return

    async def _grow(self, cur: OpenSession, store: EngineGate) -> bool:
        row = cur.row
        if self.is_jsonl:
            if row.path is None or row.compression is None or cur.size is None:
                return False
            try:
                st = await in_thread(os.stat, row.path)
            except OSError:
                return False
            if f"{st.st_dev}:{st.st_ino}" != cur.dev_ino or st.st_size < cur.size:
                return False
            if st.st_size == cur.size:
                return True
        timeline_ok = cur.diagnosis is not None and cur.diagnosis.status in READABLE and cur.timeline_error is None
        if timeline_ok:
            try:
                rf = await store.read_from(row.session_id, cur.stored_count)
            except SessionPersistenceError:
                return False
            new = rf.events.records()
            if new and new[0].get("seq") != cur.stored_count:
                return False
            if new:
                stored = list(self.timeline.records[: cur.stored_count]) + list(new)
                closers = await in_thread(interrupted_turn_closers, stored)
                records = stored + closers
                old_spans = self.timeline.spans
                from_span = max(0, len(old_spans) - 1)
                start = old_spans[from_span][0] if old_spans else 0
                spans = old_spans[:from_span] + await in_thread(block_spans, records, start)
                nodes = await in_thread(lambda: derive(records, start, len(records), stored_count=len(stored)))
                if self.current is not cur:
                    return True
                cur.stored_count = len(stored)
                self.timeline.merge_tail(records, len(stored), spans, from_span, nodes)
                settle()
                if not self.is_jsonl:
                    self.raw.apply_growth(await in_thread(decode_records, list(new)))
        elif cur.diagnosis is None or cur.diagnosis.status not in READABLE:
            return False
        if self.is_jsonl and row.path and row.compression:
            consumed = self.raw.text.consumed
            data = await in_thread(read_file_from, row.path, consumed)
            delta = await in_thread(lambda: decode_jsonl(data, row.compression or "none", offset=consumed))
            if self.current is not cur:
                return True
            self.raw.apply_growth(delta)
            cur.size = consumed + len(data)
        return True

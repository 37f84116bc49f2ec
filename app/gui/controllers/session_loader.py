"""Opens the selected session into the timeline and raw models, and follows its appends.

One job at a time: selecting another session cancels the running load (engine calls and worker
threads alike).  The first view comes from the tail (newest blocks derived first); the rest of the
timeline is indexed in the background afterwards.  When the artifact grows, only the new events are
read (``read_from``), only the last block is re-derived and merged, and only the new bytes are decoded.

The window hands ``open`` the row and the ``OpenRoot`` it belongs to; the loader hands back one
``OpenSession`` (``opened``) once the diagnosis is known: the window reads what it shows about the
session from that value, never from the loader's fields.

May import: PySide6 (QObject and signals only), the models, ``runtime``, ``controllers.open_root``,
``app.timeline`` and the public ``persistence`` package; never a widget.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.gui.controllers.open_root import OpenRoot
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.raw_text import RawText, decode_jsonl, decode_records
from app.gui.models.session_row import READABLE, SessionRow
from app.gui.models.timeline import TimelineModel
from app.gui.runtime.collector import settle
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import ViewerStore
from app.gui.runtime.worker_threads import Progress, checkpoint, in_thread
from app.timeline import derive_growth, derive_older, derive_tail
from app.timeline.walk import walk, walk_items
from persistence import EventTable, SessionDiagnosis, SessionPersistenceError, SessionView, interrupted_turn_closers

log = logging.getLogger(__name__)
PREVIEW_EVENTS = 3000  # events of the tail shown before the whole log is read
PREVIEW_PAINT_S = 0.04


@dataclass(slots=True)
class OpenSession:
    """The session being shown: its row, its root, what the engine said of it, and how far loading got.

    The loader owns and updates it (a follow replaces ``row``, a load fills in the rest); the window
    only reads it.
    """

    row: SessionRow
    root: OpenRoot
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

    @property
    def store(self) -> ViewerStore:
        return self.root.store

    @property
    def is_jsonl(self) -> bool:
        return self.root.is_jsonl


# ---------------------------------------------------------------- worker-thread functions


def preview_records(tail: Sequence[dict[str, Any]]) -> tuple[Sequence[dict[str, Any]], int] | None:
    """A tail cut to start at a ``turn/start`` (so no block is folded from its middle), plus crash closers."""
    start = next((i for i, r in walk(tail) if type(r) is dict and r.get("type") == "turn/start"), None)
    if start is None:
        return None
    stored = EventTable(walk_items(tail, len(tail), start))
    return stored + interrupted_turn_closers(stored), len(stored)


def read_file_from(path: str, offset: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read()


def load_artifact_text(path: str, compression: str, progress: Progress) -> tuple[RawText, int, str]:
    """Read and decode a transcript the engine did not read for us (a bad row's file, the other encoding)."""
    st = os.stat(path)
    with open(path, "rb") as f:
        data = f.read()
    return decode_raw_text(data, compression, progress), len(data), f"{st.st_dev}:{st.st_ino}"


def decode_raw_text(data: bytes, compression: str, progress: Progress) -> RawText:
    return decode_jsonl(data, compression, cancel=progress.cancel, progress=lambda x: progress.set(x, "Decoding raw artifact …"))


def dev_ino_of(revision: str) -> str:
    """``device:inode`` of a transcript revision (``device:inode:size:mtime:ctime``)."""
    return ":".join(revision.split(":")[:2])


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
        self.current: OpenSession | None = None
        self._follow_again = False

    # ------------------------------------------------------------ control

    def open(self, row: SessionRow, root: OpenRoot) -> asyncio.Task[Any]:
        self.jobs.cancel("follow")
        return self.jobs.spawn(self._open(row, root), name=f"open {row.session_id}", key="session")

    def reopen(self, row: SessionRow) -> asyncio.Task[Any] | None:
        """Load the open session again (after our own write); None when ``row`` is not the open one."""
        cur = self.current
        if cur is None or cur.key != row.key:
            return None
        return self.open(row, cur.root)

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

    async def _open(self, row: SessionRow, root: OpenRoot) -> None:
        store = root.store
        cur = OpenSession(row, root)
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

    async def _open_with(self, store: ViewerStore, cur: OpenSession, progress: Progress) -> None:
        row = cur.row
        records: Sequence[dict[str, Any]] = []
        view: SessionView | None = None
        if row.problem_status is None and row.meta is not None:
            await self._preview_tail(store, cur, progress)
            progress.set(None, "Diagnosing …")
            # One read of the log: the verdict, the stored events, the closers and (JSONL) the bytes it parsed.
            view = await store.view(row.session_id, raw=cur.is_jsonl)
            cur.diagnosis = view.diagnosis
        self.opened.emit(cur)
        raw_task = asyncio.ensure_future(self._load_raw(cur, progress, view))
        try:
            spans: list[tuple[int, int]] = []
            first = 0
            if view is not None and view.status in READABLE:
                records = view.events.record_table()  # the engine's table: read-only here, never copied
                stored = cur.stored_count = view.closer_start  # the engine says where its closers start
                progress.set(None, "Indexing the newest turns …")
                spans, first, tail = await in_thread(derive_tail, records, stored, cancel=progress.cancel)
                # The timeline goes in once the raw text is in: a decode still running competes with this
                # GUI-thread work for the GIL and doubles it (200k events: a 38 ms stall instead of 18 ms).
                await asyncio.wait([raw_task])
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
            step = checkpoint(progress, spans[first][0], "Indexing older turns …")
            nodes = await in_thread(lambda: derive_older(records, spans, first, checkpoint=step), cancel=progress.cancel)
            self.timeline.set_full_index(nodes, first)
            settle()
        self.indexed.emit(row.key)

    async def _preview_tail(self, store: ViewerStore, cur: OpenSession, progress: Progress) -> None:
        """Show the newest turns from a tail read before the whole log is parsed (a huge log's first view).

        Only worth it when the log is longer than the tail: a short log is shown by the full read at once.
        The preview is replaced by the full read's timeline (or cleared, if the engine refuses the log).
        """
        progress.set(None, "Reading the newest events …")
        try:
            rf = await store.read_tail(cur.row.session_id, PREVIEW_EVENTS)
        except SessionPersistenceError:
            return
        tail = rf.events.record_table()
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

    async def _load_raw(self, cur: OpenSession, progress: Progress, view: SessionView | None) -> None:
        """The raw tab's text: the bytes ``view`` parsed when they are this row's file, else the file itself.

        A log the engine refuses (or a bad row) is read here by path, so the tab still shows every byte
        that decodes; a SQLite session's stored rows become JSON lines rendered when shown.
        """
        row = cur.row
        raw = view.raw if view is not None else None
        try:
            if (
                cur.is_jsonl
                and raw is not None
                and raw.offset == 0
                and raw.path == row.path
                and raw.compression == row.compression
            ):
                text = await in_thread(decode_raw_text, raw.data, raw.compression, progress, cancel=progress.cancel)
                cur.size, cur.dev_ino = raw.end, dev_ino_of(raw.revision)
            elif cur.is_jsonl and row.path and row.compression:
                text, size, dev_ino = await in_thread(
                    load_artifact_text, row.path, row.compression, progress, cancel=progress.cancel
                )
                cur.size, cur.dev_ino = size, dev_ino
            elif view is not None and view.status in READABLE:
                # O(1): rows are rendered when shown (rendering all 202k up front took 2.6 s and ~1 GB).
                text = decode_records(view.stored)
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
            if cur is None:
                return
            if not await self._grow(cur, cur.store):
                # Not a plain append (rewritten, truncated, repaired): reopen, the views reload.
                self.jobs.spawn(self._open(cur.row, cur.root), name=f"reopen {cur.row.session_id}", key="session")
                return
            self.grew.emit(cur.key)
            if not self._follow_again:
                return

    async def _grow(self, cur: OpenSession, store: ViewerStore) -> bool:
        row = cur.row
        if cur.is_jsonl:
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
            new = rf.events.record_table()
            if new and new[0].get("seq") != cur.stored_count:
                return False
            if new:
                stored = EventTable(walk_items(self.timeline.records, cur.stored_count)) + new
                closers = await in_thread(interrupted_turn_closers, stored)
                records = stored + closers
                growth = await in_thread(derive_growth, records, len(stored), self.timeline.spans)
                if self.current is not cur:
                    return True
                cur.stored_count = len(stored)
                self.timeline.merge_tail(records, len(stored), growth.spans, growth.from_span, growth.nodes)
                settle()
                if not cur.is_jsonl:
                    self.raw.apply_growth(decode_records(new))  # rendered when shown, like the rest
        elif cur.diagnosis is None or cur.diagnosis.status not in READABLE:
            return False
        if cur.is_jsonl and row.path and row.compression:
            consumed = self.raw.text.consumed
            data = await in_thread(read_file_from, row.path, consumed)
            delta = await in_thread(lambda: decode_jsonl(data, row.compression or "none", offset=consumed))
            if self.current is not cur:
                return True
            self.raw.apply_growth(delta)
            cur.size = consumed + len(data)
        return True

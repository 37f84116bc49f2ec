"""Opens the selected session into the timeline and raw models, and follows its appends.

One job at a time: selecting another session cancels the running load (engine calls and worker
threads alike).  The first view comes from the tail (newest blocks derived first); the rest of the
timeline is indexed in the background afterwards.  When the artifact grows, only the new events are
read (``read_from``), only the last block is re-derived and merged, and only the new bytes are decoded.

The window hands ``open`` the row and the ``OpenRoot`` it belongs to; the loader hands back one
``OpenSession`` (``opened``) once the diagnosis is known: the window reads what it shows about the
session from that value, never from the loader's fields.

One revision for every view (issue 16, bugs 1 and 2).  A refresh is one engine ``view`` of the log
(verdict, stored events, closers and, for JSONL, the very bytes it parsed), and the timeline and raw
models are brought to exactly that read before a ``SessionSnapshot`` of it is emitted
(``snapshot_ready``); the window renders the list row, banners, Header tab and raw count from that
value only.  The models still change incrementally (only the new events are folded and merged,
only the new bytes decoded), but the verdict is never older or newer than what they show: an
append that makes the log corrupt reloads the views as the corrupt log (its decodable prefix and a
"Stopped here" row), instead of merging events the engine refuses.  Re-reading a huge log on every
append costs a whole parse (about 0.5 s at 200k events), so follows are paced to at most
``FOLLOW_DUTY`` of the wall time.

A live turn (issue 16, bug 3): an open turn whose log changed within the liveness guard's quiet
period (``app.actions.liveness.writer_active``) is being written, so the timeline shows it as open
without the would-be closers unless ``show_closers`` asks for them; ``reevaluate`` (the window calls
it when the quiet period has passed, or when the toggle changes) re-judges it without a read.

May import: PySide6 (QObject and signals only), the models, ``runtime``, ``controllers.open_root``,
``app.timeline`` and the public ``persistence`` package; never a widget.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.actions.artifacts import ArtifactRef
from app.actions.liveness import DEFAULT_QUIET_SECONDS, RecentlyWritten, writer_active
from app.glossary import plural
from app.gui.controllers.open_root import OpenRoot
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.session_row import READABLE, SessionRow
from app.gui.models.session_snapshot import RawFacts, SessionSnapshot
from app.gui.models.timeline import TimelineModel
from app.gui.runtime.collector import settle
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import ViewerStore
from app.gui.runtime.worker_threads import Progress, checkpoint, in_thread
from app.rawview.raw_text import RawText, decode_jsonl, decode_records
from app.records import latest_title, walk, walk_items
from app.timeline import derive_growth, derive_older, derive_tail
from app.timeline.damaged import damaged_timeline_of_file, damaged_timeline_of_prefix
from persistence import EventTable, EventType, SessionDiagnosis, SessionPersistenceError, SessionView, interrupted_turn_closers

log = logging.getLogger(__name__)
PREVIEW_EVENTS = 3000  # events of the tail shown before the whole log is read
PREVIEW_PAINT_S = 0.04
# A follow re-reads the whole log (one revision for every view); after a read that took T seconds the
# next one waits T * (1/FOLLOW_DUTY - 1), so a log appended to without pause costs at most a third of
# the time (a 200k-event log: ~0.5 s read, then ~1 s of rest).  Small logs read in ms: no visible delay.
FOLLOW_DUTY = 1 / 3
DAMAGED_PREFIX_STATUSES = ("corrupt", "unsupported", "unreadable")  # refused logs whose timeline is their readable prefix


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
    prefix_title: str | None = None  # a refused log's title, from the readable part its timeline shows
    raw_error: str | None = None
    size: int | None = None
    dev_ino: str | None = None
    loaded: bool = False
    previewed: bool = False  # the timeline first showed a tail read
    snapshot: SessionSnapshot | None = None  # what every view shows: the newest read the models hold
    records: Sequence[dict[str, Any]] | None = None  # that read's events, closers included
    stored_records: Sequence[dict[str, Any]] | None = None  # the same without the closers

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
    start = next((i for i, r in walk(tail) if type(r) is dict and r.get("type") == EventType.TURN_START), None)
    if start is None:
        return None
    stored = EventTable(walk_items(tail, len(tail), start))
    return stored + interrupted_turn_closers(stored), len(stored)


def load_artifact_text(path: str, compression: str, progress: Progress) -> tuple[RawText, int, str]:
    """Read and decode a transcript the engine did not read for us (a bad row's file, the other encoding)."""
    st = os.stat(path)
    with open(path, "rb") as f:
        data = f.read()
    return decode_raw_text(data, compression, progress), len(data), f"{st.st_dev}:{st.st_ino}"


def decode_raw_text(data: bytes, compression: str, progress: Progress) -> RawText:
    return decode_jsonl(data, compression, cancel=progress.cancel, progress=lambda x: progress.set(x, "Decoding raw artifact …"))


def shown_diagnosis(root: OpenRoot, d: SessionDiagnosis) -> SessionDiagnosis:
    """``d`` citing a received file as the user knows it (``case.zip: session/…``), not our extraction of it:
    the banner, the timeline's note and the list row all take their reason from here."""
    reason = root.shown(d.reason) if root.shown_paths else d.reason
    return d if reason == d.reason else replace(d, reason=reason)


def dev_ino_of(revision: str) -> str:
    """``device:inode`` of a transcript revision (``device:inode:size:mtime:ctime``)."""
    return ":".join(revision.split(":")[:2])


def title_of(records: Sequence[dict[str, Any]]) -> str | None:
    """The session's newest title (what the background pass computes for the list row)."""
    return latest_title(records)


# ---------------------------------------------------------------- the loader


class SessionLoader(QObject):
    opened = Signal(object)  # OpenSession, once the diagnosis is known
    snapshot_ready = Signal(object)  # SessionSnapshot: the timeline and raw models now hold this very read
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
        self._judge_after = False  # a re-judgement asked for while a follow ran: done when it ends
        self._changed_while_loading = False
        # The liveness guard's quiet period (the window passes its setting): "live" uses the same one.
        self.quiet_seconds: Callable[[], float] = lambda: DEFAULT_QUIET_SECONDS
        self._show_closers = False
        # The open source is a received one (a bundle's private extraction, a lone transcript): nothing can
        # be writing into it, so a recent mtime is never a writer at work (the window sets it per source).
        self.received = False

    # ------------------------------------------------------------ the would-be closers of a live turn

    @property
    def show_closers(self) -> bool:
        """Show the synthetic closers of a live turn too (a crashed turn always shows them)."""
        return self._show_closers

    def set_show_closers(self, on: bool) -> None:
        if on != self._show_closers:
            self._show_closers = on
            self.reevaluate()

    def reevaluate(self) -> None:
        """Judge "live" again without reading the log (the quiet period passed, or the toggle changed)."""
        cur = self.current
        if cur is None or not cur.loaded or cur.snapshot is None or self.jobs.running("session"):
            return
        if self.jobs.running("follow"):
            # The running follow may have judged liveness (and read the toggle) already: judge again once
            # it ends, on its snapshot.
            self._judge_after = True
            return
        self.jobs.spawn(self._judge(cur), name="reevaluate", key="follow")

    # ------------------------------------------------------------ control

    def open(self, row: SessionRow, root: OpenRoot) -> asyncio.Task[Any]:
        self.jobs.cancel("follow")
        self._judge_after = False  # the new load judges its own snapshot
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
            self._changed_while_loading = True  # followed once the load is done (it may have read before)
            return
        if self.jobs.running("follow"):
            self._follow_again = True
            return
        self.jobs.spawn(self._follow(), name="follow", key="follow")

    # ------------------------------------------------------------ opening

    async def _open(self, row: SessionRow, root: OpenRoot) -> None:
        store = root.store
        cur = OpenSession(row, root)
        self.current = cur
        self._changed_while_loading = False
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
        live: RecentlyWritten | None = None
        if row.problem_status is None and row.meta is not None:
            await self._preview_tail(store, cur, progress)
            progress.set(None, "Diagnosing …")
            # One read of the log: the verdict, the stored events, the closers and (JSONL) the bytes it parsed.
            view = await store.view(row.session_id, raw=cur.is_jsonl)
            cur.diagnosis = shown_diagnosis(cur.root, view.diagnosis)
            live = await self._writer_active(cur, view.status)
        self.opened.emit(cur)
        raw_task = asyncio.ensure_future(self._load_raw(cur, progress, view))
        try:
            spans: list[tuple[int, int]] = []
            first = 0
            if view is not None and view.status in READABLE:
                cur.records = view.events.record_table()  # the engine's table: read-only here, never copied
                cur.stored_records = view.stored.record_table()
                # A live turn is shown as it is on disk; its would-be closers only on request.
                records = cur.records if live is None or self._show_closers else cur.stored_records
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
                status = cur.diagnosis.status if cur.diagnosis is not None else row.status
                if status in DAMAGED_PREFIX_STATUSES:
                    # Issue 16: the decodable part up to the damage, ending in a "Stopped here" row
                    # (JSONL: decoded from the artifact's bytes; SQLite: the engine's lenient row read).
                    reason = cur.timeline_error or ""
                    part = None
                    try:
                        if cur.is_jsonl and row.path and row.compression:
                            part = await in_thread(damaged_timeline_of_file, row.path, row.compression, reason, progress.cancel)
                        elif not cur.is_jsonl:
                            prefix = await store.readable_prefix(row.session_id)
                            if prefix is not None:
                                part = await in_thread(damaged_timeline_of_prefix, prefix, reason)
                    except asyncio.CancelledError:
                        raise
                    except Exception:  # a best-effort view of a refused log must not fail the open
                        # The engine refused this log; folding whatever decodes may meet shapes nothing
                        # validated.  The banner and the Raw tab still say what is wrong.
                        log.warning("no partial timeline for %s", row.session_id, exc_info=True)
                        part = None
                    if part is not None:
                        cur.prefix_title = latest_title(part.records)  # the name it keeps (issue 24 item 5)
                        self.timeline.load(part.records, len(part.records), part.spans, part.nodes, part.first, stop=part.stop)
            self.timeline_ready.emit(row.key)
            await raw_task
        finally:
            if not raw_task.done():
                raw_task.cancel()
        settle()
        cur.loaded = True
        self._publish(cur, cur.diagnosis, live, closers_shown=live is None or self._show_closers)
        self.loaded.emit(row.key)
        if self._changed_while_loading and not self.jobs.running("follow"):
            # A change the load may have read before it landed: read it now (``follow`` itself would
            # only note it again, this job being the running "session" one).
            self._changed_while_loading = False
            self.jobs.spawn(self._follow(), name="follow", key="follow")
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
            elif not cur.is_jsonl and (prefix := await cur.store.readable_prefix(row.session_id)) is not None:
                # A refused SQLite session: its rows before the first damaged one, then what stopped them.
                text = decode_records(prefix.events)
                stop = prefix.stop
                if stop is not None:
                    text.add_marker(f"{stop.why}; {plural(stop.rows_after, 'stored row')} from there on", provisional=False)
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

    async def _judge(self, cur: OpenSession) -> None:
        """``_reevaluate``, then the change ``follow`` noted meanwhile (it saw this job running and only
        set ``_follow_again``: without this hand-off the writer's last append would never be read)."""
        self._follow_again = False
        await self._reevaluate(cur)
        if self._follow_again and self.current is cur:
            await self._follow()

    async def _follow(self) -> None:
        while True:
            await self._follow_reads()
            cur = self.current
            if not self._judge_after or cur is None or cur.snapshot is None or self.jobs.running("session"):
                return
            self._judge_after = False
            self._follow_again = False
            await self._reevaluate(cur)
            if not self._follow_again or self.current is not cur:
                return  # nothing changed while judging (else: read that change too)

    async def _follow_reads(self) -> None:
        while True:
            self._follow_again = False
            cur = self.current
            if cur is None:
                return
            started = time.monotonic()
            if not await self._grow(cur, cur.store):
                # Not a plain append (rewritten, truncated, repaired, no longer readable): reopen, the
                # views reload as what the log now is.
                self.jobs.spawn(self._open(cur.row, cur.root), name=f"reopen {cur.row.session_id}", key="session")
                return
            if self.current is cur:
                self.grew.emit(cur.key)
            if not self._follow_again:
                return
            await asyncio.sleep((time.monotonic() - started) * (1 / FOLLOW_DUTY - 1))

    async def _grow(self, cur: OpenSession, store: ViewerStore) -> bool:
        """Bring the models to one new read of the log and publish its snapshot; False: reopen instead."""
        row = cur.row
        if cur.diagnosis is None or cur.diagnosis.status not in READABLE or cur.timeline_error is not None:
            return False  # an unreadable log is read whole again (its damaged prefix, its raw bytes)
        try:
            view = await store.view(row.session_id, raw=cur.is_jsonl)
        except SessionPersistenceError:
            return False
        if self.current is not cur:
            return True
        old_stored, new_stored = cur.stored_count, view.closer_start
        every = view.events.record_table()
        if view.status not in READABLE or new_stored < old_stored:
            return False
        if old_stored and every[old_stored - 1].get("seq") != old_stored - 1:
            return False  # not the log the models hold plus appends
        raw = view.raw
        if cur.is_jsonl and (
            raw is None
            or raw.offset != 0
            or raw.path != row.path
            or cur.size is None
            or dev_ino_of(raw.revision) != cur.dev_ino
            or raw.end < cur.size
        ):
            return False
        live = await self._writer_active(cur, view.status)
        shown = live is None or self._show_closers
        records = every if shown else view.stored.record_table()
        if new_stored != old_stored or len(records) != len(self.timeline.records):
            growth = await in_thread(derive_growth, records, new_stored, self.timeline.spans)
            if self.current is not cur:
                return True
            self.timeline.merge_tail(records, new_stored, growth.spans, growth.from_span, growth.nodes)
            settle()
            if not cur.is_jsonl and new_stored > old_stored:
                self.raw.apply_growth(decode_records(every.between(old_stored, new_stored)))  # rendered when shown
        if cur.is_jsonl and raw is not None:
            consumed = self.raw.text.consumed
            if raw.end > consumed:
                data = raw.data[consumed:]
                delta = await in_thread(lambda: decode_jsonl(data, raw.compression, offset=consumed))
                if self.current is not cur:
                    return True
                self.raw.apply_growth(delta)
            cur.size = raw.end
        cur.diagnosis, cur.records, cur.stored_count = shown_diagnosis(cur.root, view.diagnosis), every, new_stored
        cur.stored_records = view.stored.record_table()
        self._publish(cur, cur.diagnosis, live, closers_shown=shown)
        return True

    # ------------------------------------------------------------ the snapshot every view shows

    async def _reevaluate(self, cur: OpenSession) -> None:
        """The quiet period passed (or the toggle changed): live or crashed, closers shown or not."""
        snap = cur.snapshot
        if snap is None:
            return
        live = await self._writer_active(cur, snap.status)
        shown = live is None or self._show_closers
        if self.current is not cur or cur.snapshot is not snap:
            return
        if shown != snap.closers_shown and snap.readable and cur.records is not None and cur.stored_records is not None:
            records = cur.records if shown else cur.stored_records
            growth = await in_thread(derive_growth, records, cur.stored_count, self.timeline.spans)
            if self.current is not cur or cur.snapshot is not snap:
                return
            self.timeline.merge_tail(records, cur.stored_count, growth.spans, growth.from_span, growth.nodes)
            settle()
        self._publish(cur, cur.diagnosis, live, closers_shown=shown)

    def _artifact_ref(self, cur: OpenSession) -> ArtifactRef | None:
        if cur.is_jsonl:
            return ArtifactRef("jsonl", cur.row.path) if cur.row.path else None
        return ArtifactRef("sqlite", cur.root.path)

    async def _writer_active(self, cur: OpenSession, status: str) -> RecentlyWritten | None:
        """The guard's recent-write rule for an open turn (None for any other status: nothing is running)."""
        ref = self._artifact_ref(cur)
        if status != "open-turn" or ref is None or self.received:
            return None
        quiet = self.quiet_seconds()
        return await in_thread(lambda: writer_active(ref, quiet_seconds=quiet))

    def _publish(
        self, cur: OpenSession, d: SessionDiagnosis | None, live: RecentlyWritten | None, *, closers_shown: bool
    ) -> None:
        """The snapshot of the read the models now hold; every view renders it (``snapshot_ready``)."""
        row = cur.row
        t = self.raw.text
        raw = RawFacts(
            len(t),
            "rows" if t.source == "rows" else ("" if not len(t) else t.compression),
            os.path.basename(row.path or "") if cur.is_jsonl else "",
            t.decoded_size,
            len(t.markers),
        )
        if d is not None:
            readable = d.status in READABLE
            count = d.event_count - len(d.closers) if readable else None
            title = title_of(cur.records) if readable and cur.records is not None else cur.prefix_title
            fields = (d.revision, d.status, d.reason, count, len(d.closers), title, d.error_class)
        else:  # a bad row: the listing's verdict is all there is
            det = row.details
            fields = (
                row.revision,
                row.status,
                row.reason,
                row.event_count,
                det.closers if det else 0,
                row.title,
                det.error_class if det else None,
            )
        changed_at = None if live is None else time.time() - live.age_s
        snap = SessionSnapshot(
            row.key,
            row.session_id,
            *fields,
            raw=raw,
            changed_at=changed_at,
            quiet_seconds=self.quiet_seconds(),
            live=live is not None,
            closers_shown=closers_shown,
        )
        cur.snapshot = snap
        self.snapshot_ready.emit(snap)

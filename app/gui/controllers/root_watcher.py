"""Live refresh plumbing: watchdog observes the root, the GUI thread decides what changed.

The watchdog handler runs on the observer thread and only puts paths on a thread-safe queue (no Qt
there but one queued signal).  The GUI thread drains the queue, coalesces a burst of events into the set
of session directories they touch, and emits that set once.

When it drains: ``SETTLE_MS`` after the first event since the last drain (the observer thread wakes the
GUI thread once per burst with a queued signal), and every ``interval_ms`` as a safety net.  Draining
only on the 100 ms timer made a followed session's append wait 50 ms on average and up to 100 ms before
anything read it (90 of 126 ms in one measured window follow, issue 25); an append now waits ~15 ms,
which still gathers a write's modify and close events into one refresh.

May import: PySide6.QtCore, watchdog, ``app.listing.root_scan`` and ``runtime.worker_threads``.
"""

from __future__ import annotations

import logging
import os
import queue
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from app.gui.runtime.worker_threads import in_thread
from app.listing.root_scan import session_dir_of

log = logging.getLogger(__name__)
_IGNORED_EVENTS = frozenset({"opened", "closed_no_write"})
# Only changes, never reads: without this filter inotify reports every open/close, and the app's own
# reads of a 10k-session root overflow the kernel queue (watchdog then rescans the whole tree).
WATCHED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


SETTLE_MS = 15  # how long after the first event of a burst the queue is drained


class _QueueHandler(FileSystemEventHandler):
    """Observer-thread side: enqueue the paths, then wake the GUI thread (``wake``: at most once a burst)."""

    def __init__(self, sink: queue.SimpleQueue[str], wake: Callable[[], None] | None = None) -> None:
        super().__init__()
        self._sink = sink
        self._wake = wake

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED_EVENTS:
            return
        self._sink.put(str(event.src_path))
        dest = getattr(event, "dest_path", "")
        if dest:
            self._sink.put(str(dest))
        if self._wake is not None:
            self._wake()


class RootWatcher(QObject):
    """Emits ``changed`` with the coalesced session/project directories touched since the last drain."""

    changed = Signal(list)
    failed = Signal(str)
    _woke = Signal()  # emitted on the observer thread, delivered queued on the GUI thread

    def __init__(self, interval_ms: int = 100, parent: QObject | None = None, *, settle_ms: int = SETTLE_MS) -> None:
        super().__init__(parent)
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._observer: Any = None
        self._root: str | None = None
        self._single_file = False
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.drain)
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(settle_ms)
        self._soon.timeout.connect(self.drain)
        self._awake = False  # a wake-up is on its way (read and set on the observer thread, reset by drain)
        self._woke.connect(self._settle, Qt.ConnectionType.QueuedConnection)

    @property
    def active(self) -> bool:
        return self._observer is not None

    async def start(self, root: str) -> None:
        """Watch a JSONL root (recursively) or a SQLite store (its directory: the file and its -wal)."""
        await self.stop()
        self._root = root
        self._single_file = os.path.isfile(root)
        observer = Observer()
        where, recursive = (os.path.dirname(root), False) if self._single_file else (root, True)
        handler = _QueueHandler(self._queue, self._wake)
        observer.schedule(handler, where, recursive=recursive, event_filter=WATCHED_EVENTS)
        try:
            # Starting adds one inotify watch per directory: thousands for a big root, so not on the GUI thread.
            await in_thread(observer.start)
        except OSError as err:
            self.failed.emit(f"live file watching is off ({err}); the periodic poll still refreshes")
            return
        self._observer = observer
        self._timer.start()

    async def stop(self) -> None:
        self._timer.stop()
        self._soon.stop()
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            await in_thread(observer.join, 2.0)
        while not self._queue.empty():
            self._queue.get_nowait()

    def _wake(self) -> None:
        """Observer thread: the first event since the last drain asks the GUI thread to drain soon."""
        if not self._awake:
            self._awake = True
            self._woke.emit()

    def _settle(self) -> None:
        if self._observer is not None and not self._soon.isActive():
            self._soon.start()

    def drain(self) -> None:
        # Reset before reading the queue: an event enqueued after this wakes the GUI thread again.
        self._awake = False
        if self._root is None:
            return
        targets: set[str] = set()
        for _ in range(100_000):
            try:
                path = self._queue.get_nowait()
            except queue.Empty:
                break
            if self._single_file:
                if path.startswith(self._root):  # the store itself, its -wal or -journal
                    targets.add(self._root)
                continue
            target = session_dir_of(self._root, path)
            if target is not None:
                targets.add(target)
        if targets:
            self.changed.emit(sorted(targets))

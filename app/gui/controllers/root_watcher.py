"""Live refresh plumbing: watchdog observes the root, the GUI thread decides what changed.

The watchdog handler runs on the observer thread and only puts paths on a thread-safe queue (no Qt
there).  A GUI-thread timer drains the queue, coalesces a burst of events into the set of session
directories they touch, and emits that set once.

May import: PySide6.QtCore, watchdog, ``app.listing.root_scan`` and ``runtime.worker_threads``.
"""

from __future__ import annotations

import logging
import os
import queue
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
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


class _QueueHandler(FileSystemEventHandler):
    """Observer-thread side: enqueue the paths, nothing else."""

    def __init__(self, sink: queue.SimpleQueue[str]) -> None:
        super().__init__()
        self._sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED_EVENTS:
            return
        self._sink.put(str(event.src_path))
        dest = getattr(event, "dest_path", "")
        if dest:
            self._sink.put(str(dest))


class RootWatcher(QObject):
    """Emits ``changed`` with the coalesced session/project directories touched since the last drain."""

    changed = Signal(list)
    failed = Signal(str)

    def __init__(self, interval_ms: int = 100, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._observer: Any = None
        self._root: str | None = None
        self._single_file = False
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.drain)

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
        observer.schedule(_QueueHandler(self._queue), where, recursive=recursive, event_filter=WATCHED_EVENTS)
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
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            await in_thread(observer.join, 2.0)
        while not self._queue.empty():
            self._queue.get_nowait()

    def drain(self) -> None:
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

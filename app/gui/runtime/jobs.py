"""A thin runner for asyncio tasks on the Qt loop: keyed jobs, cancellation, errors never lost.

A job started under a key cancels the previous job with that key (selecting another session cancels
the previous load).  A job that fails reports through ``failed`` instead of vanishing in a task nobody
awaits.

May import: PySide6.QtCore (``QObject``, ``Signal``) and ``runtime.collector``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.gui.runtime.collector import scrub_exception

log = logging.getLogger(__name__)


class Jobs(QObject):
    failed = Signal(str, str)  # job name, message

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keyed: dict[str, asyncio.Task[Any]] = {}
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str, key: str | None = None) -> asyncio.Task[Any]:
        if self._closed:
            coro.close()
            raise RuntimeError("jobs are shut down")
        if key is not None:
            self.cancel(key)
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        if key is not None:
            self._keyed[key] = task
        task.add_done_callback(lambda t: self._done(t, key))
        return task

    def running(self, key: str) -> bool:
        task = self._keyed.get(key)
        return task is not None and not task.done()

    def cancel(self, key: str) -> None:
        task = self._keyed.pop(key, None)
        if task is not None and not task.done():
            task.cancel()

    def _done(self, task: asyncio.Task[Any], key: str | None) -> None:
        self._tasks.discard(task)
        if key is not None and self._keyed.get(key) is task:
            del self._keyed[key]
        if task.cancelled():
            try:
                task.result()
            except asyncio.CancelledError as cancelled:  # its __context__ is the one raised inside the task
                scrub_exception(cancelled)
            return
        err = task.exception()
        if err is not None:
            log.error("job %s failed", task.get_name(), exc_info=err)
            try:
                self.failed.emit(task.get_name(), f"{type(err).__name__}: {err}")
            except RuntimeError:  # the QObject is already gone during interpreter shutdown
                pass
            scrub_exception(err)

    async def shutdown(self) -> None:
        """Cancel everything and wait until every task has finished unwinding."""
        self._closed = True
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

"""The batching write-behind controller of one live session (persistence-contract §7).

The first pending event opens a fixed window; later events join without resetting it.
A failed background write keeps its batch at the front and pauses automatic retries
until a new event arrives or an explicit flush retries (and raises to its callers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from persistence.model.jsontext import deep_copy_json

log = logging.getLogger(__name__)

WriteFn = Callable[[list[dict[str, Any]]], Awaitable[None]]


def check_delay(value: Any) -> int:
    """The write-behind window in milliseconds, refused unless an integer in 1..2147483647."""
    if type(value) is not int or not 1 <= value <= 2147483647:
        from persistence.errors import SessionArgumentError

        raise SessionArgumentError("writeBatchMaxDelayMs must be an integer between 1 and 2147483647")
    return value


class SessionWriteBehind:
    """Batches a live session's appends and writes them after a window, or at once on flush."""

    def __init__(
        self,
        write: WriteFn,
        *,
        max_delay_ms: int = 200,
        report_background_failure: Callable[[BaseException], None] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._write = write
        self._delay = check_delay(max_delay_ms) / 1000
        self._report = report_background_failure or (lambda err: log.warning("background write failed: %s", err))
        self._loop = loop
        self.pending: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._active: asyncio.Task[None] | None = None
        self._barrier: asyncio.Future[None] | None = None
        self._deadline_expired = False
        self.automatic_paused = False

    @property
    def has_work(self) -> bool:
        """Whether events are queued or a write is running."""
        return bool(self.pending) or self._active is not None

    @property
    def window_armed(self) -> bool:
        """Whether the batching window's timer is running."""
        return self._timer is not None

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    # ------------------------------------------------------------ admission

    def enqueue(self, event: dict[str, Any]) -> None:
        """Queue one event (a copy) and arm the window when the queue was empty."""
        was_empty = not self.pending
        self.pending.append(deep_copy_json(event))
        if self._barrier is not None:
            return
        if self.automatic_paused:
            self.automatic_paused = False
            self._deadline_expired = False
            self._arm()
            return
        if was_empty:
            self._arm()

    def _arm(self) -> None:
        self._cancel_timer()
        self._timer = self._get_loop().call_later(self._delay, self._on_deadline)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def cancel_automatic_wait(self) -> None:
        """Stop the window's timer (a flush is about to write now)."""
        self._cancel_timer()
        self._deadline_expired = False

    def _on_deadline(self) -> None:
        self._timer = None
        if self._barrier is not None or self.automatic_paused:
            return
        if self._active is not None:
            self._deadline_expired = True
            return
        self._start_background_write()

    # ------------------------------------------------------------ writing

    def _take_batch(self) -> list[dict[str, Any]]:
        batch, self.pending = self.pending, []
        self._cancel_timer()
        self._deadline_expired = False
        return batch

    def _restore(self, batch: list[dict[str, Any]]) -> None:
        self.pending = batch + self.pending
        self._cancel_timer()
        self._deadline_expired = False
        self.automatic_paused = True

    def _start_background_write(self) -> None:
        if not self.pending:
            return
        batch = self._take_batch()
        self._active = self._get_loop().create_task(self._background_write(batch))

    async def _background_write(self, batch: list[dict[str, Any]]) -> None:
        try:
            await self._write(batch)
        except BaseException as err:  # reported once, batch retained
            self._restore(batch)
            self._active = None
            if not isinstance(err, asyncio.CancelledError):
                self._report(err)
            return
        self._active = None
        if self._barrier is None and self.pending:
            if self._deadline_expired:
                self._start_background_write()
            elif self._timer is None and not self.automatic_paused:
                self._arm()

    # ------------------------------------------------------------ barrier

    def flush(self) -> Awaitable[None]:
        """Write everything queued now; the returned awaitable settles when it is durable."""
        if self._barrier is not None:
            return self._barrier
        self._cancel_timer()
        self._deadline_expired = False
        self.automatic_paused = False
        barrier: asyncio.Future[None] = self._get_loop().create_future()
        self._barrier = barrier
        self._get_loop().create_task(self._drain(barrier))
        return barrier

    async def _drain(self, barrier: asyncio.Future[None]) -> None:
        try:
            if self._active is not None:
                try:
                    await asyncio.shield(self._active)
                except BaseException:  # the overlapping write reported itself
                    pass
                self.automatic_paused = False
            while self.pending:
                batch = self._take_batch()
                try:
                    await self._write(batch)
                except BaseException as err:
                    self._restore(batch)
                    self._barrier = None
                    if not barrier.done():
                        barrier.set_exception(err)
                    return
            self._barrier = None
            if not barrier.done():
                barrier.set_result(None)
        except BaseException as err:  # pragma: no cover - defensive: never leave callers hanging
            self._barrier = None
            if not barrier.done():
                barrier.set_exception(err)

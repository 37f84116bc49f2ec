"""``await_dialog``: a dialog opened window-modally (``open()``, never a nested ``exec()`` loop) as an awaitable.

Why: a nested event loop would run the window's asyncio jobs re-entrantly inside a dialog; with
``open()`` the loop keeps running and the action's coroutine awaits the dialog's ``finished`` signal.
Cancelling the awaiting task rejects the dialog.

May import: PySide6 and the standard library.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QDialog


async def await_dialog(dialog: QDialog) -> int:
    """Show ``dialog`` window-modally and wait for its result; cancelling the awaiting task rejects it."""
    fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def done(code: int) -> None:
        if not fut.done():
            fut.set_result(code)

    dialog.finished.connect(done)
    dialog.open()
    try:
        return await fut
    except asyncio.CancelledError:
        dialog.reject()
        raise
    finally:
        dialog.finished.disconnect(done)


__all__ = ["await_dialog"]

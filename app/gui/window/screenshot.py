"""``--screenshot FILE``: wait until the list and the selected session are loaded, save the window, quit.

May import: ``window.main_window`` and the standard library.
"""

from __future__ import annotations

import asyncio
import logging

from app.gui.window.main_window import TAB_NAMES, MainWindow

log = logging.getLogger(__name__)


async def wait_until_loaded(window: MainWindow, timeout: float) -> bool:
    """True when the listing, the visible diagnoses and the selected session's first view are in."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout

    async def step(aw: object) -> bool:
        remaining = deadline - loop.time()
        try:
            await asyncio.wait_for(aw, max(0.01, remaining))  # type: ignore[arg-type]
            return True
        except TimeoutError:
            return False

    ok = await step(window.controller.listed.wait())
    ok = ok and await step(window.diagnosis_pass.wait_idle())
    if ok and window.session_model.rowCount() > 0:
        ok = await step(window.first_view.wait())
    window.diagnosis_pass.flush()
    return ok


async def capture(window: MainWindow, path: str, *, tab: str | None = None, timeout: float = 60.0) -> int:
    ok = await wait_until_loaded(window, timeout)
    if not ok:
        log.warning("screenshot: not everything loaded within %.0f s; saving what is shown", timeout)
    if tab in TAB_NAMES:
        window.tabs.setCurrentIndex(TAB_NAMES[tab])
    await asyncio.sleep(0.4)  # let pending layout and paint events run
    saved = window.grab().save(path, "PNG")
    if not saved:
        log.error("screenshot: could not write %s", path)
    return 0 if ok and saved else 1

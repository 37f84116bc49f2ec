"""Conversation tab benchmark (offscreen, issue 24 item 1). Prints numbers; asserts nothing.

    python benchmarks/bench_conversation.py [--events 202000] [--repeat 5] [--workdir DIR] [--quick]

One ``--events`` session (JSONL, no compression; written through the engine once under ``--workdir``
and reused) is read and its tail folded, as the window's loader has done by "session loaded".  Timed
from there: the timeline model takes the tail, the conversation builds its blocks from it, the list
lays itself out at the newest turns and paints its first screen (a 1400x900 window's tab).  The
median of ``--repeat`` runs is printed beside the issue's target (< 300 ms) and their ratio.  Once,
every older turn is then loaded: the time to rebuild and paint all blocks, and the slowest page scroll.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from common import write_big_once  # noqa: E402

from persistence import JsonlSessionPersistence  # noqa: E402

BIG_ID: Final = "bench-big"
DEFAULT_EVENTS: Final = 202_000
QUICK_EVENTS: Final = 3_000
TARGET_FIRST_PAINT_S: Final = 0.300  # issue 24: the 202k session's conversation opens at its tail in < 300 ms
TAB_SIZE: Final = (880, 760)  # the content tab of a 1400x900 window (the session list takes the rest)


def load_records(root: str) -> tuple[list[dict[str, Any]], int]:
    async def read() -> tuple[list[dict[str, Any]], int]:
        store = JsonlSessionPersistence(root, compression="none")
        try:
            ins = await store.inspect(BIG_ID)
            records = list(ins.events.records())
            return records, len(records)
        finally:
            await store.close()

    return asyncio.run(read())


def first_paint_s(records: list[dict[str, Any]], stored: int, *, measure_all: bool = False) -> tuple[float, int, int]:
    """Seconds from the loaded tail to the conversation's first painted screen; the blocks built; the last row shown."""
    from PySide6.QtWidgets import QApplication

    from app.gui.models.conversation import ConversationModel
    from app.gui.models.timeline import TimelineModel
    from app.gui.runtime.pyside_refcount_guard import guard_bool_refcounts
    from app.gui.views.conversation_pane import ConversationPane
    from app.timeline import derive_tail

    app = QApplication.instance() or QApplication(sys.argv[:1])
    guard_bool_refcounts()  # PySide6 6.12 on CPython < 3.12 steals references to None/True (its docstring)
    spans, first, nodes = derive_tail(records, stored)  # done by the loader before "session loaded"
    tl = TimelineModel()
    model = ConversationModel(tl)
    pane = ConversationPane(model)
    pane.resize(*TAB_SIZE)
    pane.show()
    app.processEvents()
    t0 = time.perf_counter()
    tl.load(records, stored, spans, nodes, first)
    pane.show_tail()
    app.processEvents()  # layout, and the scroll to the newest block
    pane.list.viewport().repaint()  # the first paint, synchronously
    t1 = time.perf_counter()
    last = model.index(model.rowCount() - 1)
    shown = pane.list.viewport().rect().intersects(pane.list.visualRect(last))
    blocks = model.rowCount()
    if measure_all:
        scroll_all(app, tl, model, pane)
    pane.close()
    pane.deleteLater()
    app.processEvents()
    return t1 - t0, blocks, int(shown)


def scroll_all(app: Any, tl: Any, model: Any, pane: Any) -> None:
    """Every older turn loaded ("Load all"): the rebuild of the blocks, then the slowest of 60 page scrolls."""
    tl.load_older(until_span=0)  # the fold of every older block (the window does it in budgeted steps)
    t0 = time.perf_counter()
    model.rebuild()
    app.processEvents()
    pane.list.viewport().repaint()
    rebuilt = time.perf_counter() - t0
    bar = pane.list.verticalScrollBar()
    bar.setValue(bar.maximum())
    pages = []
    for _ in range(60):
        t1 = time.perf_counter()
        bar.setValue(max(0, bar.value() - pane.list.viewport().height()))
        pane.list.viewport().repaint()
        app.processEvents()
        pages.append(time.perf_counter() - t1)
    print(
        f"all {model.rowCount():,} blocks: rebuilt and painted in {rebuilt * 1000:.0f} ms · page scroll + paint: "
        f"median {statistics.median(pages) * 1000:.1f} ms, slowest {max(pages) * 1000:.1f} ms of {len(pages)} (a frame is 16 ms)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "sessionscope-bench"))
    ap.add_argument("--quick", action="store_true", help=f"a {QUICK_EVENTS:,}-event session (smoke run)")
    args = ap.parse_args()
    n = QUICK_EVENTS if args.quick else args.events
    base = os.path.join(args.workdir, f"big-jsonl-none-{n}")
    root = write_big_once(base, base, BIG_ID, n, lambda r: JsonlSessionPersistence(r, compression="none"))
    records, stored = load_records(root)
    runs = []
    blocks = shown = 0
    for i in range(max(1, args.repeat)):
        s, blocks, shown = first_paint_s(records, stored, measure_all=i == 0)
        runs.append(s)
    median = statistics.median(runs)
    print(f"events {len(records):,} · blocks at the tail {blocks:,} · newest block on screen: {'yes' if shown else 'NO'}")
    print(f"runs (ms): {', '.join(f'{r * 1000:.0f}' for r in runs)}")
    ok = "holds" if median < TARGET_FIRST_PAINT_S else "MISSED"
    print(
        f"conversation first paint at the tail: median {median * 1000:.0f} ms of {len(runs)} · target < "
        f"{TARGET_FIRST_PAINT_S * 1000:.0f} ms · ratio {median / TARGET_FIRST_PAINT_S:.2f} ({ok})"
    )


if __name__ == "__main__":
    main()

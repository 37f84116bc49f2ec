"""The window's statistics features (issue 14): the Stats tab and its charts, View > Dashboard, View >
Lineage and Compare with parent, File > Export…, the fork dialog's name field and the price table.

Sessions are generated into temp roots by the engine: every number the Stats tab shows is checked
against a direct count over the generated events, never against the fold itself.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox

from app.actions.fork import execute_fork, plan_fork
from app.gui.dialogs import ForkDialog
from app.gui.dialogs.export_dialog import ExportDialog
from app.gui.dialogs.prices_dialog import PricesDialog
from app.gui.models.lineage_model import COL_FORK, COL_KIND
from app.gui.views.charts import SAVE_PNG_TEXT, BarChart, ChartBar, ChartData, nice_ticks, series_colors
from app.records import latest_title
from persistence import JsonlSessionPersistence, open_store

pytestmark = pytest.mark.timeout(120)

DAY = 86_400_000
T0 = 1767600000000  # 2026-01-05 08:00 UTC
CWD_A, CWD_B = "/proj/alpha", "/proj/beta"

# Per turn of "alpha": (input, output, cache read, cache write), tools as (name, error), wall time in ms.
ALPHA_TURNS = (
    ((1200, 300, 5000, 400), (("bash", False), ("read_file", False)), 4_000),
    ((2400, 150, 9000, 0), (("bash", True),), 12_000),
    ((600, 900, 0, 0), (("grep", False), ("bash", False), ("bash", True)), 2_500),
)


# ---------------------------------------------------------------- data


def insight_turn(
    seq: int, turn: int, prompt: str, start: int, usage: tuple[int, int, int, int], tools: Any, duration: int
) -> list[dict[str, Any]]:
    """One turn: a prompt, one model call (``usage`` on its message) asking for ``tools``, their results."""
    evs: list[dict[str, Any]] = []
    n_events = 6 + 2 * len(tools)

    def add(type_: str, data: Any, **env: Any) -> int:
        k = len(evs)
        # Spread the turn's events evenly so its turn/end lands exactly ``duration`` ms after turn/start.
        t = start + (duration * k) // (n_events - 1)
        ev: dict[str, Any] = {"type": type_, "seq": seq + k, "time": t, "data": data}
        ev.update(env)
        evs.append(ev)
        return int(ev["seq"])

    i, o, cr, cw = usage
    add("turn/start", {"turn": turn})
    add("step/start", {"turn": turn, "step": 1})
    add(
        "user/message",
        {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}},
        surfaceOp="append",
    )
    calls = [{"type": "tool-call", "id": f"c{seq}-{k}", "name": name, "arguments": "{}"} for k, (name, _err) in enumerate(tools)]
    add(
        "assistant/message",
        {
            "turn": turn,
            "step": 1,
            "message": {
                "id": f"a{seq}",
                "role": "assistant",
                "source": {"kind": "model", "provider": "p", "model": "m"},
                "content": [{"type": "text", "text": f"answer to {prompt}"}, *calls],
            },
            "usage": {"inputTokens": i, "outputTokens": o, "cacheReadTokens": cr, "cacheWriteTokens": cw},
        },
        surfaceOp="append",
    )
    for k, (name, err) in enumerate(tools):
        cid = f"c{seq}-{k}"
        call = add("tool/call", {"turn": turn, "step": 1, "callId": cid, "name": name, "arguments": "{}"})
        add(
            "tool/result",
            {
                "turn": turn,
                "step": 1,
                "message": {
                    "id": f"r{cid}",
                    "role": "user",
                    "source": {"kind": "tool", "callId": cid},
                    "content": [
                        {"type": "tool-result", "toolCallId": cid, "content": [{"type": "text", "text": "out"}], "isError": err}
                    ],
                },
            },
            sourceEventSeqs=[call],
            surfaceOp="append",
        )
    add("step/end", {"turn": turn, "step": 1})
    add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    assert len(evs) == n_events
    return evs


async def _write_root(root: Path) -> None:
    store = JsonlSessionPersistence(root, compression="zstd")
    try:
        await store.create({"id": "alpha", "createdAt": T0, "cwd": CWD_A})
        seq = 0
        for t, (usage, tools, duration) in enumerate(ALPHA_TURNS, start=1):
            evs = insight_turn(seq, t, f"alpha prompt {t}", T0 + t * 60_000, usage, tools, duration)
            await store.append("alpha", evs)
            seq += len(evs)
        await store.append(
            "alpha",
            [{"type": "session/title", "seq": seq, "time": T0 + 300_000, "data": {"title": "Alpha work", "messageSeqs": []}}],
        )
        # beta: another project, two days later; its prompt is hostile HTML.
        await store.create({"id": "beta", "createdAt": T0 + 2 * DAY, "cwd": CWD_B})
        await store.append(
            "beta",
            insight_turn(
                0, 1, '<script>alert("x")</script> <a href="javascript:evil()">j</a>', T0 + 2 * DAY, (10, 5, 0, 0), (), 1000
            ),
        )
        # A subagent of alpha, and an orphan whose parent is not in the root.
        await store.create(
            {"id": "sub", "createdAt": T0 + 400_000, "cwd": CWD_A, "parentSession": "alpha", "origin": "subagent",
             "delegationDepth": 1, "seedLength": 0}
        )  # fmt: skip
        await store.append("sub", make_turn(0, 1, "sub task", T0 + 400_000))
        await store.create({"id": "orphan", "createdAt": T0 + 500_000, "cwd": CWD_A, "parentSession": "ghost", "seedLength": 0})
        await store.append("orphan", make_turn(0, 1, "lost child", T0 + 500_000))
    finally:
        await store.close()


async def _add_fork(root: Path) -> None:
    """fork1: alpha forked after turn 1 (titled), then a turn of its own."""
    store = open_store(str(root))
    try:
        plan = await plan_fork(store, "alpha", 1)
        result = await execute_fork(store, plan, new_id="fork1", title="Alpha, other way")
        await store.append("fork1", make_turn(result.events, 2, "fork prompt 2", T0 + 600_000))
    finally:
        await store.close()


@pytest.fixture
def root(arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "data" / "root"
    target.parent.mkdir(mode=0o700)
    arun(_write_root(target))
    arun(_add_fork(target))
    return target


def open_window(qtbot: Any, make_window: Any, root: Path, sid: str, tmp_path: Path) -> Any:
    w = make_window(root, session=sid)
    w.insight.controller.prices_file = str(tmp_path / "prices.json")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id(sid).key)
    return w


def show_stats(qtbot: Any, w: Any) -> Any:
    w.insight.stats_action.trigger()
    pane = w.insight.pane
    qtbot.waitUntil(lambda: pane.stats is not None and w.insight.last_insight is not None, timeout=WAIT_MS)
    return pane


# ---------------------------------------------------------------- the Stats tab


def test_stats_tab_shows_the_numbers_of_the_open_session(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    assert w.tabs.tabText(w.insight.tab_index) == "Stats"
    pane = show_stats(qtbot, w)
    assert w.tabs.currentWidget() is pane
    # Direct counts over the generated turns.
    tokens = [sum(u[k] for u, _t, _d in ALPHA_TURNS) for k in range(4)]
    tools = [x for _u, t, _d in ALPHA_TURNS for x in t]
    assert pane.value("Turns") == "3"
    assert pane.value("Steps") == "3"
    assert pane.value("Model calls") == "3"
    assert pane.value("Retries") == "0"
    assert pane.value("Tool calls") == str(len(tools))
    assert pane.value("Tool errors").startswith(str(sum(1 for _n, e in tools if e)))
    assert pane.value("Input") == f"{tokens[0]:,}"
    assert pane.value("Output") == f"{tokens[1]:,}"
    assert pane.value("Cache read") == f"{tokens[2]:,}"
    assert pane.value("Cache write") == f"{tokens[3]:,}"
    assert pane.value("Total") == f"{sum(tokens):,}"
    assert pane.value("Wall time (turns)") == "18.5 s"  # 4 + 12 + 2.5 s
    assert pane.value("Longest turn") == "12 s (turn 2)"
    assert pane.value("Cost") == ""  # no price table: no cost, never a made-up zero
    assert "No price table" in pane.price_note.text()
    assert "Alpha work" in pane.heading.text()
    # The charts: a bar per turn, stacked by kind, and a row per tool with its errors.
    bars = pane.tokens_chart.bars
    assert [b.values for b in bars] == [tuple(float(x) for x in u) for u, _t, _d in ALPHA_TURNS]
    assert [b.values[0] for b in pane.duration_chart.bars] == [float(d) for _u, _t, d in ALPHA_TURNS]
    by_tool = {b.label: b.values for b in pane.tools_chart.bars}
    assert by_tool == {"bash": (2.0, 2.0), "read_file": (1.0, 0.0), "grep": (1.0, 0.0)}
    names = [pane.tools_table.item(r, 0).text() for r in range(pane.tools_table.rowCount())]
    assert names[0] == "bash" and set(names) == {"bash", "read_file", "grep"}


def test_hovering_a_bar_says_what_it_is_and_clicking_selects_the_turn(
    qtbot: Any, make_window: Any, root: Path, tmp_path: Path
) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    pane = show_stats(qtbot, w)
    chart = pane.tokens_chart
    qtbot.waitUntil(lambda: chart.isVisible() and chart.width() > 100, timeout=WAIT_MS)
    center = chart.bar_rect(1).center().toPoint()
    tip = chart.tooltip_at(center)
    assert tip is not None and tip.startswith("Turn 2 — 11,550 tokens") and "click" in tip.lower()
    assert chart.tooltip_at(QPoint(2, 2)) is None  # the title is no bar
    tools_tip = pane.tools_chart.tooltip_at(pane.tools_chart.bar_rect(0).center().toPoint())
    assert tools_tip is not None and tools_tip.startswith("bash — 4 call(s), 2 error(s)")
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=center)
    assert w.tabs.currentIndex() == 1  # the Timeline
    node = w.timeline_pane.current_node()
    assert node is not None and node.kind == "turn" and w.timeline_model.turn_info(w.timeline_pane.tree.currentIndex())[0] == 2
    assert chart.marked == 1
    # The duration chart selects too.
    w.insight.show_stats_tab()
    dchart = pane.duration_chart
    qtbot.mouseClick(dchart, Qt.MouseButton.LeftButton, pos=dchart.bar_rect(2).center().toPoint())
    assert w.timeline_model.turn_info(w.timeline_pane.tree.currentIndex())[0] == 3


def test_stats_show_a_cost_only_with_a_price(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    pane = show_stats(qtbot, w)
    dlg = w.insight.edit_prices()
    qtbot.waitUntil(dlg.isVisible, timeout=WAIT_MS)
    assert isinstance(dlg, PricesDialog) and dlg.known_button.isEnabled()
    dlg.add_known()  # "p/m", the model of the open session
    assert dlg.table.item(0, 0).text() == "p/m"
    dlg.table.item(0, 1).setText("abc")
    dlg.save()
    assert dlg.isVisible() and "not a number" in dlg.error.text()
    assert not os.path.exists(tmp_path / "prices.json")
    for col, price in ((1, "1"), (2, "2"), (3, "0.5"), (4, "1")):
        dlg.table.item(0, col).setText(price)
    dlg.currency.setText("EUR")
    before = w.insight.last_insight
    dlg.save()
    assert json.loads((tmp_path / "prices.json").read_text())["models"]["p/m"]["cacheRead"] == 0.5
    qtbot.waitUntil(lambda: w.insight.last_insight is not before, timeout=WAIT_MS)
    tokens = [sum(u[k] for u, _t, _d in ALPHA_TURNS) for k in range(4)]
    expected = (tokens[0] * 1 + tokens[1] * 2 + tokens[2] * 0.5 + tokens[3] * 1) / 1_000_000
    assert pane.value("Cost") == f"{expected:.4f} EUR"
    # A price that lacks a bucket the session used: no complete cost, and no zero either.
    (tmp_path / "prices.json").write_text(json.dumps({"currency": "EUR", "models": {"p/m": {"input": 1, "output": 2}}}))
    w.insight.controller.prices_changed()
    before = w.insight.last_insight
    w.insight.refresh_stats()
    qtbot.waitUntil(lambda: w.insight.last_insight is not before, timeout=WAIT_MS)
    assert pane.value("Cost") == ""
    assert "No model of this session has a price" in pane.price_note.text()


def test_charts_follow_the_palette_and_save_as_png(qtbot: Any, tmp_path: Path) -> None:
    chart = BarChart()
    qtbot.addWidget(chart)
    chart.resize(500, 260)
    data = ChartData(
        "Tokens per turn", ("Input", "Output"), (ChartBar("1", (3.0, 1.0), "one", 10), ChartBar("2", (5.0, 0.0), "two", 20))
    )
    chart.set_data(data)
    chart.show()
    qtbot.waitExposed(chart)
    light, dark = QPalette(QColor("#f4f4f4")), QPalette(QColor("#202124"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#1b1b1b"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e8e8e8"))
    light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    assert series_colors(dark, 2)[1] != series_colors(light, 2)[1]  # lighter series on a dark base
    images = []
    for pal in (light, dark):
        chart.setPalette(pal)
        img = chart.grab().toImage()
        images.append(img)
        assert img.pixelColor(3, 3) == pal.color(QPalette.ColorRole.Base)  # the background is the palette's
    path = tmp_path / "chart.png"
    assert chart.save_png(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    chart.contextMenuEvent(_context_event(chart))
    assert [a.text() for a in chart.last_menu.actions()] == [SAVE_PNG_TEXT]
    chart.last_menu.close()
    chart.ask_save(folder=str(tmp_path))
    assert chart.file_dialog is not None
    saved: list[str] = []
    chart.saved.connect(saved.append)
    chart.file_dialog.fileSelected.emit(str(tmp_path / "picked.png"))
    chart.file_dialog.close()
    assert saved == [str(tmp_path / "picked.png")] and (tmp_path / "picked.png").stat().st_size > 0
    assert nice_ticks(7) == [0, 2, 4, 6, 8] and nice_ticks(0) == [0.0, 1.0]


def test_a_chart_of_more_bars_than_pixels_draws_one_per_column(qtbot: Any) -> None:
    chart = BarChart()
    qtbot.addWidget(chart)
    chart.resize(600, 260)
    n = 20_000
    bars = tuple(ChartBar(str(i + 1), (float(i % 97), 1.0), f"turn {i + 1}", i) for i in range(n))
    chart.set_data(ChartData("Many turns", ("a", "b"), bars, clickable=True))
    chart.show()
    qtbot.waitExposed(chart)
    plot = chart.plot_rect()
    drawn = chart.visible_bars(plot, QRectF(chart.rect()))
    assert len(drawn) <= plot.width() + 3  # one bar per pixel column, not 20,000
    # Each column shows its tallest bar, so a peak is never lost between pixels.
    column = int(plot.width() // 2)
    lo, hi = int(column * n / plot.width()), int((column + 1) * n / plot.width())
    assert dict((px, i) for i, px in drawn)[column] == max(range(lo, hi), key=lambda i: bars[i].total)
    # Hovering and clicking still name one turn.
    pos = QPoint(int(plot.left()) + column, int(plot.center().y()))
    i = chart.bar_at(pos)
    assert i is not None and lo <= i <= hi and chart.tooltip_at(pos) == f"turn {i + 1}"
    clicked: list[object] = []
    chart.bar_clicked.connect(lambda _i, key: clicked.append(key))
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=pos)
    assert clicked == [i]


def _context_event(widget: Any) -> Any:
    from PySide6.QtGui import QContextMenuEvent

    pos = QPoint(20, 20)
    return QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, widget.mapToGlobal(pos))


def test_stats_of_an_unreadable_log_say_why(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    broken = root / "-broken" / "0190aaaa-0000-7000-8000-000000000000"
    broken.mkdir(parents=True, mode=0o700)
    (broken / "session.jsonl.zstd").write_bytes(b"\x00\x01 not a log \xff" * 8)
    w = make_window(root)
    wait_listed(qtbot, w)
    row = next(r for r in w.session_model.rows() if r.session_id.startswith("0190aaaa"))
    w.list_pane.select_key(row.key)
    wait_opened(qtbot, w, row.key)
    w.insight.stats_action.trigger()
    assert w.insight.pane.stats is None and w.insight.pane.heading.text().startswith("No statistics")


# ---------------------------------------------------------------- dashboard


def test_dashboard_opens_filters_and_opens_a_session(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    w.insight.dashboard_action.trigger()
    d = w.insight.dashboard
    assert d is not None and d.isVisible()
    qtbot.waitUntil(
        lambda: not w.insight.controller.updating and d.totals is not None and d.totals.sessions == 5, timeout=WAIT_MS
    )
    t = d.totals
    assert t.ranked_by == "tokens" and t.cost is None
    assert {p.project for p in t.per_project} == {CWD_A, CWD_B}
    assert sum(day.sessions for day in t.per_day) == 5
    assert t.top_tools[0].name == "bash" and t.top_tools[0].errors >= 2
    assert d.tools_table.item(0, 0).text() == "bash"
    assert t.longest[0].session_id == "alpha"
    # Filter by project: beta only.
    d.set_project(CWD_B)
    d.flush_filter()
    qtbot.waitUntil(lambda: d.totals.sessions == 1, timeout=WAIT_MS)
    assert d.totals.longest[0].session_id == "beta"
    # And by date: the first day only (beta started two days later, fork1 when the test forked it).
    d.set_project(None)
    first = dt.datetime.fromtimestamp(T0 / 1000).date()
    d.set_dates(first, first)
    d.flush_filter()
    qtbot.waitUntil(lambda: d.totals.sessions == 3, timeout=WAIT_MS)
    assert {r.session_id for r in d.totals.longest} == {"alpha", "sub", "orphan"}
    # Double-click a ranked session: the window opens it.
    rows = [d.longest_table.item(r, 0).data(Qt.ItemDataRole.UserRole + 1) for r in range(d.longest_table.rowCount())]
    r = rows.index("orphan")
    d.longest_table.cellDoubleClicked.emit(r, 0)
    qtbot.waitUntil(lambda: w.current_row() is not None and w.current_row().session_id == "orphan", timeout=WAIT_MS)
    # A second opening answers from the cache at once (nothing to compute).
    d.close()
    w.insight.open_dashboard()
    qtbot.waitUntil(lambda: not w.insight.controller.updating, timeout=WAIT_MS)
    assert w.insight.controller.last_report is not None and w.insight.controller.last_report.computed == 0


# ---------------------------------------------------------------- lineage and compare


def _lineage(qtbot: Any, w: Any) -> Any:
    w.insight.lineage_action.trigger()
    d = w.insight.lineage
    qtbot.waitUntil(lambda: not w.insight.controller.updating and len(d.model) == 5, timeout=WAIT_MS)
    # The cache's fork turns arrive with the lineage asked for when the update ended.
    qtbot.waitUntil(lambda: "after turn 1" in d.model.data(d.model.index_of("fork1", COL_FORK)), timeout=WAIT_MS)
    return d


def test_lineage_tree_with_a_fork_a_subagent_and_an_orphan(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "beta", tmp_path)
    d = _lineage(qtbot, w)
    m = d.model
    alpha = m.index_of("alpha")
    kids = {m.node(m.index(r, 0, alpha)).session_id: m.index(r, 0, alpha) for r in range(m.rowCount(alpha))}
    assert set(kids) == {"fork1", "sub"}
    assert m.data(kids["fork1"]) == "Alpha, other way"
    assert m.data(kids["fork1"].siblingAtColumn(COL_KIND)) == "fork"
    assert m.data(kids["sub"].siblingAtColumn(COL_KIND)) == "subagent (depth 1)"
    assert m.data(alpha) == "Alpha work"
    orphans = m.orphans_index
    assert orphans.isValid() and "Orphans" in m.data(orphans)
    assert m.rowCount(orphans) == 1
    orphan = m.index(0, 0, orphans)
    assert m.node(orphan).session_id == "orphan"
    assert "parent ghost missing" in m.data(orphan.siblingAtColumn(COL_FORK))
    top_ids = {m.node(m.index(r, 0)).session_id for r in range(m.rowCount()) if m.node(m.index(r, 0)) is not None}
    assert top_ids == {"alpha", "beta"}
    assert "5 session(s)" in d.summary.text() and "1 orphan(s)" in d.summary.text()
    # Selecting a node opens that session.
    d.tree.setCurrentIndex(kids["sub"])
    qtbot.waitUntil(lambda: w.current_row() is not None and w.current_row().session_id == "sub", timeout=WAIT_MS)
    d.tree.setCurrentIndex(orphan)
    qtbot.waitUntil(lambda: w.current_row().session_id == "orphan", timeout=WAIT_MS)
    assert not d.compare_button.isEnabled()  # an orphan's parent is not here: nothing to compare with
    d.tree.setCurrentIndex(kids["sub"])
    assert not d.compare_button.isEnabled()  # a subagent is not a fork


def test_compare_with_parent_side_by_side(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    d = _lineage(qtbot, w)
    d.select_session("fork1")
    qtbot.waitUntil(lambda: w.current_row() is not None and w.current_row().session_id == "fork1", timeout=WAIT_MS)
    assert d.compare_button.isEnabled() and w.insight.compare_action.isEnabled()
    d.compare_button.click()
    c = w.insight.compare_dialog
    qtbot.waitUntil(lambda: c is not None and c.comparison is not None, timeout=WAIT_MS)
    r = c.comparison
    assert r.identical_prefix and r.fork_turn == 1 and r.shared_turns == 1
    assert "Shared prefix" in c.prefix_button.text() and "identical" in c.prefix_button.text()
    assert c.prefix_text.isHidden()  # collapsed until asked
    c.prefix_button.click()
    assert c.prefix_text.isVisible() and "alpha prompt 1" in c.prefix_text.toPlainText()
    # Row 1 after the fork point: the parent's turn 2 beside the fork's turn 2; the parent has one more.
    assert c.table.rowCount() == 2
    assert "alpha prompt 2" in c.cell(0, 0) and "fork prompt 2" in c.cell(0, 1)
    assert "alpha prompt 3" in c.cell(1, 0) and c.cell(1, 1) == "—"
    assert "Tools: bash ✗" in c.cell(0, 0)
    assert "Alpha, other way" in c.heading.text() and "Alpha work" in c.heading.text()


# ---------------------------------------------------------------- export


def _export(qtbot: Any, w: Any, fmt: str, target: Path) -> tuple[str, str, str]:
    seen: list[tuple[str, str, str]] = []
    w.insight.exporter.done.connect(lambda o, m, p: seen.append((o, m, p)))
    w.insight.export_action.trigger()
    qtbot.waitUntil(
        lambda: isinstance(w.insight.export_dialog, ExportDialog) and w.insight.export_dialog.isVisible(), timeout=WAIT_MS
    )
    dlg = w.insight.export_dialog
    dlg.set_format(fmt)
    dlg.path.setText(str(target))
    assert dlg.export_button.isEnabled() == target.parent.is_dir()
    if not dlg.export_button.isEnabled():
        dlg.accept()  # as if the button were pressed anyway: the exporter must still say what is wrong
    else:
        dlg.export_button.click()
    qtbot.waitUntil(lambda: bool(seen) and not w.insight.exporter.busy, timeout=WAIT_MS)
    return seen[0]


def test_export_html_is_escaped_and_written_off_thread(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "beta", tmp_path)
    out = tmp_path / "out" / "beta.html"
    out.parent.mkdir()
    outcome, message, path = _export(qtbot, w, "html", out)
    assert outcome == "done", message
    assert path == str(out) and str(out) in w.statusBar().currentMessage()
    page = out.read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert 'href="javascript:' not in page
    assert not [p for p in out.parent.iterdir() if p.name != "beta.html"]  # no temporary file left
    # The suggested name follows the format until the user edits it.
    dlg = ExportDialog("beta", str(tmp_path))
    qtbot.addWidget(dlg)
    assert dlg.path.text().endswith("beta.html")
    dlg.set_format("bundle")
    assert dlg.path.text().endswith("beta.zip")
    # Markdown too.
    outcome, message, _p = _export(qtbot, w, "md", tmp_path / "out" / "beta.md")
    assert outcome == "done" and "alert" in (tmp_path / "out" / "beta.md").read_text()


def test_export_failure_is_a_dialog_with_the_message(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "beta", tmp_path)
    outcome, message, _p = _export(qtbot, w, "jsonl", root / "inside.jsonl")  # inside the root: refused
    assert outcome == "failed" and "inside the session root" in message
    box = w.insight.error_box
    assert box is not None and box.isVisible() and "inside the session root" in box.text()
    assert "Traceback" not in box.text()
    box.close()
    assert not (root / "inside.jsonl").exists()


def _export_dialog(qtbot: Any, w: Any, fmt: str, target: Path) -> ExportDialog:
    w.insight.export_action.trigger()
    qtbot.waitUntil(
        lambda: isinstance(w.insight.export_dialog, ExportDialog) and w.insight.export_dialog.isVisible(), timeout=WAIT_MS
    )
    dlg = w.insight.export_dialog
    dlg.set_format(fmt)
    dlg.path.setText(str(target))
    return dlg


def test_export_over_an_existing_file_asks_first_and_never_over_a_link(
    qtbot: Any, make_window: Any, root: Path, tmp_path: Path
) -> None:
    """Issue 21 item 5: the window asks before it replaces a file, and never writes through a link."""
    w = open_window(qtbot, make_window, root, "beta", tmp_path)
    seen: list[tuple[str, str, str]] = []
    w.insight.exporter.done.connect(lambda o, m, p: seen.append((o, m, p)))
    previous = b"PREVIOUS FILE\n"
    out = tmp_path / "out" / "beta.md"
    out.parent.mkdir()
    out.write_bytes(previous)
    dlg = _export_dialog(qtbot, w, "md", out)
    assert dlg.export_button.isEnabled() and "asked before" in dlg.exists_note.text()
    dlg.export_button.click()
    qtbot.waitUntil(lambda: dlg.confirm_box is not None and dlg.confirm_box.isVisible(), timeout=WAIT_MS)
    box = dlg.confirm_box
    assert box is not None and str(out) in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: dlg.confirm_box is None, timeout=WAIT_MS)
    qtbot.wait(50)
    assert dlg.isVisible() and not seen and out.read_bytes() == previous  # declined: nothing exported
    dlg.export_button.click()
    qtbot.waitUntil(lambda: dlg.confirm_box is not None and dlg.confirm_box.isVisible(), timeout=WAIT_MS)
    box = dlg.confirm_box
    assert box is not None
    (replace,) = [b for b in box.buttons() if b.text() == "Replace"]
    replace.click()
    qtbot.waitUntil(lambda: bool(seen) and not w.insight.exporter.busy, timeout=WAIT_MS)
    assert seen[0][0] == "done", seen
    assert out.read_bytes() != previous and "alert" in out.read_text(encoding="utf-8")
    # A symbolic link: Export is off and the note says why; pressed anyway, the exporter refuses it and the
    # file the link points to is untouched.
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes(previous)
    link = tmp_path / "out" / "link.md"
    link.symlink_to(elsewhere)
    seen.clear()
    dlg = _export_dialog(qtbot, w, "md", link)
    assert not dlg.export_button.isEnabled() and "symbolic link" in dlg.exists_note.text()
    dlg.accept()
    qtbot.waitUntil(lambda: bool(seen) and not w.insight.exporter.busy, timeout=WAIT_MS)
    assert seen[0][0] == "failed" and "symbolic link" in seen[0][1], seen
    assert os.readlink(link) == str(elsewhere) and elsewhere.read_bytes() == previous
    assert w.insight.error_box is not None
    w.insight.error_box.close()


# ---------------------------------------------------------------- fork with a title


def test_fork_dialog_names_the_fork(qtbot: Any, make_window: Any, root: Path, tmp_path: Path, arun: Any) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    done: list[tuple[str, str, str]] = []
    w.session_ops.done.connect(lambda a, o, m: done.append((a, o, m)))
    w.menus.fork_last.trigger()
    qtbot.waitUntil(lambda: isinstance(w.session_ops.dialog, ForkDialog) and w.session_ops.dialog.isVisible(), timeout=WAIT_MS)
    dlg = w.session_ops.dialog
    assert dlg.name.text() == "Alpha work (fork after turn 3)"
    dlg.name.setText("   ")
    assert not dlg.accept_button.isEnabled() and dlg.blank_note.isVisible()
    dlg.name.setText("  Try  the\tother tool ")
    assert dlg.accept_button.isEnabled() and dlg.title == "Try the other tool"
    dlg.accept_button.click()
    qtbot.waitUntil(lambda: bool(done) and not w.session_ops.busy, timeout=WAIT_MS)
    action, outcome, message = done[0]
    assert (action, outcome) == ("fork", "done"), message
    child = w.current_row()
    assert child.parent_id == "alpha" and child.session_id not in ("alpha", "fork1")

    async def titles() -> tuple[str | None, str | None]:
        store = open_store(str(root))
        try:
            c = await store.load(child.session_id)
            p = await store.load("alpha")
            return latest_title(c.events.to_json()), latest_title(p.events.to_json())
        finally:
            await store.close()

    assert arun(titles()) == ("Try the other tool", "Alpha work")  # the parent keeps its own title


def test_fork_dialog_cancel_writes_nothing(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    before = w.session_model.total
    done: list[tuple[str, str, str]] = []
    w.session_ops.done.connect(lambda a, o, m: done.append((a, o, m)))
    w.menus.fork_last.trigger()
    qtbot.waitUntil(lambda: isinstance(w.session_ops.dialog, ForkDialog), timeout=WAIT_MS)
    w.session_ops.dialog.reject()
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
    assert done[0][:2] == ("fork", "cancelled") and w.session_model.total == before


# ---------------------------------------------------------------- menus


def test_menus_hold_the_new_entries(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    w = open_window(qtbot, make_window, root, "alpha", tmp_path)
    texts = {
        a.text().replace("&", ""): [x.text().replace("&", "") for x in a.menu().actions()]
        for a in w.menuBar().actions()
        if a.menu() is not None
    }
    assert "Export …" in texts["File"]
    assert {"Stats", "Dashboard …", "Lineage …", "Compare with parent …"} <= set(texts["View"])
    assert texts["Settings"] == ["Model prices …"]
    assert list(texts).index("Settings") == list(texts).index("Help") - 1
    assert not w.insight.compare_action.isEnabled()  # alpha is no fork
    # Enter in the list with the Stats tab in front focuses it (the window's focus map has no entry for it).
    w.insight.show_stats_tab()
    w._focus_content()
    assert QApplication.focusWidget() is not None

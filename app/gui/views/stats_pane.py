"""The Stats tab: the open session's numbers and three charts (tokens per turn, duration per turn,
tool calls by tool).

Only shows what it is given (a ``SessionStats`` folded off the GUI thread by ``controllers.insight``,
and the costs a price table gave); a click on a turn's bar is reported as ``turn_clicked(start seq)``
and the window selects that turn in the timeline.

May import: PySide6, ``app.insight`` (values), ``views.charts`` and ``views.insight_format``.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.glossary import plural
from app.gui.views import insight_format as fmt
from app.gui.views.charts import BarChart, ChartBar, ChartData
from app.insight import Cost, ModelStats, SessionStats, TurnStats

ACTIVITY_FIELDS = ("Events", "Turns", "Steps", "Model calls", "Retries", "Tool calls", "Tool errors", "Compactions")
TIME_FIELDS = ("Wall time (turns)", "Span", "Longest turn", "Mean turn")
TOKEN_FIELDS = ("Input", "Output", "Cache read", "Cache write", "Reasoning", "Total", "Cost")
TABLE_ROWS_SHOWN = 8  # rows of the models / tools tables before they scroll
NO_PRICES_NOTE = "No price table: tokens only (Settings ▸ Model prices…)."


def turn_label(t: TurnStats, slot: int) -> str:
    return str(t.turn) if isinstance(t.turn, int) else str(slot + 1)


def tokens_chart(stats: SessionStats) -> ChartData:
    bars = tuple(
        ChartBar(
            turn_label(t, i),
            fmt.token_values(t.tokens),
            f"Turn {turn_label(t, i)} — {t.tokens.total:,} tokens\n{fmt.tokens_breakdown(t.tokens)}\n"
            "Click to select this turn in the timeline",
            t.start_seq,
        )
        for i, t in enumerate(stats.per_turn)
    )
    return ChartData("Tokens per turn", fmt.TOKEN_KINDS, bars, fmt.compact, clickable=True, empty_text="No turns")


def duration_chart(stats: SessionStats) -> ChartData:
    def tip(t: TurnStats, i: int) -> str:
        state = "still open" if t.open else (t.reason or "ended")
        return (
            f"Turn {turn_label(t, i)} — {fmt.duration(t.duration_ms)} ({state})\n"
            f"{plural(t.steps, 'step')} · {plural(t.model_calls, 'model call')} · {plural(t.tool_calls, 'tool call')}"
            + (f" · {plural(t.tool_errors, 'error')}" if t.tool_errors else "")
            + (f" · {plural(t.retries, 'retry')}" if t.retries else "")
            + "\nClick to select this turn in the timeline"
        )

    bars = tuple(
        ChartBar(turn_label(t, i), (float(t.duration_ms),), tip(t, i), t.start_seq) for i, t in enumerate(stats.per_turn)
    )
    return ChartData("Duration per turn", ("Wall time",), bars, fmt.duration, clickable=True, empty_text="No turns")


def tools_chart(stats: SessionStats) -> ChartData:
    bars = tuple(
        ChartBar(
            t.name,
            (float(t.calls - min(t.errors, t.calls)), float(min(t.errors, t.calls))),
            f"{t.name} — {t.calls:,} call(s), {t.errors:,} error(s) ({fmt.rate(t.errors, t.calls)})",
            t.name,
        )
        for t in stats.tools
    )
    return ChartData(
        "Tool calls by tool", ("Calls", "Errors"), bars, fmt.compact, horizontal=True, empty_text="No tool calls",
        error_series=frozenset({1}),
    )  # fmt: skip


def small_table(headers: Sequence[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(list(headers))
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.verticalHeader().hide()
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)  # a line each, not the style's 30 px
    t.setAlternatingRowColors(True)
    t.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for c in range(1, len(headers)):
        t.horizontalHeader().setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
    t.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return t


def fill_table(t: QTableWidget, rows: Sequence[Sequence[str]], tips: Sequence[str] | None = None) -> None:
    t.setRowCount(len(rows))
    for r, values in enumerate(rows):
        for c, v in enumerate(values):
            item = QTableWidgetItem(v)
            if c > 0:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if tips is not None:
                item.setToolTip(tips[r])
            t.setItem(r, c, item)
    shown = max(1, min(len(rows), TABLE_ROWS_SHOWN))
    t.setFixedHeight(t.horizontalHeader().height() + shown * t.verticalHeader().defaultSectionSize() + 2 * t.frameWidth() + 2)


class FieldGrid(QGroupBox):
    """Name / value pairs whose values can be read back (``value``) and selected with the mouse."""

    def __init__(self, title: str, names: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        grid = self.grid = QGridLayout(self)
        grid.setColumnStretch(1, 1)
        grid.setHorizontalSpacing(14)
        self.labels: dict[str, QLabel] = {}
        self.values: dict[str, QLabel] = {}
        for row, name in enumerate(names):
            label = QLabel(name, self)
            value = QLabel("", self)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(label, row, 0)
            grid.addWidget(value, row, 1)
            self.labels[name] = label
            self.values[name] = value

    def set(self, name: str, text: str, tip: str = "") -> None:
        shown = bool(text)
        self.labels[name].setVisible(shown)
        self.values[name].setVisible(shown)
        self.values[name].setText(text)
        self.values[name].setToolTip(tip)


class StatsPane(QWidget):
    turn_clicked = Signal(int)  # the clicked turn's start seq
    chart_saved = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stats: SessionStats | None = None
        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(6, 4, 6, 4)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.activity = FieldGrid("Activity", ACTIVITY_FIELDS)
        self.times = FieldGrid("Wall time", TIME_FIELDS)
        self.tokens = FieldGrid("Tokens", TOKEN_FIELDS)
        self.price_note = QLabel(self)
        self.price_note.setWordWrap(True)
        self.price_note.setEnabled(False)  # drawn in the palette's disabled (muted) text colour
        self.tokens.grid.addWidget(self.price_note, len(TOKEN_FIELDS), 0, 1, 2)
        self.models_table = small_table(("Model", "Calls", "Tokens", "Cost"))
        self.tools_table = small_table(("Tool", "Calls", "Errors", "Error rate"))
        self.tokens_chart = BarChart()
        self.duration_chart = BarChart()
        self.tools_chart = BarChart()
        self.charts = (self.tokens_chart, self.duration_chart, self.tools_chart)
        for chart in (self.tokens_chart, self.duration_chart):
            chart.bar_clicked.connect(self._bar_clicked)
        for chart in self.charts:
            chart.saved.connect(self.chart_saved)

        body = QWidget()
        v = QVBoxLayout(body)
        v.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        for box in (self.activity, self.times, self.tokens):
            box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
            top.addWidget(box, 1, Qt.AlignmentFlag.AlignTop)
        v.addLayout(top)
        tables = QHBoxLayout()
        for title, table in (("Models", self.models_table), ("Tools", self.tools_table)):
            group = QGroupBox(title)
            QVBoxLayout(group).addWidget(table)
            tables.addWidget(group, 1, Qt.AlignmentFlag.AlignTop)
        v.addLayout(tables)
        for chart in self.charts:
            v.addWidget(chart)
        v.addStretch(1)
        self.body = body
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.scroll_area, 1)
        self.show_message("Open a session to see its statistics.")

    # ------------------------------------------------------------ what is shown

    def show_message(self, text: str) -> None:
        """No numbers (nothing open, computing, or a log the engine refuses): say why."""
        self.stats = None
        self.heading.setText(text)
        self.body.hide()

    def show_stats(
        self,
        title: str,
        stats: SessionStats,
        cost: Cost | None,
        model_costs: Sequence[Cost | None],
        *,
        priced: bool,
    ) -> None:
        """The numbers of one session; ``model_costs`` pairs with ``stats.models``; ``priced``: a price table exists."""
        self.stats = stats
        self.heading.setText(title)
        s = stats
        a = self.activity
        a.set("Events", fmt.count(s.events))
        a.set("Turns", fmt.count(s.turns) + (f" ({s.open_turns} open)" if s.open_turns else ""))
        a.set("Steps", fmt.count(s.steps))
        a.set("Model calls", fmt.count(s.model_calls))
        a.set("Retries", fmt.count(s.retries))
        a.set("Tool calls", fmt.count(s.tool_calls))
        a.set("Tool errors", fmt.count(s.tool_errors) + (f" ({fmt.rate(s.tool_errors, s.tool_calls)})" if s.tool_calls else ""))
        comp = fmt.count(s.compactions)
        extra = [f"{s.compactions_failed} failed"] if s.compactions_failed else []
        extra += [plural(s.prunes, "prune")] if s.prunes else []
        a.set("Compactions", comp + (f" ({', '.join(extra)})" if extra else ""))
        durations = [t.duration_ms for t in s.per_turn]
        t = self.times
        t.set("Wall time (turns)", fmt.duration(s.active_ms), "The turns' wall time added up (first to last event of each turn)")
        t.set("Span", fmt.duration(s.span_ms), "First to last event of the session, idle time included")
        longest = max(range(len(durations)), key=durations.__getitem__) if durations else None
        t.set(
            "Longest turn",
            "" if longest is None else f"{fmt.duration(durations[longest])} (turn {turn_label(s.per_turn[longest], longest)})",
        )
        t.set("Mean turn", fmt.duration(sum(durations) / len(durations)) if durations else "")
        k = self.tokens
        k.set("Input", fmt.count(s.tokens.input), "Uncached input tokens")
        k.set("Output", fmt.count(s.tokens.output))
        k.set("Cache read", fmt.count(s.tokens.cache_read))
        k.set("Cache write", fmt.count(s.tokens.cache_write))
        k.set("Reasoning", fmt.count(s.tokens.reasoning) if s.tokens.reasoning else "", "Part of the output tokens")
        k.set("Total", fmt.count(s.tokens.total))
        k.set("Cost", fmt.cost_text(cost), fmt.cost_note(cost))
        if not priced:
            self.price_note.setText(NO_PRICES_NOTE)
        elif cost is None:
            self.price_note.setText("No model of this session has a price in the table.")
        else:
            self.price_note.setText(fmt.cost_note(cost))
        self.price_note.setVisible(bool(self.price_note.text()))
        fill_table(
            self.models_table,
            [
                (m.key, fmt.count(m.calls), fmt.count(m.tokens.total), fmt.cost_text(c))
                for m, c in zip(s.models, self._pad(model_costs, s.models), strict=True)
            ],
            [fmt.tokens_breakdown(m.tokens) for m in s.models],
        )
        self.models_table.setColumnHidden(3, not priced)
        fill_table(
            self.tools_table,
            [(x.name, fmt.count(x.calls), fmt.count(x.errors), fmt.rate(x.errors, x.calls)) for x in s.tools],
        )
        self.tokens_chart.set_data(tokens_chart(s))
        self.duration_chart.set_data(duration_chart(s))
        self.tools_chart.set_data(tools_chart(s))
        self.body.show()

    @staticmethod
    def _pad(costs: Sequence[Cost | None], models: Sequence[ModelStats]) -> list[Cost | None]:
        return [costs[i] if i < len(costs) else None for i in range(len(models))]

    def value(self, name: str) -> str:
        """The shown text of field ``name`` ("" when hidden): tests and accessibility."""
        for grid in (self.activity, self.times, self.tokens):
            if name in grid.values:
                label = grid.values[name]
                return label.text() if not label.isHidden() else ""
        raise KeyError(name)

    def _bar_clicked(self, _index: int, key: object) -> None:
        if isinstance(key, int):
            for chart in (self.tokens_chart, self.duration_chart):
                chart.mark(_index)
            self.turn_clicked.emit(key)


__all__ = ["StatsPane", "duration_chart", "tokens_chart", "tools_chart"]

"""View > Dashboard: the root's sessions and tokens per day and per project, top tools with their error
rate, the longest and the most expensive sessions; filtered by date range and project.

The numbers are ``app.insight.RootTotals``, aggregated by SQL over the statistics cache on its own
thread; the dialog shows them, says what the cache is doing (progress, Stop), and reports what the
user wants: another filter (``filter_changed``), a session to open (``session_requested``, a
double-click in a ranking), fresh numbers (``refresh_requested``).  It opens at once from what is
cached; an update behind it refreshes the numbers when it ends.

May import: PySide6, ``app.insight`` (values), ``views`` (charts, progress, number formats).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from PySide6.QtCore import QDate, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.glossary import CREATED, SESSION, noun, plural
from app.gui import style
from app.gui.views import insight_format as fmt
from app.gui.views.charts import BarChart, ChartBar, ChartData
from app.gui.views.progress_panel import ProgressPanel
from app.insight import NO_PROJECT, DayTotal, RootFilter, RootTotals, SessionRef, Tokens, ToolTotal

ALL_PROJECTS = "All projects"
NO_PROJECT_LABEL = "(no project)"
FILL_GAPS_MAX_DAYS = 400  # per-day charts show empty days up to this span (beyond: only days with sessions)
FILTER_DELAY_MS = 200  # a burst of filter edits (typing a date) asks for one aggregation
SessionIdRole = Qt.ItemDataRole.UserRole + 1


def project_label(project: str | None) -> str:
    return project if project else NO_PROJECT_LABEL


def days_with_gaps(per_day: Sequence[DayTotal]) -> list[DayTotal]:
    """Every calendar day from the first to the last (zeros in between), when the span is short enough to chart."""
    if len(per_day) < 2:
        return list(per_day)
    first, last = dt.date.fromisoformat(per_day[0].day), dt.date.fromisoformat(per_day[-1].day)
    span = (last - first).days
    if span > FILL_GAPS_MAX_DAYS:
        return list(per_day)
    have = {d.day: d for d in per_day}
    out = []
    for k in range(span + 1):
        day = (first + dt.timedelta(days=k)).isoformat()
        out.append(have.get(day) or DayTotal(day, 0, Tokens()))
    return out


def day_label(day: str) -> str:
    return day[5:] if len(day) == 10 else day  # MM-DD on the axis; the tooltip says the year


def sessions_chart(days: Sequence[DayTotal]) -> ChartData:
    bars = tuple(
        ChartBar(day_label(d.day), (float(d.sessions),), f"{d.day} — {plural(d.sessions, SESSION)} started", d.day) for d in days
    )
    return ChartData("Sessions per day", ("Sessions",), bars, fmt.compact, empty_text="No sessions in this range")


def tokens_chart(days: Sequence[DayTotal]) -> ChartData:
    bars = tuple(
        ChartBar(
            day_label(d.day),
            fmt.token_values(d.tokens),
            f"{d.day} — {d.tokens.total:,} tokens\n{fmt.tokens_breakdown(d.tokens)}",
            d.day,
        )
        for d in days
    )
    return ChartData("Tokens per day", fmt.TOKEN_KINDS, bars, fmt.compact, empty_text="No tokens in this range")


def tools_chart(tools: Sequence[ToolTotal]) -> ChartData:
    bars = tuple(
        ChartBar(
            t.name,
            (float(t.calls - min(t.errors, t.calls)), float(min(t.errors, t.calls))),
            f"{t.name} — {plural(t.calls, 'call')} in {plural(t.sessions, SESSION)}, "
            f"{plural(t.errors, 'error')} ({fmt.rate(t.errors, t.calls)})",
            t.name,
        )
        for t in tools
    )
    return ChartData(
        "Top tools", ("Calls", "Errors"), bars, fmt.compact, horizontal=True, empty_text="No tool calls",
        error_series=frozenset({1}),
    )  # fmt: skip


TEXT_COLUMNS = ("Session", "Project", "Tool", CREATED)  # left-aligned; every other column is a number
PROJECT_COLUMN_PX = 260  # a project path column's width in a session ranking (elided in the middle beyond)


def table(headers: Sequence[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(list(headers))
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    t.verticalHeader().hide()
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)  # a line each, not the style's 30 px
    t.setAlternatingRowColors(True)
    t.setSortingEnabled(False)
    t.setWordWrap(False)
    t.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    h = t.horizontalHeader()
    h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for c in range(1, len(headers)):
        if headers[c] == "Project":
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            t.setColumnWidth(c, PROJECT_COLUMN_PX)
        else:
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
    return t


def fill(
    t: QTableWidget, rows: Sequence[Sequence[str]], ids: Sequence[str | None] | None = None, tips: Sequence[str] = ()
) -> None:
    t.setRowCount(len(rows))
    for r, values in enumerate(rows):
        for c, v in enumerate(values):
            item = QTableWidgetItem(v)
            header = t.horizontalHeaderItem(c)
            if c > 0 and (header is None or header.text() not in TEXT_COLUMNS):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if ids is not None:
                item.setData(SessionIdRole, ids[r])
            if r < len(tips):
                item.setToolTip(tips[r])
            t.setItem(r, c, item)


def ref_title(ref: SessionRef) -> str:
    return ref.title or ref.session_id


def ref_tip(ref: SessionRef) -> str:
    return (
        f"{ref.title or '(untitled)'}\n{ref.session_id}\n{project_label(ref.project)} · {style.format_ms(ref.start_ms)} · "
        f"{style.STATUS_LABELS.get(ref.status, ref.status)}\n{fmt.tokens_breakdown(ref.tokens)}\nDouble-click to open it"
    )


class DashboardDialog(QDialog):
    filter_changed = Signal(object)  # RootFilter
    session_requested = Signal(str)
    refresh_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Dashboard")
        self.resize(1180, 800)
        self.totals: RootTotals | None = None
        self._projects: tuple[str | None, ...] = ()
        # Filter row.
        self.from_check = QCheckBox("From", self)
        self.from_date = QDateEdit(self)
        self.to_check = QCheckBox("To", self)
        self.to_date = QDateEdit(self)
        today = QDate.currentDate()
        for check, edit, default in ((self.from_check, self.from_date, today.addDays(-30)), (self.to_check, self.to_date, today)):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setDate(default)
            edit.setEnabled(False)
            check.toggled.connect(edit.setEnabled)
            check.toggled.connect(self._schedule_filter)
            edit.dateChanged.connect(self._schedule_filter)
        self.project_box = QComboBox(self)
        self.project_box.setMinimumContentsLength(28)
        self.project_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.project_box.addItem(ALL_PROJECTS, None)
        self.project_box.currentIndexChanged.connect(self._schedule_filter)
        self.refresh_button = QPushButton("&Refresh", self)
        self.refresh_button.setToolTip("Fold the sessions that changed since the statistics were computed")
        self.refresh_button.clicked.connect(self.refresh_requested)
        self.progress = ProgressPanel(self)
        self.progress.button.setToolTip("Stop computing: sessions done so far stay cached")
        filters = QHBoxLayout()
        for w in (self.from_check, self.from_date, self.to_check, self.to_date, QLabel("Project", self), self.project_box):
            filters.addWidget(w)
        filters.addStretch(1)
        filters.addWidget(self.progress)
        filters.addWidget(self.refresh_button)
        self.summary = QLabel("Computing statistics …", self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # By day.
        self.sessions_chart = BarChart()
        self.tokens_chart = BarChart()
        self.charts = [self.sessions_chart, self.tokens_chart]
        # By project.
        self.projects_table = table(("Project", "Sessions", "Tokens", "Active time", "Cost"))
        self.projects_table.setToolTip("Double-click a project to show only its sessions")
        self.projects_table.cellDoubleClicked.connect(self._project_clicked)
        # Tools.
        self.tools_table = table(("Tool", "Calls", "Errors", "Error rate", "Sessions"))
        self.tools_chart = BarChart()
        self.charts.append(self.tools_chart)
        # Sessions.
        self.longest_table = table(("Session", "Project", CREATED, "Active time", "Turns", "Tokens"))
        self.expensive_table = table(("Session", "Project", CREATED, "Tokens", "Cost"))
        for t in (self.longest_table, self.expensive_table):
            t.cellDoubleClicked.connect(lambda r, _c, t=t: self._session_clicked(t, r))
        self.expensive_box = QGroupBox("Most expensive sessions")
        QVBoxLayout(self.expensive_box).addWidget(self.expensive_table)
        longest_box = QGroupBox("Longest sessions (active time)")
        QVBoxLayout(longest_box).addWidget(self.longest_table)

        self.tabs = QTabWidget(self)
        by_day = QWidget()
        dl = QVBoxLayout(by_day)
        dl.addWidget(self.sessions_chart)
        dl.addWidget(self.tokens_chart)
        dl.addStretch(1)
        self.tabs.addTab(self._scrolled(by_day), "By day")
        self.tabs.addTab(self.projects_table, "By project")
        tools = QWidget()
        tl = QHBoxLayout(tools)
        tl.addWidget(self.tools_table, 1)
        tools_chart_box = QVBoxLayout()
        tools_chart_box.addWidget(self.tools_chart)
        tools_chart_box.addStretch(1)
        tl.addLayout(tools_chart_box, 1)
        self.tabs.addTab(tools, "Tools")
        sessions = QWidget()
        sl = QVBoxLayout(sessions)
        sl.addWidget(longest_box, 1)
        sl.addWidget(self.expensive_box, 1)
        self.tabs.addTab(sessions, "Sessions")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self._emit_filter)
        self._filling = False

    @staticmethod
    def _scrolled(w: QWidget) -> QScrollArea:
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setWidget(w)
        return area

    # ------------------------------------------------------------ the filter

    def current_filter(self) -> RootFilter:
        d_from = self.from_date.date().toPython() if self.from_check.isChecked() else None
        d_to = self.to_date.date().toPython() if self.to_check.isChecked() else None
        project = self.project_box.currentData()
        projects = None if self.project_box.currentIndex() <= 0 else frozenset({project if project else NO_PROJECT})
        return RootFilter(d_from, d_to, projects)  # type: ignore[arg-type]  # toPython() gives a datetime.date

    def set_project(self, project: str | None) -> None:
        """Show only ``project``'s sessions (None: every project)."""
        if project is None:
            self.project_box.setCurrentIndex(0)
            return
        i = self.project_box.findData(project)
        if i < 0:
            self.project_box.addItem(project_label(project), project)
            i = self.project_box.count() - 1
        self.project_box.setCurrentIndex(i)

    def set_dates(self, d_from: dt.date | None, d_to: dt.date | None) -> None:
        for check, edit, d in ((self.from_check, self.from_date, d_from), (self.to_check, self.to_date, d_to)):
            if d is not None:
                edit.setDate(QDate(d.year, d.month, d.day))
            check.setChecked(d is not None)

    def _schedule_filter(self, *_args: object) -> None:
        if not self._filling:
            self._filter_timer.start()

    def _emit_filter(self) -> None:
        self.filter_changed.emit(self.current_filter())

    def flush_filter(self) -> None:
        """Emit a pending filter change now (tests, and Enter in a date field)."""
        if self._filter_timer.isActive():
            self._filter_timer.stop()
            self._emit_filter()

    # ------------------------------------------------------------ content

    def show_message(self, text: str) -> None:
        self.summary.setText(text)

    def show_totals(self, totals: RootTotals, note: str = "") -> None:
        self.totals = totals
        self._fill_projects(totals.projects)
        t = totals
        cost = fmt.cost_text(t.cost)
        statuses = ", ".join(f"{n:,} {style.STATUS_LABELS.get(s, s)}" for s, n in t.statuses if s != "ok")
        self.summary.setText(
            f"<b>{t.sessions:,}</b> {noun(t.sessions, SESSION)} · <b>{fmt.compact(t.tokens.total)}</b> tokens "
            f"({fmt.tokens_breakdown(t.tokens)}) · {fmt.duration(t.active_ms)} active"
            + (f" · cost <b>{cost}</b>" + (f" ({fmt.cost_note(t.cost)})" if fmt.cost_note(t.cost) else "") if cost else "")
            + (f"<br>Not ok: {statuses}" if statuses else "")
            + (f"<br><small>{note}</small>" if note else "")
        )
        days = days_with_gaps(t.per_day)
        self.sessions_chart.set_data(sessions_chart(days))
        self.tokens_chart.set_data(tokens_chart(days))
        priced = any(p.cost is not None for p in t.per_project)
        fill(
            self.projects_table,
            [
                (
                    project_label(p.project),
                    fmt.count(p.sessions),
                    fmt.count(p.tokens.total),
                    fmt.duration(p.active_ms),
                    fmt.cost_text(p.cost),
                )
                for p in t.per_project
            ],
            [p.project for p in t.per_project],
            [fmt.tokens_breakdown(p.tokens) for p in t.per_project],
        )
        self.projects_table.setColumnHidden(4, not priced)
        fill(
            self.tools_table,
            [
                (x.name, fmt.count(x.calls), fmt.count(x.errors), fmt.rate(x.errors, x.calls), fmt.count(x.sessions))
                for x in t.top_tools
            ],
        )
        self.tools_chart.set_data(tools_chart(t.top_tools))
        fill(
            self.longest_table,
            [
                (
                    ref_title(r),
                    project_label(r.project),
                    style.format_ms(r.start_ms),
                    fmt.duration(r.active_ms),
                    fmt.count(r.turns),
                    fmt.compact(r.tokens.total),
                )
                for r in t.longest
            ],
            [r.session_id for r in t.longest],
            [ref_tip(r) for r in t.longest],
        )
        by_cost = t.ranked_by == "cost"
        self.expensive_box.setTitle("Most expensive sessions" if by_cost else "Most tokens (no price table: tokens only)")
        fill(
            self.expensive_table,
            [
                (
                    ref_title(r),
                    project_label(r.project),
                    style.format_ms(r.start_ms),
                    fmt.compact(r.tokens.total),
                    fmt.cost_text(r.cost),
                )
                for r in t.most_expensive
            ],
            [r.session_id for r in t.most_expensive],
            [ref_tip(r) for r in t.most_expensive],
        )
        self.expensive_table.setColumnHidden(4, not by_cost)

    def _fill_projects(self, projects: tuple[str | None, ...]) -> None:
        if projects == self._projects:
            return
        self._projects = projects
        current = self.project_box.currentData() if self.project_box.currentIndex() > 0 else None
        was_all = self.project_box.currentIndex() <= 0
        self._filling = True
        try:
            self.project_box.clear()
            self.project_box.addItem(ALL_PROJECTS, None)
            for p in projects:
                self.project_box.addItem(project_label(p), p or "")
            if not was_all:
                i = self.project_box.findData(current)
                self.project_box.setCurrentIndex(max(0, i))
        finally:
            self._filling = False

    def _project_clicked(self, row: int, _col: int) -> None:
        item = self.projects_table.item(row, 0)
        if item is not None:
            project = item.data(SessionIdRole)
            self.set_project(project if project else "")

    def _session_clicked(self, t: QTableWidget, row: int) -> None:
        item = t.item(row, 0)
        sid = item.data(SessionIdRole) if item is not None else None
        if isinstance(sid, str):
            self.session_requested.emit(sid)


__all__ = ["DashboardDialog", "days_with_gaps"]

"""Compare with…: pick any other session (of the list, or a file or folder), then see the two side by side.

``ComparePickDialog`` lists the sessions to compare the open one with (filtered as you type) and has a
"From a file or folder…" button (a transcript, a bundle, a root, a store): it only says what was
chosen (``session_chosen`` / ``path_chosen``).  ``SessionCompareDialog`` shows what ``app.compare``
computed off the GUI thread: both sessions' totals side by side (events, turns, tool calls, tokens,
active time), where they first diverge, and one row per aligned turn (A's turn, B's turn, the
prompt, the tokens of each, the tools called differently), the rows that differ tinted and the first
of them selected.  Unlike "Compare with parent" the turns are matched by what the person asked, so
any two sessions line up.

May import: PySide6, ``app.compare`` (values) and ``app.gui.style``/``dialogs.parts``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.compare import CHANGED, ONLY_A, ONLY_B, REPLACED, SAME, AlignedTurn, SessionComparison, SideInfo
from app.gui import theme

COLUMNS = ("", "A", "B", "Prompt", "Tokens A", "Tokens B", "Tools called differently")
COL_MARK, COL_A, COL_B, COL_PROMPT, COL_TOK_A, COL_TOK_B, COL_TOOLS = range(len(COLUMNS))
STATUS_WORDS = {
    SAME: "same",
    CHANGED: "same prompt, different run",
    REPLACED: "different prompts",
    ONLY_A: "only in A",
    ONLY_B: "only in B",
}
MARKS = {SAME: "=", CHANGED: "≠", REPLACED: "≠", ONLY_A: "A", ONLY_B: "B"}
# Theme roles of the rows that differ (their text: "compare.text"; the mark column says it in words too).
TINTS = {CHANGED: "compare.changed.bg", REPLACED: "compare.replaced.bg", ONLY_A: "compare.only-a.bg", ONLY_B: "compare.only-b.bg"}


def _tokens(n: int) -> str:
    return f"{n:,}"


def _ms(ms: int) -> str:
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(round(s), 60)
    return f"{m} min {sec:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def totals_html(a: SideInfo, b: SideInfo) -> str:
    """Both sessions' totals side by side, as a small table."""
    rows = [
        ("Session", html.escape(a.label), html.escape(b.label)),
        ("Events", f"{a.events:,}", f"{b.events:,}"),
        ("Turns", f"{a.turns:,}", f"{b.turns:,}"),
        ("Tool calls", f"{a.tool_calls:,}", f"{b.tool_calls:,}"),
        ("Tokens", _tokens(a.tokens.total), _tokens(b.tokens.total)),
        ("Input / output", f"{a.tokens.input:,} / {a.tokens.output:,}", f"{b.tokens.input:,} / {b.tokens.output:,}"),
        ("Active time", _ms(a.active_ms), _ms(b.active_ms)),
    ]
    cells = "".join(f"<tr><td><b>{k}</b></td><td>{x}</td><td>{y}</td></tr>" for k, x, y in rows)
    return f"<table cellspacing='0' cellpadding='3'><tr><th></th><th>A</th><th>B</th></tr>{cells}</table>"


def divergence_text(c: SessionComparison) -> str:
    """Where the two sessions first go different ways, in one sentence."""
    first = c.first_difference
    if c.identical:
        return "The two sessions are identical."
    if first is None:
        return "Every turn is the same in both (their logs differ outside the turns)."
    r = c.rows[first]
    a = f"turn {r.a.turn}" if r.a is not None else "no turn"
    b = f"turn {r.b.turn}" if r.b is not None else "no turn"
    counts = c.counts()
    return (
        f"First difference at row {first + 1} (A: {a}, B: {b}): {STATUS_WORDS[r.status]}. "
        f"{counts[SAME]} same, {counts[CHANGED]} changed, {counts[REPLACED]} with different prompts, "
        f"{counts[ONLY_A]} only in A, {counts[ONLY_B]} only in B."
    )


def tools_text(r: AlignedTurn) -> str:
    return ", ".join(f"{t.name} {t.a}→{t.b}" for t in r.tools)


def row_tooltip(r: AlignedTurn) -> str:
    parts = [STATUS_WORDS[r.status]]
    for side, d in (("A", r.a), ("B", r.b)):
        if d is None:
            continue
        parts.append(f"{side} — turn {d.turn}: {d.prompt or '(no prompt)'}")
        reply = "\n".join(d.replies)
        if reply:
            parts.append(reply if len(reply) <= 600 else reply[:599] + "…")
    return "\n\n".join(parts)


class ComparePickDialog(QDialog):
    """Which session to compare ``current`` with: one of ``sessions`` (id, title), or a file or folder."""

    session_chosen = Signal(str)
    path_chosen = Signal(str)

    def __init__(self, current: str, sessions: Sequence[tuple[str, str | None]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Compare {current} with …")
        self.resize(560, 480)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("filter by id or title …")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.list = QListWidget(self)
        for sid, title in sessions:
            item = QListWidgetItem(f"{title or '(untitled)'} — {sid}")
            item.setData(Qt.ItemDataRole.UserRole, sid)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda _i: self.accept())
        self.file_button = QPushButton("From a file or folder …", self)
        self.file_button.setToolTip("A transcript, a support bundle, a JSONL root or a SQLite store")
        self.file_button.clicked.connect(self._pick_path)
        self.file_dialog: QFileDialog | None = None
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Compare")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Compare the open session <b>{html.escape(current)}</b> with:", self))
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.file_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(buttons)

    def chosen(self) -> str | None:
        item = self.list.currentItem()
        if item is None or item.isHidden():
            return None
        value = item.data(Qt.ItemDataRole.UserRole)
        return value if isinstance(value, str) else None

    def choose(self, session_id: str) -> bool:
        """Select ``session_id`` in the list (False when it is not there)."""
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.ItemDataRole.UserRole) == session_id:
                self.list.setCurrentRow(i)
                return True
        return False

    def accept(self) -> None:
        sid = self.chosen()
        if sid is None:
            return  # nothing chosen: stay open
        super().accept()
        self.session_chosen.emit(sid)

    def _filter(self, text: str) -> None:
        needle = text.casefold().strip()
        first: int | None = None
        for i in range(self.list.count()):
            item = self.list.item(i)
            hide = bool(needle) and needle not in item.text().casefold()
            item.setHidden(hide)
            if not hide and first is None:
                first = i
        if first is not None:
            self.list.setCurrentRow(first)

    def _pick_path(self) -> None:
        dlg = QFileDialog(self, "Compare with a file or folder")
        dlg.setFileMode(QFileDialog.FileMode.ExistingFile)
        dlg.fileSelected.connect(self.choose_path)
        self.file_dialog = dlg
        dlg.open()

    def choose_path(self, path: str) -> None:
        """Compare with the source at ``path`` (what the file button's dialog answers)."""
        if not path:
            return
        super().accept()
        self.path_chosen.emit(path)


class SessionCompareDialog(QDialog):
    """Two sessions aligned by prompt (``show_comparison``), or a message while computing or on failure."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare sessions")
        self.resize(1200, 720)
        self.totals = QLabel(self)
        self.totals.setTextFormat(Qt.TextFormat.RichText)
        self.totals.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.divergence = QLabel(self)
        self.divergence.setWordWrap(True)
        self.divergence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_PROMPT, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.totals)
        layout.addWidget(self.divergence)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.comparison: SessionComparison | None = None
        self.show_message("Comparing …")

    def show_message(self, text: str) -> None:
        self.comparison = None
        self.totals.setText("")
        self.divergence.setText(text)
        self.table.setRowCount(0)

    def show_comparison(self, c: SessionComparison) -> None:
        self.comparison = c
        self.setWindowTitle(f"Compare {c.a.session_id} with {c.b.session_id}")
        self.totals.setText(totals_html(c.a, c.b))
        self.divergence.setText(divergence_text(c))
        self.table.setRowCount(len(c.rows))
        for i, r in enumerate(c.rows):
            d = r.a if r.a is not None else r.b
            prompt = (d.prompt if d is not None else "") or "(no prompt)"
            if r.status == REPLACED and r.b is not None:
                prompt = f"A: {prompt}   B: {r.b.prompt or '(no prompt)'}"
            cells = (
                MARKS[r.status],
                str(r.a.turn) if r.a is not None else "—",
                str(r.b.turn) if r.b is not None else "—",
                prompt,
                _tokens(r.a.tokens.total) if r.a is not None else "—",
                _tokens(r.b.tokens.total) if r.b is not None else "—",
                tools_text(r) or ("answers differ" if r.status == CHANGED and not r.same_answer else ""),
            )
            tip = row_tooltip(r)
            tint = TINTS.get(r.status)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                if col in (COL_TOK_A, COL_TOK_B):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if tint is not None:
                    item.setBackground(theme.brush(tint))
                    item.setForeground(theme.brush("compare.text"))
                self.table.setItem(i, col, item)
        first = c.first_difference
        if first is not None:
            self.table.selectRow(first)
            target = self.table.item(first, COL_PROMPT)
            if target is not None:
                self.table.scrollToItem(target, QAbstractItemView.ScrollHint.PositionAtCenter)

    def cell(self, row: int, col: int) -> str:
        item = self.table.item(row, col)
        return "" if item is None else item.text()


__all__ = ["ComparePickDialog", "SessionCompareDialog", "divergence_text", "totals_html"]

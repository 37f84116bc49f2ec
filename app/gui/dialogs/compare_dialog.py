"""Compare with parent: a fork beside the session it was forked from.

The inherited prefix comes first, collapsed to one line (how many events and turns, and whether the
parent still holds them identically; open it to list those turns), then the turns each side ran
after the fork point side by side: row k is the k-th turn after the fork in the parent and in the
fork, so where the two went different ways reads across one row.

Only shows what ``app.insight.compare_with_parent`` computed off the GUI thread.

May import: PySide6 and ``app.insight`` (values), ``views.insight_format``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.glossary import EVENT, TURN, noun, plural
from app.gui import theme
from app.gui.dialogs.parts import WARN
from app.gui.views import insight_format as fmt
from app.insight import ForkComparison, TurnDigest

CELL_REPLY_CHARS = 360  # characters of a turn's replies shown in a cell (the tooltip has the digest's whole text)
CELL_TOOLS = 12  # tool names listed in a cell before "+N more"
PARENT, FORK = 0, 1
PREFIX_ROWS = 8  # lines of the opened shared prefix shown before it scrolls


def turn_line(d: TurnDigest) -> str:
    state = "open" if d.reason is None else d.reason
    return (
        f"Turn {d.turn if d.turn is not None else '?'} · {state} · {plural(d.steps, 'step')} · {fmt.duration(d.duration_ms)}"
        f" · {fmt.compact(d.tokens.total)} tokens"
    )


def tools_line(d: TurnDigest) -> str:
    if not d.tools:
        return ""
    names = [t.name + (" ✗" if t.error else "") for t in d.tools[:CELL_TOOLS]]
    more = f" +{len(d.tools) - CELL_TOOLS} more" if len(d.tools) > CELL_TOOLS else ""
    return "Tools: " + ", ".join(names) + more


def cell_text(d: TurnDigest) -> str:
    reply = "\n".join(d.replies)
    if len(reply) > CELL_REPLY_CHARS:
        reply = reply[: CELL_REPLY_CHARS - 1] + "…"
    parts = [turn_line(d)]
    if d.prompt:
        parts.append(f"▶ {d.prompt}")
    if reply:
        parts.append(reply)
    tools = tools_line(d)
    if tools:
        parts.append(tools)
    return "\n".join(parts)


def cell_tooltip(d: TurnDigest) -> str:
    parts = [turn_line(d), fmt.tokens_breakdown(d.tokens)]
    if d.prompt:
        parts.append(f"Prompt: {d.prompt}")
    parts.extend(d.replies)
    tools = tools_line(d)
    if tools:
        parts.append(tools)
    return "\n\n".join(parts)


def shared_line(d: TurnDigest) -> str:
    tools = f" · {plural(len(d.tools), 'tool call')}" if d.tools else ""
    prompt = f" · {d.prompt}" if d.prompt else ""
    return f"{turn_line(d)}{tools}{prompt}"


def side_title(name: str, turns: int, events: int) -> str:
    return f"{name} after the fork point — {plural(turns, TURN)}, {plural(events, EVENT)}"


class CompareDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare with parent")
        self.resize(1200, 720)
        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.prefix_button = QToolButton(self)
        self.prefix_button.setCheckable(True)
        self.prefix_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.prefix_button.setArrowType(Qt.ArrowType.RightArrow)
        self.prefix_button.setAutoRaise(True)
        self.prefix_button.toggled.connect(self._toggle_prefix)
        self.prefix_text = QPlainTextEdit(self)
        self.prefix_text.setReadOnly(True)
        self.prefix_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.prefix_text.hide()
        self.warning = QLabel(self)
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(f"QLabel {{ color: {theme.hex_of(WARN)}; }}")
        self.warning.hide()
        self.table = QTableWidget(0, 2, self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setAlternatingRowColors(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.prefix_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.prefix_text)
        layout.addWidget(self.warning)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.comparison: ForkComparison | None = None
        self.show_message("Comparing …")

    def show_message(self, text: str) -> None:
        self.heading.setText(html.escape(text))
        self.prefix_button.hide()
        self.table.setRowCount(0)

    def show_comparison(
        self,
        fork_id: str,
        parent_id: str,
        titles: tuple[str | None, str | None],
        result: ForkComparison,
        shared: Sequence[TurnDigest],
    ) -> None:
        self.comparison = result
        fork_title, parent_title = (t or "(untitled)" for t in titles)
        after = f"after turn {result.fork_turn}" if result.fork_turn is not None else "before its first completed turn"
        self.heading.setText(
            f"<b>{html.escape(fork_title)}</b> <small>({html.escape(fork_id)})</small> beside its parent "
            f"<b>{html.escape(parent_title)}</b> <small>({html.escape(parent_id)})</small><br>"
            f"Forked {html.escape(after)}: the fork's first {plural(result.seed_length, EVENT)} "
            f"{noun(result.seed_length, 'was', 'were')} the parent's."
        )
        same = "identical in both logs" if result.identical_prefix else "see the note below"
        self.prefix_button.setText(
            f"Shared prefix: {plural(result.shared_count, EVENT)}, {plural(result.shared_turns, TURN)} — {same}"
        )
        self.prefix_button.show()
        lines = [shared_line(d) for d in shared] or ["(no turn in the shared prefix)"]
        self.prefix_text.setPlainText("\n".join(lines))
        # As tall as its lines, up to PREFIX_ROWS (then it scrolls).
        rows = min(PREFIX_ROWS, len(lines))
        self.prefix_text.setFixedHeight(
            self.prefix_text.fontMetrics().lineSpacing() * rows + 2 * self.prefix_text.frameWidth() + 12
        )
        if result.identical_prefix:
            self.warning.hide()
        else:
            self.warning.setText(
                f"Only the first {result.shared_count:,} of the {result.seed_length:,} inherited events are still the same in "
                "the parent: one of the two logs was rewritten after the fork (a repair, say). The turns below start at the "
                "fork point all the same."
            )
            self.warning.show()
        sides = (result.parent_after, result.fork_after)
        self.table.setHorizontalHeaderLabels(
            [
                side_title("Parent", len(result.parent_after), result.parent_events_after),
                side_title("Fork", len(result.fork_after), result.fork_events_after),
            ]
        )
        rows = max(len(result.parent_after), len(result.fork_after))
        self.table.setRowCount(rows)
        self.table.setVerticalHeaderLabels([f"+{k + 1}" for k in range(rows)])
        for col, digests in enumerate(sides):
            for row in range(rows):
                if row < len(digests):
                    item = QTableWidgetItem(cell_text(digests[row]))
                    item.setToolTip(cell_tooltip(digests[row]))
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
                else:
                    item = QTableWidgetItem("—")
                    item.setTextAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
                self.table.setItem(row, col, item)
        if rows == 0:
            self.table.setRowCount(1)
            for col in (PARENT, FORK):
                self.table.setItem(0, col, QTableWidgetItem("No turn after the fork point"))

    def cell(self, row: int, side: int) -> str:
        item = self.table.item(row, side)
        return "" if item is None else item.text()

    def _toggle_prefix(self, on: bool) -> None:
        self.prefix_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.prefix_text.setVisible(on)


__all__ = ["CompareDialog", "cell_text"]

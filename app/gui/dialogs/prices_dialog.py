"""Settings > Model prices…: the optional price table (``prices.json`` in the data folder), edited in a grid.

Prices are per million tokens, one row per model key (``provider/model`` or a bare model name); an
empty cell means "no price for that bucket", and a session that used it then shows no complete cost
(never a made-up zero).  Saving validates through ``app.insight.PriceTable.from_json`` (the same rules
as reading the file) and writes atomically with ``save_prices``; a problem is shown in the dialog,
which stays open.

May import: PySide6 and ``app.insight`` (``PriceTable``, ``load_prices``, ``save_prices``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.gui.dialogs.parts import WARN, note
from app.insight import PriceTable, PriceTableError, load_prices, save_prices

COLUMNS = ("Model (provider/model or model)", "Input", "Output", "Cache read", "Cache write")
BUCKETS = ("input", "output", "cacheRead", "cacheWrite")  # the file's keys, in column order after the model


def price_cell(v: float | None) -> str:
    if v is None:
        return ""
    return f"{v:g}"


class PricesDialog(QDialog):
    def __init__(self, path: str, known_models: Sequence[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Model prices")
        self.resize(760, 460)
        self.path = path
        self.saved_path: str | None = None
        self.known_models = [m for m in dict.fromkeys(known_models) if m]
        intro = note(
            "Prices per <b>million tokens</b>, used to show what sessions cost. Leave a cell empty when a bucket has "
            "no price: a session that used it then shows no complete cost. Without a table the statistics show tokens "
            f"only.<br><small>Kept in <code>{html.escape(path)}</code></small>"
        )
        self.currency = QLineEdit(self)
        self.currency.setMaxLength(12)
        self.currency.setMaximumWidth(120)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.add_button = QPushButton("&Add row", self)
        self.add_button.clicked.connect(lambda: self.add_row())
        self.known_button = QPushButton("Add the &open session's models", self)
        self.known_button.setEnabled(bool(self.known_models))
        self.known_button.clicked.connect(self.add_known)
        self.remove_button = QPushButton("&Remove row", self)
        self.remove_button.clicked.connect(self.remove_current)
        self.error = note("", WARN)
        self.error.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Currency", self.currency)
        row = QHBoxLayout()
        for b in (self.add_button, self.known_button, self.remove_button):
            row.addWidget(b)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.load()

    # ------------------------------------------------------------ content

    def load(self) -> None:
        try:
            table = load_prices(self.path)
        except PriceTableError as err:
            table = PriceTable()
            self.show_error(f"The current file cannot be used and is shown empty: {err}")
        self.currency.setText(table.currency)
        self.table.setRowCount(0)
        for key, p in sorted(table.models.items()):
            self.add_row(key, (p.input, p.output, p.cache_read, p.cache_write))

    def add_row(self, model: str = "", prices: Sequence[float | None] = (None, None, None, None)) -> int:
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, 0, QTableWidgetItem(model))
        for c, v in enumerate(prices, start=1):
            item = QTableWidgetItem(price_cell(v))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(r, c, item)
        if not model:
            self.table.setCurrentCell(r, 0)
            first = self.table.item(r, 0)
            if first is not None:
                self.table.editItem(first)
        return r

    def add_known(self) -> None:
        have = {self._text(r, 0) for r in range(self.table.rowCount())}
        for m in self.known_models:
            if m not in have:
                self.add_row(m)

    def remove_current(self) -> None:
        r = self.table.currentRow()
        if r >= 0:
            self.table.removeRow(r)

    def _text(self, row: int, col: int) -> str:
        item = self.table.item(row, col)
        return "" if item is None else item.text().strip()

    # ------------------------------------------------------------ saving

    def table_json(self) -> dict[str, Any]:
        """What the grid says, as the file's JSON (``PriceTableError`` on a cell that is no number)."""
        models: dict[str, dict[str, float]] = {}
        for r in range(self.table.rowCount()):
            key = self._text(r, 0)
            cells = [self._text(r, c) for c in range(1, len(COLUMNS))]
            if not key:
                if any(cells):
                    raise PriceTableError(f"row {r + 1} has prices but no model name")
                continue  # a blank row is no row
            if key in models:
                raise PriceTableError(f"{key!r} is listed twice")
            prices: dict[str, float] = {}
            for wire, text in zip(BUCKETS, cells, strict=True):
                if not text:
                    continue
                try:
                    v = float(text.replace(",", "."))
                except ValueError:
                    raise PriceTableError(f"{key!r}: {wire} {text!r} is not a number") from None
                if not math.isfinite(v) or v < 0:
                    raise PriceTableError(f"{key!r}: {wire} must be a non-negative number (per million tokens)")
                prices[wire] = v
            models[key] = prices
        return {"currency": self.currency.text().strip() or "USD", "models": models}

    def save(self) -> None:
        try:
            table = PriceTable.from_json(self.table_json())
            self.saved_path = save_prices(table, self.path)
        except (PriceTableError, OSError) as err:
            self.show_error(str(err))
            return
        self.accept()

    def show_error(self, text: str) -> None:
        self.error.setText(html.escape(text))
        self.error.setVisible(bool(text))


__all__ = ["PricesDialog"]

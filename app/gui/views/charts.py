"""A small bar chart drawn with QPainter: stacked or single bars, vertical or horizontal, that follows
the palette, says what a bar is on hover, reports clicks and saves itself as PNG.

Why our own widget and not QtCharts, pyqtgraph or a web view: the statistics need three kinds of bar
chart and nothing else.  QtCharts is in PySide6-Addons (~4 MB more in the installer: libQt6Charts,
its binding and the QtOpenGL it links) and draws with a theme of its own that ignores the application
palette; pyqtgraph brings NumPy (~40 MB) for plots drawn here in a few hundred lines; QtWebEngine is
excluded from the install outright (about 200 MB).  A QPainter widget takes its background, text and
grid colours from ``QPalette`` roles, so it is right in light and dark themes without a theme of its own.

Bars can be many (a 5,000-turn session): each is one ``fillRect`` of a ``QRectF`` at most a pixel
wide, never a widget or a scene item, so a repaint stays a few milliseconds.

May import: PySide6 and the standard library.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QContextMenuEvent, QFont, QFontMetrics, QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QSizePolicy, QToolTip, QWidget

from app.gui import theme

SAVE_PNG_TEXT = "Save chart as PNG…"
MARGIN = 10  # px around the chart
BAR_GAP = 0.2  # share of a slot left empty between bars (when the slot is wide enough to show a gap)
MIN_GAP_SLOT_PX = 4.0  # below this slot width bars touch: a gap would be most of the bar
ROW_HEIGHT = 20  # px per bar of a horizontal chart (the tool chart grows with its tools)
PLOT_HEIGHT = 180  # px of a vertical chart's plot area in its size hint
TICKS = 4  # gridlines on the value axis (about: ``nice_ticks`` rounds the step)
MAX_LABEL_SHARE = 0.35  # a horizontal chart's labels take at most this share of the width

# Categorical colours (Okabe-Ito, readable with the common colour-vision deficiencies).  The first
# series takes the palette's Highlight instead, so the main quantity is in the user's accent colour.
ERROR_COLOR = theme.hex_of("chart.error", theme.LIGHT)  # a series named as errors: vermillion (role "chart.error")


def value_text_count(v: float) -> str:
    """A count on an axis: 950, 1.2k, 3.4M, 1.1G."""
    a = abs(v)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= limit:
            x = v / limit
            return f"{x:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def value_text_ms(ms: float) -> str:
    """A duration in ms: 850 ms, 12.3 s, 4 min 5 s, 1 h 02 min."""
    if ms == 0:
        return "0"  # the axis origin needs no unit
    if ms < 1000:
        return f"{ms:.0f} ms"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f}".rstrip("0").rstrip(".") + " s"
    if s < 3600:
        m, sec = divmod(round(s), 60)
        return f"{m} min {sec} s" if sec else f"{m} min"
    h, rem = divmod(round(s), 3600)
    return f"{h} h {rem // 60:02d} min"


def nice_ticks(top: float, count: int = TICKS) -> list[float]:
    """Gridline values from 0 to at least ``top``, at a step of 1, 2, 2.5 or 5 times a power of ten."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    n = math.ceil(top / step - 1e-9)
    return [i * step for i in range(n + 1)]


@dataclass(frozen=True, slots=True)
class ChartBar:
    """One bar: its axis label, one value per series (stacked in series order), the hover text, and
    ``key`` (what a click reports, e.g. a turn's start seq)."""

    label: str
    values: tuple[float, ...]
    tooltip: str
    key: object = None

    @property
    def total(self) -> float:
        return sum(self.values)


@dataclass(frozen=True, slots=True)
class ChartData:
    """What one chart shows.  ``value_text`` formats the value axis; ``horizontal`` lays bars out as rows
    (long labels such as tool names); ``clickable`` bars report clicks."""

    title: str
    series: tuple[str, ...]
    bars: tuple[ChartBar, ...]
    value_text: Callable[[float], str] = value_text_count
    horizontal: bool = False
    clickable: bool = False
    empty_text: str = "Nothing to chart"
    error_series: frozenset[int] = field(default_factory=frozenset)  # series drawn in ERROR_COLOR


def series_colors(palette: QPalette, n: int, errors: frozenset[int] = frozenset()) -> list[QColor]:
    """``n`` series colours for ``palette``: Highlight first, then the theme's categorical set (its dark
    variant on a dark base)."""
    variant = theme.DARK if palette.color(QPalette.ColorRole.Base).lightness() < 128 else theme.LIGHT
    out: list[QColor] = []
    for i in range(n):
        if i in errors:
            c = theme.color("chart.error", variant)
        elif i == 0:
            c = QColor(palette.color(QPalette.ColorRole.Highlight))
        else:
            c = theme.color(f"chart.series.{i % theme.CHART_SERIES}", variant)
        out.append(c)
    return out


class BarChart(QWidget):
    """The chart widget (see the module docstring).  ``bar_clicked(index, key)`` for clickable charts."""

    bar_clicked = Signal(int, object)
    saved = Signal(str)  # the PNG path written

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: ChartData | None = None
        self._tallest = 0.0
        self._columns: list[int] = []  # per pixel column, the bar drawn there (bars thinner than a pixel)
        self._columns_key: tuple[int, float] | None = None
        self._widest: tuple[str, int] | None = None  # (font key, widest label in px)
        self.hovered: int | None = None
        self.marked: int | None = None  # a bar shown as selected (the turn selected in the timeline)
        self.last_menu: QMenu | None = None
        self.file_dialog: QFileDialog | None = None
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)

    # ------------------------------------------------------------ data

    def set_data(self, data: ChartData | None) -> None:
        self.data = data
        # Computed once: every geometry question needs it, and a paint asks once per bar.
        self._tallest = max((b.total for b in data.bars), default=0.0) if data is not None else 0.0
        self._columns_key = None
        self._widest = None
        self.hovered = None
        self.marked = None
        self.setCursor(Qt.CursorShape.PointingHandCursor if data is not None and data.clickable else Qt.CursorShape.ArrowCursor)
        self.updateGeometry()
        self.update()

    def mark(self, index: int | None) -> None:
        if index != self.marked:
            old, self.marked = self.marked, index
            self._update_bars(old, index)

    def _update_bars(self, *indices: int | None) -> None:
        """Repaint only these bars' slots (a hover moving along a long chart repaints two columns)."""
        plot = self.plot_rect()
        for i in indices:
            if i is not None and 0 <= i < len(self.bars):
                self.update(self.bar_rect(i, plot).toAlignedRect().adjusted(-2, -2, 2, 2))

    @property
    def bars(self) -> tuple[ChartBar, ...]:
        return () if self.data is None else self.data.bars

    # ------------------------------------------------------------ geometry

    def _title_font(self) -> QFont:
        f = QFont(self.font())
        f.setBold(True)
        return f

    def _legend_height(self) -> int:
        d = self.data
        return 0 if d is None or len(d.series) < 2 else QFontMetrics(self.font()).height() + 6

    def _header_height(self) -> int:
        return QFontMetrics(self._title_font()).height() + 6 + self._legend_height()

    def sizeHint(self) -> QSize:
        fm = QFontMetrics(self.font())
        d = self.data
        head = MARGIN + self._header_height()
        if d is not None and d.horizontal:
            rows = max(1, len(d.bars))
            return QSize(480, head + rows * ROW_HEIGHT + fm.height() + 8 + MARGIN)
        return QSize(480, head + PLOT_HEIGHT + fm.height() + 8 + MARGIN)

    def minimumSizeHint(self) -> QSize:
        return QSize(240, self.sizeHint().height())

    def _axis_width(self, ticks: Sequence[float]) -> int:
        fm = QFontMetrics(self.font())
        assert self.data is not None
        return max(fm.horizontalAdvance(self.data.value_text(t)) for t in ticks) + 8

    def _label_width(self) -> int:
        widest = self._widest_label(QFontMetrics(self.font())) + 8
        return int(min(widest, self.width() * MAX_LABEL_SHARE))

    def plot_rect(self) -> QRectF:
        """Where the bars are drawn (axes and labels outside it)."""
        fm = QFontMetrics(self.font())
        top = MARGIN + self._header_height()
        d = self.data
        if d is None:
            return QRectF(MARGIN, top, max(1, self.width() - 2 * MARGIN), max(1, self.height() - top - MARGIN))
        if d.horizontal:
            left = MARGIN + self._label_width()
            bottom = self.height() - MARGIN - fm.height() - 4
        else:
            left = MARGIN + self._axis_width(nice_ticks(self._top()))
            bottom = self.height() - MARGIN - fm.height() - 4
        return QRectF(left, top, max(1.0, self.width() - MARGIN - left), max(1.0, bottom - top))

    def _top(self) -> float:
        return self._tallest

    def _widest_label(self, fm: QFontMetrics) -> int:
        """The widest category label in px (measured once per data and font: a label is measured per bar)."""
        key = self.font().key()
        if self._widest is None or self._widest[0] != key:
            self._widest = (key, max((fm.horizontalAdvance(b.label) for b in self.bars), default=0))
        return self._widest[1]

    def _slot(self, plot: QRectF) -> float:
        n = max(1, len(self.bars))
        if self.data is not None and self.data.horizontal:
            return plot.height() / n
        return plot.width() / n

    def bar_rect(self, index: int, plot: QRectF | None = None) -> QRectF:
        """The slot of bar ``index`` (its full column or row, for hit tests and tests); ``plot``: the
        plot rectangle when the caller has it (a paint asks for every bar: one layout, not n)."""
        plot = plot if plot is not None else self.plot_rect()
        slot = self._slot(plot)
        if self.data is not None and self.data.horizontal:
            return QRectF(plot.left(), plot.top() + index * slot, plot.width(), slot)
        return QRectF(plot.left() + index * slot, plot.top(), slot, plot.height())

    def bar_at(self, pos: QPoint | QPointF) -> int | None:
        """The bar whose slot holds ``pos`` (a whole column or row, so a tiny bar is easy to point at)."""
        if not self.bars:
            return None
        plot = self.plot_rect()
        x, y = float(pos.x()), float(pos.y())
        if self.data is not None and self.data.horizontal:
            if not (plot.top() <= y < plot.bottom() and MARGIN <= x <= plot.right()):
                return None
            i = int((y - plot.top()) / self._slot(plot))
        else:
            if not (plot.left() <= x < plot.right() and plot.top() <= y <= plot.bottom() + 4):
                return None
            i = int((x - plot.left()) / self._slot(plot))
        return i if 0 <= i < len(self.bars) else None

    def tooltip_at(self, pos: QPoint | QPointF) -> str | None:
        i = self.bar_at(pos)
        return None if i is None else self.bars[i].tooltip

    # ------------------------------------------------------------ painting

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            self._paint(p, QRectF(event.rect()))
        finally:
            p.end()

    def visible_bars(self, plot: QRectF, clip: QRectF) -> list[tuple[int, int | None]]:
        """The bars to draw inside ``clip``: every one whose slot meets it, or, when bars are thinner than
        a pixel, the tallest of each pixel column (what a pixel could show anyway): a 20,000-turn chart
        paints ~1,000 bars, and a hover repaints two columns, not the whole chart.  Each is (bar, the pixel
        column it fills when bars are thinner than a pixel, else None)."""
        n = len(self.bars)
        if n == 0:
            return []
        horizontal = self.data is not None and self.data.horizontal
        start, length = (plot.top(), plot.height()) if horizontal else (plot.left(), plot.width())
        lo_px, hi_px = (clip.top(), clip.bottom()) if horizontal else (clip.left(), clip.right())
        slot = length / n
        if slot >= 1:
            i0 = max(0, int((lo_px - start) / slot) - 1)
            i1 = min(n, int((hi_px - start) / slot) + 2)
            return [(i, None) for i in range(i0, i1)]
        key = (n, round(length, 3))
        if self._columns_key != key:
            bars = self.bars
            columns = []
            for px in range(math.ceil(length)):
                a = int(px / slot)
                b = min(n, max(a + 1, int((px + 1) / slot)))
                columns.append(max(range(a, b), key=lambda i: bars[i].total) if a < n else n - 1)
            self._columns, self._columns_key = columns, key
        c0 = max(0, int(lo_px - start) - 1)
        c1 = min(len(self._columns), int(hi_px - start) + 2)
        return [(self._columns[px], px) for px in range(c0, c1)]

    def _paint(self, p: QPainter, clip: QRectF) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        muted = QColor(text)
        muted.setAlpha(150)
        grid = QColor(text)
        grid.setAlpha(40)
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        d = self.data
        fm = QFontMetrics(self.font())
        title_font = self._title_font()
        tfm = QFontMetrics(title_font)
        if d is None:
            return
        p.setPen(text)
        p.setFont(title_font)
        p.drawText(QPointF(MARGIN, MARGIN + tfm.ascent()), d.title)
        p.setFont(self.font())
        colors = series_colors(pal, len(d.series), d.error_series)
        if len(d.series) > 1:
            x = float(MARGIN)
            ly = MARGIN + tfm.height() + 6
            for name, c in zip(d.series, colors, strict=True):
                sw = fm.height() - 4
                p.fillRect(QRectF(x, ly + 2, sw, sw), c)
                p.setPen(muted)
                p.drawText(QPointF(x + sw + 4, ly + fm.ascent()), name)
                x += sw + 4 + fm.horizontalAdvance(name) + 14
        plot = self.plot_rect()
        if not d.bars or self._top() <= 0:
            p.setPen(muted)
            p.drawText(plot, int(Qt.AlignmentFlag.AlignCenter), d.empty_text if not d.bars else f"{d.empty_text} (all zero)")
            if not d.bars:
                return
        ticks = nice_ticks(self._top())
        scale_top = ticks[-1] or 1.0
        # Gridlines and value labels.
        for t in ticks:
            p.setPen(grid)
            if d.horizontal:
                x = plot.left() + plot.width() * t / scale_top
                p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
                p.setPen(muted)
                label = d.value_text(t)
                lw = fm.horizontalAdvance(label)
                lx = min(max(plot.left(), x - lw / 2), self.width() - MARGIN - lw)
                p.drawText(QPointF(lx, plot.bottom() + 4 + fm.ascent()), label)
            else:
                y = plot.bottom() - plot.height() * t / scale_top
                p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
                p.setPen(muted)
                label = d.value_text(t)
                p.drawText(QPointF(plot.left() - 6 - fm.horizontalAdvance(label), y + fm.ascent() / 2 - 1), label)
        slot = self._slot(plot)
        gap = slot * BAR_GAP if slot >= MIN_GAP_SLOT_PX else 0.0
        band = QColor(pal.color(QPalette.ColorRole.Highlight))
        for i, alpha in ((self.marked, 70), (self.hovered, 35)):
            if i is not None and 0 <= i < len(d.bars):
                band.setAlpha(alpha)
                p.fillRect(self.bar_rect(i, plot), band)
        for i, px in self.visible_bars(plot, clip):
            bar = d.bars[i]
            cell = self.bar_rect(i, plot)
            if px is not None:  # one pixel column, drawn by its tallest bar
                if d.horizontal:
                    cell = QRectF(cell.left(), plot.top() + px, cell.width(), 1.0)
                else:
                    cell = QRectF(plot.left() + px, cell.top(), 1.0, cell.height())
            offset = 0.0
            for v, c in zip(bar.values, colors, strict=False):
                if v <= 0:
                    continue
                length = v / scale_top
                if d.horizontal:
                    w = plot.width() * length
                    r = QRectF(plot.left() + plot.width() * offset, cell.top() + gap / 2, w, cell.height() - gap)
                else:
                    h = plot.height() * length
                    r = QRectF(cell.left() + gap / 2, plot.bottom() - plot.height() * offset - h, cell.width() - gap, h)
                # A bar thinner than a pixel still shows (a 1-token turn among million-token ones, or one
                # of 20,000 turns in 900 px).
                if d.horizontal:
                    r.setWidth(max(1.0, r.width()))
                    r.setHeight(max(1.0, r.height()))
                else:
                    r.setTop(min(r.top(), r.bottom() - 1))
                    r.setWidth(max(1.0, r.width()))
                p.fillRect(r, c)
                offset += length
        # Axis line and category labels.
        p.setPen(muted)
        if d.horizontal:
            p.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
            room = plot.left() - MARGIN - 6
            for i, bar in enumerate(d.bars):
                cell = self.bar_rect(i, plot)
                label = fm.elidedText(bar.label, Qt.TextElideMode.ElideMiddle, int(room))
                p.drawText(
                    QRectF(MARGIN, cell.top(), room, cell.height()),
                    int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                    label,
                )
        else:
            p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
            widest = self._widest_label(fm) + 8
            every = max(1, math.ceil(widest / max(slot, 0.001)))
            for i in range(0, len(d.bars), every):
                cell = self.bar_rect(i, plot)
                label = d.bars[i].label
                lw = fm.horizontalAdvance(label)
                x = cell.center().x() - lw / 2
                p.drawText(QPointF(max(plot.left() - lw / 2, x), plot.bottom() + 4 + fm.ascent()), label)

    # ------------------------------------------------------------ interaction

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            tip = self.tooltip_at(e.pos())
            if tip:
                QToolTip.showText(e.globalPos(), tip, self, self.bar_rect(self.bar_at(e.pos()) or 0).toRect())
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        i = self.bar_at(e.position())
        if i != self.hovered:
            old, self.hovered = self.hovered, i
            self._update_bars(old, i)
        super().mouseMoveEvent(e)

    def leaveEvent(self, e: QEvent) -> None:
        if self.hovered is not None:
            old, self.hovered = self.hovered, None
            self._update_bars(old)
        super().leaveEvent(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() == Qt.MouseButton.LeftButton and self.data is not None and self.data.clickable:
            i = self.bar_at(e.position())
            if i is not None:
                self.click_bar(i)
                return
        super().mousePressEvent(e)

    def click_bar(self, index: int) -> None:
        """What a click on bar ``index`` does (the mouse handler's, also for tests and keyboard)."""
        self.mark(index)
        self.bar_clicked.emit(index, self.bars[index].key)

    def contextMenuEvent(self, e: QContextMenuEvent) -> None:
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        act = menu.addAction(SAVE_PNG_TEXT)
        act.setEnabled(self.data is not None)
        act.triggered.connect(self.ask_save)
        self.last_menu = menu
        menu.popup(e.globalPos())

    def suggested_file_name(self) -> str:
        title = self.data.title if self.data is not None else "chart"
        safe = "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")
        while "--" in safe:
            safe = safe.replace("--", "-")
        return f"{safe or 'chart'}.png"

    def ask_save(self, _checked: bool = False, folder: str | None = None) -> None:
        """Choose a file (non-blocking dialog), then ``save_png``."""
        dlg = QFileDialog(self, "Save chart as PNG")
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dlg.setNameFilters(["PNG images (*.png)"])
        dlg.setDefaultSuffix("png")
        dlg.selectFile(os.path.join(folder or os.path.expanduser("~"), self.suggested_file_name()))
        dlg.fileSelected.connect(self._save_chosen)
        self.file_dialog = dlg
        dlg.open()

    def _save_chosen(self, path: str) -> None:
        if self.save_png(path):
            self.saved.emit(path)
        else:
            box = QMessageBox(
                QMessageBox.Icon.Warning, "Save chart", f"Could not write {path}.", QMessageBox.StandardButton.Close, self
            )
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()

    def save_png(self, path: str) -> bool:
        """Write the chart as it is drawn (palette included) to ``path``; False when it cannot be written."""
        hovered, self.hovered = self.hovered, None  # the pointer's band is no part of the picture
        try:
            return bool(self.grab().save(path, "PNG"))
        finally:
            self.hovered = hovered


__all__ = [
    "ERROR_COLOR",
    "SAVE_PNG_TEXT",
    "BarChart",
    "ChartBar",
    "ChartData",
    "nice_ticks",
    "series_colors",
    "value_text_count",
    "value_text_ms",
]

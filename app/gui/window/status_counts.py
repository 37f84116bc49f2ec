"""The status bar's counts: "1,204 sessions  ·  3 open turns  ·  diagnosing 812 …", redrawn at most every 250 ms.

Why its own module: on a 10,000-session root the background diagnosis reports thousands of rows a
second; redrawing the counts on each would cost more than the diagnosis, so they are throttled (not
debounced: a steady stream still updates four times a second).  Split out of the main window, which
had passed the 600-line limit, as the one place that says which statuses are counted and how.

May import: PySide6, ``app.glossary``, ``app.gui.style`` and the window's models; never ``window.main_window``.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLabel

from app.glossary import SESSION, plural
from app.gui import style
from app.gui.models.sessions import SessionListModel

COUNTED_STATUSES = ("open-turn", "torn-tail", "corrupt", "unreadable", "symlink", "unsupported", "busy", "missing")
COUNTS_THROTTLE_MS = 250  # the status bar's counts are redrawn at most this often while diagnoses stream in


class StatusCounts(QObject):
    """Keeps ``label`` saying how many sessions the list holds and how many of each problem status."""

    def __init__(self, model: SessionListModel, label: QLabel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model, self.label = model, label
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COUNTS_THROTTLE_MS)
        self._timer.timeout.connect(self.update)

    def schedule(self, _waiting: int = 0) -> None:
        """Redraw soon: within ``COUNTS_THROTTLE_MS``, once however many rows changed meanwhile."""
        if not self._timer.isActive():  # a throttle, not a debounce: a steady stream still updates
            self._timer.start()

    def update(self) -> None:
        counts = self.model.status_counts()
        parts = [plural(self.model.total, SESSION)]
        parts += [f"{counts[s]} {style.STATUS_LABELS[s]}" for s in COUNTED_STATUSES if counts.get(s)]
        if counts.get("pending"):
            parts.append(f"diagnosing {counts['pending']:,} …")
        self.label.setText("  ·  ".join(parts))


__all__ = ["COUNTED_STATUSES", "COUNTS_THROTTLE_MS", "StatusCounts"]

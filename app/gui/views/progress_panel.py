"""Status-bar progress for long loads: label, bar (busy when the fraction is unknown) and Cancel.

May import: PySide6 and ``runtime.worker_threads`` (the ``Progress`` record it polls).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from app.gui.runtime.worker_threads import Progress


class ProgressPanel(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setFixedWidth(140)
        self.bar.setTextVisible(False)
        self.button = QToolButton(self)
        self.button.setText("Cancel")
        self.button.setToolTip("Cancel the running load (Esc)")
        self.button.clicked.connect(self.cancel_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.button)
        self._active: list[Progress] = []
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._tick)
        self.hide()

    def track(self, progress: Progress) -> None:
        self._active.append(progress)
        self._tick()
        self._timer.start()
        self.show()

    def untrack(self, progress: Progress) -> None:
        if progress in self._active:
            self._active.remove(progress)
        if not self._active:
            self._timer.stop()
            self.hide()

    @property
    def busy(self) -> bool:
        return bool(self._active)

    def _tick(self) -> None:
        if not self._active:
            return
        label, fraction = self._active[-1].snapshot()
        self.label.setText(label)
        if fraction is None:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(fraction * 1000))

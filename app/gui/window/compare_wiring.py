"""Session > Compare with…: the open session beside any other (of the list, or a file or folder).

A feature of its own (built from the ``WindowContext``, registered in ``window.features``): its action
sits in the Session menu and, as a window shortcut, in the command palette.  It asks which session
(``ComparePickDialog``), reads both sides off the GUI thread and shows ``app.compare``'s result in
``SessionCompareDialog``.  A side from the list is read through the open root's viewer store; a side
from a file or folder (a transcript, a bundle, a root) through ``app.compare.read_session``, in a
worker thread with its own event loop, so a bundle's unpacking never stalls the window.  A source
holding several sessions asks which one with the same picker.  Nothing is written anywhere.

May import: PySide6, ``app.compare``, ``app.sources`` (error values), the window's context, dialogs
and runtime; never ``window.main_window``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from PySide6.QtGui import QAction, QKeySequence

from app.compare import SessionComparison, compare_sessions, read_session
from app.gui.dialogs.session_compare_dialog import ComparePickDialog, SessionCompareDialog
from app.gui.runtime.worker_threads import in_thread
from app.gui.window.context import WindowContext
from app.sources import AmbiguousSessionError
from persistence import EventLog, SessionPersistenceError

log = logging.getLogger(__name__)

COMPARE_KEY = "Ctrl+Shift+M"  # M: match two sessions (D is the dashboard)
STATUS_MS = 6000
JOB = "compare-sessions"


class CompareFeature:
    """The "Compare with…" action, its picker and its view."""

    def __init__(self, ctx: WindowContext) -> None:
        self.w = ctx
        self.action = QAction("Compare &with …", ctx.qwindow)
        self.action.setShortcut(QKeySequence(COMPARE_KEY))
        self.action.setToolTip("Compare the open session with any other: turns aligned by their prompts")
        self.action.triggered.connect(lambda _c=False: self.ask())
        ctx.menus.add_shortcut(self.action)
        menu = ctx.menus.menu("Session")
        if menu is not None:
            menu.addSeparator()
            menu.addAction(self.action)
        self.picker: ComparePickDialog | None = None
        self.dialog: SessionCompareDialog | None = None
        self.last: SessionComparison | None = None
        ctx.list_pane.session_selected.connect(lambda _k: self.update_action())
        self.update_action()

    def update_action(self) -> None:
        self.action.setEnabled(self.w.current_row() is not None)

    # ------------------------------------------------------------ asking

    def ask(self) -> ComparePickDialog | None:
        """The picker for the open session (the other listed sessions, or a file or folder)."""
        row = self.w.current_row()
        if row is None or self.w.controller.opened is None:
            self.w.show_status("Open a session to compare it with another", STATUS_MS)
            return None
        others = [(r.session_id, r.title) for r in self.w.session_model.rows() if r.session_id != row.session_id and r.meta]
        picker = self._picker(row.session_id, others)
        picker.session_chosen.connect(lambda sid: self.compare_with(sid))
        picker.path_chosen.connect(lambda path: self.compare_with_path(path))
        return picker

    def _picker(self, current: str, sessions: list[tuple[str, str | None]]) -> ComparePickDialog:
        if self.picker is not None:
            self.picker.deleteLater()
        picker = self.picker = ComparePickDialog(current, sessions, self.w.qwindow)
        picker.open()
        return picker

    # ------------------------------------------------------------ comparing

    def compare_with(self, other_id: str) -> SessionCompareDialog | None:
        """The open session beside ``other_id`` of the same root."""
        return self._start(other_id, None, None)

    def compare_with_path(self, path: str, session_id: str | None = None) -> SessionCompareDialog | None:
        """The open session beside a session of the source at ``path`` (its only one when ``session_id`` is None)."""
        return self._start(None, path, session_id)

    def _start(self, other_id: str | None, path: str | None, path_id: str | None) -> SessionCompareDialog | None:
        row = self.w.current_row()
        opened = self.w.controller.opened
        if row is None or opened is None:
            self.w.show_status("Open a session to compare it with another", STATUS_MS)
            return None
        if self.dialog is None:
            self.dialog = SessionCompareDialog(self.w.qwindow)
        d = self.dialog
        other = other_id or (f"{path} {path_id}" if path_id else path)
        d.show_message(f"Comparing {row.session_id} with {other} …")
        d.show()
        d.raise_()
        self.w.jobs.spawn(self._guarded(row.session_id, opened.store, other_id, path, path_id), name=f"compare {other}", key=JOB)
        return d

    async def _guarded(self, a_id: str, store: Any, other_id: str | None, path: str | None, path_id: str | None) -> None:
        try:
            await self._compare(a_id, store, other_id, path, path_id)
        except asyncio.CancelledError:
            raise
        except AmbiguousSessionError as err:
            if path is not None and err.ids:
                if self.dialog is not None:
                    self.dialog.show_message(f"{os.path.basename(path)} holds {len(err.ids)} sessions: pick one.")
                picker = self._picker(a_id, [(sid, None) for sid in err.ids])
                picker.setWindowTitle(f"Which session of {os.path.basename(path)}?")
                picker.file_button.hide()
                picker.session_chosen.connect(lambda sid: self.compare_with_path(path, sid))
            else:
                self._failed(str(err))
        except (SessionPersistenceError, OSError, RuntimeError) as err:
            self._failed(str(err) or type(err).__name__)
        except Exception as err:  # a bug must still end in a message, not a silently dead job
            log.exception("compare failed")
            self._failed(f"unexpected {type(err).__name__}: {err}")

    async def _compare(self, a_id: str, store: Any, other_id: str | None, path: str | None, path_id: str | None) -> None:
        a_view = await store.view(a_id)
        if not a_view.readable:
            raise SessionPersistenceError(f"session {a_id} cannot be read ({a_view.status}): {a_view.reason}")
        b_log: EventLog
        if other_id is not None:
            b_view = await store.view(other_id)
            if not b_view.readable:
                raise SessionPersistenceError(f"session {other_id} cannot be read ({b_view.status}): {b_view.reason}")
            b_id, b_log, b_label = other_id, b_view.stored, other_id
        else:
            assert path is not None
            source = path
            # Its own loop in a worker thread: opening a bundle unpacks it, which must not stall the window.
            b_id, b_log = await in_thread(lambda: asyncio.run(read_session(source, path_id)))
            b_label = f"{os.path.basename(path)} ({b_id})"
        a_log = a_view.stored
        result = await in_thread(lambda: compare_sessions(a_log, b_log, a_id=a_id, b_id=b_id, a_label=a_id, b_label=b_label))
        self.last = result
        if self.dialog is not None:
            self.dialog.show_comparison(result)

    def _failed(self, text: str) -> None:
        if self.dialog is not None:
            self.dialog.show_message(f"Cannot compare: {text}")
        self.w.show_status(f"Cannot compare: {text}", STATUS_MS)

    async def close(self) -> None:
        self.w.jobs.cancel(JOB)
        for d in (self.picker, self.dialog):
            if d is not None:
                d.close()


__all__ = ["CompareFeature"]

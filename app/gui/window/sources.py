"""Opening a source in the window: File > Open folder / Open file, drops, File > Open Recent, links.

Why a module of its own: "open anything" (issue 23) is one path for every way in.  A path the user
names becomes an ``app.sources.OpenedSource`` off the GUI thread (a bundle is extracted and every
file hashed: progress in the status bar, Esc or its Cancel button abandons it), then the window shows
its first part through ``MainWindow.open_root`` with the part's own store opener (read-only parts
refuse every write).  A case folder of several parts (two transcripts and a bundle, say) gets a part
chooser at the right of the status bar (shown whatever message the bar holds): choosing a part shows
its sessions, and the title and status bar name the part shown ("case — case folder, 3 parts · customer log.txt — transcript").
One part at a time, because each part is its own store (its own list, search index and liveness);
a case folder holds a handful, so one choice away is close enough.  A received source (a transcript,
a bundle, a case folder) is read-only: the session actions offer "Repair a copy …" / "Fork into …"
instead of writing (``SessionActions.read_only``).
A bundle whose files do not match its manifest still opens, with the mismatch in a banner above the
tabs.  The recent list keeps the path the user opened (the ``.zip``), never a bundle's extraction,
and the extraction is removed when another source replaces it or the window closes, with the search
index, diagnosis and statistics caches made of it (they would pile up: a new extraction path, so a
new cache file, on every open).

May import: PySide6, ``app.sources`` (Qt-free), ``runtime`` and the window's own modules; never
``window.main_window`` (the window is handed in as ``SourceWindow``).
"""

from __future__ import annotations

import asyncio
import html
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QMainWindow, QWidget

from app.gui import theme
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import open_for_viewing
from app.gui.runtime.worker_threads import Progress
from app.gui.settings import AppSettings
from app.gui.views.progress_panel import ProgressPanel
from app.sources import (
    RECEIVED_KINDS,
    OpenedSource,
    SourceError,
    SourceKind,
    SourcePart,
    close_source,
    open_part_store,
    open_source,
    resolve_session,
)
from app.sources.derived_caches import cache_files_of, remove_cache_files
from app.sources.model import check_words
from persistence import CoordinatedPersistence, SessionPersistenceError

log = logging.getLogger(__name__)
# A bundle's check above the tabs: (foreground, background) theme roles and padding.
OK_STYLE = ("status.ok", "banner.bg", "3px 8px")
MISMATCH_STYLE = ("status.corrupt", "status.corrupt.bg", "4px 8px")
# After a source closed, its caches are removed once more this much later (an index thread closes in ms).
RETIRED_CACHE_RECHECK_S = 5.0


def banner_style(kind: tuple[str, str, str]) -> str:
    fg, bg, padding = kind
    return f"QLabel {{ background: {theme.hex_of(bg)}; color: {theme.hex_of(fg)}; padding: {padding}; }}"


READ_ONLY = "{name} is a received {kind}, opened read-only: it is never written. Use “Repair a copy …” or “Fork into …”."


class SourceWindow(Protocol):
    """What this module needs of the window."""

    @property
    def qwindow(self) -> QMainWindow: ...

    def open_root(
        self,
        root: str,
        *,
        session: str | None = None,
        seq: int | None = None,
        opener: Callable[[], CoordinatedPersistence] | None = None,
    ) -> object: ...

    def show_source_failure(self, path: str, message: str) -> None: ...

    def show_status(self, text: str, ms: int = 0) -> None: ...


def read_only_reason(src: OpenedSource | None) -> str | None:
    """Why the open source may not be written (None: it may)."""
    if src is None or not src.read_only:
        return None
    return READ_ONLY.format(name=src.path.name or str(src.path), kind=src.kind)


def check_lines(check: object | None) -> list[str]:
    """A bundle check's findings, one per file, and the sender's own verdict (its verify.json)."""
    if check is None:
        return []
    problems = getattr(check, "problems", None)
    lines = [str(p) for p in problems()] if callable(problems) else []
    sender = getattr(check, "sender_says", None)
    if isinstance(sender, str):
        lines.append(f"The sender's verify.json says: {sender}")
    return lines


def dropped_paths(event: QDropEvent | QDragEnterEvent) -> list[str]:
    """The local files and folders a drag carries (a URL that is no local file is ignored)."""
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


class WindowSources(QObject):
    """The open source of one window, and every way of opening another."""

    def __init__(self, window: SourceWindow, jobs: Jobs, progress: ProgressPanel, settings: AppSettings, parent: QObject) -> None:
        super().__init__(parent)
        self.window = window
        self.jobs = jobs
        self.progress = progress
        self.settings = settings
        self.current: OpenedSource | None = None  # what the window shows (None: a root opened directly)
        self.file_dialog: QFileDialog | None = None  # the chooser on screen (tests drive it)
        self._opening: Progress | None = None
        self._retired_caches: list[str] = []  # removed again at shutdown (see ``_close_retired``)
        progress.cancel_requested.connect(self.cancel)
        # The bundle check's findings, above the content tabs (hidden when there are none).
        self.check_banner = QLabel(window.qwindow)
        self.check_banner.setWordWrap(True)
        self.check_banner.setTextFormat(Qt.TextFormat.RichText)
        self.check_banner.hide()
        # The part shown of a case folder of several parts (hidden otherwise), beside the root label.
        self.part_index = 0
        self.part_box = QComboBox(window.qwindow)
        self.part_box.setObjectName("sourcePartChooser")
        self.part_box.setToolTip("This case folder holds several parts: choose the one whose sessions to show")
        self.part_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.part_box.activated.connect(self.show_part)
        # Permanent: a transient status message must not hide the way to the other parts.
        self.part_chooser = QWidget(window.qwindow)
        row = QHBoxLayout(self.part_chooser)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Part:", self.part_chooser))
        row.addWidget(self.part_box)
        self.part_chooser.hide()
        window.qwindow.statusBar().addPermanentWidget(self.part_chooser)

    # ------------------------------------------------------------ what is open

    @property
    def read_only(self) -> str | None:
        return read_only_reason(self.current)

    def label(self) -> str | None:
        """``case.zip — support bundle, verified``: the title bar's and status bar's words for a received
        source (None for a root or store the user keeps: the window names its path and backend)."""
        src = self.current
        if src is None or src.kind not in RECEIVED_KINDS:
            return None
        part = self.shown_part()
        if src.kind is SourceKind.CASE_FOLDER and part is not None:
            return f"{src.label()} · {part.label}"
        return src.label()

    def shown(self, text: str) -> str:
        """``text`` naming the open source's files as the user knows them (``case.zip: session/…``),
        never our extraction of them in the cache folder (``OpenedSource.shown``)."""
        return self.current.shown(text) if self.current is not None else text

    def shown_paths(self) -> tuple[tuple[str, str], ...]:
        """(our path, the user's words for it) of the open source, for the list, the diagnosis pass and the
        loader (``OpenRoot.shown``): a bundle's damaged transcript is cited as ``case.zip: session/…``."""
        return tuple(self.current.shown_paths()) if self.current is not None else ()

    def empty_text(self) -> str | None:
        """What the empty list says of a received part with no session (rich text; None: not one): the
        part by its name, and a bundle's check, whose banner the empty list hides (a tampered transcript
        often lists nothing)."""
        part = self.shown_part()
        if part is None or self.current is None or self.current.kind not in RECEIVED_KINDS:
            return None
        check = self.current.bundle_check if self.current.bundle_check is not None else part.check
        lines = [f"No sessions in {html.escape(part.label)}."]
        if check is not None:
            lines.append(html.escape(f"{part.origin.name}: {check_words(check)}"))
            lines += [html.escape(line, quote=False) for line in check_lines(check)]
        return "<br>".join(lines)

    def shown_part(self) -> SourcePart | None:
        """The part of the open source the window shows (None: no source, or one without parts)."""
        src = self.current
        if src is None or not src.parts:
            return None
        return src.parts[min(self.part_index, len(src.parts) - 1)]

    def recent_path(self, root: str) -> str:
        """What File > Open Recent keeps for the window's root: the path the user opened."""
        return str(self.current.path) if self.current is not None else root

    # ------------------------------------------------------------ choosing

    def choose_folder(self) -> None:
        """File > Open folder …: a session root or a case folder."""
        self._choose("Open a folder (a session root or a case folder)", QFileDialog.FileMode.Directory)

    def choose_file(self) -> None:
        """File > Open file …: a transcript (any name), a support bundle or a SQLite store."""
        self._choose("Open a file (a transcript, a support bundle or a SQLite store)", QFileDialog.FileMode.ExistingFile)

    def _choose(self, title: str, mode: QFileDialog.FileMode) -> None:
        dlg = QFileDialog(self.window.qwindow, title)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.setFileMode(mode)
        if mode == QFileDialog.FileMode.Directory:
            dlg.setOption(QFileDialog.Option.ShowDirsOnly, True)
        else:  # recognised by content: a mailed transcript is often renamed, so no name filter by default
            dlg.setNameFilters(["Every file (*)", "Support bundles (*.zip)", "Transcripts (*.jsonl *.zstd *.zst *.txt)"])
        dlg.fileSelected.connect(lambda path: self.open(path))
        self.file_dialog = dlg
        dlg.open()

    # ------------------------------------------------------------ drops

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if dropped_paths(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def drop(self, event: QDropEvent) -> asyncio.Task[Any] | None:
        paths = dropped_paths(event)
        if not paths:
            event.ignore()
            return None
        event.acceptProposedAction()
        if len(paths) > 1:
            self.window.show_status(f"Opening the first of {len(paths)} dropped items: {paths[0]}", 10_000)
        return self.open(paths[0])

    # ------------------------------------------------------------ opening

    def open(self, path: str, *, session: str | None = None, seq: int | None = None) -> asyncio.Task[Any]:
        """Open ``path`` whatever it holds; with ``session`` select it, with ``seq`` too go to that event."""
        path = os.path.abspath(os.path.expanduser(path))
        self.cancel()
        return self.jobs.spawn(self._open(path, session, seq), name=f"open {path}", key="source")

    def cancel(self) -> None:
        if self._opening is not None:
            self._opening.cancel.set()
            self.jobs.cancel("source")

    async def _open(self, path: str, session: str | None, seq: int | None) -> None:
        if not os.path.lexists(path):  # the root's own words ("No session root at …") and its empty list
            self._replace(None)
            self.window.open_root(path, session=session, seq=seq)
            return
        progress = self._opening = Progress(f"Opening {os.path.basename(path) or path} …")
        self.progress.track(progress)
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, open_source, Path(path))
        try:
            src = await asyncio.shield(fut)
        except asyncio.CancelledError:
            # The open goes on in its thread; whatever it made is removed when it ends.
            fut.add_done_callback(lambda f: _close_later(loop, f))
            self.window.show_status(f"Stopped opening {path}", 10_000)
            raise
        except (SourceError, SessionPersistenceError, OSError) as err:
            self.window.show_source_failure(path, str(err))
            return
        finally:
            self.progress.untrack(progress)
            self._opening = None
        self._replace(src)
        if not src.parts:
            self.window.show_source_failure(path, f"{src.label()} holds no session store")
            return
        self._fill_parts(src)
        index = await self._part_holding(src, session)
        if len(src.parts) > 1:
            self.window.show_status(
                f"{src.label()}: showing {src.parts[index].label}; choose another part at the right of the status bar", 15_000
            )
        self._open_part(index, session=session, seq=seq)

    @staticmethod
    async def _part_holding(src: OpenedSource, session: str | None) -> int:
        """The part to show first: the one holding ``session`` (a link into a case folder), else the first."""
        if session is None or len(src.parts) < 2:
            return 0
        try:
            part, _sid = await resolve_session(src, session)
        except (SessionPersistenceError, OSError):
            return 0  # not in the source: the first part shows, and says it lacks the session
        return src.parts.index(part)

    def show_part(self, index: int) -> None:
        """Show the sessions of part ``index`` of the open source (the part chooser's choice)."""
        src = self.current
        if src is None or not 0 <= index < len(src.parts) or index == self.part_index:
            return
        self._open_part(index)

    def _fill_parts(self, src: OpenedSource) -> None:
        self.part_box.blockSignals(True)
        self.part_box.clear()
        for part in src.parts:
            self.part_box.addItem(part.label, os.fspath(part.origin))
        self.part_box.blockSignals(False)
        self.part_chooser.setVisible(len(src.parts) > 1)

    def _open_part(self, index: int, *, session: str | None = None, seq: int | None = None) -> None:
        src = self.current
        assert src is not None
        self.part_index = index
        part = src.parts[index]
        if self.part_box.currentIndex() != index:
            self.part_box.setCurrentIndex(index)
        self._show_check(src, part)
        store_path = str(part.store_path)
        # A received part refuses every write; a root or store the user keeps is opened as the viewer
        # always opens one (read-only too: a viewer never changes what it shows).
        opener = (lambda: open_part_store(part)) if part.read_only else (lambda: open_for_viewing(store_path))
        self.window.open_root(store_path, session=session, seq=seq, opener=opener)

    def _show_check(self, src: OpenedSource, part: SourcePart) -> None:
        """Our check of a bundle beside the sender's verdict: a quiet line when it holds, every finding when not
        (a case folder's bundle part: that bundle's check)."""
        check = src.bundle_check if src.bundle_check is not None else part.check
        if check is None:
            self.check_banner.hide()
            return
        lines = check_lines(check)
        name = html.escape(src.path.name if src.bundle_check is not None else part.origin.name)
        if getattr(check, "ok", False):
            count = getattr(check, "files_checked", None)
            ours = f"✓ {name}: every file matches its manifest" + (f" ({count} checked)" if isinstance(count, int) else "")
            self.check_banner.setStyleSheet(banner_style(OK_STYLE))
            self.check_banner.setText(" · ".join([ours, *(html.escape(line, quote=False) for line in lines)]))
        else:
            words = html.escape(check_words(check))
            self.check_banner.setStyleSheet(banner_style(MISMATCH_STYLE))
            findings = "".join(f"<br>{html.escape(line, quote=False)}" for line in lines)
            self.check_banner.setText(f"<b>{name}: {words}</b>{findings}")
        self.check_banner.show()

    def root_opened_directly(self) -> None:
        """The window opened a root itself (the demo, a lineage link): no source is open any more."""
        self._replace(None)

    def _replace(self, src: OpenedSource | None) -> None:
        old, self.current = self.current, src
        self.part_index = 0
        if src is None:
            self.check_banner.hide()
            self.part_chooser.hide()
        if old is not None and old is not src:
            self._retired_caches += _caches_of(old)
            self.jobs.spawn(self._close_retired(old), name=f"close {old.path}", key=f"close-source-{id(old)}")

    async def _close_retired(self, src: OpenedSource) -> None:
        """Remove what opening ``src`` made, then its caches once more after a while: the window's index
        thread of that source may still have been closing (and writing its index) when it was removed."""
        await _close(src)
        await asyncio.sleep(RETIRED_CACHE_RECHECK_S)
        await asyncio.get_running_loop().run_in_executor(None, remove_cache_files, _caches_of(src))

    async def close(self) -> None:
        """On shutdown (the window's features are closed by now): the open source's extraction is removed,
        and every cache made of a source of this window that was ours alone (``app.sources.derived_caches``)."""
        src, self.current = self.current, None
        if src is not None:
            self._retired_caches += _caches_of(src)
            await _close(src)
        caches, self._retired_caches = self._retired_caches, []
        await asyncio.get_running_loop().run_in_executor(None, remove_cache_files, caches)


def _caches_of(src: OpenedSource) -> list[str]:
    """The cache files the window may make of the parts of ``src`` that are ours (an extraction, a copy)."""
    return cache_files_of(p.store_path for p in src.parts if p.shown_as is not None)


async def _close(src: OpenedSource) -> None:
    try:
        await asyncio.get_running_loop().run_in_executor(None, close_source, src)
    except OSError as err:
        log.warning("could not remove what opening %s made: %s", src.path, err)


def _close_later(loop: asyncio.AbstractEventLoop, fut: asyncio.Future[OpenedSource]) -> None:
    if not fut.cancelled() and fut.exception() is None:
        loop.run_in_executor(None, close_source, fut.result())


__all__ = ["WindowSources", "check_lines", "dropped_paths", "read_only_reason"]

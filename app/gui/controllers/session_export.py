"""File > Export…: one session to Markdown, HTML, JSONL or a support bundle, off the GUI thread.

``app.export.export_session`` encodes the document synchronously inside its coroutine (a 200k-event
HTML export is seconds of Python), so it runs on a worker thread with an event loop and a read-only
store of its own, never on the window's loop.  The export is atomic (a temporary file beside the
target, then a rename), so the window never shows a half-written file; while it runs, the progress
label says how many bytes the temporary file holds (polled every ``POLL_MS``: the exporter has no
progress callback, and the bytes written are what a user waiting on a big export wants to see).

It cannot be stopped half-way (the exporter checks nothing between entries); closing the window waits
for it, and the target is then the old file or the whole new one.

A support bundle is redacted by default (the dialog's checkbox): ``preview`` computes what a redacted
bundle would replace (``app.export.preview_redaction``: the bundle built the same way into a sink
that keeps nothing) on a worker thread too, and hands the ``RedactionReport`` back by ``preview_ready``.

May import: PySide6 (QObject, QTimer, signals), ``app.export``, ``app.redact``, ``runtime.worker_threads``
and the public ``persistence`` package; never a widget.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.export import ExportResult, export_session, preview_redaction
from app.export.atomic import TEMP_SUFFIX
from app.export.command import redactor_for
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import Progress, in_thread
from app.redact import RedactionReport
from persistence import SessionPersistenceError, open_store

log = logging.getLogger(__name__)

POLL_MS = 250  # how often the progress label looks at the temporary file's size
FORMAT_NAMES = {"md": "Markdown", "html": "HTML", "jsonl": "JSONL", "bundle": "support bundle"}


def export_blocking(
    root: str, session_id: str, fmt: str, out: str, force: bool = False, redact: bool = False, redact_home: bool = False
) -> ExportResult:
    """One export on the calling (worker) thread: its own loop and read-only store, closed afterwards
    (``force``: the user agreed to replace the existing file at ``out``; ``redact``/``redact_home``: a
    redacted bundle, as ``export --redact [--redact-home]``)."""

    async def run() -> ExportResult:
        store = open_store(root, read_only=True, create=False)  # an export never changes, or makes, a store
        try:
            return await export_session(store, session_id, fmt, out, force=force, redactor=redactor_for(redact, redact_home))
        finally:
            await store.close()

    return asyncio.run(run())


def preview_blocking(root: str, session_id: str, home: bool) -> RedactionReport:
    """What a redacted bundle would replace, on the calling (worker) thread; writes nothing."""

    async def run() -> RedactionReport:
        store = open_store(root, read_only=True, create=False)
        try:
            return await preview_redaction(store, session_id, home=os.path.expanduser("~") if home else None)
        finally:
            await store.close()

    return asyncio.run(run())


def temp_bytes(target: str) -> int:
    """Bytes written so far into this process's temporary file(s) for ``target`` (0 when none yet)."""
    folder, base = os.path.split(os.path.abspath(target))
    prefix = f".{base}.{os.getpid()}."
    total = 0
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX):
                    try:
                        total += entry.stat().st_size
                    except OSError:
                        pass
    except OSError:
        return 0
    return total


def size_text(n: int) -> str:
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


class SessionExport(QObject):
    progress_started = Signal(object)  # Progress
    progress_finished = Signal(object)
    done = Signal(str, str, str)  # outcome ("done" | "failed"), message, the target path
    preview_ready = Signal(str, bool, object)  # session id, home folder hidden, RedactionReport | str (why it failed)

    def __init__(self, jobs: Jobs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.last_result: ExportResult | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._tick)
        self._watch: tuple[Progress, str, str] | None = None
        self.session_id: str | None = None  # the session of the last export asked for (View > Activity)

    @property
    def busy(self) -> bool:
        return self.jobs.running("export")

    def export(
        self,
        root: str,
        session_id: str,
        fmt: str,
        path: str,
        *,
        force: bool = False,
        redact: bool = False,
        redact_home: bool = False,
    ) -> asyncio.Task[Any] | None:
        """Export in the background; an existing file at ``path`` is replaced only with ``force`` (the
        dialog asked), anything else there is refused (``done`` says why); ``redact``: a redacted bundle."""
        if self.busy:
            self.done.emit("failed", "Another export is still running; try again when it has finished.", path)
            return None
        self.session_id = session_id
        job = self._export(root, session_id, fmt, path, force, redact, redact_home)
        return self.jobs.spawn(job, name=f"export {session_id}", key="export")

    def preview(self, root: str, session_id: str, home: bool) -> asyncio.Task[Any]:
        """Compute the redaction preview in the background (a newer request replaces an older one)."""
        return self.jobs.spawn(
            self._preview(root, session_id, home), name=f"redaction preview {session_id}", key="export-preview"
        )

    async def _preview(self, root: str, session_id: str, home: bool) -> None:
        try:
            report = await in_thread(preview_blocking, root, session_id, home)
        except asyncio.CancelledError:
            raise
        except (SessionPersistenceError, OSError, ValueError) as err:
            self.preview_ready.emit(session_id, home, str(err) or type(err).__name__)
            return
        except Exception as err:  # a bug still ends in a message in the dialog
            log.exception("redaction preview of %s failed", session_id)
            self.preview_ready.emit(session_id, home, f"unexpected {type(err).__name__}: {err}")
            return
        self.preview_ready.emit(session_id, home, report)

    async def _export(
        self,
        root: str,
        session_id: str,
        fmt: str,
        path: str,
        force: bool = False,
        redact: bool = False,
        redact_home: bool = False,
    ) -> None:
        what = f"Exporting {session_id} as {FORMAT_NAMES.get(fmt, fmt)} …"
        progress = Progress(what)
        self._watch = (progress, what, path)
        self.progress_started.emit(progress)
        self._timer.start()
        try:
            result = await in_thread(export_blocking, root, session_id, fmt, path, force, redact, redact_home)
        except asyncio.CancelledError:
            raise
        except (SessionPersistenceError, OSError, ValueError) as err:
            self.done.emit("failed", str(err) or type(err).__name__, path)
            return
        except Exception as err:  # a bug still ends in a message, never a traceback in a dialog
            log.exception("export of %s failed", session_id)
            self.done.emit("failed", f"unexpected {type(err).__name__}: {err}", path)
            return
        finally:
            self._timer.stop()
            self._watch = None
            self.progress_finished.emit(progress)
        self.last_result = result
        message = f"Exported {session_id} as {FORMAT_NAMES.get(fmt, fmt)} to {result.path} ({result.bytes:,} bytes)"
        if result.redaction is not None:
            message += f"; redacted: {result.redaction.summary()}"
        self.done.emit("done", message, result.path)

    def _tick(self) -> None:
        if self._watch is None:
            return
        progress, what, path = self._watch
        n = temp_bytes(path)
        progress.set(None, f"{what} {size_text(n)} written" if n else what)


__all__ = ["FORMAT_NAMES", "SessionExport", "export_blocking", "preview_blocking", "temp_bytes"]

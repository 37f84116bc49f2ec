"""Abandoned work frees what it was reading, even though the window freezes the collector's generations.

A cancelled load ends in exceptions whose traceback frames hold the log being read; those frames sit
in reference cycles, and after ``gc.freeze()`` a cycle is never collected.  ``Jobs`` and ``in_thread``
clear such frames, so the data goes as soon as the job is gone.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from typing import Any

import pytest

from app.gui.runtime.collector import scrub_exception
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import Cancelled, in_thread

pytestmark = pytest.mark.timeout(60)


class BigLog:
    """Stands in for a decoded log (weak-referenceable, unlike the dicts the engine returns)."""


def test_scrub_frees_what_a_traceback_frame_held() -> None:
    def fail(log: BigLog) -> None:
        raise ValueError("boom")

    log = BigLog()
    ref = weakref.ref(log)
    try:
        fail(log)
    except ValueError as err:
        caught = err
    del log
    assert ref() is not None  # the traceback's frame keeps it
    scrub_exception(caught)
    assert ref() is None and str(caught) == "boom"


def test_a_cancelled_job_and_its_worker_release_their_data_under_freeze(qtbot: Any, arun: Any) -> None:
    jobs = Jobs()
    started = threading.Event()
    refs: list[weakref.ref[BigLog]] = []

    def worker(log: BigLog, cancel: threading.Event) -> None:
        started.set()
        while not cancel.is_set():
            time.sleep(0.005)
        raise Cancelled()

    async def load() -> None:
        log = BigLog()
        refs.append(weakref.ref(log))
        cancel = threading.Event()
        await in_thread(worker, log, cancel, cancel=cancel)

    gc.disable()
    try:
        task = jobs.spawn(load(), name="load", key="session")
        qtbot.waitUntil(started.is_set, timeout=5000)
        jobs.cancel("session")
        qtbot.waitUntil(task.done, timeout=5000)
        gc.freeze()  # what the window does after each engine call: cycles made so far become permanent
        qtbot.waitUntil(lambda: refs[0]() is None, timeout=2000)
    finally:
        gc.unfreeze()
        gc.enable()
        arun(jobs.shutdown())
    assert task.cancelled()

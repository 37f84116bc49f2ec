"""Opening a session in the window reads its log once: one whole read serves the verdict, the timeline
and the raw tab (the window used to read it three times: diagnose, inspect's re-check and the raw bytes).

The tail preview of a long log reads only its newest frames before that read (``load_tail``); it is
counted separately.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed

from app.gui.controllers import session_loader

pytestmark = pytest.mark.timeout(120)

LOG_HOOKS = ("load_stored", "load_suffix", "load_tail", "read_raw", "read_raw_bytes")


def _count_calls(monkeypatch: pytest.MonkeyPatch, target: Any, names: tuple[str, ...], seen: Counter[str]) -> None:
    for name in names:
        inner = getattr(target, name)

        def call(*args: Any, _name: str = name, _inner: Callable[..., Any] = inner, **kwargs: Any) -> Any:
            seen[_name] += 1
            return _inner(*args, **kwargs)

        monkeypatch.setattr(target, name, call)


def test_opening_a_session_reads_its_log_once(
    make_window: Any, qtbot: Any, zoo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = make_window(zoo_root)
    wait_listed(qtbot, w)
    qtbot.waitUntil(lambda: bool(w.opened_keys), timeout=WAIT_MS)  # the first row opens by itself
    first = w.opened_keys[0]
    target = next(r for r in w.session_model.rows() if r.status in ("ok", "open-turn") and r.key != first)

    engine_reads: Counter[str] = Counter()
    _count_calls(monkeypatch, w.controller.store.engine.backend, LOG_HOOKS, engine_reads)
    window_opens: list[str] = []
    real_open = open

    def counting_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        window_opens.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(session_loader, "open", counting_open, raising=False)  # the loader's own file reads
    indexed: list[str] = []
    w.loader.indexed.connect(indexed.append)
    assert w.list_pane.select_key(target.key)
    qtbot.waitUntil(lambda: target.key in indexed and w.raw_model.rowCount() > 0, timeout=WAIT_MS)

    assert engine_reads["load_stored"] == 1, engine_reads  # the one whole read (``view``)
    assert engine_reads["read_raw"] == engine_reads["read_raw_bytes"] == engine_reads["load_suffix"] == 0
    assert engine_reads["load_tail"] <= 1  # the first look at the newest turns, before the whole read
    assert window_opens == []  # the raw tab shows the bytes that one read parsed
    assert w.loader.current is not None and w.loader.current.key == target.key
    assert w.timeline_model.stored_count == w.loader.current.stored_count > 0

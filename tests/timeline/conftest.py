"""Fixtures for the Qt-free timeline tests (``app/timeline``): no Qt, no window, no event loop of Qt's.

The small-turn builder and the upstream-fixture location are shared with the window tests in
``tests/gui/guikit.py``, which is itself Qt-free; its folder is put on ``sys.path`` here so this
folder also runs on its own (``pytest tests/timeline``).  Coroutines run with ``run`` (``asyncio.run``).
"""

from __future__ import annotations

import sys
from pathlib import Path

_GUIKIT_DIR = str(Path(__file__).resolve().parents[1] / "gui")
if _GUIKIT_DIR not in sys.path:
    sys.path.insert(0, _GUIKIT_DIR)

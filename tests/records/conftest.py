"""Fixtures for the Qt-free record helpers (``app/records``): no Qt, no window.

The small-turn builder is shared with the window tests in ``tests/gui/guikit.py`` (itself Qt-free);
its folder is put on ``sys.path`` here so this folder also runs on its own (``pytest tests/records``).
"""

from __future__ import annotations

import sys
from pathlib import Path

_GUIKIT_DIR = str(Path(__file__).resolve().parents[1] / "gui")
if _GUIKIT_DIR not in sys.path:
    sys.path.insert(0, _GUIKIT_DIR)

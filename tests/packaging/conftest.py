"""Fixtures for the packaging tests: ``packaging/`` on ``sys.path`` and offscreen Qt.

Why: the build helpers (bundle_filter, deb_depends, icons) are scripts in ``packaging/``, not part of
the installed app, so the tests import them from there.  The icon test renders with Qt, which must not
try to reach a display when this folder runs alone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "packaging"))

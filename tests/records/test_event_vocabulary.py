"""One event vocabulary (issue 22 item 4): the engine's catalog is the only place an event type name is spelled.

The app compares record types against ``persistence.EventType``; a string literal equal to a catalog
name anywhere under ``app/`` is a second spelling that can drift (a typo there is a silent no-match).
"""

from __future__ import annotations

import ast
from pathlib import Path

import orjson
import pytest

from persistence import EventType
from persistence.model.catalog import KNOWN_SESSION_EVENT_TYPES, LEGACY_REFUSED_TYPES

ROOT = Path(__file__).resolve().parents[2]
SPEC_CATALOG = ROOT.parent / "shared" / "spec" / "event-catalog.json"


def _catalog_names() -> set[str]:
    return {value for name, value in vars(EventType).items() if not name.startswith("_") and isinstance(value, str)}


def test_no_event_type_string_literal_in_app() -> None:
    names = _catalog_names() | set(LEGACY_REFUSED_TYPES)
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == []


def test_the_constants_are_the_known_types_and_name_their_values() -> None:
    names = _catalog_names()
    assert names == set(KNOWN_SESSION_EVENT_TYPES)
    assert len(names) == 48
    for attr, value in vars(EventType).items():
        if not attr.startswith("_"):
            assert attr == value.upper().replace("/", "_").replace("-", "_"), attr


def test_the_constants_match_the_spec_catalog() -> None:
    if not SPEC_CATALOG.is_file():
        pytest.skip(f"the spec's event catalog is not beside this checkout ({SPEC_CATALOG})")
    spec = orjson.loads(SPEC_CATALOG.read_bytes())
    assert _catalog_names() == {event["type"] for event in spec["events"]}

"""SessionHeader: the immutable metadata beside a log (never an event)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SESSION_FORMAT_VERSION = 0

# Wire key order of a header as upstream builds it (jsonl-backend §5.1).
_FIELDS: tuple[tuple[str, str], ...] = (
    ("version", "version"),
    ("id", "id"),
    ("createdAt", "created_at"),
    ("cwd", "cwd"),
    ("parentSession", "parent_session"),
    ("seedLength", "seed_length"),
    ("origin", "origin"),
    ("delegationDepth", "delegation_depth"),
    ("agentPreset", "agent_preset"),
)


def unrepresentable_field(meta: dict[str, Any]) -> str | None:
    """The wire key of a header value JSON cannot carry (a non-finite number), or None.

    ``"version": 1e400`` parses to infinity; upstream would list it, but every JSON writer either
    fails on it or writes ``Infinity`` (not JSON), so such a header cannot be handed to a caller.
    """
    for wire, value in meta.items():
        if type(value) is float and not math.isfinite(value):
            return wire
    return None


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """A session's header (the first record of its log), in snake_case attributes."""

    version: Any
    id: str
    created_at: Any
    cwd: Any = None
    parent_session: Any = None
    seed_length: Any = None
    origin: Any = None
    delegation_depth: Any = None
    agent_preset: Any = None

    def to_json(self) -> dict[str, Any]:
        """camelCase wire form; absent (None) optionals are omitted."""
        out: dict[str, Any] = {}
        for wire, attr in _FIELDS:
            value = getattr(self, attr)
            if value is not None or attr in ("version", "id", "created_at"):
                out[wire] = value
        return out

    @classmethod
    def from_json(cls, data: Any) -> SessionHeader:
        """A header from its camelCase wire form (unknown keys ignored)."""
        if not isinstance(data, dict):
            raise TypeError("session header must be a JSON object")
        fields: dict[str, Any] = {attr: data.get(wire) for wire, attr in _FIELDS}
        return cls(**fields)

    @classmethod
    def from_listing(cls, data: Any) -> SessionHeader | None:
        """The header of one listed session, or None when it cannot be represented (see
        ``unrepresentable_field``): the listing skips that one session instead of failing for all."""
        if not isinstance(data, dict) or unrepresentable_field(data) is not None:
            return None
        return cls.from_json(data)

    def header_line(self) -> dict[str, Any]:
        """The JSONL first record: ``type`` first and ``delegationDepth`` always present."""
        out: dict[str, Any] = {"type": "session"}
        for wire, attr in _FIELDS:
            value = getattr(self, attr)
            if wire == "delegationDepth":
                out[wire] = 0 if value is None else value
            elif value is not None or attr in ("version", "id", "created_at"):
                out[wire] = value
        return out

"""SessionHeader: the immutable metadata beside a log (never an event)."""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class SessionHeader:
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
        if not isinstance(data, dict):
            raise TypeError("session header must be a JSON object")
        return cls(**{attr: data.get(wire) for wire, attr in _FIELDS})

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

"""Value results of the persistence service (frozen, camelCase ``to_json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.model.event import EventLog
from persistence.model.header import SessionHeader


@dataclass(frozen=True, slots=True)
class SessionLocation:
    kind: str
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionLocation:
        return cls(data["kind"], data["path"])


@dataclass(frozen=True, slots=True)
class SessionInspection:
    meta: SessionHeader
    events: EventLog

    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta.to_json(), "events": self.events.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionInspection:
        return cls(SessionHeader.from_json(data["meta"]), EventLog([dict(e) for e in data["events"]]))


@dataclass(frozen=True, slots=True)
class ReadFromResult:
    meta: SessionHeader
    events: EventLog

    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta.to_json(), "events": self.events.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReadFromResult:
        return cls(SessionHeader.from_json(data["meta"]), EventLog([dict(e) for e in data["events"]]))


@dataclass(frozen=True, slots=True)
class SessionRawArtifact:
    meta: SessionHeader
    filename: str
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta.to_json(), "filename": self.filename, "content": self.content}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRawArtifact:
        return cls(SessionHeader.from_json(data["meta"]), data["filename"], data["content"])


@dataclass(frozen=True, slots=True)
class SessionPersistenceSnapshot:
    header: SessionHeader
    revision: str

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header.to_json(), "revision": self.revision}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionPersistenceSnapshot:
        return cls(SessionHeader.from_json(data["header"]), data["revision"])

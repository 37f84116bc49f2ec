"""Value results of the persistence service (frozen, camelCase ``to_json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.model.event import EventLog
from persistence.model.header import SessionHeader


@dataclass(frozen=True, slots=True)
class SessionLocation:
    """Where a session is stored: kind and path."""

    kind: str
    path: str

    def to_json(self) -> dict[str, Any]:
        """The camelCase wire form."""
        return {"kind": self.kind, "path": self.path}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionLocation:
        """The value of its wire form."""
        return cls(data["kind"], data["path"])


@dataclass(frozen=True, slots=True)
class SessionInspection:
    """A whole session: header and events (``load``/``inspect``)."""

    meta: SessionHeader
    events: EventLog

    def to_json(self) -> dict[str, Any]:
        """The camelCase wire form."""
        return {"meta": self.meta.to_json(), "events": self.events.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionInspection:
        """The value of its wire form."""
        return cls(SessionHeader.from_json(data["meta"]), EventLog([dict(e) for e in data["events"]]))


@dataclass(frozen=True, slots=True)
class ReadFromResult:
    """A header and the events of a span of the log (``read_from``/``read_tail``)."""

    meta: SessionHeader
    events: EventLog

    def to_json(self) -> dict[str, Any]:
        """The camelCase wire form."""
        return {"meta": self.meta.to_json(), "events": self.events.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReadFromResult:
        """The value of its wire form."""
        return cls(SessionHeader.from_json(data["meta"]), EventLog([dict(e) for e in data["events"]]))


@dataclass(frozen=True, slots=True)
class SessionRawArtifact:
    """An artifact's text as ``read_raw`` returns it."""

    meta: SessionHeader
    filename: str
    content: str

    def to_json(self) -> dict[str, Any]:
        """The camelCase wire form."""
        return {"meta": self.meta.to_json(), "filename": self.filename, "content": self.content}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRawArtifact:
        """The value of its wire form."""
        return cls(SessionHeader.from_json(data["meta"]), data["filename"], data["content"])


@dataclass(frozen=True, slots=True)
class SessionPersistenceSnapshot:
    """A listed session's header and opaque revision."""

    header: SessionHeader
    revision: str

    def to_json(self) -> dict[str, Any]:
        """The camelCase wire form."""
        return {"header": self.header.to_json(), "revision": self.revision}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionPersistenceSnapshot:
        """The value of its wire form."""
        return cls(SessionHeader.from_json(data["header"]), data["revision"])

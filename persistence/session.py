"""The in-memory, append-only ``Session`` (session-model §2, §4, §5.1).

A Session validates every event on append (including the message shapes upstream only
checks on load: a live log must stay reloadable), notifies observers synchronously, and
hands out O(1) immutable snapshots of its log.
"""

from __future__ import annotations

import logging
import time as time_mod
from collections.abc import Callable, Sequence
from typing import Any

from persistence.errors import SessionConflictError, SessionDataNotLosslessError, SessionValidationError
from persistence.model.catalog import SURFACE_EVENT_TYPES
from persistence.model.event import EventLog, SessionEvent, event_from_wire
from persistence.model.event_table import EventTable
from persistence.model.frozen import raw_of
from persistence.model.header import SessionHeader
from persistence.model.jsontext import NotLosslessError, deep_copy_json, js_string, lossless_copy
from persistence.model.repair import open_turn_state
from persistence.model.upgrade import legacy_refusal
from persistence.model.validate import (
    SurfaceFold,
    validate_header,
    validate_message_shape,
    validate_seed_events,
)

log = logging.getLogger(__name__)

END_SEED = "session/end-seed"
Observer = Callable[["Session", SessionEvent], None]


def now_ms() -> int:
    """The wall clock in whole milliseconds (event times)."""
    return time_mod.time_ns() // 1_000_000


class Session:
    """One session's log. ``seed`` events are validated and never notified to observers."""

    def __init__(
        self,
        header: SessionHeader | dict[str, Any],
        seed: Sequence[SessionEvent | dict[str, Any]] | None = None,
        *,
        restore: bool = False,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        raw_header = header.to_json() if isinstance(header, SessionHeader) else dict(header)
        if not restore:
            try:
                raw_header = lossless_copy(raw_header)
            except NotLosslessError:
                raise SessionDataNotLosslessError("session header is not losslessly JSON-serializable") from None
        # The port reads the id from the header, so validate_header's "id matches" check is
        # vacuous here: refuse a non-string id explicitly (session-model §1.1/§1.3).
        if type(raw_header.get("id")) is not str:
            raise SessionValidationError(f"session header id must be a string, got {js_string(raw_header.get('id'))}")
        validate_header(raw_header, raw_header["id"])
        self._header = SessionHeader.from_json(raw_header)
        self._raw_header = raw_header
        self._clock = clock
        self._observers: list[Observer] = []
        self._publishing = False
        table = self._seed_table(seed, restore)
        self._fold: SurfaceFold = validate_seed_events(table)
        self._table = table
        self.first_live_seq = len(table)
        self._marked = False  # whether this constructor appended the end-seed marker (see adopt_clock)
        if seed is not None and (not len(table) or table.last().get("type") != END_SEED):
            # The marker closes the seeded lifecycle; it is persisted with the seed, never notified.
            table.append({"type": END_SEED, "seq": len(table), "time": self._clock(), "data": {}})
            self._marked = True
        self._snapshot: EventLog | None = None

    @staticmethod
    def _seed_table(seed: Sequence[SessionEvent | dict[str, Any]] | EventTable | None, restore: bool) -> EventTable:
        """The seed as this session's own table: a restored table or log keeps its packed runs
        (the item list is copied, never the events: the source may be a cached read)."""
        if seed is None:
            return EventTable()
        if restore and isinstance(seed, EventTable):
            return EventTable(seed.items)
        if restore and isinstance(seed, EventLog):
            return EventTable(seed.segments())
        records: list[dict[str, Any]] = []
        for i, ev in enumerate(seed):
            wire = raw_of(ev.wire if isinstance(ev, SessionEvent) else ev)
            if restore:
                records.append(wire)
            else:
                try:
                    records.append(lossless_copy(wire))
                except NotLosslessError:
                    raise SessionDataNotLosslessError(f"seed event at index {i} is not losslessly JSON-serializable") from None
        return EventTable.adopt(records)

    def adopt_clock(self, clock: Callable[[], int]) -> None:
        """Use the owning store's clock from now on (before the session is published).

        ``resume`` builds its Session inside the persistence service, which has no clock of its own;
        the store hands over its clock here.  The end-seed marker that constructor added is not
        published or persisted yet, so it is re-stamped: every time in a resumed log then comes
        from the store's clock, as in a created or forked one.
        """
        self._clock = clock
        if self._marked and len(self._table) == self.first_live_seq + 1:
            # A new dict rather than an edit in place, so no one holding the old record sees it change.
            self._table.replace_last({**self._table.last(), "time": clock()})
            self._snapshot = None

    # ------------------------------------------------------------ identity and log

    @property
    def id(self) -> str:
        """The session id."""
        return self._header.id

    @property
    def header(self) -> SessionHeader:
        """The session's header."""
        return self._header

    @property
    def raw_header(self) -> dict[str, Any]:
        """Engine-internal header dict (camelCase). Never mutate."""
        return self._raw_header

    @property
    def events(self) -> EventLog:
        """An O(1) snapshot of the events appended so far (later appends are not visible through it)."""
        snap = self._snapshot
        n = len(self._table)
        if snap is None or len(snap) != n:
            snap = self._snapshot = EventLog(self._table, n)
        return snap

    @property
    def seq(self) -> int:
        """The next seq (== number of events)."""
        return len(self._table)

    @property
    def table(self) -> EventTable:
        """Engine-internal: the live table of records (chunk runs packed). Never mutate."""
        return self._table

    def records(self) -> list[dict[str, Any]]:
        """Engine-internal: every record as a list (expanded once, then kept up to date). Never mutate."""
        return self._table.records()

    # ------------------------------------------------------------ turn/step queries

    @property
    def open_turn(self) -> Any:
        """The number of the turn left open, or None."""
        return open_turn_state(self._table)[0]

    @property
    def open_step(self) -> Any:
        """The number of the step left open inside the open turn, or None."""
        return open_turn_state(self._table)[1]

    @property
    def is_turn_open(self) -> bool:
        """Whether a turn is open."""
        return self.open_turn is not None

    @property
    def last_turn(self) -> int:
        """The number of the newest turn (0 before the first)."""
        for ev in reversed(self._table.items):
            if type(ev) is dict and ev.get("type") == "turn/start":
                data = ev.get("data")
                turn = data.get("turn") if isinstance(data, dict) else None
                return int(turn) if isinstance(turn, (int, float)) else 0
        return 0

    @property
    def next_turn(self) -> int:
        """Turn numbering continues from the last ``turn/start`` (also after fork/resume)."""
        return self.last_turn + 1

    # ------------------------------------------------------------ observers

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(session, event)`` after each append; returns its remover."""
        self._observers.append(observer)

        def remove() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return remove

    # ------------------------------------------------------------ append

    def append(
        self,
        type: str,
        data: Any,
        *,
        surface_op: Any = None,
        source_event_seqs: Sequence[int] | None = None,
    ) -> SessionEvent:
        """Validate and append one event (seq and time are assigned here); observers are told."""
        try:
            snapshot = lossless_copy(raw_of(data))
        except NotLosslessError:
            raise SessionDataNotLosslessError(f'session event "{type}" carries non-JSON-serializable data') from None
        seq = len(self._table)
        probe = {"type": type, "seq": seq, "data": snapshot}
        refusal = legacy_refusal(self.id, probe)
        if refusal is not None:
            raise SessionValidationError(refusal.replace(f" at seq {seq}", ""))
        try:
            meta = lossless_copy(
                {
                    "sourceEventSeqs": list(source_event_seqs) if source_event_seqs is not None else None,
                    "surfaceOp": raw_of(surface_op),
                }
            )
        except NotLosslessError:
            raise SessionDataNotLosslessError(f'session event "{type}" carries non-JSON-serializable surface metadata') from None
        if self._publishing:
            raise SessionConflictError("session append cannot reenter while another append is being published")
        wire: dict[str, Any] = {"type": type, "seq": seq, "time": self._clock(), "data": snapshot}
        if meta["sourceEventSeqs"] is not None:
            wire["sourceEventSeqs"] = meta["sourceEventSeqs"]
        if meta["surfaceOp"] is not None:
            wire["surfaceOp"] = meta["surfaceOp"]
        if type in SURFACE_EVENT_TYPES:
            validate_message_shape(wire, f'session event "{type}"')
        # plan() mutates only after every check passed, so a refusal leaves log and surface untouched.
        self._fold.plan(wire, seq)
        self._publishing = True
        try:
            self._table.append(wire)
            event = event_from_wire(wire)
            for observer in list(self._observers):
                try:
                    observer(self, event)
                except Exception:  # observers must not undo a committed append
                    log.exception("session observer failed for %s seq %s", self.id, seq)
        finally:
            self._publishing = False
        return event

    def to_json(self) -> dict[str, Any]:
        """The header and a deep copy of every event."""
        return {"header": self._header.to_json(), "events": [deep_copy_json(r) for r in self._table]}

"""The readable part of a stored log the engine refuses: the events before the first damaged row.

Why: a corrupt SQLite session has no ``view`` events (the engine refuses it whole, as upstream does)
and no byte artifact a viewer could decode on its own (JSONL viewers use ``iter_raw``), yet the turns
before the damage are what a support engineer reads first.  ``CoordinatedPersistence.readable_prefix``
decodes the session's rows in seq order with the same row decoders a whole read uses and stops at the
first row that does not decode or does not continue the seq chain, saying which and why.  Nothing
here is validated beyond decoding (no shape checks, no crash closers): it is a view of a refused log,
never a verdict, and it never writes.

May import: the standard library and ``persistence.model``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.model.event_table import EventTable


@dataclass(frozen=True, slots=True)
class PrefixStop:
    """Where and why the readable prefix ends."""

    seq: int  # the seq of the first row that is not part of the prefix
    why: str  # "the row at seq 31 does not decode (malformed text-chunks storage row: …)"
    rows_after: int  # stored rows from that one on (the one that stopped it included)


@dataclass(frozen=True, slots=True)
class ReadablePrefix:
    """The header and the contiguous decodable events from seq 0; ``stop`` is None when every row decoded."""

    meta: dict[str, Any]
    events: EventTable
    stop: PrefixStop | None


__all__ = ["PrefixStop", "ReadablePrefix"]

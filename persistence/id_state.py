"""``IdState``: what one coordinator instance knows about one session id's durable log.

Why a module of its own: the coordinator (create, append, load, prepare) and the live-session
attachment (``persistence.live``) both read and move it, and neither should own the other's file.

May import: nothing from the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class IdState:
    """The header this instance writes with, the next seq it expects, and who owns the id."""

    meta: dict[str, Any]
    cursor: int  # the seq the next append must start at
    materialized: bool  # the log exists durably (the next append is not its first write)
    owner: Any = None  # the live Session bound to this id, if any


__all__ = ["IdState"]

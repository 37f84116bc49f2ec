"""SessionHeader: the immutable metadata beside a log (never an event)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import repeat
from typing import Any, TypeVar

T = TypeVar("T")

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


# Building a header without the dataclass __init__: a frozen dataclass sets each of its nine fields
# through object.__setattr__ (about 1.1 us of the 1.5 us a header costs); the slot descriptors' own
# setters cost about 0.45 us a header, and about 0.35 us run column by column (one C-level pass per
# field), which is what a 10,000-session listing spends building headers.
_new = object.__new__
_ABSENT_BUT_CWD = dict.fromkeys(("parent_session", "seed_length", "origin", "delegation_depth", "agent_preset"))
# Below this many instances a plain loop beats setting up one C-level pass per field (about 0.4 us each).
_COLUMN_PASS_MIN = 16


_SETTERS: dict[type, dict[str, Any]] = {}


def _slot_setters(cls: type) -> dict[str, Any]:
    """Field name -> the slot's ``__set__``, in field order, of a frozen slots dataclass (computed once)."""
    setters = _SETTERS.get(cls)
    if setters is None:
        setters = _SETTERS[cls] = {f.name: getattr(cls, f.name).__set__ for f in fields(cls)}
    return setters


def plain_headers(
    versions: Sequence[Any], ids: Sequence[str], created_ats: Sequence[Any], cwds: Sequence[Any]
) -> list[SessionHeader]:
    """Headers from columns of validated values, every optional field but ``cwd`` absent (None).

    The common listing row: no parent, seed length, origin, delegation depth or agent preset.
    """
    return frozen_from_columns(
        SessionHeader, {"version": versions, "id": ids, "created_at": created_ats, "cwd": cwds}, constants=_ABSENT_BUT_CWD
    )


def frozen_from_columns(
    cls: type[T], columns: Mapping[str, Sequence[Any]], *, constants: Mapping[str, Any] | None = None
) -> list[T]:
    """Instances of the frozen slots dataclass ``cls``: the i-th takes field ``name`` from ``columns[name][i]``
    (or ``constants[name]``, the same value for all).

    For many small values of trusted fields (a listing's headers and snapshots): one C-level pass per
    field through the slot's setter instead of the dataclass ``__init__`` per instance, a third of the
    cost.  Every field must be given exactly once, since an unset slot would raise on access.
    """
    fixed = constants or {}
    setters = _slot_setters(cls)
    if len(columns) + len(fixed) != len(setters) or not setters.keys() == columns.keys() | fixed.keys():
        raise ValueError(f"{cls.__name__} needs each of the fields {list(setters)} exactly once")
    count = len(next(iter(columns.values()))) if columns else 0
    for name, column in columns.items():
        if len(column) != count:
            raise ValueError(f"column {name} has {len(column)} values, expected {count}")
    out = list(map(_new, repeat(cls, count)))
    for name, setter in setters.items():
        if name in fixed:
            values: Iterable[Any] = repeat(fixed[name], count)
        else:
            values = columns[name]
        if count >= _COLUMN_PASS_MIN:
            deque(map(setter, out, values), maxlen=0)
        else:
            for obj, value in zip(out, values, strict=True):
                setter(obj, value)
    return out

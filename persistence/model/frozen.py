"""Read-only views over parsed JSON.

Logged events must not be mutable through any public API (session-model §2.5).  Deep
copying into tuples/proxies up front would dominate the cost of loading a 200k-event
log, so the views wrap the underlying dict/list lazily, one level at a time, as the
caller walks into them.  The wrapped containers are owned by the engine and never
handed out directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def freeze(value: Any) -> Any:
    """A read-only view of a JSON container (scalars are returned as they are)."""
    t = type(value)
    if t is dict:
        return FrozenDict(value)
    if t is list:
        return FrozenList(value)
    return value


def raw_of(value: Any) -> Any:
    """The engine-owned plain container behind a view (no copy; never mutate it)."""
    if isinstance(value, (FrozenDict, FrozenList)):
        return value._raw
    return value


class FrozenDict(Mapping[str, Any]):
    """A read-only view of a JSON object; nested containers are wrapped on access."""

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw

    def __getitem__(self, key: str) -> Any:
        return freeze(self._raw[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._raw == other._raw
        if isinstance(other, dict):
            return self._raw == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrozenDict({self._raw!r})"

    def __json_value__(self) -> dict[str, Any]:
        return self._raw


class FrozenList(Sequence[Any]):
    """A read-only view of a JSON array; nested containers are wrapped on access."""

    __slots__ = ("_raw",)

    def __init__(self, raw: list[Any]) -> None:
        self._raw = raw

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return FrozenList(self._raw[index])
        return freeze(self._raw[index])

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator[Any]:
        for v in self._raw:
            yield freeze(v)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenList):
            return self._raw == other._raw
        if isinstance(other, (list, tuple)):
            return self._raw == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrozenList({self._raw!r})"

    def __json_value__(self) -> list[Any]:
        return self._raw

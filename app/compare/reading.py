"""Reading one side of a comparison from a path the user names: any source, the session optional.

Shared by ``sessionscope diff`` and the window's "Compare with…" (a file or folder): the source is
opened read-only (``app.sources``: a root, a store, a lone transcript, a bundle, a case folder), the
session's stored events are read (``read_from(id, 0)``: no crash closers), and everything opening made
(a bundle's extraction) is removed before returning.  Never writes into the path.
"""

from __future__ import annotations

from pathlib import Path

from app.sources import close_source, open_source, store_for
from persistence import EventLog, SessionNotFoundError


async def read_session(path: str, session_id: str | None) -> tuple[str, EventLog]:
    """(the session id, its stored events) of ``session_id`` in the source at ``path`` (None: its only one).

    Raises the source's ``SourceError`` / ``AmbiguousSessionError`` (which lists the ids) or the engine's errors.
    """
    src = open_source(Path(path))
    try:
        store, sid = await store_for(src, session_id)
        try:
            result = await store.read_from(sid, 0)
        finally:
            await store.close()
    finally:
        close_source(src)
    if result is None:
        raise SessionNotFoundError(f'session "{sid}" not found in {path}')
    return sid, result.events


__all__ = ["read_session"]

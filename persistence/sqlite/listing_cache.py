"""``ListingCache``: a store instance's last full listing, reused while the file provably did not change.

Why: a 10,000-session ``list()`` is ~13 ms of work however often it is asked (read five columns, check
them whole, build 10k headers; ``sessions.read_listing``), ``list_snapshots()`` ~4 ms more for the
revision tokens and snapshots, and the window asks again on every refresh.  A listing also makes 20k+
objects, so a caller that keeps earlier results pays cyclic-collector passes over them too (measured:
a warm listing took 24 ms median while 30 earlier ones were kept, 18 ms without the collector).  Upstream reads afresh
each time (16 and 19 ms on its paired run).

Unchanged means: the same connection, the same ``PRAGMA data_version`` read inside the listing's own read
transaction (SQLite moves it whenever another connection, in this process or another, commits), and no
commit of this connection since (``data_version`` does not move for a connection's own commits, so
``Database.commits`` counts them).  A reused listing then costs that one PRAGMA (~10 us) and a list copy
(~30 us for 10k rows).  Headers and snapshots are frozen values, shared between callers; the lists
handed out are new each time, since callers own what they get.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from persistence.model.header import SessionHeader, frozen_from_columns
from persistence.sqlite.identity import revision_tokens
from persistence.sqlite.sessions import Listing
from persistence.values import SessionPersistenceSnapshot

DATA_VERSION = "PRAGMA data_version"


class ListingCache:
    """The last full ``Listing`` of one connection, with the snapshots last built from it.

    ``read`` runs under the store's connection lock; ``headers``/``snapshots`` may run on any thread
    (each memo is one tuple, replaced whole, so a reader sees an old or a new one, never half of one).
    """

    __slots__ = ("_entry", "_snapshots")

    def __init__(self) -> None:
        self._entry: tuple[sqlite3.Connection, int, int, Listing] | None = None
        self._snapshots: tuple[Listing, str, list[SessionPersistenceSnapshot]] | None = None

    def read(self, conn: sqlite3.Connection, commits: int, build: Callable[[], Listing]) -> Listing:
        """The listing ``build`` would read now; ``conn`` is in the read transaction ``build`` reads in.

        The PRAGMA comes first: it starts the read transaction, so the version is that of the very
        snapshot ``build`` reads (a commit landing between the two is not seen by either).
        """
        version = conn.execute(DATA_VERSION).fetchone()[0]
        entry = self._entry
        if entry is not None and entry[0] is conn and entry[1] == version and entry[2] == commits:
            return entry[3]
        listing = build()
        self._entry = (conn, version, commits, listing)
        return listing

    def unchanged(self, conn: sqlite3.Connection, commits: int) -> Listing | None:
        """The cached listing when nothing changed since it was read (None: read it), outside a transaction.

        One ``PRAGMA data_version`` (its own read transaction, ~10 us): cheap enough for the event loop,
        so a warm listing of any size skips the hop to a worker (``SqliteReader.run_if_tiny``).
        """
        entry = self._entry
        if entry is None or entry[0] is not conn or entry[2] != commits:
            return None
        return entry[3] if conn.execute(DATA_VERSION).fetchone()[0] == entry[1] else None

    def headers(self, listing: Listing) -> list[SessionHeader]:
        """``list()``'s result: the listing's headers in a list of the caller's own."""
        return list(listing.headers)

    def snapshots(self, listing: Listing, identity: str | None) -> list[SessionPersistenceSnapshot]:
        """``listSnapshots()``'s result: each header with its revision token, built once per listing."""
        if not listing.headers:
            return []
        memo = self._snapshots
        if memo is not None and memo[0] is listing and memo[1] == identity:
            return list(memo[2])
        assert identity is not None  # a store with rows was opened and validated: it has an identity
        revisions = revision_tokens(identity, listing.incarnations, listing.revisions)
        snapshots = frozen_from_columns(SessionPersistenceSnapshot, {"header": listing.headers, "revision": revisions})
        self._snapshots = (listing, identity, snapshots)
        return list(snapshots)

    def clear(self) -> None:
        """Forget every listing (the connection is closing)."""
        self._entry = None
        self._snapshots = None

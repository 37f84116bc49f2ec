"""``FolderNames``: which project folders surely hold nothing for a session id, without probing them.

Why: finding one session's transcript probes every project folder of the root for three names (two
flat artifacts and the session folder, §4.4), because an id may sit in any project and a duplicate
must be refused.  On a root of 20 projects that is 60 failed ``lstat`` calls, ~165 us of a small
session's ~380 us read; a worker judging 10,000 sessions spent ~40 % of its time there (issue 25).

So a project folder that has been probed often (``LIST_AFTER`` lookups on this instance) is listed
once, and its names are kept while the folder provably did not change: the same inode, link count
and ``st_mtime_ns`` (adding or removing an entry moves the mtime; adding or removing a session
folder also moves the link count on most file systems).  A listing is trusted only when the folder's
mtime was at least ``RACY_NS`` older than the moment it was listed: a change landing in the same
clock tick as the one before it would not move the mtime, the race git calls "racily clean".

It only ever answers "absent": a name that the kept listing holds, or could hold under case folding
or Unicode normalization (case-insensitive or normalizing file systems find such names), goes to the
real probe, which also judges links, permissions and odd file types exactly as before.  Windows is
left out (short 8.3 aliases find names a listing does not show).  What is left: a flat artifact
created in the same clock tick as the folder's previous change and after the listing is not seen
until the folder changes again (as is a change whose mtime someone sets back to the very value seen
without moving the link count); a lookup then says what it would have said a moment earlier.  On a
network file system whose client caches attributes (NFS ``actimeo``) a folder's mtime can be stale for
as long as its cached lookups are: a kept listing is as fresh as the probes it replaces.
"""

from __future__ import annotations

import os
import threading
import time
import unicodedata

LIST_AFTER = 8  # lookups in one project folder before it is listed and its names kept
RACY_NS = 100_000_000  # ns: a listing taken less than this after the folder's mtime is not kept
MAX_FOLDERS = 4096  # project folders whose names are kept (beyond: the oldest is dropped)
ENABLED = os.name == "posix"


def loosened(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` under the loosest equivalence a file system applies: canonical composition and case
    (once per lookup: ``surely_absent`` takes them so)."""
    return tuple(_loose(n) for n in names)


def _loose(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


class FolderNames:
    """Per store instance: each busy project folder's loosened names, while the folder is unchanged."""

    __slots__ = ("_kept", "_lock", "_uses")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uses: dict[str, int] = {}
        # project folder -> (st_ino, st_nlink, st_mtime_ns, loosened names)
        self._kept: dict[str, tuple[int, int, int, frozenset[str]]] = {}

    def surely_absent(self, project: str, loose_names: tuple[str, ...]) -> bool:
        """True only when ``project`` provably holds none of the names ``loose_names`` were ``loosened``
        from (nor a name equivalent to one)."""
        if not ENABLED:
            return False
        try:
            st = os.stat(project)
        except OSError:
            return False  # the probe meets the same fault and names it
        kept = self._kept.get(project)  # one tuple, replaced whole under the lock: a read needs none
        if kept is not None and kept[:3] == (st.st_ino, st.st_nlink, st.st_mtime_ns):
            return kept[3].isdisjoint(loose_names)
        with self._lock:
            uses = self._uses[project] = self._uses.get(project, 0) + 1
            if uses >= LIST_AFTER:
                del self._uses[project]  # kept or not, the next attempt waits as many lookups again
            elif len(self._uses) > MAX_FOLDERS:
                self._uses.clear()
        if uses >= LIST_AFTER:
            self._list(project, st)
        return False

    def _list(self, project: str, before: os.stat_result) -> None:
        listed_at = time.time_ns()
        try:
            names = frozenset(_loose(n) for n in os.listdir(project))
            after = os.stat(project)
        except OSError:
            return
        stamp = (after.st_ino, after.st_nlink, after.st_mtime_ns)
        if stamp != (before.st_ino, before.st_nlink, before.st_mtime_ns) or after.st_mtime_ns > listed_at - RACY_NS:
            return  # changed while listed, or too recently to tell a later change apart: probe instead
        with self._lock:
            self._kept.pop(project, None)
            self._kept[project] = (*stamp, names)
            while len(self._kept) > MAX_FOLDERS:
                del self._kept[next(iter(self._kept))]

"""Where the last full read of a transcript stopped, so ``read_from`` after an append decodes only new bytes.

A mark is taken at a committed boundary (the end of the last complete frame, or of the last complete
line) together with the bytes just before it.  It is only trusted while the file is the same inode,
has not shrunk below the mark, and still holds those bytes; anything else (a repair, a rewrite, a
rename over the file) drops it and the next read decodes the whole file again.  The transcript is
append-only, so in practice an append is the only change that keeps a mark valid.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

CHECK_BYTES = 64  # bytes before a mark that must still be there for the mark to be trusted
MAX_MARKS = 64  # transcripts whose tail mark one store remembers (least recently used forgotten)


@dataclass(frozen=True, slots=True)
class TailMark:
    """Where a checked whole read of one transcript stopped, and the bytes that prove the file is unchanged."""

    dev_ino: tuple[int, int]
    offset: int  # file offset of the committed boundary
    next_seq: int  # seq of the first record after it
    check: bytes  # the file's bytes just before ``offset``
    meta: dict[str, Any]


class TailMarks:
    """A small thread-safe LRU of marks by transcript path (backends are called from worker threads)."""

    def __init__(self, size: int = MAX_MARKS) -> None:
        self._marks: OrderedDict[str, TailMark] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(self, path: str) -> TailMark | None:
        """The mark of ``path`` (now the most recently used), or None."""
        with self._lock:
            mark = self._marks.get(path)
            if mark is not None:
                self._marks.move_to_end(path)
            return mark

    def put(self, path: str, mark: TailMark) -> None:
        """Remember ``mark`` for ``path``, forgetting the least recently used beyond the limit."""
        with self._lock:
            self._marks[path] = mark
            self._marks.move_to_end(path)
            while len(self._marks) > self._size:
                self._marks.popitem(last=False)

    def drop(self, path: str) -> None:
        """Forget the mark of ``path`` (its file changed in a way a mark cannot follow)."""
        with self._lock:
            self._marks.pop(path, None)

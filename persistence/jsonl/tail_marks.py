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

CHECK_BYTES = 64
MAX_MARKS = 64


@dataclass(frozen=True, slots=True)
class TailMark:
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
        with self._lock:
            mark = self._marks.get(path)
            if mark is not None:
                self._marks.move_to_end(path)
            return mark

    def put(self, path: str, mark: TailMark) -> None:
        with self._lock:
            self._marks[path] = mark
            self._marks.move_to_end(path)
            while len(self._marks) > self._size:
                self._marks.popitem(last=False)

    def drop(self, path: str) -> None:
        with self._lock:
            self._marks.pop(path, None)

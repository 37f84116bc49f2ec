"""A transcript's records after a tail mark, for a ``view`` that checks only what was appended.

Why: following a live 202k-event session re-read and re-parsed the whole log on every refresh (180-364
ms, issue 25); a turn appended to it is a few hundred bytes.  A ``TailMark`` (``tail_marks``) says where
the last checked read stopped: the end of its last complete frame or line, the file's identity and the
64 bytes before that boundary.  While the file is the same inode, has not shrunk below the boundary and
still holds those bytes there, everything before the boundary is what was read (the transcript is
append-only; a repair or rewrite replaces the file or changes those bytes), so only the bytes after it
are parsed.  A file that changed without growing (rewritten in place at the same size, or touched) is
read whole.  Accepted, as the issue asks (check the tail, not the whole file): an in-place rewrite that
keeps the seam's 64 bytes and also grows the file goes unnoticed until the next whole read.

The seam is re-read from the boundary, never from the old end of file: a torn last line or frame the
previous read left out is parsed again, completed or not.

Unlike ``JsonlReader.load_suffix`` (``read_from``), this never touches the reader's shared marks and
refuses nothing itself: any doubt or defect returns None, and the caller's whole read reports it with
its exact message and offsets.
"""

from __future__ import annotations

import os

from persistence.artifact import RawBytes
from persistence.backend import CancelToken, StoredLog, TornMarker
from persistence.errors import SessionStorageCorruptError
from persistence.jsonl import frames
from persistence.jsonl.files import read_from, revision_of, revision_stamp
from persistence.jsonl.parse import scan_frames_records, scan_lines, stored_log, tail_mark
from persistence.jsonl.tail_marks import CHECK_BYTES, TailMark


def read_after(
    path: str, mark: TailMark, compression: str, token: CancelToken, *, since: str | None = None, whole_raw: bool = False
) -> StoredLog | None:
    """The records of ``path`` after ``mark`` (``base_seq`` = ``mark.next_seq``, offsets absolute), or None
    when the mark no longer describes the file.  ``since``: the file's revision when the mark was taken
    (a file changed since without growing is refused).  ``whole_raw``: read (and return as ``raw``) the
    whole file, still parsing only its bytes after the mark."""
    start = 0 if whole_raw else mark.offset - len(mark.check)
    got = _read_stable(path, mark, start, since, token)
    if got is None:
        return None
    data, revision = got
    boundary = mark.offset - start  # where the mark's boundary is in ``data``
    if data[boundary - len(mark.check) : boundary] != mark.check:
        return None
    try:
        if compression == "zstd":
            view = memoryview(data)[boundary:]
            ranges, torn_start = frames.scan_frames(view)
            events, torn, committed, count = scan_frames_records(view, ranges, torn_start, mark.next_seq, 0)
            committed += boundary
            if torn is not None:
                torn = TornMarker(int(torn.truncate_to) + boundary, torn.recovered)
        else:
            events, torn, committed = scan_lines(data, boundary, mark.next_seq)
            count = len(events)
    except SessionStorageCorruptError:
        return None  # the whole read reports it, with the offsets and line numbers it cites
    if torn is not None:
        cut = int(torn.truncate_to)
        torn = TornMarker(start + cut, torn.recovered, evidence=data[cut:])
    check = data[max(0, committed - CHECK_BYTES) : committed]
    new_mark = tail_mark(revision, check, start + committed, mark.next_seq + count, mark.meta)
    raw = RawBytes(data, compression, 0, revision, path) if whole_raw else None
    return stored_log(path, dict(mark.meta), events, revision, torn, base_seq=mark.next_seq, tail_mark=new_mark, raw=raw)


def _read_stable(path: str, mark: TailMark, start: int, since: str | None, token: CancelToken) -> tuple[bytes, str] | None:
    """The file's bytes from ``start`` on and its revision, read while no writer changed it; None when it is
    no longer the marked file (another inode, or shorter than the mark)."""
    while True:
        token.check()
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) != mark.dev_ino or st.st_size < mark.offset:
                return None
            data = read_from(path, start)
            after = os.stat(path)
        except FileNotFoundError:
            return None
        revision = revision_of(after)
        if revision_of(st) == revision and len(data) + start == after.st_size:
            if since is not None and revision != since and after.st_size <= revision_stamp(since)[2]:
                return None  # changed but not grown: rewritten in place (or touched), so read it whole
            return data, revision


__all__ = ["read_after"]

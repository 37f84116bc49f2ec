"""The readable prefix of a transcript the engine refuses: the events before its first damage.

Why: ``view`` refuses a corrupt or unsupported log whole (as upstream does), yet its title, its cwd
and the turns before the damage are what a support engineer reads first, and every viewer (the list,
the banner, lineage, search, stats, the timeline, ``show``) must read the same part of it.  The
bytes are decoded leniently (``persistence.raw_decode.iter_raw``: whole lines or zstd frames, damage
in file order) and fed to the load path's own ``LineScanner``, which keeps the committed prefix and
stops at the first line that does not parse or does not continue the seq chain.  The header line is
read without validation (an unsupported version or a bad field still names the session).  Nothing
here is a verdict (``diagnose`` is) and nothing is written.

May import: ``persistence.raw_decode``, ``persistence.jsonl.lines``, ``persistence.model``,
``persistence.readable_prefix`` and ``persistence.errors``.
"""

from __future__ import annotations

from typing import Any

from persistence.errors import SessionStorageCorruptError
from persistence.jsonl.lines import LineScanner
from persistence.model.event_table import EventTable
from persistence.model.jsontext import JsonTextError, js_loads
from persistence.raw_decode import RawDamage, iter_raw
from persistence.readable_prefix import PrefixStop, ReadablePrefix


def lenient_header(line: bytes) -> dict[str, Any] | None:
    """The header line's fields as written (no validation), or None when it is not a JSON object with an id."""
    try:
        value = js_loads(line)
    except (JsonTextError, ValueError):
        return None
    if type(value) is not dict or "id" not in value:
        return None
    return {k: v for k, v in value.items() if k != "type"}


def transcript_prefix(data: bytes | memoryview, compression: str) -> ReadablePrefix | None:
    """The header and the events before the first damage of a transcript's bytes; None without a header."""
    meta: dict[str, Any] | None = None
    scanner: LineScanner | None = None
    why: str | None = None
    lines_total = 0  # event lines that decode anywhere in the file
    for piece in iter_raw(data, compression):
        if isinstance(piece, RawDamage):
            if why is None:
                why = piece.message
            continue
        if piece.provisional or not piece.text:
            continue  # a torn tail's decodable part is not committed
        text = piece.text
        if meta is None:
            nl = text.find(b"\n")
            head, text = (text, b"") if nl < 0 else (text[:nl], text[nl + 1 :])
            meta = lenient_header(head)
            if meta is None:
                return None
            scanner = LineScanner(0)
            if not text:
                continue
        count = text.count(b"\n") + 1
        lines_total += count
        if why is not None or scanner is None or scanner.issue is not None:
            continue
        try:
            scanner.write(text + b"\n")
        except SessionStorageCorruptError as err:  # a record the scanner refuses outright (a null record)
            why = str(err)
    if meta is None or scanner is None:
        return None
    events: EventTable = scanner.events
    if scanner.issue is not None and why is None:
        why = str(scanner.issue)
    if why is None:
        return ReadablePrefix(meta, events, None)
    # Each item of the table is one stored line (a packed chunk row included): the rest are after the stop.
    return ReadablePrefix(meta, events, PrefixStop(len(events), why, max(lines_total - len(events.items), 0)))


__all__ = ["lenient_header", "transcript_prefix"]

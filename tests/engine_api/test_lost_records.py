"""``persistence.lost``: the records of a cut region a repair loses, decoded leniently (issue 24 item 8)."""

from __future__ import annotations

import orjson

from persistence import LostRecord
from persistence.lost import lost_lines, salvage


def _line(seq: int, etype: str) -> bytes:
    return orjson.dumps({"type": etype, "seq": seq, "time": seq, "data": {}}) + b"\n"


def test_recovered_lines_are_kept_later_ones_and_the_torn_write_are_lost() -> None:
    # seq 7 parses below the next kept seq (8): the read kept it and the repair re-appends it.
    plain = (
        _line(7, "step/start") + b'{"type":"tool/call","se' + b"\n" + _line(9, "tool/result") + b'{"type":"step/end","seq":10,"da'
    )
    lost = lost_lines(plain, 8)
    assert [(r.seq, r.type, r.complete) for r in lost] == [
        (None, "tool/call", False),  # a damaged line: its seq was cut off
        (9, "tool/result", True),  # intact data after the damage
        (10, "step/end", False),  # the torn write
    ]
    assert lost[1].record is not None and lost[1].record["seq"] == 9
    assert all(isinstance(r, LostRecord) for r in lost)


def test_salvage_reads_what_precedes_the_damage() -> None:
    assert salvage(b'{"type":"assistant/chunk","seq":12,"ti') == LostRecord(12, "assistant/chunk", None, False)
    assert salvage(b"\x00\x01garbage") == LostRecord(None, None, None, False)

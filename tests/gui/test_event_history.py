"""Back / forward between visited events (``app.gui.controllers.event_history``, no Qt)."""

from __future__ import annotations

from app.gui.controllers.event_history import EventHistory, Place


def _p(seq: int | None, key: str = "k") -> Place:
    return Place(key, key.upper(), seq)


def test_jumps_back_and_forward() -> None:
    h = EventHistory()
    assert h.back() is None and h.forward() is None and h.current is None
    h.jump(None, _p(1))
    h.jump(_p(1), _p(5))  # "here" equal to the current place adds nothing
    h.jump(_p(7), _p(9))  # moved to 7 since the last jump: 7 is recorded, then 9
    assert h.places() == [_p(1), _p(5), _p(7), _p(9)]
    assert h.back() == _p(7) and h.back() == _p(5)
    assert h.forward() == _p(7)
    assert h.can_go_back and h.can_go_forward
    # A new jump drops the forward entries.
    h.jump(_p(7), _p(2, "other"))
    assert h.places() == [_p(1), _p(5), _p(7), _p(2, "other")] and not h.can_go_forward
    # Going back from a place the user moved to records it first, so forward returns there.
    assert h.back(_p(3, "other")) == _p(2, "other")
    assert h.forward() == _p(3, "other")


def test_the_oldest_entries_are_dropped() -> None:
    h = EventHistory(max_entries=3)
    for seq in range(6):
        h.visit(_p(seq))
    assert h.places() == [_p(3), _p(4), _p(5)] and h.current == _p(5)
    h.clear()
    assert h.current is None and not h.can_go_back

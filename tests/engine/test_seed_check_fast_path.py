"""The seed check's straight pass for appended surface events equals the generic checks (issue 25 item 4).

Why: ``validate_seed_events`` now folds a surface event that appends to the surface (int fields, shape
already checked by the read pipeline) in one straight pass instead of the generic envelope checks and
``SurfaceFold.plan``.  Whatever it takes must be taken the same way (same fold), and everything else
must still be refused with the generic message (session-model §2.3, §2.7).
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from persistence.errors import SessionValidationError
from persistence.model import validate

MAX = 2**53 - 1
SURFACE = ["user/message", "assistant/message", "tool/result"]
ODD = [None, True, 1.0, -1, "x", [1], MAX + 1, 2.5]


@st.composite
def logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 8))):
        etype = draw(st.sampled_from([*SURFACE, *SURFACE, "step/start"]))
        ev: dict[str, Any] = {"type": etype, "seq": i, "time": 1000 + i, "data": {"turn": 1}}
        op = draw(st.sampled_from(["append", "append", "append", "absent", "replace", "odd"]))
        if op == "append":
            ev["surfaceOp"] = "append"
        elif op == "replace" and i:
            ev["surfaceOp"] = {"op": "replace", "start": draw(st.integers(0, i - 1)), "end": i - 1}
        elif op == "odd":
            ev["surfaceOp"] = draw(st.sampled_from(ODD))
        if draw(st.booleans()):
            ev["sourceEventSeqs"] = draw(
                st.one_of(
                    st.lists(st.integers(-1, i + 1), max_size=3),
                    st.lists(st.sampled_from([0, 0, True, 1.0, None]), max_size=2),
                    st.sampled_from(ODD),
                )
            )
        fault = draw(st.sampled_from(["none"] * 6 + ["seq", "time", "ignorable", "extra", "no-data", "type"]))
        if fault == "seq":
            ev["seq"] = draw(st.sampled_from([i + 1, float(i), True, None]))
        elif fault == "time":
            ev["time"] = draw(st.sampled_from([MAX + 1, 1.0, None, -MAX]))
        elif fault == "ignorable":
            ev["ignorable"] = draw(st.sampled_from([True, False]))
        elif fault == "extra":
            ev["extra"] = 1
        elif fault == "no-data":
            del ev["data"]
        elif fault == "type":
            ev["type"] = draw(st.sampled_from([None, ["user/message"], "request/header-delta"]))
        out.append(ev)
    return out


def _verdict(events: list[dict[str, Any]], shapes_checked: int) -> tuple[str, Any]:
    try:
        fold = validate.validate_seed_events(events, shapes_checked=shapes_checked)
    except SessionValidationError as err:
        return "refused", str(err)
    return "ok", (list(fold.nodes), sorted(fold._by_seq))


def _msg(seq: int, **extra: Any) -> dict[str, Any]:
    return {"type": "assistant/message", "seq": seq, "time": 5, "data": {}, "surfaceOp": "append", **extra}


@settings(max_examples=examples(300), deadline=None)
@given(events=logs(), checked=st.integers(0, 8))
@example(events=[_msg(0), _msg(1, sourceEventSeqs=[0, 0])], checked=2)  # duplicates
@example(events=[_msg(0), _msg(1, sourceEventSeqs=[0, 1])], checked=2)  # not earlier
@example(events=[_msg(0), _msg(1, sourceEventSeqs=[-1])], checked=2)
@example(events=[_msg(0), _msg(1, sourceEventSeqs=[True])], checked=2)
@example(events=[_msg(0), _msg(1, sourceEventSeqs=[0.0])], checked=2)
@example(events=[_msg(0), _msg(1, sourceEventSeqs=[])], checked=2)
@example(events=[_msg(0), _msg(1), _msg(2, sourceEventSeqs=[0, 1])], checked=3)  # two sources, each judged alone
@example(events=[_msg(0), _msg(1), _msg(2, sourceEventSeqs=[1, True])], checked=3)
@example(events=[_msg(0), _msg(1), _msg(2, sourceEventSeqs=[1.0, 0])], checked=3)
@example(events=[_msg(0), _msg(1), _msg(2, sourceEventSeqs=[1, -1])], checked=3)
@example(events=[_msg(0), _msg(1), _msg(2, sourceEventSeqs=[2, 0])], checked=3)
@example(events=[_msg(0), _msg(1), _msg(2), _msg(3, sourceEventSeqs=[0, 1, 2])], checked=4)  # three: the set path
@example(events=[_msg(0), _msg(1), _msg(2), _msg(3, sourceEventSeqs=[0, 1, 1])], checked=4)
@example(events=[_msg(0), {**_msg(1, sourceEventSeqs=[]), "type": "user/message"}], checked=2)
@example(events=[_msg(0, ignorable=True)], checked=1)
@example(events=[{**_msg(0), "time": MAX + 1}], checked=1)
@example(events=[{**_msg(0), "seq": 0.0}], checked=1)
def test_the_straight_pass_folds_exactly_what_the_generic_checks_fold(events: list[dict[str, Any]], checked: int) -> None:
    # Shapes are skipped only for events a caller checked; events here carry no message at all, so a
    # shape check that runs refuses: both passes must agree on that too.
    ours = _verdict(events, checked)
    original = validate._appended_surface
    validate._appended_surface = lambda _ev, _i, _fold: False  # the generic checks alone
    try:
        generic = _verdict(events, checked)
    finally:
        validate._appended_surface = original
    assert ours == generic

"""The Qt-free session list (``app.listing``): sort order, filter, unseen marks and the events a view hears.

Plain unit tests, no Qt: a ``Mirror`` observer keeps its own copy of the shown keys from nothing but
the events, as a Qt view would; after every change it must equal what the list shows, which checks
each event's rows (and that ``…ing`` comes before the list changes).
"""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.listing import BULK_INSERT, SEEN_MAX_PER_ROOT, ListObserver, SessionList

ROOT = Path(__file__).resolve().parents[2]
BY_NAME, BY_SIZE, BY_STATUS = 0, 1, 2  # the test's columns; BY_STATUS reads the details
DETAIL_COLUMNS = frozenset({BY_STATUS})


@dataclass(slots=True)
class Row:
    key: str
    session_id: str
    project: str
    name: str
    size: int
    revision: str | None = "r1"
    modified_ns: int | None = 0
    parent_id: str | None = None
    details: Any = None

    @property
    def status(self) -> str:
        return "pending" if self.details is None else str(self.details)


def sort_value(r: Row, col: int) -> Any:
    if col == BY_SIZE:
        return r.size
    if col == BY_STATUS:
        return r.status
    return r.name.lower()


def filter_text(r: Row) -> str:
    return f"{r.name} {r.session_id} {r.project} {r.status}".lower()


def row(i: int, project: str = "p", **kw: Any) -> Row:
    return Row(f"k{i:04d}", f"s-{i:04d}", project, kw.pop("name", f"name {i:04d}"), kw.pop("size", i), **kw)


class Mirror(ListObserver):
    """The shown keys, rebuilt from events alone (what a view holds)."""

    def __init__(self) -> None:
        self.listing: SessionList[Row] | None = None
        self.keys: list[str] = []
        self.log: list[tuple[Any, ...]] = []
        self._pending: tuple[Any, ...] | None = None

    def _before(self, *event: Any) -> None:
        assert self.listing is not None and self._pending is None
        assert self.listing.shown == len(self.keys), "announced after the list already changed"
        self._pending = event
        self.log.append(event)

    def _after(self, name: str) -> tuple[Any, ...]:
        event, self._pending = self._pending, None
        assert event is not None and event[0] == name
        return event

    def _at(self, i: int) -> str:
        assert self.listing is not None
        return self.listing.key_at(i)

    def inserting(self, first: int, last: int) -> None:
        assert 0 <= first <= len(self.keys) and last >= first
        self._before("inserting", first, last)

    def inserted(self) -> None:
        _, first, last = self._after("inserting")
        self.keys[first:first] = [self._at(i) for i in range(first, last + 1)]

    def removing(self, first: int, last: int) -> None:
        assert 0 <= first <= last < len(self.keys)
        self._before("removing", first, last)

    def removed(self) -> None:
        _, first, last = self._after("removing")
        del self.keys[first : last + 1]

    def moving(self, src: int, final: int) -> None:
        assert 0 <= src < len(self.keys) and 0 <= final < len(self.keys) and src != final
        self._before("moving", src, final)

    def moved(self) -> None:
        _, src, final = self._after("moving")
        self.keys.insert(final, self.keys.pop(src))

    def layout_changing(self) -> None:
        self._before("layout")

    def layout_changed(self) -> None:
        self._after("layout")
        assert self.listing is not None
        self.keys = [self._at(i) for i in range(self.listing.shown)]

    def resetting(self) -> None:
        self._before("reset")

    def reset(self) -> None:
        self._after("reset")
        self.keys = []

    def changed(self, first: int, last: int) -> None:
        assert self._pending is None
        assert 0 <= first <= last < max(1, len(self.keys))
        self.log.append(("changed", first, last))

    def seen_changed(self) -> None:
        self.log.append(("seen",))


def make(column: int = BY_NAME, *, descending: bool = False) -> tuple[SessionList[Row], Mirror]:
    mirror = Mirror()
    listing: SessionList[Row] = SessionList(
        sort_value, filter_text, sort_column=column, descending=descending, detail_columns=DETAIL_COLUMNS, observer=mirror
    )
    mirror.listing = listing
    return listing, mirror


def shown(listing: SessionList[Row]) -> list[str]:
    return [listing.key_at(i) for i in range(listing.shown)]


def expected(rows: list[Row], column: int, descending: bool, words: list[str], project: str | None) -> list[str]:
    """What the list must show, computed the slow and obvious way."""
    keep = [r for r in rows if (project is None or r.project == project) and all(w in filter_text(r) for w in words)]
    keep.sort(key=lambda r: (sort_value(r, column), r.key), reverse=descending)
    return [r.key for r in keep]


# ---------------------------------------------------------------- sort order and filter


@pytest.mark.parametrize("descending", [False, True])
def test_rows_arrive_in_sorted_place_and_display_rows_follow_the_order(descending: bool) -> None:
    listing, mirror = make(BY_SIZE, descending=descending)
    rows = [row(i, size=s) for i, s in enumerate([5, 1, 9, 3, 7])]
    for r in rows:
        listing.append_rows([r])
    assert shown(listing) == expected(rows, BY_SIZE, descending, [], None) == mirror.keys
    assert all(listing.row_for_key(k) == i for i, k in enumerate(shown(listing)))
    assert [e[0] for e in mirror.log] == ["inserting"] * 5  # one by one: no relayout for a small batch
    assert listing.row_at(0).key == listing.key_at(0) and listing.row_or_none(5) is None


def test_a_bulk_batch_is_one_insert_then_one_layout_in_sorted_order() -> None:
    listing, mirror = make(BY_SIZE, descending=True)
    rows = [row(i, size=(i * 7919) % 1000) for i in range(BULK_INSERT * 3)]
    listing.append_rows(rows)
    assert [e[0] for e in mirror.log] == ["inserting", "layout"]
    assert mirror.log[0][1:] == (0, len(rows) - 1)
    assert shown(listing) == expected(rows, BY_SIZE, True, [], None) == mirror.keys


def test_filter_words_must_all_occur_and_the_project_filter_narrows_further() -> None:
    listing, mirror = make()
    rows = [row(1, "alpha", name="Fix the parser"), row(2, "beta", name="fix tests"), row(3, "alpha", name="Docs")]
    listing.append_rows(rows)
    listing.set_filter_text("  FIX  ")
    assert listing.filter_words == ["fix"] and listing.filtering
    assert shown(listing) == ["k0002", "k0001"] == mirror.keys  # "fix tests" < "fix the parser"
    listing.set_filter_text("fix parser")
    assert shown(listing) == ["k0001"]
    listing.set_filter_text("fix")
    listing.set_project("beta")
    assert shown(listing) == ["k0002"] == mirror.keys and listing.project_filter == "beta"
    listing.set_filter_text("")
    listing.set_project(None)
    assert not listing.filtering and shown(listing) == ["k0003", "k0002", "k0001"] == mirror.keys
    assert listing.total == 3 and listing.project_counts() == {"alpha": 2, "beta": 1}


def test_the_same_filter_again_is_no_layout_change() -> None:
    listing, mirror = make()
    listing.append_rows([row(1), row(2)])
    listing.set_filter_text("name")
    before = len(mirror.log)
    listing.set_filter_text("NAME ")
    listing.set_project(None)
    assert len(mirror.log) == before


def test_sorting_by_another_column_relayouts_once() -> None:
    listing, mirror = make(BY_NAME)
    rows = [row(i, name=n, size=s) for i, (n, s) in enumerate([("b", 3), ("a", 2), ("c", 1)])]
    listing.append_rows(rows)
    mirror.log.clear()
    listing.sort(BY_SIZE, descending=True)
    assert mirror.log == [("layout",)]
    assert listing.sort_column == BY_SIZE and listing.descending
    assert shown(listing) == expected(rows, BY_SIZE, True, [], None) == mirror.keys


# ---------------------------------------------------------------- refreshes row by row


def test_a_changed_row_moves_to_its_new_place_and_its_cells_refresh() -> None:
    listing, mirror = make(BY_SIZE)
    listing.append_rows([row(i, size=i * 10) for i in range(5)])
    mirror.log.clear()
    listing.replace_row(row(0, size=35))  # from the first place to between 30 and 40
    assert mirror.log == [("moving", 0, 3), ("changed", 3, 3)]
    assert shown(listing) == ["k0001", "k0002", "k0003", "k0000", "k0004"] == mirror.keys


def test_a_changed_row_that_keeps_its_place_is_one_changed_row() -> None:
    listing, mirror = make(BY_SIZE, descending=True)
    listing.append_rows([row(i, size=i * 10) for i in range(3)])
    mirror.log.clear()
    listing.replace_row(row(1, size=11, revision="r2"))
    assert mirror.log == [("changed", 1, 1)] and listing.get("k0001") is not None
    assert listing.get("k0001").revision == "r2"  # type: ignore[union-attr]


def test_a_change_that_the_filter_no_longer_accepts_removes_the_row_and_back() -> None:
    listing, mirror = make()
    listing.append_rows([row(1, name="keep me"), row(2, name="keep too")])
    listing.set_filter_text("keep")
    mirror.log.clear()
    listing.replace_row(row(1, name="gone"))
    assert mirror.log == [("removing", 0, 0)] and shown(listing) == ["k0002"] == mirror.keys
    listing.replace_row(row(1, name="keep again"))
    assert shown(listing) == ["k0001", "k0002"] == mirror.keys
    assert listing.total == 2


def test_removed_keys_leave_the_list_and_the_counts() -> None:
    listing, mirror = make()
    listing.append_rows([row(1, "a"), row(2, "b"), row(3, "a")])
    listing.remove_keys(["k0001", "nope"])
    assert shown(listing) == ["k0002", "k0003"] == mirror.keys
    assert listing.project_counts() == {"a": 1, "b": 1} and listing.get("k0001") is None
    listing.clear()
    assert listing.total == 0 and mirror.keys == [] and listing.status_counts() == {}


def test_details_survive_a_relisting_without_them_and_counts_follow_statuses() -> None:
    listing, _ = make()
    listing.append_rows([row(1), row(2)])
    assert listing.status_counts() == {"pending": 2}
    listing.apply_details({"k0001": "ok", "k0002": "corrupt", "unknown": "ok"})
    assert listing.status_counts() == {"ok": 1, "corrupt": 1}
    listing.replace_row(row(1, revision="r2"))  # a new listing of the same session: no details yet
    assert listing.get("k0001").details == "ok"  # type: ignore[union-attr]
    assert listing.status_counts() == {"ok": 1, "corrupt": 1}


def test_details_under_a_detail_sort_move_rows_and_a_bulk_batch_relayouts() -> None:
    listing, mirror = make(BY_STATUS)
    rows = [row(i) for i in range(BULK_INSERT + 5)]
    listing.append_rows(rows)
    listing.apply_details({"k0003": "a-first"})  # one row: moved into its place
    assert shown(listing)[0] == "k0003" == mirror.keys[0]
    mirror.log.clear()
    listing.apply_details({r.key: f"s{i % 3}" for i, r in enumerate(rows)})  # many: one relayout
    assert [e[0] for e in mirror.log] == ["layout", "changed"]
    assert shown(listing) == expected(rows, BY_STATUS, False, [], None) == mirror.keys


def test_details_that_move_nothing_are_batched_into_runs_of_changed_rows() -> None:
    listing, mirror = make(BY_SIZE)
    listing.append_rows([row(i) for i in range(6)])
    mirror.log.clear()
    listing.apply_details({"k0000": "ok", "k0001": "ok", "k0004": "ok"})
    assert mirror.log == [("changed", 0, 1), ("changed", 4, 4)]


def test_the_pinned_session_ignores_the_background_pass() -> None:
    listing, _ = make()
    listing.append_rows([row(1)])
    listing.pinned_key = "k0001"
    listing.apply_details({"k0001": "ok"})
    assert listing.get("k0001").details is None  # type: ignore[union-attr]
    listing.apply_details({"k0001": "open-turn"}, pinned=True)
    assert listing.get("k0001").details == "open-turn"  # type: ignore[union-attr]


def test_lookups_by_session_id_and_parent() -> None:
    listing, _ = make()
    listing.append_rows([row(1), row(2, parent_id="s-0001"), row(3, parent_id="s-0001")])
    assert listing.find_id("s-0002").key == "k0002"  # type: ignore[union-attr]
    assert listing.find_id("s-9") is None
    assert sorted(r.key for r in listing.children_of("s-0001")) == ["k0002", "k0003"]
    assert sorted(listing.keys()) == ["k0001", "k0002", "k0003"] and len(listing.rows()) == 3


@pytest.mark.parametrize("seed", range(6))
def test_events_alone_rebuild_what_the_list_shows_through_any_sequence_of_changes(seed: int) -> None:
    rnd = random.Random(seed)
    column, descending = rnd.choice([BY_NAME, BY_SIZE, BY_STATUS]), rnd.random() < 0.5
    listing, mirror = make(column, descending=descending)
    rows: dict[str, Row] = {}
    words: list[str] = []
    project: str | None = None
    for step in range(120):
        op = rnd.random()
        if op < 0.25:
            ids = rnd.sample(range(400), k=rnd.choice([1, 3, 40]))  # a listing batch names each session once
            batch = [row(i, rnd.choice("ab"), size=rnd.randrange(50)) for i in ids]
            listing.append_rows(batch)
            for r in batch:
                rows.setdefault(r.key, r)
        elif op < 0.45 and rows:
            old = rows[rnd.choice(sorted(rows))]
            new = row(int(old.key[1:]), rnd.choice("ab"), size=rnd.randrange(50), name=rnd.choice(["x y", "y z", old.name]))
            new.details = old.details
            listing.replace_row(new)
            rows[new.key] = new
        elif op < 0.55 and rows:
            gone = rnd.sample(sorted(rows), k=min(len(rows), rnd.choice([1, 5])))
            listing.remove_keys(gone)
            for k in gone:
                del rows[k]
        elif op < 0.75 and rows:
            keys = rnd.sample(sorted(rows), k=min(len(rows), rnd.choice([1, 4, 50])))
            listing.apply_details({k: rnd.choice(["ok", "corrupt", "open-turn"]) for k in keys})
        elif op < 0.85:
            words = rnd.choice([[], ["x"], ["y"], ["name", "1"], ["ok"]])
            listing.set_filter_text(" ".join(words))
        elif op < 0.92:
            project = rnd.choice([None, "a", "b"])
            listing.set_project(project)
        else:
            column, descending = rnd.choice([BY_NAME, BY_SIZE, BY_STATUS]), rnd.random() < 0.5
            listing.sort(column, descending=descending)
        want = expected(list(rows.values()), column, descending, words, project)
        assert shown(listing) == want, f"step {step}"
        assert mirror.keys == want, f"step {step}: the events disagree with the list"
        assert listing.total == len(rows)


# ---------------------------------------------------------------- unseen marks


def test_never_opened_rows_modified_after_the_last_visit_are_unseen() -> None:
    listing, mirror = make()
    listing.set_seen_state({}, baseline_ns=100)
    old, new = row(1, modified_ns=100), row(2, modified_ns=101)
    listing.append_rows([old, new])
    assert not listing.is_unseen(old) and listing.is_unseen(new) and listing.unseen_count() == 1
    listing.set_seen_state({}, baseline_ns=None)  # no earlier visit: nothing is unseen
    assert listing.unseen_count() == 0 and mirror.log[-1] == ("changed", 0, 1)


def test_opening_a_row_clears_its_mark_until_its_revision_moves() -> None:
    listing, mirror = make()
    listing.set_seen_state({"k0001": "r0"}, baseline_ns=None)
    listing.append_rows([row(1, revision="r1")])
    assert listing.unseen_count() == 1
    mirror.log.clear()
    listing.mark_seen("k0001")
    assert listing.unseen_count() == 0 and mirror.log == [("changed", 0, 0), ("seen",)]
    assert listing.seen_state() == ({"k0001": "r1"}, None) and listing.looking_at == "k0001"
    mirror.log.clear()
    listing.mark_seen("k0001")  # already looked at: nothing to say
    assert mirror.log == []
    listing.looking_at = None
    listing.replace_row(row(1, revision="r2"))
    assert listing.unseen_count() == 1


def test_the_open_session_stays_seen_as_it_changes() -> None:
    listing, _ = make()
    listing.set_seen_state({}, baseline_ns=0)
    listing.append_rows([row(1, modified_ns=5)])
    listing.mark_seen("k0001")
    listing.replace_row(row(1, revision="r2", modified_ns=6))
    assert listing.unseen_count() == 0 and listing.seen_state()[0] == {"k0001": "r2"}


def test_the_looked_at_state_keeps_only_the_most_recent_sessions() -> None:
    listing, _ = make()
    listing.set_seen_state({f"old{i}": "r" for i in range(SEEN_MAX_PER_ROOT)}, baseline_ns=None)
    listing.append_rows([row(1)])
    listing.mark_seen("k0001")
    seen = listing.seen_state()[0]
    assert len(seen) == SEEN_MAX_PER_ROOT and "old0" not in seen and list(seen)[-1] == "k0001"
    listing.mark_seen("unknown")  # a key the list does not hold: ignored
    assert listing.seen_state()[0] == seen


# ---------------------------------------------------------------- the package's promise


def test_importing_the_listing_loads_no_qt_and_no_window_code() -> None:
    code = (
        "import sys, app.listing, app.listing.root_scan; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6') or m.startswith('app.gui')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr

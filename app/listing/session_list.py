"""The session list's rows, sort order, filter and unseen marks, as a plain evented model (no Qt).

Why here and not in the Qt model: this is the list's logic (where a row goes, which rows a filter
keeps, what is unseen), and a plain-Python model can be tested and measured without a window.  The
window's ``SessionListModel`` is a thin adapter: it turns this model's events into Qt's
``begin…``/``end…`` calls and signals, as napari's Qt item models do over its evented lists.

Sorting and filtering happen over cached keys: every row's sort key and its lower-case filter text are
computed when the row arrives or changes, and every row's sort key is kept in one sorted list
(``_full``), so a filter pass is a substring test per row over that list (its result is already
sorted): ~2-7 ms on 10,000 rows instead of ~45 ms (sorting and building each row's text on every key;
issue 16, ``benchmarks/bench_filter.py``).  A pass is one layout change, never a reset, so the
selection and the current row stay on their sessions.

Refreshes are per row: an inserted row goes to its sorted place, a changed row is updated (and moved
if its sort key moved), a removed row is removed.  Only user actions (sorting, filtering) and
switching roots relayout or reset the whole list.

Positions in events are *display* rows (descending order already applied), the rows a view shows.
What a cell says and how a row sorts per column are the caller's (``sort_value`` and
``filter_text``): they are presentation, and this model never needs to know them.

May import: the standard library and ``app.listing.unseen``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar

from app.listing.unseen import SeenState

SortKey = tuple[Any, str]  # (the sort column's value, row key): unique per row, so bisect finds one row
BULK_INSERT = 32  # above this many new rows at once, append and re-sort instead of inserting one by one


class ListedRow(Protocol):
    """What the list reads of a row (``app.gui.models.session_row.SessionRow`` is one)."""

    @property
    def key(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def revision(self) -> str | None: ...
    @property
    def modified_ns(self) -> int | None: ...
    @property
    def parent_id(self) -> str | None: ...

    details: Any  # filled in by the background pass (``apply_details``); kept across a same-revision relisting


R = TypeVar("R", bound=ListedRow)


class ListObserver:
    """What a view of the list hears: every method is a no-op here; an adapter overrides what it needs.

    Each change comes as a pair (``…ing`` before the model changes, ``…ed`` after), because Qt's views
    must hear of an insert, removal, move, layout change or reset before it happens.  Rows are display
    rows.
    """

    def inserting(self, first: int, last: int) -> None:
        """Rows ``first..last`` (inclusive) are about to be inserted."""

    def inserted(self) -> None:
        """The announced rows are in."""

    def removing(self, first: int, last: int) -> None:
        """Rows ``first..last`` are about to be removed."""

    def removed(self) -> None:
        """The announced rows are gone."""

    def moving(self, src: int, final: int) -> None:
        """Row ``src`` is about to move to ``final`` (its row once moved)."""

    def moved(self) -> None:
        """The announced row has moved."""

    def layout_changing(self) -> None:
        """Every row may be about to move, appear or disappear (a sort or filter pass)."""

    def layout_changed(self) -> None:
        """The new layout is in (rows are found by key again)."""

    def resetting(self) -> None:
        """Every row is about to go (switching roots)."""

    def reset(self) -> None:
        """The list is empty."""

    def changed(self, first: int, last: int) -> None:
        """What rows ``first..last`` say changed (text, status, unseen mark); none of them moved."""

    def seen_changed(self) -> None:
        """The looked-at state changed (the controller saves it)."""


class SessionList(Generic[R]):
    """Every row of one root, the shown subset in sort order, the filter, and the unseen marks."""

    def __init__(
        self,
        sort_value: Callable[[R, int], Any],
        filter_text: Callable[[R], str],
        *,
        sort_column: int,
        descending: bool = True,
        detail_columns: frozenset[int] = frozenset(),
        observer: ListObserver | None = None,
    ) -> None:
        """``sort_value(row, column)`` orders rows under a sort column; ``filter_text(row)`` is the text a
        filter word must occur in (lower case); ``detail_columns``: the columns whose values come from
        ``apply_details`` (a sort on one of them moves rows when details arrive)."""
        self._sort_value = sort_value
        self._filter_text = filter_text
        self._detail_columns = detail_columns
        self.observer = observer if observer is not None else ListObserver()
        self._all: dict[str, R] = {}
        self._hay: dict[str, str] = {}  # key -> lower-case filter text, computed when the row arrives or changes
        self._sk: dict[str, SortKey] = {}  # key -> its sort key under the current sort column
        self._full: list[SortKey] = []  # every row's sort key, ascending (a filter pass keeps this order)
        self._asc: list[str] = []  # visible keys, ascending by sort key (display order flips when descending)
        self._asc_keys: list[SortKey] = []
        self._pos: dict[str, int] | None = None  # key -> index in _asc (rebuilt lazily)
        self._sort_col = sort_column
        self._desc = descending
        self._words: list[str] = []
        self._project: str | None = None
        self._status_counts: Counter[str] = Counter()
        self._project_counts: Counter[str] = Counter()
        # The open session's row shows the loader's snapshot, never the background pass: one revision
        # for the list, the banners and the tabs (issue 16).
        self.pinned_key: str | None = None
        self._seen = SeenState()
        self.looking_at: str | None = None  # the open session: its own changes are seen as they arrive

    # ------------------------------------------------------------ positions

    def _positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {k: i for i, k in enumerate(self._asc)}
        return self._pos

    def _display_row(self, asc_index: int) -> int:
        return len(self._asc) - 1 - asc_index if self._desc else asc_index

    def _asc_index(self, display_row: int) -> int:
        return len(self._asc) - 1 - display_row if self._desc else display_row

    def _sort_key(self, r: R) -> SortKey:
        return (self._sort_value(r, self._sort_col), r.key)

    def _accepts(self, r: R) -> bool:
        if self._project is not None and r.project != self._project:
            return False
        hay = self._hay.get(r.key)
        if hay is None:
            hay = self._hay[r.key] = self._filter_text(r)
        return all(w in hay for w in self._words)

    # ------------------------------------------------------------ read access

    @property
    def shown(self) -> int:
        """How many rows the filter shows."""
        return len(self._asc)

    @property
    def total(self) -> int:
        return len(self._all)

    @property
    def sort_column(self) -> int:
        return self._sort_col

    @property
    def descending(self) -> bool:
        return self._desc

    def row_at(self, row: int) -> R:
        """The row shown at display position ``row``."""
        return self._all[self._asc[self._asc_index(row)]]

    def row_or_none(self, row: int) -> R | None:
        """The row shown at ``row``, or None when there is no such row (a stale index)."""
        n = len(self._asc)
        if not 0 <= row < n:
            return None
        return self._all[self._asc[n - 1 - row if self._desc else row]]

    def key_at(self, row: int) -> str:
        return self._asc[self._asc_index(row)]

    def rows(self) -> list[R]:
        """Every row, shown or filtered out."""
        return list(self._all.values())

    def keys(self) -> Iterable[str]:
        return self._all.keys()

    @property
    def filter_words(self) -> list[str]:
        """The lower-case words of the filter that is applied (every one must occur in a shown row)."""
        return list(self._words)

    @property
    def project_filter(self) -> str | None:
        return self._project

    @property
    def filtering(self) -> bool:
        return bool(self._words) or self._project is not None

    def status_counts(self) -> dict[str, int]:
        return {k: v for k, v in self._status_counts.items() if v}

    def project_counts(self) -> dict[str, int]:
        return {k: v for k, v in self._project_counts.items() if v}

    def _count(self, r: R, delta: int) -> None:
        self._status_counts[r.status] += delta
        self._project_counts[r.project] += delta

    def row_for_key(self, key: str) -> int:
        """Display position of ``key`` (-1 when unknown or filtered out)."""
        i = self._positions().get(key)
        return -1 if i is None else self._display_row(i)

    def get(self, key: str) -> R | None:
        return self._all.get(key)

    def find_id(self, session_id: str) -> R | None:
        for r in self._all.values():
            if r.session_id == session_id:
                return r
        return None

    def children_of(self, session_id: str) -> list[R]:
        return [r for r in self._all.values() if r.parent_id == session_id]

    # ------------------------------------------------------------ unseen sessions

    def is_unseen(self, r: R) -> bool:
        """Changed since the user last opened it (or, never opened, modified after the previous visit)."""
        return self._seen.is_unseen(r)

    def unseen_count(self) -> int:
        seen = self._seen
        return sum(1 for r in self._all.values() if seen.is_unseen(r))

    def set_seen_state(self, seen: dict[str, str | None], baseline_ns: int | None) -> None:
        """The root's looked-at state (from the controller, when a root opens; before its rows arrive)."""
        self._seen = SeenState(seen, baseline_ns)
        self.looking_at = None
        if self._asc:
            self._all_changed()

    def seen_state(self) -> tuple[dict[str, str | None], int | None]:
        return dict(self._seen.seen), self._seen.baseline_ns

    def mark_seen(self, key: str) -> None:
        """The user opened ``key``: its current revision counts as looked at (clears its mark)."""
        r = self._all.get(key)
        if r is None:
            return
        self.looking_at = key
        if self._seen.is_current(r):
            return
        was = self._seen.is_unseen(r)
        self._seen.look(r)
        if was:
            row = self.row_for_key(key)
            if row >= 0:
                self.observer.changed(row, row)
        self.observer.seen_changed()

    # ------------------------------------------------------------ sorting and filtering (user actions)

    def sort(self, column: int, *, descending: bool) -> None:
        self._sort_col = column
        self._desc = descending
        self._sk = {k: self._sort_key(r) for k, r in self._all.items()}
        self._full = sorted(self._sk.values())
        self._relayout()

    def set_filter_text(self, text: str) -> None:
        words = text.lower().split()
        if words != self._words:
            self._words = words
            self._relayout()

    def set_project(self, project: str | None) -> None:
        if project != self._project:
            self._project = project
            self._relayout()

    def _filtered(self) -> list[SortKey]:
        """The shown rows' sort keys, ascending: ``_full`` filtered (already in order, so never re-sorted)."""
        out = self._full
        if self._project is not None:
            rows, project = self._all, self._project
            out = [p for p in out if rows[p[1]].project == project]
        hay = self._hay
        for w in self._words:  # one pass per word, each over what the previous one kept
            out = [p for p in out if w in hay[p[1]]]
        return list(out) if out is self._full else out

    def _relayout(self) -> None:
        """Re-filter everything (the observer keeps its selection on the same keys)."""
        self.observer.layout_changing()
        self._asc_keys = self._filtered()
        self._asc = [p[1] for p in self._asc_keys]
        self._pos = None
        self.observer.layout_changed()

    # ------------------------------------------------------------ refreshes (row by row)

    def clear(self) -> None:
        """Only for switching roots: refreshes of one root never reset."""
        self.observer.resetting()
        self._all = {}
        self._hay = {}
        self._sk = {}
        self._full = []
        self._asc = []
        self._asc_keys = []
        self._pos = None
        self._status_counts.clear()
        self._project_counts.clear()
        self.looking_at = None
        self.observer.reset()

    def _index_row(self, r: R) -> None:
        """Compute ``r``'s filter text and sort key (and its place in ``_full``); it must be in ``_all``."""
        self._hay[r.key] = self._filter_text(r)
        k = self._sort_key(r)
        old = self._sk.get(r.key)
        if old == k:
            return
        if old is not None:
            i = bisect.bisect_left(self._full, old)
            if i < len(self._full) and self._full[i] == old:
                del self._full[i]
        bisect.insort(self._full, k)
        self._sk[r.key] = k

    def append_rows(self, rows: list[R]) -> None:
        fresh = [r for r in rows if r.key not in self._all]
        for r in fresh:
            self._all[r.key] = r
            self._count(r, +1)
            self._hay[r.key] = self._filter_text(r)
        if len(fresh) > BULK_INSERT:
            # A listing batch: one merge into ``_full`` (Timsort merges the two sorted runs in C).
            new = sorted(self._sort_key(r) for r in fresh)
            self._sk.update((k[1], k) for k in new)
            self._full.extend(new)
            self._full.sort()
        else:
            for r in fresh:
                self._index_row(r)
        shown = [r for r in fresh if self._accepts(r)]
        if not shown:
            return
        if len(shown) > BULK_INSERT:
            # One insert notification at the end, then one relayout into sorted order.
            first = len(self._asc)
            self.observer.inserting(first, first + len(shown) - 1)
            self._asc.extend(r.key for r in shown)
            self._asc_keys.extend(self._sk[r.key] for r in shown)
            self._pos = None
            self.observer.inserted()
            self._relayout()
            return
        for r in shown:
            self._insert_sorted(r)

    def _insert_sorted(self, r: R) -> None:
        k = self._sk[r.key]
        i = bisect.bisect_left(self._asc_keys, k)
        row = len(self._asc) - i if self._desc else i
        self.observer.inserting(row, row)
        self._asc.insert(i, r.key)
        self._asc_keys.insert(i, k)
        self._pos = None
        self.observer.inserted()

    def _remove_visible(self, key: str) -> None:
        i = self._positions().get(key)
        if i is None:
            return
        row = self._display_row(i)
        self.observer.removing(row, row)
        del self._asc[i]
        del self._asc_keys[i]
        self._pos = None
        self.observer.removed()

    def remove_keys(self, keys: Iterable[str]) -> None:
        for key in list(keys):
            r = self._all.pop(key, None)
            if r is None:
                continue
            self._count(r, -1)
            self._remove_visible(key)
            self._hay.pop(key, None)
            old = self._sk.pop(key, None)
            if old is not None:
                i = bisect.bisect_left(self._full, old)
                if i < len(self._full) and self._full[i] == old:
                    del self._full[i]

    def replace_row(self, row: R) -> None:
        """A changed listing for an existing key: details survive when the revision still matches."""
        old = self._all.get(row.key)
        if old is None:
            self.append_rows([row])
            return
        if row.details is None and old.details is not None:
            row.details = old.details
        self._count(old, -1)
        self._count(row, +1)
        self._all[row.key] = row
        if row.key == self.looking_at:
            self.mark_seen(row.key)  # the open session's own changes are watched as they arrive
        self._place(row)

    def apply_details(self, updates: dict[str, Any], *, pinned: bool = False) -> None:
        """The background pass's details (or, ``pinned``, the open session's snapshot) for these keys."""
        changed: list[R] = []
        for key, det in updates.items():
            if key == self.pinned_key and not pinned:
                continue  # the open session: its snapshot decides what the row says
            r = self._all.get(key)
            if r is not None:
                self._status_counts[r.status] -= 1
                r.details = det
                self._status_counts[r.status] += 1
                changed.append(r)
        if not changed:
            return
        moves = self._sort_col in self._detail_columns
        if len(changed) > BULK_INSERT and (moves or self._words):
            for r in changed:  # new titles and statuses: new filter texts (and sort keys)
                self._hay[r.key] = self._filter_text(r)
                if moves:
                    self._sk[r.key] = self._sort_key(r)
            if moves:
                self._full = sorted(self._sk.values())
            self._relayout()  # many sort keys/filter matches moved at once: one relayout
            self._all_changed()
            return
        if not moves and not self._words:
            for r in changed:
                self._hay[r.key] = self._filter_text(r)
            self._changed(changed)  # no row moves: batched change events
            return
        for r in changed:
            self._place(r)

    def _all_changed(self) -> None:
        self.observer.changed(0, max(0, len(self._asc) - 1))

    def _changed(self, changed: list[R]) -> None:
        """One ``changed`` event per run of consecutive display rows."""
        pos = self._positions()
        rows = sorted(self._display_row(pos[r.key]) for r in changed if r.key in pos)
        if not rows:
            return
        start = prev = rows[0]
        for p in [*rows[1:], None]:
            if p is not None and p == prev + 1:
                prev = p
                continue
            self.observer.changed(start, prev)
            if p is not None:
                start = prev = p

    def _place(self, r: R) -> None:
        """After ``r`` changed: update it in place, move it, show it or hide it, as its keys now say."""
        self._index_row(r)
        pos = self._positions()
        i = pos.get(r.key)
        visible = self._accepts(r)
        if i is None:
            if visible:
                self._insert_sorted(r)
            return
        if not visible:
            self._remove_visible(r.key)
            return
        k = self._sk[r.key]
        j = bisect.bisect_left(self._asc_keys, k)
        if j > i:
            j -= 1  # its place among the others: the old key at ``i`` sorts before ``k``
        if j == i:
            self._asc_keys[i] = k
            row = self._display_row(i)
            self.observer.changed(row, row)
            return
        # The row moves (selection and scroll position follow it), then its cells refresh.
        n = len(self._asc)
        src = self._display_row(i)
        final = n - 1 - j if self._desc else j  # display row once moved
        self.observer.moving(src, final)
        del self._asc[i]
        del self._asc_keys[i]
        self._asc.insert(j, r.key)
        self._asc_keys.insert(j, k)
        self._pos = None
        self.observer.moved()
        self.observer.changed(final, final)


__all__ = ["BULK_INSERT", "ListObserver", "ListedRow", "SessionList", "SortKey"]

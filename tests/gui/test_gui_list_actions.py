"""What the session list does for its rows (issue 16): Copy session id (Ctrl+C copies the id, not the
status cell's "ok"), Open containing folder (JSONL: the session's folder; SQLite: the database's folder),
and the unseen marks (a session changed since the user last opened it is bold with a dot; opening it
clears the mark; the state survives a restart, per root)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import QItemSelectionModel, QPoint, QSettings, Qt, QUrl
from PySide6.QtGui import QGuiApplication
from test_gui_actions import make_root, open_on

from app.gui.controllers.session_list import SessionListController
from app.gui.models.session_row import SessionRow
from app.gui.models.sessions import UNSEEN_ROLE, UNSEEN_TIP, Col, SessionListModel
from app.gui.settings import AppSettings
from app.gui.views import session_list as session_list_view
from app.gui.window.main_window import MainWindow
from app.listing import SEEN_MAX_PER_ROOT
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)


class FakeDesktop:
    """Stands in for QDesktopServices: records the URLs it was asked to open."""

    opened: ClassVar[list[QUrl]] = []

    @classmethod
    def openUrl(cls, url: QUrl) -> bool:
        cls.opened.append(url)
        return True


@pytest.fixture
def desktop(monkeypatch: pytest.MonkeyPatch) -> type[FakeDesktop]:
    FakeDesktop.opened = []
    monkeypatch.setattr(session_list_view, "QDesktopServices", FakeDesktop)
    return FakeDesktop


def _menu_action(w: Any, key: str, text: str) -> Any:
    w._list_menu(key, QPoint(10, 10))
    menu = w.list_pane.last_menu
    assert menu is not None
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert "Copy session id" in texts and "Open containing folder" in texts
    action = next(a for a in menu.actions() if a.text() == text)
    menu.close()
    return action


def test_ctrl_c_copies_the_session_id_not_the_status(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    t = w.list_pane.table
    calm = w.session_model.find_id("calm")
    assert w.session_model.data(w.session_model.index_for_key(calm.key, Col.STATUS)) == "ok"
    QGuiApplication.clipboard().setText("before")
    t.setFocus()
    t.setCurrentIndex(w.session_model.index_for_key(calm.key, Col.STATUS))  # the cell Qt would copy: "ok"
    qtbot.keyClick(t, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "calm"
    assert "calm" in w.statusBar().currentMessage()
    # Several selected rows: every id, one per line, in list order.
    m, sel = w.session_model, t.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for key in (m.find_id("calm").key, m.find_id("crashed").key):
        sel.select(m.index_for_key(key), flags)
    qtbot.keyClick(t, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    ids = [m.row_at(i).session_id for i in range(m.rowCount()) if m.row_at(i).session_id in ("calm", "crashed")]
    assert QGuiApplication.clipboard().text() == "\n".join(ids)
    # The context menu's entry copies the row the menu was opened on.
    _menu_action(w, m.find_id("crashed").key, "Copy session id").trigger()
    assert QGuiApplication.clipboard().text() == "crashed"


def test_open_containing_folder_of_a_jsonl_session(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, desktop: type[FakeDesktop]
) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    calm = w.session_model.find_id("calm")
    _menu_action(w, calm.key, "Open containing folder").trigger()
    assert [u.toLocalFile() for u in desktop.opened] == [str(Path(calm.path).parent)]
    assert Path(desktop.opened[0].toLocalFile()).is_dir()


def test_open_containing_folder_of_a_sqlite_session_is_the_databases_folder(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, desktop: type[FakeDesktop]
) -> None:
    target, folder = make_root(arun, tmp_path, "sqlite")
    w = open_on(qtbot, make_window, target, "calm")
    calm = w.session_model.find_id("calm")
    assert calm.path is None  # one database: no file per session
    _menu_action(w, calm.key, "Open containing folder").trigger()
    assert [u.toLocalFile() for u in desktop.opened] == [str(folder)]


# ---------------------------------------------------------------- unseen sessions


async def _append_turn(root: Path, sid: str, turn: int) -> None:
    store = JsonlSessionPersistence(root)
    try:
        seq = len((await store.read_from(sid, 0)).events)
        await store.append(sid, make_turn(seq, turn, f"more work {turn}"))
    finally:
        await store.close()


def _unseen(w: Any, sid: str) -> bool:
    m = w.session_model
    return bool(m.data(m.index_for_key(m.find_id(sid).key, Col.TITLE), UNSEEN_ROLE))


def test_a_session_changed_since_it_was_opened_is_marked_until_opened_again(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    m = w.session_model
    calm, crashed = m.find_id("calm"), m.find_id("crashed")
    assert not _unseen(w, "calm") and not _unseen(w, "crashed")  # old logs, first visit: nothing is new
    assert w.list_pane.select_key(crashed.key)
    wait_opened(qtbot, w, crashed.key)
    # Another writer appends to calm (opened earlier, not open now): calm is marked.
    arun(_append_turn(target, "calm", 3))
    arun(w.controller.rescan([str(Path(calm.path).parent)]))
    qtbot.waitUntil(lambda: _unseen(w, "calm"), timeout=WAIT_MS)
    idx = m.index_for_key(calm.key, Col.TITLE)
    assert m.data(idx, Qt.ItemDataRole.FontRole).bold()
    assert m.data(idx, Qt.ItemDataRole.DecorationRole) is not None  # the dot
    assert m.data(idx, Qt.ItemDataRole.ToolTipRole).startswith(UNSEEN_TIP)
    assert not m.data(m.index_for_key(crashed.key, Col.TITLE), Qt.ItemDataRole.DecorationRole)
    # Opening it clears the mark.
    assert w.list_pane.select_key(calm.key)
    wait_opened(qtbot, w, calm.key)
    assert not _unseen(w, "calm")
    assert not m.data(m.index_for_key(calm.key, Col.TITLE), Qt.ItemDataRole.DecorationRole)
    # The open session's own changes are watched as they arrive: never marked.
    before = m.get(calm.key).revision
    arun(_append_turn(target, "calm", 4))
    arun(w.controller.rescan([str(Path(calm.path).parent)]))
    qtbot.waitUntil(lambda: m.get(calm.key).revision != before, timeout=WAIT_MS)
    assert not _unseen(w, "calm")


def test_unseen_marks_survive_a_restart_per_root(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    assert w.list_pane.select_key(w.session_model.find_id("crashed").key)
    wait_opened(qtbot, w, w.session_model.find_id("crashed").key)
    w.controller.save_seen()
    w.settings.q.sync()
    ini = w.settings.q.fileName()
    # While no window looks (the next window is the next visit), calm changes.
    arun(_append_turn(target, "calm", 3))
    settings = AppSettings(QSettings(ini, QSettings.Format.IniFormat))
    w2 = MainWindow(settings, poll_ms=60_000, restore_geometry=False)
    w2.show()
    try:
        w2.open_root(str(target), session="crashed")
        wait_listed(qtbot, w2)
        wait_opened(qtbot, w2, w2.session_model.find_id("crashed").key)
        assert _unseen(w2, "calm")  # changed since it was last opened (in the other window's visit)
        assert not _unseen(w2, "crashed")
        w2.list_pane.select_key(w2.session_model.find_id("calm").key)
        assert not _unseen(w2, "calm")
    finally:
        arun(w2.shutdown())
        w2.close()
        w2.deleteLater()


def _row(key: str, modified_ns: int, revision: str) -> SessionRow:
    return SessionRow(key, key, "p", {"id": key, "cwd": "/p"}, None, None, 1, modified_ns, revision)


def test_never_opened_sessions_are_unseen_when_modified_after_the_previous_visit(qtbot: Any) -> None:
    model = SessionListModel()
    model.set_seen_state({"opened": "r1"}, baseline_ns=1000)
    model.append_rows([_row("old", 900, "a"), _row("new", 1100, "b"), _row("opened", 1200, "r1")])
    unseen = {model.key_at(i) for i in range(model.rowCount()) if model.data(model.index(i, Col.TITLE), UNSEEN_ROLE)}
    assert unseen == {"new"}  # "opened" changed after the baseline but was opened at this very revision
    assert model.unseen_count() == 1
    model.mark_seen("new")
    assert model.unseen_count() == 0
    model.replace_row(_row("opened", 1300, "r2"))
    assert model.unseen_count() == 1
    # Looking at a session (it is open) sees its changes as they come.
    model.mark_seen("opened")
    model.replace_row(_row("opened", 1400, "r3"))
    assert model.unseen_count() == 0
    # The remembered sessions are capped, oldest-looked-at first out.
    model.set_seen_state({f"k{i}": "r" for i in range(SEEN_MAX_PER_ROOT)}, None)
    model.mark_seen("old")
    seen, _ = model.seen_state()
    assert len(seen) == SEEN_MAX_PER_ROOT and "k0" not in seen and "k1" in seen and "old" in seen


def test_seen_state_is_saved_per_root_with_this_visit_as_the_next_baseline(qtbot: Any, tmp_path: Path) -> None:
    from app.gui.controllers.diagnosis_pass import DiagnosisPass
    from app.gui.runtime.jobs import Jobs

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)

    def controller() -> tuple[SessionListController, SessionListModel]:
        model = SessionListModel()
        jobs = Jobs()
        return SessionListController(model, jobs, DiagnosisPass(model, jobs), settings=settings), model

    c1, m1 = controller()
    c1.root = "/roots/a"
    c1._load_seen("/roots/a")
    _seen, first_baseline = m1.seen_state()
    assert first_baseline is not None  # a first visit: only what changes from now on is new
    m1.append_rows([_row("x", 5, "r1")])
    m1.mark_seen("x")
    c1.save_seen()
    c2, m2 = controller()
    c2._load_seen("/roots/a")
    assert m2.seen_state() == ({"x": "r1"}, first_baseline)  # the previous visit's start is the baseline
    c3, m3 = controller()
    c3._load_seen("/roots/b")  # another root: its own state
    assert m3.seen_state()[0] == {}
    settings.setValue(c3._seen_key("/roots/a"), "{not json")
    c3._load_seen("/roots/a")  # damaged: nothing looked at yet, no exception
    assert m3.seen_state()[0] == {}


def test_the_columns_chosen_in_the_header_menu_are_kept_across_runs(qtbot: Any, arun: Any, tmp_path: Path) -> None:
    settings = AppSettings(QSettings(str(tmp_path / "columns.ini"), QSettings.Format.IniFormat))
    first = MainWindow(settings, restore_geometry=False)
    qtbot.addWidget(first)
    t = first.list_pane.table
    assert t.isColumnHidden(Col.CREATED) and not t.isColumnHidden(Col.MODIFIED)  # the defaults
    first.list_pane._header_menu(t.horizontalHeader().rect().center())
    menu = first.list_pane.last_header_menu
    assert menu is not None
    next(a for a in menu.actions() if a.text() == "Created").trigger()  # show it
    next(a for a in menu.actions() if a.text() == "Modified").trigger()  # hide it
    menu.close()
    assert not t.isColumnHidden(Col.CREATED) and t.isColumnHidden(Col.MODIFIED)
    arun(first.shutdown())
    second = MainWindow(AppSettings(QSettings(str(tmp_path / "columns.ini"), QSettings.Format.IniFormat)), restore_geometry=False)
    qtbot.addWidget(second)
    t2 = second.list_pane.table
    assert not t2.isColumnHidden(Col.CREATED) and t2.isColumnHidden(Col.MODIFIED)
    assert t2.isColumnHidden(Col.ORIGIN) and not t2.isColumnHidden(Col.TITLE)  # the rest as they were
    second.list_pane.set_hidden_columns([])  # every column shown is a choice too, kept as such
    second.list_pane.columns_changed.emit()
    assert (
        settings.q.fileName()
        and AppSettings(QSettings(str(tmp_path / "columns.ini"), QSettings.Format.IniFormat)).list_hidden_columns() == []
    )
    arun(second.shutdown())

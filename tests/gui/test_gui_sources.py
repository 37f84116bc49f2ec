"""Open anything in the window (issue 23): drops, File > Open Recent, read-only received files, copies.

A customer's lone transcript (renamed by a mail client) and a support bundle made by our own exporter
are dropped on the window as a file manager would (a ``QDropEvent`` carrying file URLs).  They open
read-only: the title says what is open, the in-place actions are off with a tooltip saying why, and
"Repair a copy …" / "Fork into …" write into a folder the user picks (the prompts are faked) while the
received file keeps every byte and its mtime.  A bundle whose files do not match its manifest still
opens, with the mismatch shown.
"""

from __future__ import annotations

import hashlib
import html
import os
import shutil
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from app.actions.backups import BackupInfo
from app.actions.fork import ForkPlan
from app.actions.repair import RepairPreview
from app.actions.resume import ResumePlan
from app.export.exporter import export_session
from app.gui.controllers.prompts import RepairAnswer, RestoreAnswer, ResumeAnswer, ResumeQuestion
from app.gui.settings import AppSettings
from app.gui.window.main_window import MainWindow
from app.links import check_openable, make_source_link, parse_link
from app.sources import open_source
from persistence import JsonlSessionPersistence, SessionPersistenceError, open_store

pytestmark = pytest.mark.timeout(120)

SID = "0190b0b0-0000-7000-8000-00000000c0de"
CWD = "/proj/app"
HOUR = 3600.0


# ---------------------------------------------------------------- data


async def _write_root(root: Path) -> None:
    """One session: a completed turn, then an open one (the harness crashed mid-turn: repairable)."""
    store = JsonlSessionPersistence(root, compression="zstd")
    try:
        await store.create({"id": SID, "createdAt": 1767600000000, "cwd": CWD})
        first = make_turn(0, 1, "first prompt")
        await store.append(SID, first)
        await store.append(SID, make_turn(len(first), 2, "second prompt", close=False))
    finally:
        await store.close()


def _aged(path: Path) -> Path:
    stamp = time.time() - HOUR  # the liveness guard stays quiet
    os.utime(path, (stamp, stamp))
    return path


def received_transcript(arun: Any, tmp: Path) -> Path:
    """The session's transcript alone, renamed as a mail client would."""
    root = tmp / "sender-root"
    arun(_write_root(root))
    (found,) = root.rglob("session.jsonl.zstd")
    inbox = tmp / "inbox"
    inbox.mkdir()
    return _aged(Path(shutil.copy2(found, inbox / "customer log.txt")))


def received_bundle(arun: Any, tmp: Path) -> Path:
    root = tmp / "sender-root"
    arun(_write_root(root))
    inbox = tmp / "inbox"
    inbox.mkdir(exist_ok=True)
    target = inbox / "case.zip"

    async def export() -> None:
        store = open_store(str(root), create=False)
        try:
            await export_session(store, SID, "bundle", str(target))
        finally:
            await store.close()

    arun(export())
    return _aged(target)


def tampered(bundle: Path) -> Path:
    """The same bundle with one byte of ``header.json`` changed (the manifest left as it was)."""
    out = bundle.with_name("tampered.zip")
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "header.json":
                data = data.replace(b"/proj/app", b"/proj/apq")
            dst.writestr(info, data)
    return _aged(out)


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


# ---------------------------------------------------------------- the window


def drop(w: MainWindow, path: Path) -> None:
    """What a file manager's drop delivers: a drag entering with file URLs, then the drop."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(QPoint(200, 200), Qt.DropAction.CopyAction, mime, buttons, keys)
    w.dragEnterEvent(enter)
    assert enter.isAccepted()
    event = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, buttons, keys)
    w.dropEvent(event)
    assert event.isAccepted()


def opened(qtbot: Any, w: MainWindow) -> None:
    qtbot.waitUntil(lambda: w.sources.current is not None, timeout=WAIT_MS)
    wait_listed(qtbot, w)
    row = w.session_model.find_id(SID)
    assert row is not None
    wait_opened(qtbot, w, row.key)


class FakePrompts:
    """The window's questions answered at once: the folder a copy goes to, and yes to repair and fork."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.asked: list[str] = []
        self.reports: list[tuple[str, str]] = []
        self.dialog = self.error_box = self.file_dialog = None

    async def ask_folder(self, title: str, start: str) -> str | None:
        self.asked.append(f"folder: {title}")
        return None if self.folder is None else str(self.folder)

    async def ask_repair(self, preview: RepairPreview, objection: str | None) -> RepairAnswer:
        self.asked.append(f"repair objection={objection}")
        return RepairAnswer(True)

    async def ask_restore(
        self, session_id: str, backups: list[BackupInfo], objection: str | None, *, preferred: str | None
    ) -> RestoreAnswer:
        self.asked.append("restore")
        return RestoreAnswer(None)

    async def ask_fork_title(self, plan: ForkPlan, *, last_turn: bool) -> str | None:
        self.asked.append("fork")
        return "the customer's session, forked"

    async def ask_resume(self, plan: ResumePlan, on_recheck: Callable[[ResumeQuestion], object]) -> ResumeAnswer:
        self.asked.append("resume")
        return ResumeAnswer(None, None, False, False, plan.template, plan)

    async def confirm(self, title: str, text: str, accept_text: str) -> bool:
        return False

    def ask_save_path(self, title: str, suggested: str, then: Callable[[str], object]) -> None:
        self.asked.append("save")

    def report(self, title: str, text: str) -> None:
        self.reports.append((title, text))


def assert_read_only(w: MainWindow) -> None:
    m = w.menus
    for action in (m.repair, m.fork_last, m.fork_here, m.resume, m.restore):
        assert not action.isEnabled(), action.text()
        assert "never written" in action.toolTip(), action.text()
    assert m.repair_copy.isVisible() and m.repair_copy.isEnabled()
    assert m.fork_into.isVisible() and m.fork_into.isEnabled()
    assert "read-only" in w.root_label.text()


# ---------------------------------------------------------------- tests


def test_dropped_transcript_opens_read_only_and_repair_a_copy_writes_only_the_chosen_folder(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    received = received_transcript(arun, tmp_path)
    before = fingerprint(received)
    w = make_window()
    drop(w, received)
    opened(qtbot, w)
    assert "customer log.txt — transcript" in w.windowTitle()
    assert "customer log.txt — transcript" in w.root_label.text()
    assert w.session_model.find_id(SID).status == "open-turn"
    assert_read_only(w)

    w.session_ops.prompts = prompts = FakePrompts(tmp_path / "copies")
    done: list[tuple[str, str, str]] = []
    w.session_ops.done.connect(lambda a, o, m: done.append((a, o, m)))
    w.menus.repair_copy.trigger()
    qtbot.waitUntil(lambda: bool(done) and not w.session_ops.busy, timeout=WAIT_MS)
    assert done[0][:2] == ("repair", "done"), (done, prompts.reports)
    assert prompts.asked[0].startswith("folder:") and prompts.asked[1] == "repair objection=None"
    # The copy was repaired in the chosen folder, laid out as a root; the window now shows it, writable.
    (copy,) = (tmp_path / "copies").rglob("session.jsonl.zstd")
    assert copy.read_bytes() != received.read_bytes()
    qtbot.waitUntil(lambda: w.controller.root == str(tmp_path / "copies"), timeout=WAIT_MS)
    wait_listed(qtbot, w)
    assert w.session_model.find_id(SID).status == "ok"
    assert w.session_ops.read_only is None and not w.menus.repair_copy.isVisible()
    # The received file: every byte and its mtime as they were.
    assert fingerprint(received) == before
    assert sorted(p.name for p in received.parent.iterdir()) == ["customer log.txt"]


def test_fork_into_a_folder_leaves_the_received_file_alone(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    received = received_transcript(arun, tmp_path)
    before = fingerprint(received)
    w = make_window()
    drop(w, received)
    opened(qtbot, w)
    w.session_ops.prompts = FakePrompts(tmp_path / "mine")
    done: list[tuple[str, str, str]] = []
    w.session_ops.done.connect(lambda a, o, m: done.append((a, o, m)))
    w.menus.fork_into.trigger()
    qtbot.waitUntil(lambda: bool(done) and not w.session_ops.busy, timeout=WAIT_MS)
    assert done[0][:2] == ("fork", "done"), done
    assert len(list((tmp_path / "mine").rglob("session.jsonl.zstd"))) == 2  # the copy and its fork
    qtbot.waitUntil(lambda: w.controller.root == str(tmp_path / "mine"), timeout=WAIT_MS)
    assert fingerprint(received) == before


def test_cancelled_copy_leaves_nothing_behind(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    received = received_transcript(arun, tmp_path)
    w = make_window()
    drop(w, received)
    opened(qtbot, w)
    prompts = FakePrompts(tmp_path / "copies")

    async def no_title(plan: ForkPlan, *, last_turn: bool) -> str | None:
        return None

    prompts.ask_fork_title = no_title  # type: ignore[method-assign]
    w.session_ops.prompts = prompts
    done: list[tuple[str, str, str]] = []
    w.session_ops.done.connect(lambda a, o, m: done.append((a, o, m)))
    w.menus.fork_into.trigger()
    qtbot.waitUntil(lambda: bool(done) and not w.session_ops.busy, timeout=WAIT_MS)
    assert done[0][:2] == ("fork", "cancelled")
    assert not (tmp_path / "copies").exists() or not any((tmp_path / "copies").rglob("*"))


def test_dropped_bundle_opens_verified_and_read_only(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    bundle = received_bundle(arun, tmp_path)
    before = fingerprint(bundle)
    w = make_window()
    drop(w, bundle)
    opened(qtbot, w)
    assert "case.zip — support bundle, verified" in w.windowTitle()
    assert_read_only(w)
    banner = w.sources.check_banner.text()  # our own check, beside the sender's verify.json
    assert w.sources.check_banner.isVisible() and "every file matches its manifest" in banner
    assert "The sender's verify.json says: repairable" in banner and "does not match" not in banner
    assert fingerprint(bundle) == before


def test_tampered_bundle_shows_the_mismatch_and_still_opens(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    bad = tampered(received_bundle(arun, tmp_path))
    w = make_window()
    drop(w, bad)
    opened(qtbot, w)
    assert "NOT verified" in w.windowTitle()
    banner = w.sources.check_banner
    assert banner.isVisible()
    assert "header.json" in banner.text() and "does not match the manifest" in banner.text()
    assert_read_only(w)


def test_open_recent_lists_a_source_after_a_restart(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    bundle = received_bundle(arun, tmp_path)
    ini = str(tmp_path / "settings.ini")
    first = MainWindow(AppSettings(QSettings(ini, QSettings.Format.IniFormat)), poll_ms=60_000, restore_geometry=False)
    try:
        first.sources.open(str(bundle))
        opened(qtbot, first)
    finally:
        arun(first.shutdown())
        first.close()
        first.deleteLater()
    gone = tmp_path / "gone.zip"
    again = MainWindow(AppSettings(QSettings(ini, QSettings.Format.IniFormat)), poll_ms=60_000, restore_geometry=False)
    try:
        again.settings.remember_source(str(gone))  # a source moved away since: shown, not offered
        again.settings.remember_source(str(bundle))
        menu = again.menus.recent_menu
        menu.aboutToShow.emit()
        entries = [(a.text(), a.isEnabled()) for a in menu.actions()]
        assert entries[0] == (str(bundle), True)
        assert entries[1] == (f"{gone}  (missing)", False)
        # Never the extraction in the cache folder: the path the user opened.
        assert all("sessionscope-gui-tests" not in text or text.startswith(str(tmp_path)) for text, _ in entries)
        menu.actions()[0].trigger()
        opened(qtbot, again)
        assert "case.zip — support bundle" in again.windowTitle()
    finally:
        arun(again.shutdown())
        again.close()
        again.deleteLater()


def test_recent_sources_are_capped_most_recent_first(tmp_path: Path) -> None:
    s = AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    for i in range(14):
        s.remember_source(f"/case/{i}.zip")
    s.remember_source("/case/3.zip")
    again = AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    assert again.recent_sources() == ["/case/3.zip", *(f"/case/{i}.zip" for i in range(13, 4, -1))]


def test_a_path_that_is_no_source_is_a_message(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_bytes(b"just some words, not a session\n")
    w = make_window()
    drop(w, junk)
    qtbot.waitUntil(lambda: "Cannot open" in w.root_label.text(), timeout=WAIT_MS)
    with pytest.raises(SessionPersistenceError) as refused:  # what the sources say of it (SourceError is one)
        open_source(junk)
    assert html.escape(str(refused.value)) in w.list_pane.empty_label.text()
    assert w.sources.current is None and w.controller.root is None


def test_source_links_round_trip() -> None:
    url = make_source_link("/home/ana/case files/case.zip", SID)
    link = check_openable(parse_link(url))
    assert url.startswith("sessionscope://open?source=%2Fhome%2Fana%2Fcase%20files%2Fcase.zip&session=")
    assert (link.root, link.session, link.source) == ("/home/ana/case files/case.zip", SID, True)
    whole = parse_link(make_source_link("/tmp/customer log.txt"))
    assert (whole.root, whole.session, whole.source) == ("/tmp/customer log.txt", "", True)
    assert whole.argv() == ["/tmp/customer log.txt"]
    old = parse_link("sessionscope://open?root=%2Fr&session=s&seq=3")  # the root form still works
    assert (old.root, old.session, old.seq, old.source) == ("/r", "s", 3, False)


def test_cancelling_a_slow_open_shows_nothing_and_cleans_up(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle that takes long to open (hashing a big one): the status bar's Cancel abandons it, and what
    the open made is removed once it ends."""
    import threading

    from app.gui.window import sources as sources_module

    bundle = received_bundle(arun, tmp_path)
    release = threading.Event()
    closed: list[Path] = []
    real_open, real_close = sources_module.open_source, sources_module.close_source

    def slow_open(path: Path) -> Any:
        release.wait(10)
        return real_open(path)

    def tracking_close(src: Any) -> None:
        closed.append(src.path)
        real_close(src)

    monkeypatch.setattr(sources_module, "open_source", slow_open)
    monkeypatch.setattr(sources_module, "close_source", tracking_close)
    w = make_window()
    task = w.sources.open(str(bundle))
    qtbot.waitUntil(lambda: w.progress.busy, timeout=WAIT_MS)
    w.menus.escape.activated.emit()  # Esc while the status bar shows the open's progress
    release.set()
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    assert task.cancelled()
    qtbot.waitUntil(lambda: closed == [bundle], timeout=WAIT_MS)
    assert w.sources.current is None and w.controller.root is None
    assert not w.progress.busy


def case_folder(arun: Any, tmp: Path) -> Path:
    """A customer's case folder: a bundle and two renamed transcripts, each of another session."""
    case = tmp / "case"
    case.mkdir()

    async def write(root: Path, sid: str) -> Path:
        store = JsonlSessionPersistence(root, compression="zstd")
        try:
            await store.create({"id": sid, "createdAt": 1767600000000, "cwd": f"/proj/{sid}"})
            await store.append(sid, make_turn(0, 1, f"prompt of {sid}"))
        finally:
            await store.close()
        (found,) = root.rglob("session.jsonl.zstd")
        return found

    shutil.move(received_bundle(arun, tmp), case / "case.zip")
    shutil.copy2(arun(write(tmp / "a-root", "part-a")), case / "customer log.txt")
    shutil.copy2(arun(write(tmp / "b-root", "part-b")), case / "transcript(1).zst")
    for p in case.iterdir():
        _aged(p)
    return case


def test_every_part_of_a_case_folder_is_reachable_from_the_part_chooser(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    case = case_folder(arun, tmp_path)
    w = make_window()
    w.sources.open(str(case))
    opened(qtbot, w)  # the first part, the bundle: its session and its check
    box = w.sources.part_box
    assert w.sources.part_chooser.isVisible()
    labels = [box.itemText(i) for i in range(box.count())]
    assert labels == ["case.zip — support bundle", "customer log.txt — transcript", "transcript(1).zst — transcript"]
    assert "case.zip — support bundle" in w.windowTitle() and "3 parts" in w.windowTitle()
    assert w.sources.check_banner.isVisible() and "every file matches its manifest" in w.sources.check_banner.text()
    for index, sid, label in ((2, "part-b", labels[2]), (1, "part-a", labels[1]), (0, SID, labels[0])):
        box.setCurrentIndex(index)
        box.activated.emit(index)  # what a click on the entry delivers
        qtbot.waitUntil(lambda sid=sid: w.session_model.find_id(sid) is not None, timeout=WAIT_MS)
        wait_listed(qtbot, w)
        assert [r.session_id for r in w.session_model.rows()] == [sid]
        row = w.session_model.find_id(sid)
        w.list_pane.select_key(row.key)
        wait_opened(qtbot, w, row.key)
        assert label in w.windowTitle() and label in w.root_label.text() and "read-only" in w.root_label.text()
        assert w.sources.check_banner.isVisible() == (index == 0)  # a transcript part has no bundle check
        for action in (w.menus.repair, w.menus.fork_last, w.menus.resume):  # every part is received: never written
            assert not action.isEnabled() and "never written" in action.toolTip(), action.text()
    # Another source replaces the case folder: the chooser goes away.
    w.sources.open(str(tmp_path / "a-root"))
    qtbot.waitUntil(lambda: w.session_model.find_id("part-a") is not None and w.sources.current is not None, timeout=WAIT_MS)
    assert not w.sources.part_chooser.isVisible()


def test_a_closed_bundle_leaves_no_search_index_behind(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    """Each open is a new extraction, so a new index file: it goes when the bundle is replaced (issue 23 gap 2)."""
    from app.sources.derived_caches import cache_files_of

    bundle = received_bundle(arun, tmp_path)
    w = make_window()
    w.sources.open(str(bundle))
    opened(qtbot, w)
    part = w.sources.current.parts[0]
    caches = cache_files_of([part.store_path])
    w.search.controller.update_index()
    qtbot.waitUntil(lambda: any(os.path.exists(f) for f in caches), timeout=WAIT_MS)
    w.sources.open(str(tmp_path / "sender-root"))  # another source replaces the bundle
    qtbot.waitUntil(lambda: not part.store_path.exists(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not any(os.path.exists(f) for f in caches), timeout=WAIT_MS)


def test_a_bundle_whose_transcript_header_is_tampered_shows_its_bad_row_by_its_name_with_its_check(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    """A tampered header is one bad row, as ``sessionscope list`` shows it; its reason, and what the list
    would say were it empty, name the bundle (never the extraction in the cache folder), and the check shows
    the mismatch (issue 23 gap 3)."""
    import zstandard

    bundle = received_bundle(arun, tmp_path)
    bad = tmp_path / "bad-header.zip"
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("session/"):
                plain = zstandard.ZstdDecompressor().decompressobj().decompress(data)
                data = zstandard.ZstdCompressor().compress(plain.replace(b'"type":"session"', b'"type":"sessi"', 1))
            dst.writestr(info, data)
    w = make_window()
    w.sources.open(str(bad))
    qtbot.waitUntil(lambda: w.sources.current is not None, timeout=WAIT_MS)
    wait_listed(qtbot, w)
    (row,) = w.session_model.rows()
    assert row.status == "corrupt" and "header" in row.reason
    assert w.list_pane.stack.currentWidget() is w.list_pane.table
    banner = w.sources.check_banner.text()
    assert not w.sources.check_banner.isHidden() and "bad-header.zip" in banner and "NOT verified" in banner
    assert "session/session.jsonl.zstd: its SHA-256 does not match the manifest" in banner
    text = w.sources.empty_text()
    assert text is not None and "bad-header.zip — support bundle" in text and "NOT verified" in text
    extraction = str(w.sources.current.parts[0].store_path)
    for said in (text, banner, row.reason):
        assert os.sep + "bundles" + os.sep not in said and extraction not in said


def test_a_link_into_a_case_folder_shows_the_part_holding_its_session(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    case = case_folder(arun, tmp_path)
    w = make_window()
    w.sources.open(str(case), session="part-b")
    qtbot.waitUntil(lambda: w.session_model.find_id("part-b") is not None, timeout=WAIT_MS)
    wait_opened(qtbot, w, w.session_model.find_id("part-b").key)
    assert w.sources.part_box.currentIndex() == 2 and "transcript(1).zst — transcript" in w.windowTitle()

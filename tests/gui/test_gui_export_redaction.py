"""File > Export… of a support bundle: "Replace secrets with placeholders" is on by default for bundles only,
the preview (counts per kind, the first replacements in context, masked) is computed off the GUI thread,
and the exported bundle is redacted."""

from __future__ import annotations

import json
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from guikit import WAIT_MS, wait_listed, wait_opened

from app.gui.controllers import session_export
from app.gui.dialogs.export_dialog import PREVIEW_WAIT, ExportDialog
from app.redact import Redactor
from persistence import open_store

pytestmark = pytest.mark.timeout(120)

KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34"
MAIL = "alice.smith@example.org"
TOKEN = "ghp_0123456789abcdefghijKLMNOPQRSTUVWXyz"


def _events() -> list[dict[str, Any]]:
    answer = sk.assistant_message(3, 1, 1, f"Use {KEY} and write to {MAIL}")
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, f"my key is {KEY}, token {TOKEN}"),
        sk.step_start(2, 1, 1),
        answer,
        sk.step_end(4, 1, 1),
        sk.turn_end(5, 1),
    ]


@pytest.fixture
def root(arun: Any, tmp_path: Path) -> Path:
    target = tmp_path / "data" / "root"
    target.parent.mkdir(mode=0o700)

    async def write() -> None:
        store = open_store(str(target), "jsonl-zstd")
        try:
            await store.create(sk.meta("sec", "/w/proj"))
            await store.append("sec", _events())
        finally:
            await store.close()

    arun(write())
    return target


def test_the_checkbox_is_on_by_default_for_bundles_only_and_asks_for_a_preview(qtbot: Any, tmp_path: Path) -> None:
    dlg = ExportDialog("sec", str(tmp_path))
    qtbot.addWidget(dlg)
    dlg.show()
    wanted: list[bool] = []
    dlg.preview_wanted.connect(wanted.append)
    assert dlg.fmt == "html" and not dlg.redact_box.isVisible() and not dlg.redact and not wanted
    dlg.set_format("bundle")
    assert dlg.redact_box.isVisible() and dlg.redact_box.isChecked() and dlg.redact
    assert dlg.home_box.isVisible() and not dlg.home_box.isChecked() and not dlg.redact_home
    assert dlg.preview.isVisible() and dlg.preview.toPlainText() == PREVIEW_WAIT and wanted == [False]

    r = Redactor()
    r.text(f"key {KEY} mail {MAIL}", "seq 1 user/message")
    dlg.show_preview(True, r.report())  # for other options: stale, ignored
    assert dlg.preview.toPlainText() == PREVIEW_WAIT
    dlg.show_preview(False, r.report())
    text = dlg.preview.toPlainText()
    assert text.startswith("2 replaced: ") and "api-key 1" in text and "email 1" in text
    assert "seq 1 user/message: key sk-…[redacted:api-key#1] mail [redacted:email#1]" in text
    assert KEY not in text and MAIL not in text

    dlg.home_box.setChecked(True)
    assert dlg.redact_home and wanted == [False, True] and dlg.preview.toPlainText() == PREVIEW_WAIT
    dlg.show_preview(True, "session not found")
    assert "could not be made: session not found" in dlg.preview.toPlainText()
    dlg.redact_box.setChecked(False)
    assert not dlg.redact and not dlg.redact_home and not dlg.preview.isVisible() and not dlg.home_box.isEnabled()
    dlg.redact_box.setChecked(True)
    assert wanted == [False, True]  # the preview for these options is already there
    dlg.set_format("md")
    assert not dlg.redact and not dlg.redact_box.isVisible()


def test_window_previews_off_the_gui_thread_and_exports_a_redacted_bundle(
    qtbot: Any, make_window: Any, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real = session_export.preview_blocking

    def recording(*args: Any) -> Any:
        threads.append(threading.current_thread())
        return real(*args)

    monkeypatch.setattr(session_export, "preview_blocking", recording)
    w = make_window(root, session="sec")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("sec").key)
    done: list[tuple[str, str, str]] = []
    w.insight.exporter.done.connect(lambda o, m, p: done.append((o, m, p)))
    w.insight.export_action.trigger()
    qtbot.waitUntil(
        lambda: isinstance(w.insight.export_dialog, ExportDialog) and w.insight.export_dialog.isVisible(), timeout=WAIT_MS
    )
    dlg = w.insight.export_dialog
    out = tmp_path / "out.zip"
    dlg.set_format("bundle")
    dlg.path.setText(str(out))
    qtbot.waitUntil(lambda: "replaced" in dlg.preview.toPlainText(), timeout=WAIT_MS)
    text = dlg.preview.toPlainText()
    assert threads and threads[0] is not threading.main_thread()
    assert "api-key 2" in text and "github-token 1" in text and "email 1" in text  # the header, prompt and answer
    assert "sk-…[redacted:api-key#1]" in text and "ghp_…[redacted:github-token#1]" in text
    assert KEY not in text and MAIL not in text and TOKEN not in text

    dlg.export_button.click()
    qtbot.waitUntil(lambda: bool(done) and not w.insight.exporter.busy, timeout=WAIT_MS)
    outcome, message, _path = done[0]
    assert outcome == "done" and "redacted: 4 replaced" in message
    with zipfile.ZipFile(out) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        everything = b"".join(zf.read(n) for n in zf.namelist())
        everything += b"".join(sk.zstd_frames(zf.read("session/session.jsonl.zstd")))
    assert manifest["redaction"]["redacted"] is True and manifest["redaction"]["counts"] == {
        "api-key": 2,
        "email": 1,
        "github-token": 1,
    }
    assert not any(s.encode() in everything for s in (KEY, MAIL, TOKEN))

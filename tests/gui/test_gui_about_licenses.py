"""Help > About says SessionScope's license and shows every license text it ships (issue 21 item 12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guikit import WAIT_MS
from PySide6.QtWidgets import QLabel

from app.about import license_documents

REPO = Path(__file__).resolve().parents[2]


def test_about_names_the_license_and_its_licenses_button_shows_every_text(make_window: Any, qtbot: Any) -> None:
    w = make_window()
    w.menus.about.trigger()
    dlg = w.about_dialog
    qtbot.waitUntil(dlg.isVisible, timeout=WAIT_MS)
    assert "License: MIT" in dlg.text()
    assert any("MIT" in label.text() for label in dlg.findChildren(QLabel))

    dlg.licenses_button.click()
    box = dlg.licenses_dialog
    qtbot.waitUntil(box.isVisible, timeout=WAIT_MS)
    docs = license_documents()
    assert [d.path.name for d in docs][:2] == ["LICENSE", "THIRD_PARTY_NOTICES"]
    assert box.titles() == [d.title for d in docs]
    # The first text shown is SessionScope's own license, as the file says it.
    assert box.shown_text() == (REPO / "LICENSE").read_text(encoding="utf-8")
    for row, doc in enumerate(docs):
        box.show_document(row)
        assert box.shown_text() == doc.path.read_text(encoding="utf-8")
    box.show_document([d.path.name for d in docs].index("LGPL-3.0.txt"))
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in box.shown_text()
    box.close()
    dlg.close()

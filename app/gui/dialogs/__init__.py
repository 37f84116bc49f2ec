"""The session actions' dialogs: repair preview, restore a backup, resume, fork (confirmation and name).

Each dialog only shows what an action controller computed (a plan of ``app.actions``) and collects
the user's choice; none of them touches the engine or a controller.  They are opened with ``open()``
(window-modal, never a nested ``exec()`` loop) and awaited with ``await_dialog``.

May import: PySide6, ``app.actions`` (values only) and ``app.gui.style``; never a controller, the
runtime or the engine.
"""

from app.gui.dialogs.confirm_dialog import ConfirmDialog
from app.gui.dialogs.fork_dialog import ForkDialog
from app.gui.dialogs.modal import await_dialog
from app.gui.dialogs.repair_dialog import RepairDialog, preview_text
from app.gui.dialogs.restore_dialog import RestoreDialog
from app.gui.dialogs.resume_dialog import ResumeDialog

__all__ = ["ConfirmDialog", "ForkDialog", "RepairDialog", "RestoreDialog", "ResumeDialog", "await_dialog", "preview_text"]

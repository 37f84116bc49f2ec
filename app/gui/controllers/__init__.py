"""The window's controllers: they own the jobs and decide what to read when; they hold no widgets.

- ``session_list``: the list in step with a root (first listing, watched changes, the poll) and the
  ``OpenRoot`` value (``open_root``) the other controllers take the root from;
- ``session_loader``: the selected session into the timeline and raw models, and its appends;
- ``diagnosis_pass``: status, event count and title of listed rows, in the background;
- ``session_actions``: repair, restore, fork, resume and copy, each a plan, a question, an execute;
- ``prompts``: the questions a controller asks the user (``ActionPrompts``) and their typed answers;
  the window answers them with its dialogs (``window.prompts``);
- ``root_watcher``: watchdog events coalesced into changed session folders.

May import: PySide6.QtCore and QtGui (QObject, timers, signals, the clipboard), the models, ``runtime``,
``app.gui.settings``, ``app.actions``, ``app.paths``, ``app.timeline`` and the public ``persistence``
package; never PySide6.QtWidgets, a dialog, a view or the window (``lint-imports`` and
tests/architecture check it).
"""

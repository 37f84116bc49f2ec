"""The window's controllers: they own the jobs and decide what to read when; they hold no widgets.

- ``session_list``: the list in step with a root (first listing, watched changes, the poll) and the
  ``OpenRoot`` value (``open_root``) the other controllers take the root from;
- ``session_loader``: the selected session into the timeline and raw models, and its appends;
- ``diagnosis_pass``: status, event count and title of listed rows, in the background;
- ``session_actions``: repair, restore, fork, resume and copy, each a plan, a dialog, an execute;
- ``root_watcher``: watchdog events coalesced into changed session folders.

May import: PySide6 (QObject, timers, signals; ``session_actions`` also message boxes and file
dialogs), the models, ``runtime``, ``dialogs``, ``app.gui.settings``, ``app.actions``, ``app.paths``,
``app.timeline`` and the public ``persistence`` package; never a view or the window.
"""

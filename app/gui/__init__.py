"""SessionScope's desktop window (PySide6): thin Qt adapters over the engine and the Qt-free packages.

Layout, from the bottom up (a package imports only the ones above it in this list, plus the public
``persistence`` package, ``app.timeline``, ``app.actions``, ``app.paths`` and ``app.demo``):

- ``style.py``, ``settings.py``: the palette and formatting; what the window remembers (QSettings).
- ``models/``: one Qt item model per concept, and the plain values they show (``session_row``); no
  I/O.  The logic under them is Qt-free, outside the window: ``app.listing`` (the list's order,
  filter, unseen marks and the root scan) and ``app.rawview`` (the Raw tab's line index and find).
- ``runtime/``: how work runs without freezing the window: jobs, worker threads, the process pool
  (it runs ``app.listing.root_scan``), the read-only engine handle, the collector policy and the process-wide
  knobs (applied once, by ``launch``).
- ``views/``, then ``dialogs/`` (a dialog may use a view's widget): widgets that lay out models and
  forward what the user asks for; no view or dialog imports a controller.
- ``controllers/``: the session list, the session loader, the diagnosis pass, the session actions
  and the root watcher: they own the jobs and hold no widgets of their own; an action asks the user
  through ``controllers.prompts`` (the window answers with its dialogs), never with QtWidgets.
- ``window/``: the main window, the one place that wires controllers to views, its menus, the
  prompts' dialogs, the ``WindowContext`` its features (search, statistics, keyboard) are built from
  and their registry (``window.features``), and the ``--screenshot`` capture.
- ``launch.py``: ``run_app``, the entry point the command line calls (imports no Qt until called).

``lint-imports`` checks this order (the ``window-layers`` contract in pyproject.toml).
"""

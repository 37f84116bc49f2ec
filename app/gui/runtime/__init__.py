"""How the window runs work without freezing: the machinery under the controllers.

- ``jobs``: keyed asyncio tasks on the Qt loop (cancellation, errors reported, never lost);
- ``worker_threads``: off-thread work with cancellation and progress (``in_thread``, ``Progress``);
- ``worker_processes``: the process pool and what its workers run (listing, diagnosis); a worker
  exits when the window's process dies, however it dies;
- ``quit_signals``: SIGTERM, SIGHUP and SIGINT close the window like its close button (launcher);
- ``display_check``: whether Qt can open a window here, asked before Qt starts (launcher);
- the root scan those workers run is Qt-free: ``app.listing.root_scan``;
- ``viewer_store``: the read-only engine store, every call under the collector policy;
- ``collector``: the one owner of the cyclic collector in the window's process;
- ``pyside_refcount_guard``: the reserve against PySide6 6.12's singleton refcount leak;
- ``responsiveness``: applies every process-wide knob once (GIL switch interval 0.2 ms, collector,
  refcount guard), called by the launcher.

May import: the standard library, the public ``persistence`` package, ``app.timeline``, ``app.listing`` and the
value modules of ``models`` (``session_row``); Qt only in ``jobs`` (QObject signals), the guard's
probe and ``quit_signals.watch`` (a QSocketNotifier).  Nothing here imports a view, a dialog, a controller or the window.
"""

"""Widgets that lay out the models and forward what the user asks for (signals), plus the small view
units of the window: the session banners and the timeline<->raw selection sync.

May import: PySide6, ``app.gui.style``, the models, ``app.timeline`` and the runtime's plain values
(``worker_threads.Progress``); never a controller or a dialog (the window wires views to controllers).
"""

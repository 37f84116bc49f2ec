"""One Qt item model per concept (the session list, the header fields, the timeline tree, raw lines)
and the plain values they show (``session_row``: a list row).  The logic under them is Qt-free and
lives outside the window: the list's order, filter and unseen marks in ``app.listing``, the Raw tab's
line index and find in ``app.rawview``.  No I/O: controllers and worker threads fetch, models only
hold and answer ``data()``.

May import: PySide6 (the item models only), ``app.gui.style``, ``app.timeline``, ``app.listing``,
``app.rawview`` and the public
``persistence`` package; never ``runtime``, a view, a dialog or a controller.  The value modules
import no Qt, so worker processes may use them.
"""

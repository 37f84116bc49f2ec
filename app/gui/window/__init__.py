"""The main window and what belongs to it alone: its menus and the ``--screenshot`` capture.

The composition root: the only package that imports controllers and views together and wires them.
May import every ``app.gui`` package, ``app.demo`` and ``app.paths``.
"""

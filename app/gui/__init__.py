"""SessionScope's desktop window: thin Qt adapters over the persistence engine.

Layout: ``models/`` (one QAbstractItemModel per concept), ``views/`` (widgets that lay out and forward
user intent), controllers for the session list, the open session and live refresh, and Qt-free helpers
(``scan``, ``rawtext``) that worker threads run.
"""

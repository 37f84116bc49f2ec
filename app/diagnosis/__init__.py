"""Sessions' verdicts (status, reason, counts, title) shared by the window's list, ``verify`` and ``list``.

- ``verdicts``: one session's ``Verdict`` from one read-only ``view``;
- ``cache``: the verdicts of a root kept per revision in the user's cache folder (never in the root);
- ``parallel``: many sessions at once, the cache first and worker processes for the rest.

Qt-free: the command line and the window's worker processes import it.
"""

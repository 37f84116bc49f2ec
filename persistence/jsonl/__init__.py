"""The JSONL backend: one transcript per session, raw lines or checksummed zstd frames.

Holds the layout and path codec (``paths``), the one root walker (``discovery``) and the lenient
listing built on it (``entries``), the frame and line codecs (``frames``, ``lines``), a transcript's
bytes (``files``) and records (``parse``), the storage hooks (``storage``: ``reader``, ``writer``,
``backups``), atomic repair commits (``repair_commit``), tail marks for cheap suffix reads
(``tail_marks``) and the service class (``backend``).

May import: ``persistence.model``, ``persistence.errors`` and the engine's value modules
(``backend``, ``artifact``, ``listing``); only ``backend.py`` imports the coordinator.  Never the
SQLite backend, Qt or ``app``.
"""

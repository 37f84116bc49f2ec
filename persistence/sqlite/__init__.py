"""SQLite session store, file-compatible with upstream's schema 17 (spec: sqlite-backend.md).

Holds the constants of the file format, the connection and its checks, row codecs and packing,
the storage hooks (``storage``), read-only facts on a private connection (``facts``) and the
service class (``backend``).

May import: ``persistence.model``, ``persistence.errors``, the engine's value modules (``backend``,
``artifact``, ``listing``, ``service``) and the bounded zstd decoder of ``persistence.jsonl.frames``
(data blobs share the codec); only ``backend.py`` imports the coordinator.  Never the JSONL storage,
Qt or ``app``.
"""

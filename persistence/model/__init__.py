"""What a session is, independent of storage: values, JS-compatible JSON, catalog, validation,
legacy upgrades, crash closers and packed chunk rows.

May import: ``persistence.errors`` and the standard library (plus orjson for JSON text); never a
backend, the coordinator, Qt or ``app``.
"""

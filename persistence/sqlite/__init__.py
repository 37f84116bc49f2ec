"""SQLite session store, file-compatible with upstream's schema 17 (spec: sqlite-backend.md)."""

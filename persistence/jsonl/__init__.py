"""The JSONL backend: one transcript per session, raw lines or checksummed zstd frames."""

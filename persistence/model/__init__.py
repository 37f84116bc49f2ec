"""What a session is, independent of storage."""

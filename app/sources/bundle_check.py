"""What opening a support bundle reports: its typed errors, and our verdict on its files (``BundleCheck``).

Why its own module: the verdict is what the command line, the window's banner and the exports show
(``summary``: "verified" or "NOT verified: 1 file not matching the manifest, 2 unlisted"), and the
errors are what every step of opening raises (the zip checks in ``app.sources.zip_safety``, the
manifest's in ``app.sources.bundle_manifest``); split out of ``app.sources.bundle`` when that file
passed 600 lines (825).  A ``BundleError`` is a ``persistence.SessionUnreadableError``: the path is a
fine argument, its content cannot be read (safely), exit code 1 like any unreadable log.

May import the standard library and the public ``persistence``; never Qt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from persistence import SessionUnreadableError


class BundleError(SessionUnreadableError):
    """A bundle that cannot be opened: not a zip, not a SessionScope bundle, damaged, or unreadable."""


class BundleUnsafeError(BundleError):
    """A zip refused as hostile before anything of it was unpacked outside its caps (``entry`` names it)."""

    def __init__(self, message: str, *, entry: str | None = None) -> None:
        super().__init__(message)
        self.entry = entry


class BundleVersionError(BundleError):
    """A bundle written in a layout or session format this SessionScope does not read."""


@dataclass(frozen=True, slots=True)
class BundleMismatch:
    """A file whose bytes are not the ones the manifest describes."""

    name: str
    expected_sha256: str
    actual_sha256: str
    expected_bytes: int | None
    actual_bytes: int

    def describe(self) -> str:
        size = (
            ""
            if self.expected_bytes in (None, self.actual_bytes)
            else f", {self.actual_bytes} bytes, manifest says {self.expected_bytes}"
        )
        return (
            f"{self.name}: its SHA-256 does not match the manifest "
            f"(file {self.actual_sha256[:12]}…, manifest {self.expected_sha256[:12]}…{size})"
        )


@dataclass(frozen=True, slots=True)
class BundleCheck:
    """Our verdict on a bundle's integrity, beside the sender's own (``sender_verdict``: its verify.json).

    ``version`` is the bundle layout (``BUNDLE_VERSION``); ``written_by`` the SessionScope version that
    exported it; ``files_checked`` the files whose SHA-256 was compared; ``missing`` files the manifest
    lists that the zip lacks, ``extra`` files the zip holds that the manifest does not list (never
    verified); ``redacted`` what the manifest says about redaction (None: it does not say) and
    ``redaction`` its whole ``redaction`` block (rules, counts per kind).
    """

    version: str | int
    files_checked: int
    mismatches: tuple[BundleMismatch, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    sender_verdict: Mapping[str, Any] | None
    redacted: bool | None
    written_by: str | None = None
    session_id: str | None = None
    redaction: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """Every file is the one the manifest describes, and nothing unlisted rides along."""
        return not self.mismatches and not self.missing and not self.extra

    def problems(self) -> tuple[str, ...]:
        """One line per finding, each naming its file (empty when ``ok``)."""
        return (
            *(m.describe() for m in self.mismatches),
            *(f"{name}: listed in the manifest but missing from the bundle" for name in self.missing),
            *(f"{name}: in the bundle but not in the manifest (not verified)" for name in self.extra),
        )

    def summary(self) -> str:
        """``verified`` or ``NOT verified: ...`` in a few words (a title bar, a status bar)."""
        if self.ok:
            return "verified"
        parts = []
        if self.mismatches:
            n = len(self.mismatches)
            parts.append(f"{n} file{'s' if n != 1 else ''} not matching the manifest")
        if self.missing:
            parts.append(f"{len(self.missing)} missing")
        if self.extra:
            parts.append(f"{len(self.extra)} unlisted")
        return "NOT verified: " + ", ".join(parts)

    @property
    def sender_says(self) -> str | None:
        """The sender's verdict word (``ok``, ``repairable``, ``corrupt``, ...), when its verify.json has one."""
        verdict = self.sender_verdict.get("verdict") if self.sender_verdict is not None else None
        return verdict if isinstance(verdict, str) else None


__all__ = ["BundleCheck", "BundleError", "BundleMismatch", "BundleUnsafeError", "BundleVersionError"]

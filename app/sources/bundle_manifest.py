"""A bundle's manifest: the layout it names, the session format, each file's SHA-256 and size, the redaction.

Why its own module: the manifest is the contract between ``app.export.bundle`` (which writes it) and
the opener (which checks every extracted file against it); its versions decide whether a bundle can
be read at all (``BundleVersionError`` says which version and what to do: upgrade, or re-export).
Split out of ``app.sources.bundle`` when that file passed 600 lines (825).  The manifest is not signed:
it proves the files are the ones it describes, not who wrote it.

May import the standard library and the public ``persistence``; never Qt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from app.sources.bundle_check import BundleError, BundleVersionError
from persistence import SESSION_FORMAT_VERSION

# The layout app/export/bundle.py writes; a manifest without ``bundleVersion`` is this layout.
BUNDLE_VERSION = 1
BUNDLE_VERSION_KEY = "bundleVersion"
MANIFEST = "manifest.json"
SENDER_VERDICT = "verify.json"
README = "README.txt"
# Files every bundle carries that the manifest does not (cannot) list.
UNLISTED = frozenset({MANIFEST, README})
SESSION_FOLDER = "session/"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_version(manifest: Any, label: str) -> tuple[int, str | None]:
    """The manifest's layout version and writer, or a ``BundleVersionError`` saying why it cannot be read."""
    if not isinstance(manifest, dict):
        raise BundleError(f"{label}: manifest.json is not a JSON object: not a SessionScope support bundle")
    writer = manifest.get("sessionscope")
    writer = writer if isinstance(writer, str) else None
    by = f" (written by SessionScope {writer})" if writer else ""
    if BUNDLE_VERSION_KEY in manifest:
        version = manifest[BUNDLE_VERSION_KEY]
        if not _plain_int(version) or version < 1:
            raise BundleVersionError(
                f"{label}: unknown bundle version {version!r}{by}; this SessionScope reads bundle version {BUNDLE_VERSION}"
            )
        if version > BUNDLE_VERSION:
            raise BundleVersionError(
                f"{label}: bundle version {version}{by} is newer than this SessionScope reads (bundle version "
                f"{BUNDLE_VERSION}): upgrade SessionScope to open it"
            )
    else:
        version = BUNDLE_VERSION  # the first bundles wrote no ``bundleVersion``: read as version 1, as ever
    # Every layout we read names its writer and lists its files: without them nothing can be verified.
    if writer is None or not isinstance(manifest.get("files"), list):
        raise BundleVersionError(
            f"{label}: an unknown or older bundle layout: manifest.json "
            + ("names no SessionScope version" if writer is None else "lists no files with their SHA-256")
            + f", so the bundle cannot be verified; this SessionScope reads bundle version {BUNDLE_VERSION}, as "
            "`sessionscope export --format bundle` writes it"
        )
    fmt = manifest.get("sessionFormatVersion", SESSION_FORMAT_VERSION)
    if fmt != SESSION_FORMAT_VERSION:
        if _plain_int(fmt) and fmt > SESSION_FORMAT_VERSION:
            why = "newer than this SessionScope reads: upgrade SessionScope to open it"
        elif _plain_int(fmt):
            why = "older than this SessionScope reads, and it ships no upgrade path for it"
        else:
            why = "not a format version SessionScope knows"
        raise BundleVersionError(
            f"{label}: the session inside uses log format v{fmt!s}{by}, {why} (this SessionScope reads v{SESSION_FORMAT_VERSION})"
        )
    return version, writer


def listed_files(manifest: dict[str, Any], label: str) -> dict[str, tuple[str, int | None]]:
    """name -> (sha256, bytes) of every file the manifest lists."""
    listed: dict[str, tuple[str, int | None]] = {}
    for i, item in enumerate(manifest.get("files") or ()):
        name = item.get("name") if isinstance(item, dict) else None
        sha = item.get("sha256") if isinstance(item, dict) else None
        size = item.get("bytes") if isinstance(item, dict) else None
        if not isinstance(name, str) or not isinstance(sha, str) or not _SHA256.match(sha.lower()) or name in listed:
            raise BundleError(f"{label}: manifest.json's file list is malformed (entry {i}: {str(item)[:200]})")
        listed[name] = (sha.lower(), size if _plain_int(size) else None)
    return listed


def read_redaction(manifest: dict[str, Any]) -> tuple[bool | None, Mapping[str, Any] | None]:
    """Whether the sender redacted the bundle (None: the manifest does not say), and the manifest's
    ``redaction`` block (rules, counts) as it is."""
    block = manifest.get("redaction")
    if isinstance(block, dict):
        flag = block.get("redacted")
        return (flag if isinstance(flag, bool) else None), MappingProxyType(block)
    flag = manifest.get("redacted")
    return (flag if isinstance(flag, bool) else None), None


__all__ = [
    "BUNDLE_VERSION",
    "BUNDLE_VERSION_KEY",
    "MANIFEST",
    "README",
    "SENDER_VERDICT",
    "SESSION_FOLDER",
    "UNLISTED",
    "check_version",
    "listed_files",
    "read_redaction",
]

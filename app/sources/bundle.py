"""Opening a support bundle someone else sent: every file checked against its manifest, a hostile zip refused.

A support bundle is what ``sessionscope export --format bundle`` writes (``app.export.bundle``): a ZIP
holding ``session/<transcript>``, ``header.json``, ``verify.json`` (the sender's verdict), ``README.txt``
and ``manifest.json`` (SessionScope's version, the session format version, and each file's size and
SHA-256).  It arrives by mail from a stranger, so it is treated as hostile until proven otherwise:

- **Nothing is trusted before it is checked.**  The end record's entry count and central-directory
  size are read (and capped) before ``zipfile`` parses the directory, so a directory of millions of
  entries never reaches memory; every entry's name, type, encryption, method and declared size is
  checked before one byte is unpacked; while unpacking, the bytes are counted again against the caps
  (declared sizes can lie) and read in bounded chunks, so a zip bomb costs at most the caps in disk
  and a few MB of memory.
- **Refused without harm**: names that climb out (``..``, absolute, a drive letter, a backslash, an
  empty or ``.`` component, a NUL), symbolic links and other special files (``S_IFLNK`` in the
  external attributes), more than ``max_entries`` entries, more than ``max_entry_bytes`` in one entry
  or ``max_total_bytes`` in all, encrypted entries, compression methods our exporter never uses, and a
  nested archive (by name or by its magic bytes).  Each is a ``BundleUnsafeError`` naming the entry.
- **Unpacked only into the cache folder** (``app.paths.cache_dir()/bundles/<unique>``), as private
  files (0600, never executable) in private folders (0700), each created exclusively and without
  following links.  The engine needs a file path to read a transcript, hence the extraction.  It is
  removed by ``close_bundle``, at interpreter exit, on any failure while opening, and (after a crash)
  by the next ``open_bundle``: each extraction holds an advisory lock on ``<unique>.lock`` while open,
  and a lock nobody holds marks an extraction whose process is gone.
- **Verified**: each file's SHA-256 is compared with the manifest's; a mismatch, a listed file that is
  missing and an unlisted file are reported in ``BundleCheck`` (the bundle still opens: seeing what
  was tampered with is the support engineer's job), beside the sender's own ``verify.json``.
- **Versions**: a manifest names its layout (``bundleVersion``; absent in the first layout, which is
  version 1) and the session format; a newer, older or unknown one is a ``BundleVersionError`` that
  says which and what to do.

The manifest itself is not signed: the check proves the files are the ones the manifest describes,
not who wrote the manifest.

Errors are ``BundleError``, a ``persistence.SessionUnreadableError``: the path is a fine argument, its
content cannot be read (safely), exit code 1 on the command line like any unreadable log.

This module opens a bundle from those parts: the errors and the verdict (``app.sources.bundle_check``),
the manifest (``bundle_manifest``), reading the zip within its caps (``zip_safety``) and the locked
extraction folders (``bundle_extractions``); it was one 825-line file until the 600-line limit.

May import the standard library, ``app.sources``' bundle modules and the public ``persistence``; never Qt.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import struct
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from app.sources.bundle_check import BundleCheck, BundleError, BundleMismatch, BundleUnsafeError, BundleVersionError
from app.sources.bundle_extractions import claim, extractions_root, release, sweep
from app.sources.bundle_manifest import (
    BUNDLE_VERSION,
    MANIFEST,
    SENDER_VERDICT,
    SESSION_FOLDER,
    UNLISTED,
    check_version,
    listed_files,
    read_redaction,
)
from app.sources.zip_safety import (
    DIRECTORY_BYTES_PER_ENTRY,
    MAX_ENTRIES,
    MAX_ENTRY_BYTES,
    MAX_TOTAL_BYTES,
    Budget,
    admit,
    chunks,
    count_records,
    date_from_entry,
    directory_extent,
    json_entry,
    make_parents,
    read_json,
    write_entry,
)


@dataclass(frozen=True, slots=True)
class OpenedBundle:
    """An opened bundle: the received zip, its extraction (ours to read, never to write), and the check.

    ``session_paths`` are the extracted session files the manifest lists (``session/...``), in its
    order: the raw transcript a JSONL session was stored as, or a SQLite session's rows as JSONL.
    """

    zip_path: Path
    folder: Path
    check: BundleCheck
    session_paths: tuple[Path, ...]


def is_bundle(path: Path | str) -> bool:
    """Whether ``path`` is a regular file that is a ZIP holding a top-level ``manifest.json``.

    A ZIP whose directory is too large to list safely counts as a bundle too, so opening it refuses it
    with the reason instead of calling it "not a source".  Reads only; never raises for a bad file.
    """
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or f.read(4) != b"PK\x03\x04":
                return False
            extent = directory_extent(f, st.st_size)
            if extent is None:
                return False
            entries, directory_bytes, start = extent
            if (
                entries > MAX_ENTRIES
                or directory_bytes > MAX_ENTRIES * DIRECTORY_BYTES_PER_ENTRY
                or count_records(f, start, directory_bytes, MAX_ENTRIES) > MAX_ENTRIES
            ):
                return True
            f.seek(0)
            with zipfile.ZipFile(f) as zf:
                return MANIFEST in zf.NameToInfo
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError, struct.error):
        return False


def open_bundle(
    path: Path | str,
    *,
    cache_root: Path | None = None,
    max_entries: int = MAX_ENTRIES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    max_entry_bytes: int = MAX_ENTRY_BYTES,
) -> OpenedBundle:
    """Check, unpack into the cache folder and verify the bundle at ``path`` (never writing it).

    ``cache_root`` defaults to ``app.paths.cache_dir()``.  Raises ``BundleUnsafeError`` for a hostile
    zip, ``BundleVersionError`` for a layout or format this build does not read, ``BundleError`` for
    anything else that stops it (not a zip, no manifest, damaged, no room); nothing is left in the cache
    folder then.  A file that does not match the manifest is no error: it is in ``check``.
    """
    zip_path = Path(path)
    label = zip_path.name or str(zip_path)
    base = extractions_root(cache_root)
    sweep(base)
    try:
        f = open(zip_path, "rb")
    except OSError as err:
        raise BundleError(f"{label}: cannot be read: {err.strerror or err}") from None
    with f:
        return _open(f, zip_path, label, base, max_entries, max_total_bytes, max_entry_bytes)


def _open(
    f: IO[bytes], zip_path: Path, label: str, base: Path, max_entries: int, max_total_bytes: int, max_entry_bytes: int
) -> OpenedBundle:
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        raise BundleError(f"{label}: not a regular file")
    try:
        extent = directory_extent(f, st.st_size)
        if extent is None or f.seek(0) != 0 or f.read(4) not in (b"PK\x03\x04", b"PK\x05\x06"):
            raise BundleError(f"{label}: not a ZIP file, so not a SessionScope support bundle")
        entries, directory_bytes, start = extent
        if entries > max_entries:
            raise BundleUnsafeError(f"{label}: refused: {entries} entries, more than the {max_entries} a bundle may hold")
        if directory_bytes > max(max_entries, 1) * DIRECTORY_BYTES_PER_ENTRY:
            raise BundleUnsafeError(f"{label}: refused: a ZIP directory of {directory_bytes} bytes, too large for a bundle")
        if count_records(f, start, directory_bytes, max_entries) > max_entries:
            raise BundleUnsafeError(f"{label}: refused: more than the {max_entries} entries a bundle may hold")
        f.seek(0)
        with zipfile.ZipFile(f) as zf:
            files = admit(zf, label, max_entries, max_total_bytes, max_entry_bytes)
            by_name = {info.filename: info for info in files}
            manifest_info = by_name.get(MANIFEST)
            if manifest_info is None:
                raise BundleError(f"{label}: no manifest.json: not a SessionScope support bundle")
            manifest = json_entry(zf, manifest_info, label)
            version, writer = check_version(manifest, label)
            listed = listed_files(manifest, label)
            declared = sum(info.file_size for info in files)
            _check_room(base, declared, label)
            folder, _fd = claim(base)
            try:
                return _extract(
                    zf, files, listed, manifest, version, writer, zip_path, folder, label, max_total_bytes, max_entry_bytes
                )
            except BaseException:
                release(folder)
                raise
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError, struct.error) as err:
        raise BundleError(f"{label}: a damaged ZIP file: {err}") from None
    except OSError as err:
        raise BundleError(f"{label}: could not be unpacked into {base}: {err.strerror or err}") from None


def _check_room(base: Path, declared: int, label: str) -> None:
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    free = shutil.disk_usage(base).free
    if declared > free:
        raise BundleError(
            f"{label}: unpacks to {declared} bytes, more than the {free} bytes free in the cache folder {base}",
        )


def _extract(
    zf: zipfile.ZipFile,
    files: list[zipfile.ZipInfo],
    listed: dict[str, tuple[str, int | None]],
    manifest: dict[str, Any],
    version: int,
    writer: str | None,
    zip_path: Path,
    folder: Path,
    label: str,
    max_total_bytes: int,
    max_entry_bytes: int,
) -> OpenedBundle:
    budget = Budget(max_total_bytes)
    mismatches: list[BundleMismatch] = []
    extracted: dict[str, Path] = {}
    for info in files:
        name = info.filename
        target = make_parents(folder, name, label)
        try:
            actual, size = write_entry(target, chunks(zf, info, label, max_entry_bytes, budget))
        except FileExistsError:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} names a file twice", entry=name) from None
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
                raise BundleUnsafeError(f"{label}: refused: entry {name!r} collides with another entry", entry=name) from None
            raise
        date_from_entry(target, info)
        extracted[name] = target
        if name in listed:
            expected, expected_bytes = listed[name]
            if actual != expected or (expected_bytes is not None and expected_bytes != size):
                mismatches.append(BundleMismatch(name, expected, actual, expected_bytes, size))
    missing = tuple(name for name in listed if name not in extracted)
    extra = tuple(name for name in extracted if name not in listed and name not in UNLISTED)
    sender: Mapping[str, Any] | None = None
    if SENDER_VERDICT in extracted:
        try:
            value = read_json(extracted[SENDER_VERDICT], label, SENDER_VERDICT)
        except BundleError:
            value = None  # the sender's verdict is shown, never trusted: a bad one is simply absent
        sender = MappingProxyType(value) if isinstance(value, dict) else None
    session_id = manifest.get("sessionId")
    redacted, redaction = read_redaction(manifest)
    check = BundleCheck(
        version=version,
        files_checked=sum(1 for name in listed if name in extracted),
        mismatches=tuple(mismatches),
        missing=missing,
        extra=extra,
        sender_verdict=sender,
        redacted=redacted,
        redaction=redaction,
        written_by=writer,
        session_id=session_id if isinstance(session_id, str) else None,
    )
    sessions = tuple(extracted[name] for name in listed if name.startswith(SESSION_FOLDER) and name in extracted)
    return OpenedBundle(zip_path=zip_path, folder=folder, check=check, session_paths=sessions)


def close_bundle(b: OpenedBundle) -> None:
    """Remove the bundle's extraction (idempotent)."""
    release(b.folder)


__all__ = [
    "BUNDLE_VERSION",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_TOTAL_BYTES",
    "BundleCheck",
    "BundleError",
    "BundleMismatch",
    "BundleUnsafeError",
    "BundleVersionError",
    "OpenedBundle",
    "close_bundle",
    "extractions_root",
    "is_bundle",
    "open_bundle",
]

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

May import the standard library, orjson, ``app.paths`` and the public ``persistence``; never Qt.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import struct
import threading
import time
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

import orjson

from app.paths import cache_dir
from persistence import SESSION_FORMAT_VERSION, SessionUnreadableError

try:  # POSIX: an advisory lock marks a live extraction; Windows refuses to delete an open file instead
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

# The layout app/export/bundle.py writes; a manifest without ``bundleVersion`` is this layout.
BUNDLE_VERSION = 1
BUNDLE_VERSION_KEY = "bundleVersion"
MANIFEST = "manifest.json"
SENDER_VERDICT = "verify.json"
README = "README.txt"
# Files every bundle carries that the manifest does not (cannot) list.
UNLISTED = frozenset({MANIFEST, README})
SESSION_FOLDER = "session/"

MiB = 1 << 20
# A real bundle holds five files; 10,000 leaves room for any future layout and still bounds the directory.
MAX_ENTRIES = 10_000
# What a bundle may cost in the cache folder ("a few hundred MB"): far above a real session's transcript
# (a 200k-event session is tens of MB), far below a bomb's gigabytes.
MAX_ENTRY_BYTES = 512 * MiB
MAX_TOTAL_BYTES = 512 * MiB
# manifest.json and verify.json are parsed in memory: a few KB in practice.
MAX_JSON_BYTES = 16 * MiB
# Central-directory bytes allowed per permitted entry (46 fixed bytes + name + extra + comment): bounds what
# is read to count the records before ``zipfile`` builds one object per record.
DIRECTORY_BYTES_PER_ENTRY = 1024
CHUNK = MiB
# A bundle's names are two levels deep; deep or long names only serve to exhaust path limits (and the
# recursion of removing the extraction).
MAX_NAME_PARTS = 32
MAX_NAME_CHARS = 1024
# Names that would make a nested archive (refused whatever its content).
ARCHIVE_SUFFIXES = (".zip", ".jar", ".war", ".apk", ".ipa", ".docx", ".xlsx", ".odt", ".7z", ".rar", ".tar", ".tgz", ".gz")
ARCHIVE_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"7z\xbc\xaf", b"Rar!", b"\x1f\x8b")
# Our exporter stores (a zstd transcript) or deflates; anything else is not one of our bundles.
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
EXTRACTIONS_DIR = "bundles"
# A half-made lock (a crash between creating and publishing it) older than this is litter.
STALE_TEMP_SECONDS = 3600.0

_END = b"PK\x05\x06"
_END64_LOCATOR = b"PK\x06\x07"
_END64 = b"PK\x06\x06"
_END_SIZE = 22
_RECORD = b"PK\x01\x02"
_RECORD_SIZE = 46
_END64_LOCATOR_SIZE = 20
_END64_SIZE = 56
_DRIVE = re.compile(r"^[A-Za-z]:")
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} | {f"{d}{i}" for d in ("COM", "LPT") for i in range(1, 10)}
)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


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


# ---------------------------------------------------------------- extraction bookkeeping

_lock = threading.Lock()
_held: dict[Path, int] = {}  # extraction folder -> the descriptor holding its lock


def extractions_root(cache_root: Path | None = None) -> Path:
    """Where extractions live: ``<cache>/bundles``."""
    return Path(cache_root if cache_root is not None else cache_dir()) / EXTRACTIONS_DIR


def _try_lock(fd: int) -> bool:
    if fcntl is None:  # pragma: no cover - Windows: an open file cannot be deleted, see _sweep
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _claim(base: Path) -> tuple[Path, int]:
    """A fresh extraction folder under ``base`` and the descriptor locking it.

    The lock file is locked under a temporary name and only then renamed into place, so a sweeping
    process never sees an unlocked lock of a live extraction.
    """
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = f"{os.getpid()}-{secrets.token_hex(8)}"
    temp = base / f".{token}.lock.tmp"
    fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        if not _try_lock(fd):
            raise BundleError(f"could not lock {temp}")
        os.rename(temp, base / f"{token}.lock")
        folder = base / token
        folder.mkdir(mode=0o700)
    except BaseException:
        os.close(fd)
        for p in (temp, base / f"{token}.lock"):
            p.unlink(missing_ok=True)
        raise
    with _lock:
        _held[folder] = fd
    return folder, fd


def _release(folder: Path) -> None:
    with _lock:
        fd = _held.pop(folder, None)
    shutil.rmtree(folder, ignore_errors=True)
    (folder.parent / f"{folder.name}.lock").unlink(missing_ok=True)
    if fd is not None:
        os.close(fd)


def _sweep(base: Path) -> None:
    """Remove extractions left by processes that are gone (a crash, a kill): their locks are free."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    now = time.time()
    for name in names:
        path = base / name
        if name.endswith(".lock.tmp"):
            try:
                if now - path.lstat().st_mtime > STALE_TEMP_SECONDS:
                    path.unlink(missing_ok=True)
            except OSError:
                pass
            continue
        if not name.endswith(".lock"):
            continue
        folder = base / name[: -len(".lock")]
        with _lock:
            if folder in _held:
                continue
        if fcntl is None:  # pragma: no cover - Windows: deleting a lock a live process holds open fails
            try:
                path.unlink()
            except OSError:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            continue
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            if not _try_lock(fd):
                continue  # a live SessionScope has it open
            shutil.rmtree(folder, ignore_errors=True)
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)


@atexit.register
def _release_all() -> None:
    # An extraction is a copy of someone else's data in our cache: never left behind by a clean exit.
    with _lock:
        folders = list(_held)
    for folder in folders:
        _release(folder)


# ---------------------------------------------------------------- reading the zip safely


def _directory_extent(f: IO[bytes], size: int) -> tuple[int, int, int] | None:
    """(entries, central-directory bytes, where the directory starts) as the end record declares them,
    found the way ``zipfile`` finds them (the end record without a comment, else the last signature in
    the final 64 KiB; the zip64 record just before its locator; the directory just before those), or
    None when there is no end record."""
    record: bytes | None = None
    at = -1
    if size >= _END_SIZE:
        f.seek(size - _END_SIZE)
        tail = f.read(_END_SIZE)
        if tail[:4] == _END and tail[-2:] == b"\0\0":
            record, at = tail, size - _END_SIZE
    if record is None:
        start = max(size - (1 << 16) - _END_SIZE, 0)
        f.seek(start)
        data = f.read()
        found = data.rfind(_END)
        if found < 0 or len(data) - found < _END_SIZE:
            return None
        record, at = data[found : found + _END_SIZE], start + found
    entries, directory_bytes = struct.unpack("<10xHL6x", record)
    directory_end = at
    if at >= _END64_LOCATOR_SIZE + _END64_SIZE:
        f.seek(at - _END64_LOCATOR_SIZE)
        if f.read(4) == _END64_LOCATOR:
            f.seek(at - _END64_LOCATOR_SIZE - _END64_SIZE)
            rec = f.read(_END64_SIZE)
            if len(rec) == _END64_SIZE and rec[:4] == _END64:
                entries, directory_bytes = struct.unpack("<32xQQ8x", rec)
                directory_end = at - _END64_LOCATOR_SIZE - _END64_SIZE
    return entries, directory_bytes, directory_end - directory_bytes


def _count_records(f: IO[bytes], start: int, size: int, limit: int) -> int:
    """The central-directory records ``zipfile`` would build objects for (walked the way it walks them),
    counting no further than ``limit + 1``: an end record can understate the count, and the directory's
    size bounds the bytes read here, not the objects ``zipfile`` would make of them."""
    if start < 0:
        return 0  # zipfile will call it damaged
    f.seek(start)
    data = f.read(size)
    pos = count = 0
    while pos < len(data) and count <= limit:
        if len(data) - pos < _RECORD_SIZE or data[pos : pos + 4] != _RECORD:
            break  # zipfile will call it damaged
        name, extra, comment = struct.unpack_from("<3H", data, pos + 28)
        pos += _RECORD_SIZE + name + extra + comment
        count += 1
    return count


def _unsafe_name(info: zipfile.ZipInfo) -> str | None:
    """Why an entry's name could land outside the extraction folder, or None."""
    raw = info.orig_filename
    name = info.filename
    if "\0" in raw or "\0" in name:
        return "has a NUL character in its name"
    if "\\" in raw:
        return "uses a backslash in its name (a Windows path that could climb out)"
    if raw.startswith("/") or name.startswith("/"):
        return "is an absolute path"
    if _DRIVE.match(raw):
        return "names a drive"
    if ":" in name:
        return "has a ':' in its name (a drive or an alternate data stream on Windows)"
    parts = name[:-1].split("/") if name.endswith("/") else name.split("/")
    if ".." in parts:
        return "climbs out of the bundle (a '..' component)"
    if len(parts) > MAX_NAME_PARTS or len(name) > MAX_NAME_CHARS:
        return f"is nested deeper than {MAX_NAME_PARTS} folders or longer than {MAX_NAME_CHARS} characters"
    if any(p in ("", ".") for p in parts):
        return "has an empty or '.' path component"
    if any(p.split(".")[0].rstrip(" ").upper() in _WINDOWS_DEVICES or p[-1] in ". " for p in parts):
        return "names a Windows device or ends in a dot or space (Windows would write elsewhere)"
    return None


def _entry_type_problem(info: zipfile.ZipInfo) -> str | None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "is a special file (device, FIFO or socket)"
    return None


def _is_archive_name(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _admit(
    zf: zipfile.ZipFile, label: str, max_entries: int, max_total_bytes: int, max_entry_bytes: int
) -> list[zipfile.ZipInfo]:
    """Every entry checked before anything is unpacked; the file entries in directory order."""
    infos = zf.infolist()
    if len(infos) > max_entries:
        raise BundleUnsafeError(f"{label}: refused: {len(infos)} entries, more than the {max_entries} a bundle may hold")
    seen: set[str] = set()
    files: list[zipfile.ZipInfo] = []
    total = 0
    for info in infos:
        name = info.filename
        why = _unsafe_name(info) or _entry_type_problem(info)
        if why is not None:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} {why}", entry=name)
        key = name.rstrip("/")
        if key in seen or key.casefold() in seen:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} appears twice", entry=name)
        seen.update((key, key.casefold()))
        if info.is_dir():
            continue
        if _is_archive_name(name):
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} is a nested archive", entry=name)
        if info.flag_bits & 0x1:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} is encrypted", entry=name)
        if info.compress_type not in METHODS:
            raise BundleError(
                f"{label}: entry {name!r} uses ZIP compression method {info.compress_type}, "
                "which SessionScope bundles never use (stored or deflated only)"
            )
        if info.file_size > max_entry_bytes:
            raise BundleUnsafeError(
                f"{label}: refused: entry {name!r} unpacks to {info.file_size} bytes, over the {max_entry_bytes}-byte cap",
                entry=name,
            )
        total += info.file_size
        if total > max_total_bytes:
            raise BundleUnsafeError(
                f"{label}: refused: the entries unpack to more than the {max_total_bytes}-byte cap", entry=name
            )
        files.append(info)
    return files


class _Budget:
    """The bytes still allowed in all, counted as they are unpacked (declared sizes can lie)."""

    def __init__(self, total: int) -> None:
        self.cap = total
        self.left = total


def _chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, max_entry_bytes: int, budget: _Budget) -> Iterator[bytes]:
    """The entry's bytes in bounded chunks; refuses a nested archive by its magic and any byte over a cap."""
    count = 0
    with zf.open(info) as src:
        while chunk := src.read(CHUNK):
            if count == 0 and chunk.startswith(ARCHIVE_MAGICS):
                raise BundleUnsafeError(f"{label}: refused: entry {info.filename!r} is a nested archive", entry=info.filename)
            count += len(chunk)
            budget.left -= len(chunk)
            if count > max_entry_bytes:
                raise BundleUnsafeError(
                    f"{label}: refused: entry {info.filename!r} unpacks to more than the {max_entry_bytes}-byte cap",
                    entry=info.filename,
                )
            if budget.left < 0:
                raise BundleUnsafeError(
                    f"{label}: refused: the entries unpack to more than the {budget.cap}-byte cap (at {info.filename!r})",
                    entry=info.filename,
                )
            yield chunk


def _make_parents(folder: Path, name: str, label: str) -> Path:
    """``folder/name`` with its parent folders created (private); only ever below ``folder``."""
    target = folder
    parts = name.split("/")
    for part in parts[:-1]:
        target = target / part
        try:
            target.mkdir(mode=0o700)
        except FileExistsError:
            if not stat.S_ISDIR(target.lstat().st_mode):
                raise BundleUnsafeError(
                    f"{label}: refused: entry {name!r} runs through a file of the same name", entry=name
                ) from None
    return target / parts[-1]


def _write_entry(target: Path, chunks: Iterator[bytes]) -> tuple[str, int]:
    """Unpack into a new private file (never an existing one, never through a link); its SHA-256 and size."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    sha = hashlib.sha256()
    size = 0
    fd = os.open(target, flags, 0o600)
    try:
        for chunk in chunks:
            sha.update(chunk)
            size += len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return sha.hexdigest(), size


def _date_from_entry(target: Path, info: zipfile.ZipInfo) -> None:
    """Give an extracted file its zip entry's date: the extraction is written now, but a fresh mtime would
    read as a writer at work to anything judging liveness by recent writes (a crashed turn shown live)."""
    try:
        stamp = time.mktime((*info.date_time, 0, 0, -1))
        os.utime(target, (stamp, stamp), follow_symlinks=False)
    except (OverflowError, ValueError, OSError):  # a date the platform cannot hold: the file keeps "now"
        pass


def _read_json(path: Path, label: str, what: str) -> Any:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise BundleUnsafeError(f"{label}: refused: {what} is larger than {MAX_JSON_BYTES} bytes", entry=what)
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise BundleError(f"{label}: {what} is not valid JSON ({err})") from None


def _json_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> Any:
    if info.file_size > MAX_JSON_BYTES:
        raise BundleUnsafeError(f"{label}: refused: {info.filename} is larger than {MAX_JSON_BYTES} bytes", entry=info.filename)
    data = b"".join(_chunks(zf, info, label, MAX_JSON_BYTES, _Budget(MAX_JSON_BYTES)))
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise BundleError(f"{label}: {info.filename} is not valid JSON ({err})") from None


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_version(manifest: Any, label: str) -> tuple[int, str | None]:
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
        version = BUNDLE_VERSION
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


def _listed_files(manifest: dict[str, Any], label: str) -> dict[str, tuple[str, int | None]]:
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


def _redaction(manifest: dict[str, Any]) -> tuple[bool | None, Mapping[str, Any] | None]:
    """Whether the sender redacted the bundle (None: the manifest does not say), and the manifest's
    ``redaction`` block (rules, counts) as it is."""
    block = manifest.get("redaction")
    if isinstance(block, dict):
        flag = block.get("redacted")
        return (flag if isinstance(flag, bool) else None), MappingProxyType(block)
    flag = manifest.get("redacted")
    return (flag if isinstance(flag, bool) else None), None


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
            extent = _directory_extent(f, st.st_size)
            if extent is None:
                return False
            entries, directory_bytes, start = extent
            if (
                entries > MAX_ENTRIES
                or directory_bytes > MAX_ENTRIES * DIRECTORY_BYTES_PER_ENTRY
                or _count_records(f, start, directory_bytes, MAX_ENTRIES) > MAX_ENTRIES
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
    _sweep(base)
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
        extent = _directory_extent(f, st.st_size)
        if extent is None or f.seek(0) != 0 or f.read(4) not in (b"PK\x03\x04", b"PK\x05\x06"):
            raise BundleError(f"{label}: not a ZIP file, so not a SessionScope support bundle")
        entries, directory_bytes, start = extent
        if entries > max_entries:
            raise BundleUnsafeError(f"{label}: refused: {entries} entries, more than the {max_entries} a bundle may hold")
        if directory_bytes > max(max_entries, 1) * DIRECTORY_BYTES_PER_ENTRY:
            raise BundleUnsafeError(f"{label}: refused: a ZIP directory of {directory_bytes} bytes, too large for a bundle")
        if _count_records(f, start, directory_bytes, max_entries) > max_entries:
            raise BundleUnsafeError(f"{label}: refused: more than the {max_entries} entries a bundle may hold")
        f.seek(0)
        with zipfile.ZipFile(f) as zf:
            files = _admit(zf, label, max_entries, max_total_bytes, max_entry_bytes)
            by_name = {info.filename: info for info in files}
            manifest_info = by_name.get(MANIFEST)
            if manifest_info is None:
                raise BundleError(f"{label}: no manifest.json: not a SessionScope support bundle")
            manifest = _json_entry(zf, manifest_info, label)
            version, writer = _check_version(manifest, label)
            listed = _listed_files(manifest, label)
            declared = sum(info.file_size for info in files)
            _check_room(base, declared, label)
            folder, _fd = _claim(base)
            try:
                return _extract(
                    zf, files, listed, manifest, version, writer, zip_path, folder, label, max_total_bytes, max_entry_bytes
                )
            except BaseException:
                _release(folder)
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
    budget = _Budget(max_total_bytes)
    mismatches: list[BundleMismatch] = []
    extracted: dict[str, Path] = {}
    for info in files:
        name = info.filename
        target = _make_parents(folder, name, label)
        try:
            actual, size = _write_entry(target, _chunks(zf, info, label, max_entry_bytes, budget))
        except FileExistsError:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} names a file twice", entry=name) from None
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
                raise BundleUnsafeError(f"{label}: refused: entry {name!r} collides with another entry", entry=name) from None
            raise
        _date_from_entry(target, info)
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
            value = _read_json(extracted[SENDER_VERDICT], label, SENDER_VERDICT)
        except BundleError:
            value = None  # the sender's verdict is shown, never trusted: a bad one is simply absent
        sender = MappingProxyType(value) if isinstance(value, dict) else None
    session_id = manifest.get("sessionId")
    redacted, redaction = _redaction(manifest)
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
    _release(b.folder)


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

"""Reading a ZIP from a stranger safely: the directory bounded before it is parsed, every entry checked before
one byte is unpacked, and the bytes counted again while they are (declared sizes can lie).

Why its own module: these are the rules that make a hostile bundle cost at most its caps (512 MiB on
disk, a few MB of memory) and never write outside its extraction folder, whatever the manifest says;
they are the part a reviewer audits, apart from what the bundle means (``app.sources.bundle``).  Split
out of ``app.sources.bundle`` when that file passed 600 lines (825).  Each refusal is a
``BundleUnsafeError`` naming the entry: names that climb out, links and special files, too many
entries or bytes, encryption, unknown methods, nested archives (by name or by magic bytes).

May import the standard library, orjson and ``app.sources.bundle_check``; never Qt.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from app.sources.bundle_check import BundleError, BundleUnsafeError

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


def directory_extent(f: IO[bytes], size: int) -> tuple[int, int, int] | None:
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


def count_records(f: IO[bytes], start: int, size: int, limit: int) -> int:
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


def unsafe_name(info: zipfile.ZipInfo) -> str | None:
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


def entry_type_problem(info: zipfile.ZipInfo) -> str | None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "is a special file (device, FIFO or socket)"
    return None


def is_archive_name(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def admit(zf: zipfile.ZipFile, label: str, max_entries: int, max_total_bytes: int, max_entry_bytes: int) -> list[zipfile.ZipInfo]:
    """Every entry checked before anything is unpacked; the file entries in directory order."""
    infos = zf.infolist()
    if len(infos) > max_entries:
        raise BundleUnsafeError(f"{label}: refused: {len(infos)} entries, more than the {max_entries} a bundle may hold")
    seen: set[str] = set()
    files: list[zipfile.ZipInfo] = []
    total = 0
    for info in infos:
        name = info.filename
        why = unsafe_name(info) or entry_type_problem(info)
        if why is not None:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} {why}", entry=name)
        key = name.rstrip("/")
        if key in seen or key.casefold() in seen:
            raise BundleUnsafeError(f"{label}: refused: entry {name!r} appears twice", entry=name)
        seen.update((key, key.casefold()))
        if info.is_dir():
            continue
        if is_archive_name(name):
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


class Budget:
    """The bytes still allowed in all, counted as they are unpacked (declared sizes can lie)."""

    def __init__(self, total: int) -> None:
        self.cap = total
        self.left = total


def chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, max_entry_bytes: int, budget: Budget) -> Iterator[bytes]:
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


def make_parents(folder: Path, name: str, label: str) -> Path:
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


def write_entry(target: Path, chunks: Iterator[bytes]) -> tuple[str, int]:
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


def date_from_entry(target: Path, info: zipfile.ZipInfo) -> None:
    """Give an extracted file its zip entry's date: the extraction is written now, but a fresh mtime would
    read as a writer at work to anything judging liveness by recent writes (a crashed turn shown live)."""
    try:
        stamp = time.mktime((*info.date_time, 0, 0, -1))
        os.utime(target, (stamp, stamp), follow_symlinks=False)
    except (OverflowError, ValueError, OSError):  # a date the platform cannot hold: the file keeps "now"
        pass


def read_json(path: Path, label: str, what: str) -> Any:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise BundleUnsafeError(f"{label}: refused: {what} is larger than {MAX_JSON_BYTES} bytes", entry=what)
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise BundleError(f"{label}: {what} is not valid JSON ({err})") from None


def json_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> Any:
    if info.file_size > MAX_JSON_BYTES:
        raise BundleUnsafeError(f"{label}: refused: {info.filename} is larger than {MAX_JSON_BYTES} bytes", entry=info.filename)
    data = b"".join(chunks(zf, info, label, MAX_JSON_BYTES, Budget(MAX_JSON_BYTES)))
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise BundleError(f"{label}: {info.filename} is not valid JSON ({err})") from None


__all__ = [
    "CHUNK",
    "DIRECTORY_BYTES_PER_ENTRY",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_JSON_BYTES",
    "MAX_TOTAL_BYTES",
    "Budget",
    "admit",
    "chunks",
    "count_records",
    "date_from_entry",
    "directory_extent",
    "json_entry",
    "make_parents",
    "read_json",
    "write_entry",
]

"""Builders of the bundle tests: a real bundle from our own exporter, a rewritten (tampered) copy of one,
and hand-made ZIP files whose every header field is ours to set (zip-slip names, symbolic links, lying
sizes, bombs of deflated zeros that cost a few MB to build).  Importable as ``bundlekit``.
"""

from __future__ import annotations

import asyncio
import os
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import sessionkit as sk

from app.export import export_session
from app.redact import Redactor
from persistence import open_store

BACKENDS = ("jsonl-zstd", "jsonl-none", "sqlite")
MiB = 1 << 20
GiB = 1 << 30


def store_path(tmp: Path, backend: str) -> str:
    if backend == "sqlite":
        folder = tmp / "store"
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder / "sessions.sqlite")
    return str(tmp / "root")


def exported_bundle(
    tmp: Path,
    backend: str = "jsonl-none",
    session_id: str = "s1",
    *,
    events: list[dict[str, Any]] | None = None,
    redact: bool = False,
) -> Path:
    """A bundle written by ``export --format bundle [--redact]`` of a session (default: one turn)."""
    path = store_path(tmp, backend)

    async def go() -> None:
        store = open_store(path, backend)
        try:
            await store.create(sk.meta(session_id, "/w/proj"))
            await store.append(session_id, events if events is not None else sk.one_turn_log())
        finally:
            await store.close()
        reader = open_store(path, backend, read_only=True, create=False)
        try:
            redactor = Redactor() if redact else None
            await export_session(reader, session_id, "bundle", str(tmp / f"{session_id}.zip"), redactor=redactor)
        finally:
            await reader.close()

    asyncio.run(go())
    return tmp / f"{session_id}.zip"


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def rewrite(
    src: Path,
    dst: Path,
    *,
    change: Callable[[str, bytes], bytes | None] | None = None,
    manifest: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    add: dict[str, bytes] | None = None,
) -> Path:
    """A copy of bundle ``src``: ``change(name, data)`` edits a member (None drops it), ``manifest`` edits
    the manifest object, ``add`` appends members; the rest is copied as it was."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data: bytes | None = zin.read(info)
            if info.filename == "manifest.json" and manifest is not None:
                data = orjson.dumps(manifest(orjson.loads(data or b"")))
            elif change is not None:
                data = change(info.filename, data or b"")
            if data is not None:
                zout.writestr(info, data)
        for name, data in (add or {}).items():
            zout.writestr(zipfile.ZipInfo(name), data)
    return dst


def plain_zip(dst: Path, entries: dict[str | zipfile.ZipInfo, bytes]) -> Path:
    with zipfile.ZipFile(dst, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return dst


MANIFEST_V1: dict[str, Any] = {"sessionscope": "0.0-test", "sessionFormatVersion": 0, "files": [], "problems": []}


def deflated_zeros(total: int) -> bytes:
    """A raw deflate stream of ``total`` zero bytes (a multiple of 1 MiB), built in milliseconds: after a
    full flush the compressor starts afresh, so every further MiB compresses to the same ~1 KB."""
    assert total % MiB == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    unit = c.compress(bytes(MiB)) + c.flush(zlib.Z_FULL_FLUSH)
    return unit * (total // MiB) + c.flush()


@dataclass
class RawEntry:
    """One member of a hand-made ZIP: ``payload`` is written as it is (already compressed for method 8)."""

    name: bytes
    payload: bytes
    method: int = zipfile.ZIP_STORED
    declared_size: int | None = None  # the uncompressed size the headers claim (default: the payload's)
    crc: int | None = None  # default: the payload's CRC (right for stored members)
    external_attr: int = 0o600 << 16
    create_system: int = 3  # Unix: external_attr's high 16 bits are a mode


def raw_zip(dst: Path, entries: list[RawEntry], *, count: int | None = None) -> Path:
    """A ZIP written byte by byte (APPNOTE 4.3): every field is what ``entries`` say, lies included.

    ``count`` overrides the end record's entry count.  Sizes stay below 4 GiB (no zip64)."""
    with open(dst, "wb") as out:
        central = []
        for e in entries:
            offset = out.tell()
            size = len(e.payload) if e.declared_size is None else e.declared_size
            crc = zlib.crc32(e.payload) if e.crc is None else e.crc
            out.write(
                struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, e.method, 0, 0x21, crc, len(e.payload), size, len(e.name), 0)
            )
            out.write(e.name)
            out.write(e.payload)
            central.append(
                struct.pack(
                    "<4s6H3L5H2L",
                    b"PK\x01\x02",
                    (e.create_system << 8) | 20,
                    20,
                    0,
                    e.method,
                    0,
                    0x21,
                    crc,
                    len(e.payload),
                    size,
                    len(e.name),
                    0,
                    0,
                    0,
                    0,
                    e.external_attr,
                    offset,
                )
                + e.name
            )
        start = out.tell()
        for record in central:
            out.write(record)
        n = len(entries) if count is None else count
        out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, out.tell() - start, start, 0))
    return dst


def manifest_entry(manifest: dict[str, Any] | None = None) -> RawEntry:
    return RawEntry(b"manifest.json", orjson.dumps(manifest if manifest is not None else MANIFEST_V1))


def tree(root: Path) -> set[str]:
    """Every path under ``root`` (relative), folders included."""
    return {os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in (*dirs, *files)}


def leftovers(cache: Path) -> list[str]:
    """What is left in the cache folder's bundle extractions (none after a close or a refusal)."""
    folder = cache / "bundles"
    return sorted(os.listdir(folder)) if folder.exists() else []

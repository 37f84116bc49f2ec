"""Builders for the source tests: one session on each backend, and every kind of source made from it
(the user's own root or store, a lone transcript under a name that says nothing, a support bundle,
a case folder holding a mix), plus the fingerprint of a folder (every file's SHA-256 and mtime_ns)."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from sessionkit import artifact, encode_log, header_line, one_turn_log, run

from app.cli import main
from persistence import open_store

BACKENDS = ["jsonl-zstd", "jsonl-none", "sqlite"]


def compression_of(backend: str) -> str:
    return "none" if backend == "jsonl-none" else "zstd"


def own_store(base: Path, backend: str, sessions: dict[str, list[dict[str, Any]]], cwd: str = "/proj") -> Path:
    """The user's own store holding ``sessions``: a JSONL root folder, or a SQLite store file."""
    if backend == "sqlite":
        base.mkdir(parents=True, exist_ok=True)
        path = base / "store.sqlite"

        async def write() -> None:
            store = open_store(path, "sqlite")
            try:
                for sid, events in sessions.items():
                    await store.create({"version": 0, "id": sid, "createdAt": 1000, "cwd": cwd})
                    await store.append(sid, events)
            finally:
                await store.close()

        run(write())
        return path
    root = base / "root"
    root.mkdir(parents=True)
    for sid, events in sessions.items():
        path = artifact(root, cwd, sid, compression_of(backend))
        path.parent.mkdir(parents=True)
        path.write_bytes(encode_log(header_line(sid, cwd), [events], compression_of(backend)))
    return root


def transcript_bytes(tmp: Path, backend: str, sid: str, events: list[dict[str, Any]]) -> bytes:
    """A lone transcript of the session: the stored file for JSONL (zstd or plain); for SQLite, the JSONL
    export of its rows (what a SQLite user sends)."""
    if backend != "sqlite":
        return encode_log(header_line(sid, "/proj"), [events], compression_of(backend))
    store = own_store(tmp, backend, {sid: events})
    out = tmp / "exported.jsonl"
    assert main(["export", str(store), sid, "--format", "jsonl", "-o", str(out)]) == 0
    return out.read_bytes()


def bundle_of(store: Path, sid: str, out: Path) -> Path:
    """``sessionscope export --format bundle``: a support bundle of ``sid``."""
    assert main(["export", str(store), sid, "--format", "bundle", "-o", str(out)]) == 0
    return out


def tamper(bundle: Path, member_prefix: str = "session/") -> str:
    """Change one byte of the first member under ``member_prefix``, keeping the manifest: its name."""
    src = zipfile.ZipFile(io.BytesIO(bundle.read_bytes()))
    buf = io.BytesIO()
    changed = ""
    with zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if not changed and info.filename.startswith(member_prefix):
                changed = info.filename
                data = data[:-2] + bytes([data[-2] ^ 0x20]) + data[-1:]
            out.writestr(info, data)
    bundle.write_bytes(buf.getvalue())
    assert changed
    return changed


def fingerprint(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every entry below ``folder`` (links not followed): file -> (SHA-256, mtime_ns, mode)."""
    out: dict[str, tuple[str, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else "-"
            out[str(p.relative_to(folder))] = (digest, st.st_mtime_ns, st.st_mode)
    return out


def events_of(values: Iterable[Any]) -> list[dict[str, Any]]:
    return [dict(e) if isinstance(e, dict) else e.to_json() for e in values]


def session_log() -> list[dict[str, Any]]:
    return one_turn_log()


skip_without_bundles = pytest.mark.skipif(
    __import__("importlib").util.find_spec("app.sources.bundle") is None, reason="app.sources.bundle is not there yet"
)

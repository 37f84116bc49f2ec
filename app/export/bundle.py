"""The support bundle: one ZIP that lets someone else look at exactly this session, and nothing else.

What it holds (``README.txt`` inside says the same):

- ``session/<artifact>``: a JSONL session's transcript file as stored (``session.jsonl`` or
  ``session.jsonl.zstd``, byte for byte, torn tail included: that is often what support needs).  A
  SQLite session is rows in a database shared with other sessions, so the database is never
  included: its rows are rendered as a JSONL transcript (``session/session.rows.jsonl``, the JSONL
  export's bytes);
- ``header.json``: the session's header;
- ``verify.json``: the ``verify`` row of this session (verdict, status, reason, path) and the
  engine's full diagnosis (closers a repair would add, torn-tail facts, revision);
- ``manifest.json``: the bundle layout (``bundleVersion``, 1; the first bundles had none and read as 1),
  SessionScope's version, the session format version, the SQLite schema version
  of the store file (SQLite stores), the backend, and every file's size and SHA-256; ``redaction``
  says whether secrets were replaced (``export --redact``), by which rules, and how many of each kind.

A redacted bundle (``redactor``: an ``app.redact.Redactor``) carries the same members: every string in
them goes through the one redactor (the same secret, the same placeholder everywhere), the transcript
re-encoded line by line the engine's way (``app.redact.transcript``), so it still reads as the same
session (same events, seqs and types).

The bundle reads with ``view`` (one read: the verdict, header and, for JSONL, the very bytes it
parsed), plus ``read_raw_bytes`` when the engine refuses the log; it never writes the session.

May import: the standard library, ``app.export``'s own modules, ``app.redact`` and the public ``persistence``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import zipfile
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO

from app.export.raw import write_rows
from app.redact import Redactor, redact_artifact, redacted_rows
from app.sources.bundle_manifest import BUNDLE_VERSION, BUNDLE_VERSION_KEY
from persistence import (
    SESSION_FORMAT_VERSION,
    CoordinatedPersistence,
    SessionPersistenceError,
    SessionView,
    not_found,
    read_header_outcome,
    upstream_class_of,
)

# ``verify``'s verdict of a diagnosis status (app/actions/verify.py: ok, repairable, corrupt, unsupported).
VERDICTS = {"ok": "ok", "open-turn": "repairable", "torn-tail": "repairable", "unsupported": "unsupported"}

README = """SessionScope support bundle
===========================

session/      the session's log: a JSONL transcript exactly as stored, or (SQLite stores) the
              session's rows rendered as a JSONL transcript; no other session is included
header.json   the session's header
verify.json   what `sessionscope verify` says of this session, and the engine's full diagnosis
manifest.json SessionScope's version, format versions, each file's size and SHA-256, and whether
              (and how) secrets were replaced by placeholders such as [redacted:api-key#1]
"""


class _Hashing:
    """A byte sink that also counts and hashes what passes through."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes, /) -> int:
        self.out.write(data)
        self.sha.update(data)
        self.size += len(data)
        return len(data)


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def verify_json(view: SessionView, path: str | None) -> dict[str, Any]:
    """The ``verify`` row of the session plus the engine's diagnosis of it."""
    d = view.diagnosis
    return {
        "id": view.session_id,
        "verdict": VERDICTS.get(d.status, "corrupt"),
        "status": d.status,
        "reason": d.reason,
        "path": path,
        "diagnosis": {
            "eventCount": d.event_count,
            "closers": [dict(c) for c in d.closers],
            "tornOffset": d.torn_offset,
            "recoveredCount": d.recovered_count,
            "revision": d.revision,
            "errorClass": d.error_class,
            "cut": _jsonable(d.cut),
        },
    }


def _dump(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8", "backslashreplace")


async def write_bundle(
    store: CoordinatedPersistence, session_id: str, out: BinaryIO, *, version: str, redactor: Redactor | None = None
) -> int:
    """The bundle of one session into ``out`` (a binary file); returns the events read (0: unreadable).
    With ``redactor``, every text the bundle carries is redacted (see the module docstring)."""
    view = await store.view(session_id, raw=True)
    if view.status == "missing":
        raise not_found(session_id)
    files: list[dict[str, Any]] = []
    problems: list[str] = []
    artifact_path: str | None = None
    header: dict[str, Any] | None = view.header.to_json() if view.header is not None else None
    stamp = datetime.now(tz=UTC).timetuple()[:6]

    def member(name: str, compress: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=stamp)
        info.compress_type = compress
        info.external_attr = 0o600 << 16  # a transcript may hold secrets: unpacked private
        return info

    with zipfile.ZipFile(out, "w", allowZip64=True) as zf:
        zf.writestr(member("README.txt", zipfile.ZIP_DEFLATED), README)
        if store.supports_raw_artifacts:
            raw = view.raw
            if raw is None:  # the engine refused the log: its bytes are still the evidence
                try:
                    raw = await store.read_raw_bytes(session_id)
                except SessionPersistenceError as err:
                    problems.append(f"artifact unreadable: {upstream_class_of(err)}: {err}")
            if raw is not None:
                artifact_path = raw.path
                name = "session/" + os.path.basename(raw.path)
                # A zstd transcript is compressed already: stored as it is.
                compress = zipfile.ZIP_STORED if raw.compression == "zstd" else zipfile.ZIP_DEFLATED
                data = raw.data
                if redactor is not None:
                    data, left_out = redact_artifact(raw.data, raw.compression, redactor)
                    problems.extend(left_out)
                zf.writestr(member(name, compress), data)
                files.append({"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
                if header is None:
                    meta, _problem, _status, _detail = read_header_outcome(raw.path, raw.compression)
                    header = meta
        elif view.readable:
            name = "session/session.rows.jsonl"
            with zf.open(member(name, zipfile.ZIP_DEFLATED), "w", force_zip64=True) as dest:
                sink = _Hashing(dest)
                if redactor is None:
                    write_rows(sink, view)
                else:
                    for lines in redacted_rows(view, redactor):
                        sink.write(lines)
            files.append({"name": name, "bytes": sink.size, "sha256": sink.sha.hexdigest()})
        else:
            problems.append(f"rows unreadable ({view.status}): {view.reason}")
        for name, value in (("header.json", header), ("verify.json", verify_json(view, artifact_path))):
            if redactor is not None:
                value = redactor.value(value, name, top=True)
            data = _dump(value)
            zf.writestr(member(name, zipfile.ZIP_DEFLATED), data)
            files.append({"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        manifest = {
            BUNDLE_VERSION_KEY: BUNDLE_VERSION,  # the layout; readers of a newer one say "upgrade" instead of guessing
            "sessionscope": version,
            "sessionId": session_id,
            "sessionFormatVersion": SESSION_FORMAT_VERSION,
            "headerVersion": header.get("version") if isinstance(header, dict) else None,
            "backend": store.kind,
            "compression": store.compression,
            "sqliteSchemaVersion": await store.schema_version(),  # None for JSONL
            "exportedAt": datetime.now(tz=UTC).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
            "files": files,
            "problems": problems if redactor is None else [redactor.text(p, "manifest.json") for p in problems],
        }
        manifest["redaction"] = {"redacted": False} if redactor is None else redactor.report().to_json()
        zf.writestr(member("manifest.json", zipfile.ZIP_DEFLATED), _dump(manifest))
    return len(view.stored)


__all__ = ["README", "VERDICTS", "verify_json", "write_bundle"]

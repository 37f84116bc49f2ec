"""fsck for a session root: every session classified ok / repairable / corrupt / unsupported."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from app.actions.artifacts import read_only_view
from persistence import CoordinatedPersistence, SessionLayoutError
from persistence.errors import upstream_class_of
from persistence.jsonl.paths import encode_segment


@dataclass(frozen=True, slots=True)
class VerifyRow:
    session_id: str
    verdict: str  # ok | repairable | corrupt | unsupported
    status: str
    reason: str
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.session_id, "verdict": self.verdict, "status": self.status, "reason": self.reason,
                "path": self.path}


_VERDICT = {"ok": "ok", "open-turn": "repairable", "torn-tail": "repairable", "unsupported": "unsupported"}
_UNLISTABLE = "the first line is not a readable session header, so the session cannot be listed"
_ESCAPE = re.compile(r"~([0-9A-F]{4})")


def decode_segment(name: str) -> str | None:
    """The session id a session directory name encodes (inverse of ``encode_segment``), or None."""
    units = bytearray()
    i = 0
    while i < len(name):
        m = _ESCAPE.match(name, i)
        if m is not None:
            units += int(m.group(1), 16).to_bytes(2, "little")
            i = m.end()
        elif ord(name[i]) < 0x80:
            units += ord(name[i]).to_bytes(2, "little")
            i += 1
        else:
            return None  # encode_segment escapes every non-ASCII code unit
    try:
        raw = units.decode("utf-16-le", "surrogatepass")
        return raw if raw and encode_segment(raw) == name else None
    except (UnicodeDecodeError, ValueError):
        return None


def _jsonl_artifacts(store: CoordinatedPersistence) -> list[str]:
    """Every ``<project>/<session>/session<suffix>`` under a JSONL root, in upstream's (byte) order."""
    backend = store.backend
    root = getattr(backend, "root", None)
    suffix = getattr(backend, "suffix", None)
    if backend.kind != "jsonl" or root is None or suffix is None or not os.path.isdir(root):
        return []
    out = []
    for project in sorted(os.scandir(root), key=lambda e: os.fsencode(e.name)):
        if not project.is_dir(follow_symlinks=False):
            continue
        for d in sorted(os.scandir(project.path), key=lambda e: os.fsencode(e.name)):
            path = os.path.join(d.path, "session" + suffix)
            if d.is_dir(follow_symlinks=False) and os.path.isfile(path):
                out.append(path)
    return out


def _dir_id(path: str) -> str:
    name = os.path.basename(os.path.dirname(path))
    return decode_segment(name) or name


async def _row_for_unlisted(store: CoordinatedPersistence, path: str) -> VerifyRow:
    """A transcript ``list()`` skipped or choked on: always corrupt, with the engine's reason when it has one."""
    sid = _dir_id(path)
    diag = await store.diagnose(sid)
    reason = _UNLISTABLE
    if diag.status not in ("ok", "missing", "open-turn", "torn-tail"):
        reason += f" ({diag.reason})"
    return VerifyRow(sid, "corrupt", "corrupt", reason, path)


async def verify_root(store: CoordinatedPersistence) -> tuple[list[VerifyRow], str | None]:
    """(rows, root-level error). A root-level error (foreign layout) makes the whole root fail.

    One damaged JSONL header (a corrupt header frame, an identity mismatch) makes upstream's ``list()``
    throw for the whole root; verify then walks the session directories itself so every other session
    still gets its own verdict and the damaged one is named.  Writes nothing (SQLite is read through a
    read-only twin).
    """
    async with read_only_view(store) as view:
        return await _verify(view)


async def _verify(store: CoordinatedPersistence) -> tuple[list[VerifyRow], str | None]:
    try:
        headers = await store.list()
    except SessionLayoutError as err:
        return [], f"{upstream_class_of(err)}: {err}"
    except Exception as err:
        if store.backend.kind != "jsonl":
            return [], f"{upstream_class_of(err)}: {err}"
        return await _verify_by_walk(store, err)
    rows: list[VerifyRow] = []
    listed_paths: set[str] = set()
    for header in headers:
        diag = await store.diagnose(header.id)
        loc = store.locate(header)
        path = loc.path if loc is not None else None
        if path is not None:
            listed_paths.add(path)
        rows.append(VerifyRow(header.id, _VERDICT.get(diag.status, "corrupt"), diag.status, diag.reason, path))
    for path in _jsonl_artifacts(store):
        if path not in listed_paths:
            rows.append(await _row_for_unlisted(store, path))
    return rows, None


async def _verify_by_walk(store: CoordinatedPersistence, list_error: BaseException) -> tuple[list[VerifyRow], str | None]:
    rows: list[VerifyRow] = []
    for path in _jsonl_artifacts(store):
        sid = _dir_id(path)
        diag = await store.diagnose(sid)
        if diag.status == "missing":
            rows.append(await _row_for_unlisted(store, path))
        else:
            rows.append(VerifyRow(sid, _VERDICT.get(diag.status, "corrupt"), diag.status, diag.reason, path))
    if all(r.verdict != "corrupt" for r in rows):
        # Nothing explains the failure session by session: report it for the root.
        return rows, f"{upstream_class_of(list_error)}: {list_error}"
    return rows, None

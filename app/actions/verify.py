"""fsck for a session root: every session classified ok / repairable / corrupt / unsupported."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from persistence import CoordinatedPersistence
from persistence.errors import upstream_class_of


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


def _unlisted_jsonl_artifacts(store: CoordinatedPersistence, listed_paths: set[str]) -> list[str]:
    """Transcripts whose header ``list()`` skipped (unreadable or not a header): they are corrupt, not absent."""
    backend = store.backend
    root = getattr(backend, "root", None)
    suffix = getattr(backend, "suffix", None)
    if backend.kind != "jsonl" or root is None or not os.path.isdir(root):
        return []
    out = []
    for project in sorted(os.scandir(root), key=lambda e: e.name):
        if not project.is_dir(follow_symlinks=False):
            continue
        for d in sorted(os.scandir(project.path), key=lambda e: e.name):
            path = os.path.join(d.path, "session" + suffix)
            if d.is_dir(follow_symlinks=False) and os.path.isfile(path) and path not in listed_paths:
                out.append(path)
    return out


async def verify_root(store: CoordinatedPersistence) -> tuple[list[VerifyRow], str | None]:
    """(rows, root-level error). A root-level error (foreign layout) makes the whole root fail."""
    try:
        headers = await store.list()
    except Exception as err:
        return [], f"{upstream_class_of(err)}: {err}"
    rows: list[VerifyRow] = []
    listed_paths: set[str] = set()
    for header in headers:
        diag = await store.diagnose(header.id)
        loc = store.locate(header)
        path = loc.path if loc is not None else None
        if path is not None:
            listed_paths.add(path)
        rows.append(VerifyRow(header.id, _VERDICT.get(diag.status, "corrupt"), diag.status, diag.reason, path))
    for path in _unlisted_jsonl_artifacts(store, listed_paths):
        rows.append(VerifyRow(os.path.basename(os.path.dirname(path)), "corrupt", "corrupt",
                              "the first line is not a readable session header, so the session cannot be listed", path))
    return rows, None

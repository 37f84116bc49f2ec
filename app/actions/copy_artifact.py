"""Copy a session's raw artifact elsewhere (a corrupt log's bytes, for analysis or a bug report).

The pair: ``plan_copy`` (which file, and the name a save dialog offers) and ``execute_copy`` (the
copy; the source is only read, the destination appears complete or not at all, see
``repair.export_artifact``).  ``execute_copy`` blocks on I/O: callers run it off their event loop.
May import the standard library and ``app.actions``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from app.actions.artifacts import ArtifactRef
from app.actions.repair import RepairRefused, export_artifact

NO_ARTIFACT = "this session has no artifact file to copy"


@dataclass(frozen=True, slots=True)
class CopyPlan:
    session_id: str
    artifact: ArtifactRef

    @property
    def suggested_name(self) -> str:
        """``<id>-<artifact file name>``: a copy of several sessions' ``session.jsonl`` stays apart."""
        return f"{self.session_id}-{os.path.basename(self.artifact.path)}"


def plan_copy(session_id: str, artifact: ArtifactRef | None) -> CopyPlan:
    """The copy of ``artifact``; refused (``RepairRefused``) when the session has no artifact file."""
    if artifact is None:
        raise RepairRefused(NO_ARTIFACT)
    return CopyPlan(session_id, artifact)


def execute_copy(plan: CopyPlan, dest: str) -> str:
    """Copy the artifact to ``dest``; returns the absolute destination."""
    return export_artifact(plan.artifact, dest)

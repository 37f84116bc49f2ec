"""What a verb hands to its renderers when the engine's own value does not say everything.

Most verbs return an engine value (headers, an inspection, a location) or an action's result; these
few add what the text needs besides it.  May import ``app.actions`` and the engine (values only).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.actions.backups import BackupInfo
from app.actions.liveness import LivenessVerdict
from app.actions.repair import RepairResult
from app.actions.verify import VerifyRow
from persistence import SessionInspection


@dataclass(frozen=True, slots=True)
class Loaded:
    """``load``: the inspection, and whether loading committed a repair (the stored revision moved)."""

    inspection: SessionInspection
    repaired: bool


@dataclass(frozen=True, slots=True)
class RepairReport:
    """``repair``: the result, and for ``--dry-run`` the liveness verdict a real run would meet."""

    result: RepairResult
    dry_run: bool
    liveness: LivenessVerdict | None


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """``verify``: every session's row, a root-level error, and backups holding records a log lacks."""

    rows: list[VerifyRow]
    root_error: str | None
    lost: list[tuple[str, BackupInfo]]

    @property
    def ok(self) -> bool:
        return self.root_error is None and all(r.verdict == "ok" for r in self.rows) and not self.lost

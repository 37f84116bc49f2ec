"""``sessionscope diff PATH_A [PATH_B] [--id-a ID] [--id-b ID]``: any two sessions compared.

The syntax: each side is a source (a JSONL root, a SQLite store, a lone transcript, a support bundle, a
case folder: ``app.sources``) and, when that source holds more than one session, an id.  Ids are
options, not positionals, so a path is never mistaken for an id (``diff a.jsonl b.jsonl`` and
``diff ROOT ROOT --id-a X --id-b Y`` read the same way).  ``PATH_B`` left out is ``PATH_A``: two
sessions of one root are ``diff ROOT --id-a X --id-b Y``.  A side whose id is left out is the only
session its source holds (else a usage error listing the ids).

Both sides are read, never written (``read_from``: the stored events, no crash closers), and
compared by ``app.compare``; text output is the comparison for a person, ``--json`` its value.
Exit code 0 when the two sessions run the same turns, 1 when they differ (``diff``'s convention).

May import ``app.compare``, the standard library and the public engine.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from app.compare import SessionComparison, compare_sessions, comparison_json, comparison_text, read_session
from persistence import CoordinatedPersistence


@dataclass(frozen=True, slots=True)
class DiffReport:
    comparison: SessionComparison

    @property
    def same(self) -> bool:
        return self.comparison.first_difference is None


def side_label(path: str, session_id: str, given: str | None) -> str:
    return f"{path} {session_id}" if given is not None else f"{path} ({session_id})"


async def diff(_store: CoordinatedPersistence, args: argparse.Namespace) -> DiffReport:
    # Both sides are opened here from their paths, as sources: the verb table's store is A's root
    # opened as a store, which a lone transcript or a bundle is not.
    path_a = args.root
    path_b = args.path_b or args.root
    a_id, a_log = await read_session(path_a, args.id_a)
    b_id, b_log = await read_session(path_b, args.id_b)
    comparison = compare_sessions(
        a_log,
        b_log,
        a_id=a_id,
        b_id=b_id,
        a_label=side_label(path_a, a_id, args.id_a),
        b_label=side_label(path_b, b_id, args.id_b),
    )
    return DiffReport(comparison)


def diff_text(report: DiffReport, _args: argparse.Namespace) -> str:
    return comparison_text(report.comparison)


def diff_json(report: DiffReport) -> Any:
    return comparison_json(report.comparison)


__all__ = ["DiffReport", "diff", "diff_json", "diff_text"]

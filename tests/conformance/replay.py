"""Replays an upstream fixture's recorded calls against our engine and reports differences."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from persistence import CoordinatedPersistence, JsonlSessionPersistence
from persistence.errors import upstream_class_of

SHARED = Path(__file__).resolve().parents[3] / "shared"
FIXTURES = SHARED / "fixtures" / "upstream"


def fixtures_available() -> bool:
    return FIXTURES.is_dir()


def scenario_dirs(backend_prefix: str) -> list[Path]:
    if not fixtures_available():
        return []
    return sorted(p.parent for p in FIXTURES.glob(f"{backend_prefix}*/**/expected.json"))


def copy_private(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True)
    for dirpath, _dirnames, filenames in os.walk(dst):
        os.chmod(dirpath, 0o700)
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, stat.S_IRUSR | stat.S_IWUSR)


def make_backend(expected: dict[str, Any], root: Path) -> CoordinatedPersistence:
    cfg = expected["config"]
    if expected["backend"].startswith("jsonl"):
        return JsonlSessionPersistence(root, compression=cfg.get("compression", "zstd"), pack_chunks=cfg.get("packChunks", True))
    from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

    return SqliteSessionPersistence(root / "sessions.sqlite")


def _subst(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("<ROOT>", root)
    if isinstance(value, list):
        return [_subst(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _subst(v, root) for k, v in value.items()}
    return value


def _expand(value: Any, expected: dict[str, Any], root: str | None = None, rooted_logs: dict[str, bool] | None = None) -> Any:
    """Resolve ``$log``/``$raw`` references; with ``root``, also substitute ``<ROOT>`` inside them.

    (Call results are small and are substituted before expansion; the big logs are only walked
    when they actually contain the placeholder.)
    """
    if isinstance(value, dict):
        if "$log" in value:
            events = expected["logs"][value["$log"]][value["from"] : value["to"]]
            if root is not None and rooted_logs is not None:
                name = value["$log"]
                if name not in rooted_logs:
                    rooted_logs[name] = "<ROOT>" in json.dumps(expected["logs"][name])
                if rooted_logs[name]:
                    events = _subst(events, root)
            return events
        if "$raw" in value:
            raw = expected["rawContents"][value["$raw"]]
            return raw.replace("<ROOT>", root) if root is not None else raw
        return {k: _expand(v, expected, root, rooted_logs) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, expected, root, rooted_logs) for v in value]
    return value


def _meta_for(expected: dict[str, Any], session_id: str) -> dict[str, Any]:
    for s in expected.get("sessions", []):
        if s["id"] == session_id:
            meta = {"version": 0, "id": s["id"], "createdAt": s.get("createdAt", 0)}
            if s.get("cwd") is not None:
                meta["cwd"] = s["cwd"]
            return meta
    return {"version": 0, "id": session_id, "createdAt": 0}


async def _call(store: CoordinatedPersistence, expected: dict[str, Any], op: str, args: list[Any]) -> Any:
    if op == "locate":
        loc = store.locate(args[0] if isinstance(args[0], dict) else _meta_for(expected, args[0]))
        return None if loc is None else loc.to_json()
    if op == "list":
        return [h.to_json() for h in await store.list()]
    if op == "listSnapshots":
        return [s.to_json() for s in await store.list_snapshots()]
    if op == "inspect":
        return (await store.inspect(args[0])).to_json()
    if op == "load":
        return (await store.load(args[0])).to_json()
    if op == "readFrom":
        return (await store.read_from(args[0], args[1])).to_json()
    if op == "readRaw":
        raw = await store.read_raw(args[0])
        return None if raw is None else raw.to_json()
    raise ValueError(f"unknown op {op}")


def _strip_revisions(value: Any) -> Any:
    if isinstance(value, list):
        return [_strip_revisions(v) for v in value]
    if isinstance(value, dict):
        return {k: ("<rev>" if k == "revision" else _strip_revisions(v)) for k, v in value.items()}
    return value


def replay_calls(expected: dict[str, Any], root: Path, calls: list[dict[str, Any]]) -> list[str]:
    """Run ``calls`` in order against one fresh backend over ``root``; return mismatch descriptions."""
    problems: list[str] = []
    root_s = str(root)
    rooted_logs: dict[str, bool] = {}

    async def run() -> None:
        store = make_backend(expected, root)
        for index, call in enumerate(calls):
            op, args = call["op"], call.get("args", [])
            label = f"call {index} {op}{json.dumps(args)[:80]}"
            try:
                got = await _call(store, expected, op, args)
            except Exception as err:
                if call["ok"]:
                    problems.append(f"{label}: raised {type(err).__name__}: {err}")
                    continue
                want = _subst(call["error"], root_s)
                if upstream_class_of(err) != want["class"]:
                    problems.append(f"{label}: class {upstream_class_of(err)} != {want['class']} ({err})")
                if str(err) != want["message"]:
                    problems.append(f"{label}: message\n   got  {err}\n   want {want['message']}")
                continue
            if not call["ok"]:
                problems.append(f"{label}: succeeded but upstream failed with {call['error']['message']}")
                continue
            want = _expand(_subst(call["result"], root_s), expected, root_s, rooted_logs)
            note = call.get("note", "")
            got_cmp = got
            if op == "listSnapshots":
                # Revisions are opaque and machine specific; only listSnapshots results carry them.
                want = _strip_revisions(want)
                if note.startswith("revision of ") and isinstance(got, list):
                    # The recorder kept only the session the note names.
                    wanted_ids = {row["header"]["id"] for row in want}
                    got = [row for row in got if row["header"]["id"] in wanted_ids]
                got_cmp = _strip_revisions(got)
            if got_cmp != want:
                problems.append(f"{label}: result differs: {_first_difference(got_cmp, want)}")
        await store.close()

    asyncio.run(run())
    return problems


def _first_difference(got: Any, want: Any, path: str = "$") -> str:
    if type(got) is not type(want):
        return f"{path}: type {type(got).__name__} != {type(want).__name__}: {str(got)[:200]} vs {str(want)[:200]}"
    if isinstance(got, dict):
        for k in set(got) | set(want):
            if k not in got or k not in want:
                return f"{path}.{k}: present only in {'got' if k in got else 'want'}"
            if got[k] != want[k]:
                return _first_difference(got[k], want[k], f"{path}.{k}")
    if isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: length {len(got)} != {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path}: {str(got)[:300]} != {str(want)[:300]}"

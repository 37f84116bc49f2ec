"""The demo root: about thirty sessions written by the engine itself, plus the damage a viewer must show.

Sessions go through ``create``/``append`` (one flush per turn), so chunk runs
are packed, frames are per batch and headers are what the engine writes.  A few are then damaged on
purpose the way the upstream fixtures were (a crash mid-turn, a torn last frame, a bad frame in the
middle, an unreadable header, a newer format version).  Built once, into a temporary directory that is
renamed into place, so a half-built demo is never shown.

Qt-free (the window, the tests and the benchmarks all build it).  May import the engine and
``app.paths``; never ``app.gui``.  The sessions' content is ``app.demo_sessions``; the damage is made by the
engine's ``persistence.testing`` (never frames by hand).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import tempfile
from typing import Any

from app.demo_sessions import BASE_TIME, PROJECTS, DemoLog, add_answer_step, add_tool_step, add_turn, new_session_id
from app.paths import DEMO_DIR_NAME, demo_root_path
from persistence import EventType, JsonlSessionPersistence, testing


async def _write(store: JsonlSessionPersistence, meta: dict[str, Any], log: DemoLog, *, per_turn: bool = True) -> None:
    await store.create(meta)
    # One flush per turn keeps frames realistic without thousands of tiny batches.
    start = 0
    for i, ev in enumerate(log.events):
        if (per_turn and ev["type"] == EventType.TURN_END) or i == len(log.events) - 1:
            await store.append(meta["id"], log.events[start : i + 1])
            start = i + 1


async def build_demo(root: str) -> dict[str, str]:
    """Write the demo sessions under ``root``; returns {role: session id} for the special ones."""
    rnd = random.Random(20260105)
    store = JsonlSessionPersistence(root, compression="zstd")
    special: dict[str, str] = {}
    paths: dict[str, tuple[dict[str, Any], DemoLog]] = {}
    t = BASE_TIME - 40 * 86_400_000
    try:
        for cwd, cfg in PROJECTS.items():
            count = {"/home/ana/projects/webshop": 9, "/home/ana/projects/parser-lib": 7, "/srv/infra/terraform": 4}.get(cwd, 2)
            for k in range(count):
                t += rnd.randint(2, 30) * 3_600_000
                sid = new_session_id(rnd)
                log = DemoLog(t, rnd)
                prompts = list(cfg["prompts"])
                rnd.shuffle(prompts)
                n_turns = rnd.randint(1, 4)
                for n in range(n_turns):
                    add_turn(
                        log,
                        cfg,
                        prompts[n % len(prompts)],
                        title=_title(prompts[0]) if n == 0 else None,
                        header="initial" if n == 0 else None,
                        tools=rnd.randint(0, 3),
                        error=rnd.random() < 0.25,
                        retry=rnd.random() < 0.1,
                        cancelled=(k == 3 and n == n_turns - 1),
                    )
                meta = {"id": sid, "createdAt": t, "cwd": cwd, "agentPreset": "coder"}
                if cwd.startswith("/home/ana/notes") and k == 1:
                    del meta["cwd"]  # a session started outside any project: stored under _no-cwd
                await _write(store, meta, log)
                paths[sid] = (meta, log)
                if cwd.endswith("webshop") and "fork-parent" not in special and n_turns >= 2:
                    special["fork-parent"] = sid
                if cwd.endswith("parser-lib") and "subagent-parent" not in special:
                    special["subagent-parent"] = sid

        webshop = PROJECTS["/home/ana/projects/webshop"]
        parser = PROJECTS["/home/ana/projects/parser-lib"]

        # A long session: 60 turns, so the timeline loads older turns on demand.
        t += 3_600_000
        long_id = "long-refactor-" + new_session_id(rnd)[:8]
        log = DemoLog(t, rnd)
        for n in range(60):
            add_turn(
                log,
                webshop,
                f"Refactor step {n + 1}: {rnd.choice(webshop['prompts'])}",
                title="Long refactor of the checkout module" if n == 0 else None,
                header="initial" if n == 0 else None,
                tools=rnd.randint(1, 3),
                error=rnd.random() < 0.15,
            )
        await _write(store, {"id": long_id, "createdAt": t, "cwd": "/home/ana/projects/webshop"}, log)
        special["long"] = long_id

        # A fork: seed = the parent's events through turn 1's turn/end, then session/end-seed (session-model §5.2).
        pmeta, plog = paths[special["fork-parent"]]
        cut = next(i for i, e in enumerate(plog.events) if e["type"] == EventType.TURN_END) + 1
        fork_id = new_session_id(rnd)
        flog = DemoLog(plog.events[cut - 1]["time"] + 3_600_000, rnd)
        flog.events = json.loads(json.dumps(plog.events[:cut]))
        flog.turn = 1
        flog.add(EventType.SESSION_END_SEED, {})
        add_turn(
            flog,
            webshop,
            "Try a different approach: keep `qty` and add a `quantity` getter instead.",
            title="Alternative: quantity getter",
            header="resume",
            tools=1,
        )
        await _write(
            store,
            {"id": fork_id, "createdAt": flog.t, "cwd": pmeta["cwd"], "parentSession": pmeta["id"], "seedLength": cut},
            flog,
            per_turn=False,
        )
        special["fork"] = fork_id

        # A subagent child: seed through the parent's last turn/end, origin subagent, depth 1 (§5.3).
        pmeta, plog = paths[special["subagent-parent"]]
        cut = max(i for i, e in enumerate(plog.events) if e["type"] == EventType.TURN_END) + 1
        sub_id = f"{pmeta['id']}.sub-1"
        slog = DemoLog(plog.events[cut - 1]["time"] + 60_000, rnd)
        slog.events = json.loads(json.dumps(plog.events[:cut]))
        slog.turn = sum(1 for e in slog.events if e["type"] == EventType.TURN_START)
        slog.add(EventType.SESSION_END_SEED, {})
        slog.turn += 1
        turn = slog.turn
        slog.add(EventType.TURN_START, {"turn": turn})
        slog.add(
            EventType.SUBAGENT_DESCRIPTOR,
            {"version": 1, "mode": "one-shot", "parentSessionId": pmeta["id"], "preset": "explorer"},
        )
        add_tool_step(
            slog,
            turn,
            1,
            parser,
            prompt="Subtask: list every caller of parse() and report which ones rely on the None return.",
            header="resume",
            calls=2,
        )
        add_answer_step(slog, turn, 2, parser)
        slog.add(EventType.TURN_END, {"turn": turn, "reason": {"kind": "completed"}})
        await _write(
            store,
            {
                "id": sub_id,
                "createdAt": slog.t,
                "cwd": pmeta["cwd"],
                "parentSession": pmeta["id"],
                "seedLength": cut,
                "origin": "subagent",
                "delegationDepth": 1,
                "agentPreset": "explorer",
            },
            slog,
            per_turn=False,
        )
        special["subagent"] = sub_id

        # A crashed session: turn 2 asked for two tools, recorded one call, then the process died.
        t += 7_200_000
        crash_id = "crashed-" + new_session_id(rnd)[:8]
        clog = DemoLog(t, rnd)
        add_turn(
            clog,
            parser,
            "Run the benchmark suite and summarise the results.",
            title="Benchmark summary",
            header="initial",
            tools=1,
        )
        clog.turn += 1
        clog.add(EventType.TURN_START, {"turn": clog.turn}, dt=60_000)
        add_tool_step(
            clog, clog.turn, 1, parser, prompt="Now run the migration against staging.", calls=2, recorded=1, results=False
        )
        await _write(store, {"id": crash_id, "createdAt": t, "cwd": "/home/ana/projects/parser-lib"}, clog)
        special["crashed"] = crash_id

        # Torn tail / corrupt / unreadable header / newer version: written whole, then damaged on disk.
        for role, cwd, title in (
            ("torn", "/srv/infra/terraform", "Plan staging (torn)"),
            ("corrupt", "/srv/infra/terraform", "Bucket policies (corrupt frame)"),
            ("bad-header", "/home/ana/projects/webshop", "Header damaged"),
            ("newer", "/home/ana/projects/parser-lib", "Written by a newer harness"),
        ):
            t += 3_600_000
            sid = f"{role}-{new_session_id(rnd)[:8]}"
            dlog = DemoLog(t, rnd)
            cfg = PROJECTS[cwd]
            for n in range(3):
                add_turn(
                    dlog,
                    cfg,
                    cfg["prompts"][n % len(cfg["prompts"])],
                    title=title if n == 0 else None,
                    header="initial" if n == 0 else None,
                    tools=2,
                )
            await _write(store, {"id": sid, "createdAt": t, "cwd": cwd}, dlog)
            special[role] = sid
    finally:
        await store.close()

    _damage(root, special)
    _touch_like_activity(root)
    return special


def _title(prompt: str) -> str:
    words = prompt.rstrip(".?!").split()
    return " ".join(words[:7]) + ("…" if len(words) > 7 else "")


def _artifact(root: str, sid: str) -> str:
    for project in os.listdir(root):
        p = os.path.join(root, project, sid, "session.jsonl.zstd")
        if os.path.exists(p):
            return p
    raise FileNotFoundError(sid)


def _damage(root: str, special: dict[str, str]) -> None:
    """The damage the demo shows, made by the engine's ``persistence.testing`` (never frames by hand)."""
    testing.tear_tail(_artifact(root, special["torn"]))  # a crash mid-write: the last flush cut in half
    testing.corrupt_middle(_artifact(root, special["corrupt"]))  # a flipped byte: a middle frame's checksum fails
    # An unreadable header: the engine's list() skips such a log silently; the app must still show it.
    testing.break_header(_artifact(root, special["bad-header"]))
    # A newer format version, like the upstream future-version fixture.
    testing.rewrite_header(_artifact(root, special["newer"]), version=1)


def _touch_like_activity(root: str) -> None:
    """Give each artifact the mtime of its last event, so "Modified" sorts like real activity."""
    for project in os.listdir(root):
        pdir = os.path.join(root, project)
        for sdir in os.listdir(pdir):
            path = os.path.join(pdir, sdir, "session.jsonl.zstd")
            try:
                last = testing.last_record(path) or {}
                ms = last.get("time") or last.get("time0")
            except Exception:
                continue
            if isinstance(ms, int):
                os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def build_demo_root(final: str) -> str:
    """Build into a temporary sibling and rename it into place (so a half-built demo never shows)."""
    if os.path.isdir(final):
        return final
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".demo-build-", dir=parent)
    root = os.path.join(tmp, "root")
    try:
        asyncio.run(build_demo(root))
        try:
            os.rename(root, final)
        except OSError:
            if not os.path.isdir(final):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def reset_demo_root(final: str) -> str:
    """Build a fresh demo root and swap it in place of ``final`` (Reset demo root).

    The new root is built completely first (as ``build_demo_root`` does), then the old one is renamed
    aside and the new one renamed in, so the path never holds a half-built demo; the old one is
    deleted last.  Refuses any folder not named ``DEMO_DIR_NAME``: this deletes a whole tree, and
    must never be pointed at a user's real session root.
    """
    if os.path.basename(os.path.normpath(final)) != DEMO_DIR_NAME:
        raise ValueError(f"not a demo root (its folder is not named {DEMO_DIR_NAME!r}): {final}")
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".demo-build-", dir=parent)
    root = os.path.join(tmp, "root")
    old = os.path.join(tmp, "old")
    try:
        asyncio.run(build_demo(root))
        if os.path.isdir(final):
            os.rename(final, old)
        try:
            os.rename(root, final)
        except OSError:
            if os.path.isdir(old) and not os.path.exists(final):
                os.rename(old, final)  # the old demo back, rather than none
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


async def rebuild_demo_root(path: str) -> str:
    """``reset_demo_root`` on the default executor (its own event loop); waits for it even when cancelled."""
    fut = asyncio.get_running_loop().run_in_executor(None, reset_demo_root, path)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await fut
        raise


async def ensure_demo_root(path: str) -> str:
    """The demo root, built (once, on the default executor, in its own event loop) when missing.

    Cancelling the awaiting task waits for the build to end (it cannot stop half-way), so its
    temporary folder is gone before the caller's loop winds down.
    """
    fut = asyncio.get_running_loop().run_in_executor(None, build_demo_root, path)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await fut
        raise


__all__ = [
    "DEMO_DIR_NAME",
    "build_demo",
    "build_demo_root",
    "demo_root_path",
    "ensure_demo_root",
    "rebuild_demo_root",
    "reset_demo_root",
]


if __name__ == "__main__":  # pragma: no cover - manual helper: python -m app.demo DIR
    import sys

    print(build_demo_root(os.path.abspath(sys.argv[1])))

"""A fork made in SessionScope gets a title of its own: a ``session/title`` event in the new session only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import insightkit as ik
import pytest

from app.actions import fork
from app.actions.fork import UNTITLED, fork_title
from app.records import latest_title
from persistence import SessionArgumentError, open_store


def test_fork_title_format() -> None:
    assert fork_title("Fix the build", 3) == "Fix the build (fork after turn 3)"
    assert fork_title("  two\nlines ", 1) == "two lines (fork after turn 1)"
    assert fork_title(None, 2) == f"{UNTITLED} (fork after turn 2)" == fork_title("   ", 2)


def _parent(tmp: Path, backend: str, title: str | None) -> str:
    path = ik.store_path(tmp, backend)
    ik.run(ik.write_sessions(path, backend, {"p": (ik.rich_session(31, 3, title=title), {})}))
    return path


async def _fork(path: str, backend: str, turn: int, title: str | None, new_id: str = "child") -> tuple[Any, Any]:
    store = open_store(path, backend)
    try:
        plan = await fork.plan_fork(store, "p", turn)
        return plan, await fork.execute_fork(store, plan, new_id, title=title)
    finally:
        await store.close()


async def _events(path: str, backend: str, sid: str) -> list[dict[str, Any]]:
    store = ik.reader(path, backend)
    try:
        return (await store.inspect(sid)).events.to_json()
    finally:
        await store.close()


@pytest.mark.parametrize("backend", ik.BACKENDS)
def test_the_title_is_written_to_the_new_session_only(tmp_path: Path, backend: str) -> None:
    path = _parent(tmp_path, backend, "Parent title")
    before = ik.tree_digest(path) if backend != "sqlite" else None
    parent_events = ik.run(_events(path, backend, "p"))
    plan, result = ik.run(_fork(path, backend, 2, "My branch\n"))
    assert plan.parent_title == "Parent title" and plan.default_title == "Parent title (fork after turn 2)"
    assert result.title == "My branch" and result.to_json()["title"] == "My branch"
    child = ik.run(_events(path, backend, "child"))
    seed = result.header["seedLength"]
    assert child[:seed] == parent_events[:seed]  # the seed is the parent's prefix, byte for byte
    assert [e["type"] for e in child[seed:]] == ["session/end-seed", "session/title"]
    assert child[-1]["data"] == {"title": "My branch", "messageSeqs": [], "source": {"kind": "user"}}
    assert latest_title(child) == "My branch" and result.events == len(child)
    assert ik.run(_events(path, backend, "p")) == parent_events  # the parent gains nothing
    if before is not None:
        after = ik.tree_digest(path)
        assert {k: v for k, v in after.items() if "/p/" in f"/{k}"} == {k: v for k, v in before.items() if "/p/" in f"/{k}"}


def test_without_a_title_nothing_changes(tmp_path: Path) -> None:
    path = _parent(tmp_path, "jsonl-none", None)
    plan, result = ik.run(_fork(path, "jsonl-none", 1, None))
    assert plan.parent_title is None and plan.default_title == f"{UNTITLED} (fork after turn 1)"
    assert result.title is None and "title" not in result.to_json()
    child = ik.run(_events(path, "jsonl-none", "child"))
    assert child[-1]["type"] == "session/end-seed"


def test_a_blank_title_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = _parent(tmp_path, "jsonl-none", "T")
    before = ik.tree_digest(path)
    with pytest.raises(SessionArgumentError, match="must not be empty"):
        ik.run(_fork(path, "jsonl-none", 1, " \n\t "))
    assert ik.tree_digest(path) == before


def test_fork_after_turn_passes_the_title(tmp_path: Path) -> None:
    path = _parent(tmp_path, "jsonl-zstd", "T")

    async def go() -> dict[str, Any]:
        store = open_store(path, "jsonl-zstd")
        try:
            return await fork.fork_after_turn(store, "p", None, "kid", title="Named")
        finally:
            await store.close()

    out = ik.run(go())
    assert out["title"] == "Named" and out["afterTurn"] == 3
    assert latest_title(ik.run(_events(path, "jsonl-zstd", "kid"))) == "Named"

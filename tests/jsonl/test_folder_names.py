"""``FolderNames``: a kept project listing only ever says "absent" when the folder provably holds nothing.

``find_log`` asks it before probing each project folder (issue 25: 60 failed ``lstat`` calls a lookup
on a 20-project root).  These tests pin when a listing is kept (only after ``LIST_AFTER`` lookups,
only when the folder's mtime is clearly older than the listing), that every change a lookup must see
is seen (a new session folder, a flat artifact, a removed folder, a renamed one), that names a
case-insensitive or normalizing file system would find are never claimed absent, and that
``find_log`` answers exactly as a fresh instance does after each change.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from persistence import JsonlSessionPersistence, SessionLayoutError
from persistence.jsonl import folder_names
from persistence.jsonl.folder_names import LIST_AFTER, RACY_NS, FolderNames, loosened
from persistence.jsonl.paths import ZSTD_SUFFIX, encode_segment

pytestmark = pytest.mark.skipif(not folder_names.ENABLED, reason="kept listings are POSIX-only (8.3 names on Windows)")

_aged = [0]


def _age(folder: Path) -> None:
    """Give ``folder`` an mtime well outside the racy window, a different one each time (putting back
    an mtime a kept listing saw is the one change it cannot tell; the module docstring says so)."""
    _aged[0] += 1
    old = time.time_ns() - 3600 * 10**9 + _aged[0]
    os.utime(folder, ns=(old, old))


def _names(*names: str) -> tuple[str, ...]:
    return loosened(names)


def _warm(fn: FolderNames, project: Path, names: tuple[str, ...]) -> None:
    for _ in range(LIST_AFTER):
        assert not fn.surely_absent(str(project), names)


def find_logs(store: JsonlSessionPersistence, ids: list[str]) -> list[object]:
    """Each id's ``find_log`` answer, or the name of the error it raised."""
    out: list[object] = []
    for sid in ids:
        try:
            out.append(store.backend.find_log(sid))
        except SessionLayoutError as err:
            out.append(type(err).__name__)
    return out


def test_a_listing_is_kept_only_after_repeated_lookups_of_an_old_folder(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "s-1").mkdir(parents=True)
    _age(project)
    fn = FolderNames()
    absent = _names("s-2", "s-2.jsonl.zstd", "s-2.jsonl")
    for _ in range(LIST_AFTER - 1):
        assert not fn.surely_absent(str(project), absent)  # not listed yet: the caller probes
    assert not fn.surely_absent(str(project), absent)  # this lookup lists it
    assert fn.surely_absent(str(project), absent)
    assert not fn.surely_absent(str(project), _names("s-1"))  # present: the probe decides


def test_a_folder_changed_just_before_its_listing_is_not_kept(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    now = time.time_ns() - RACY_NS // 2
    os.utime(project, ns=(now, now))
    fn = FolderNames()
    absent = _names("s-9")
    _warm(fn, project, absent)
    assert not fn.surely_absent(str(project), absent)


@pytest.mark.parametrize("change", ["session folder", "flat artifact", "removed", "renamed"])
def test_every_change_to_a_kept_folder_is_seen(tmp_path: Path, change: str) -> None:
    project = tmp_path / "p"
    (project / "old").mkdir(parents=True)
    _age(project)
    fn = FolderNames()
    target = {"session folder": "new", "flat artifact": "new", "removed": "old", "renamed": "new"}[change]
    asked = _names(target, target + ".jsonl.zstd", target + ".jsonl")
    _warm(fn, project, _names("other"))
    assert fn.surely_absent(str(project), _names("other"))
    if change == "session folder":
        (project / "new").mkdir()
    elif change == "flat artifact":
        (project / "new.jsonl.zstd").write_bytes(b"")
    elif change == "removed":
        (project / "old").rmdir()
        (project / "old").mkdir()  # back again, but it was gone: the folder still changed
    else:
        (project / "old").rename(project / "new")
    if change == "session folder":
        _age(project)  # even with the old mtime put back: the link count moved on
    assert not fn.surely_absent(str(project), asked)


@pytest.mark.parametrize("on_disk, asked", [("Session-A", "session-a"), ("caf\u00e9", "cafe\u0301")])
def test_a_name_the_file_system_might_equate_is_never_claimed_absent(tmp_path: Path, on_disk: str, asked: str) -> None:
    project = tmp_path / "p"
    (project / on_disk).mkdir(parents=True)
    _age(project)
    fn = FolderNames()
    _warm(fn, project, _names("x"))
    assert fn.surely_absent(str(project), _names("x"))
    assert not fn.surely_absent(str(project), _names(asked))


def test_find_log_answers_as_a_fresh_instance_after_each_change(tmp_path: Path) -> None:
    root = tmp_path / "root"

    async def create(store: JsonlSessionPersistence, sid: str) -> None:
        await store.create(sk.meta(sid, sk.WORK))
        await store.append(sid, sk.one_turn_log())  # the transcript is written with its first events

    store = JsonlSessionPersistence(root)
    for i in range(4):
        sk.run(create(store, f"s-{i}"))
    (project,) = [p for p in root.iterdir() if p.is_dir()]
    ids = [f"s-{i}" for i in range(6)]

    def check() -> None:
        # First with the listing kept before the change (the folder's mtime is what the change made it),
        # then with a listing kept after it.
        assert find_logs(store, ids) == find_logs(JsonlSessionPersistence(root), ids)
        _age(project)
        for _ in range(LIST_AFTER):
            find_logs(store, ids)
        assert find_logs(store, ids) == find_logs(JsonlSessionPersistence(root), ids)

    check()
    sk.run(create(store, "s-4"))
    check()
    os.rename(project / encode_segment("s-1"), tmp_path / "moved-away")
    check()
    (project / (encode_segment("s-5") + ZSTD_SUFFIX)).write_bytes(b"")  # a flat artifact: refused by name
    check()
    assert "SessionLayoutError" in find_logs(store, ids)
    sk.run(store.close())


# ---------------------------------------------------------------- random changes


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add folder", "remove folder", "rename folder", "add flat", "remove flat", "age"]),
        st.integers(0, 2),  # project
        st.integers(0, 5),  # session number
        st.booleans(),  # age the project afterwards (a kept listing may then be used)
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=examples(60), deadline=None)
@given(ops=OPS)
def test_after_random_changes_lookups_equal_a_fresh_instance(tmp_path_factory: pytest.TempPathFactory, ops: list[Any]) -> None:
    """Folders and flat artifacts appear, vanish and move between lookups, with folders aged (so kept
    listings are used) or not; every lookup equals a fresh instance's, which keeps nothing."""
    root = tmp_path_factory.mktemp("root")
    projects = [root / f"project-{p}" for p in range(3)]
    for project in projects:
        project.mkdir()
        _age(project)
    ids = [f"s-{i}" for i in range(6)]
    kept = JsonlSessionPersistence(root)

    for op, p, i, age in ops:
        project = projects[p]
        folder = project / encode_segment(ids[i])
        flat = project / (encode_segment(ids[i]) + ZSTD_SUFFIX)
        if op == "add folder" and not folder.exists():
            folder.mkdir()
            (folder / ("session" + ZSTD_SUFFIX)).write_bytes(b"")
        elif op == "remove folder" and folder.exists():
            shutil.rmtree(folder)
        elif op == "rename folder" and folder.exists():
            target = projects[(p + 1) % 3] / folder.name
            if not target.exists():
                folder.rename(target)
        elif op == "add flat":
            flat.write_bytes(b"")
        elif op == "remove flat" and flat.exists():
            flat.unlink()
        if age or op == "age":
            _age(project)
        for _ in range(LIST_AFTER):
            find_logs(kept, ids)  # keeps listings of the folders that may be kept
        assert find_logs(kept, ids) == find_logs(JsonlSessionPersistence(root), ids), (op, p, i, age)

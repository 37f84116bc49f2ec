"""``list_entries``: one session whose header cannot be listed is one bad row, for every backend.

The engine's lenient listing is what ``sessionscope list``, ``verify`` and the window show (issue 21
item 7): the damaged session keeps its place in list order with a status and a reason, and every
other session is a good row with its header.  JSONL: a first line that is not a header; SQLite: a
``sessions`` row that fails validation.
"""

from __future__ import annotations

import sqlite3

import pytest
from contract_backends import BackendKit
from sessionkit import WORK, artifact, encode_log, meta, one_turn_log, run

pytestmark = pytest.mark.usefixtures("fast_fsync")


def _damage_header(backend: BackendKit, session_id: str) -> None:
    if backend.is_jsonl:
        path = artifact(backend.storage, WORK, session_id, backend.compression)
        path.write_bytes(encode_log(b"this is not a header\n", [one_turn_log()], backend.compression))
        return
    con = sqlite3.connect(backend.storage, timeout=5)
    try:
        with con:
            con.execute("UPDATE sessions SET cwd = 'relative/path' WHERE id = ?", (session_id,))
    finally:
        con.close()


def test_a_session_with_a_bad_header_is_one_bad_row(backend: BackendKit) -> None:
    async def body() -> None:
        store = backend.make()
        for sid in ("a", "b", "c"):
            await store.create(meta(sid, WORK))
            await store.append(sid, one_turn_log())
        await store.close()
        _damage_header(backend, "b")
        entries = await backend.make().list_entries()
        assert [e.session_id for e in entries] == ["a", "b", "c"]
        good = [e for e in entries if e.ok]
        assert [e.session_id for e in good] == ["a", "c"] and all(e.meta is not None for e in good)
        (bad,) = [e for e in entries if not e.ok]
        assert bad.status == "corrupt" and bad.problem
        assert bad.meta is None

    run(body())

"""Search finds a word of a damaged session's readable part on every backend, its hits carrying the
session's status (issue 24 item 5): corrupt (before the damage) and unsupported (a newer format version).
A SQLite session was indexed by its id alone before: its rows before the damaged one were not read."""

from __future__ import annotations

from pathlib import Path

import damagedkit as dk
import pytest
import searchkit as k

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


@pytest.mark.parametrize("backend", dk.BACKENDS)
def test_a_word_of_a_damaged_sessions_readable_part_is_found(tmp_path: Path, backend: str) -> None:
    storage = dk.storage_of(backend, tmp_path)
    dk.build_damaged(backend, storage)

    async def go() -> dict[str, set[tuple[str, str]]]:
        indexer = await k.indexed(str(storage), backend)
        try:
            s = indexer.searcher()
            return {
                word: {(h.session_id, h.status) for h in s.search(word).hits}
                for word in (dk.WORD[dk.CORRUPT], dk.WORD[dk.UNSUPPORTED], "Zebra")
            }
        finally:
            await indexer.aclose()

    found = k.run(go())
    assert found[dk.WORD[dk.CORRUPT]] == {(dk.CORRUPT, "corrupt")}
    assert found[dk.WORD[dk.UNSUPPORTED]] == {(dk.UNSUPPORTED, "unsupported")}
    assert found["Zebra"] == {(dk.CORRUPT, "corrupt")}  # its title

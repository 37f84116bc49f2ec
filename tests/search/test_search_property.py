"""Property: a random substring (3 characters or more) of any indexed text finds its event."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import searchkit as k
import sessionkit as sk
from hypothesis import assume, given
from hypothesis import strategies as st

from app.search import SearchFilters

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(300)]

# Text as logs hold it: any printable or space character of any script (code, paths, CJK, emoji),
# newlines and tabs included; lone surrogates are covered by the extractor's own tests.
TEXT = st.text(st.characters(blacklist_categories=["Cs"]), min_size=3, max_size=80)


def session_events(texts: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [sk.turn_start(0, 1)]
    for i, text in enumerate(texts):
        seq = len(events)
        if i % 3 == 0:
            events.append(sk.user_message(seq, text))
        elif i % 3 == 1:
            events.append(k.tool_call(seq, 1, 1, f"c{i}", "bash", text))
        else:
            events.append(sk.tool_result(seq, 1, 1, f"c{i}", text))
    events.append(sk.turn_end(len(events), 1))
    return events


def phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@pytest.mark.parametrize("backend", ["jsonl-none", "sqlite"])
@given(texts=st.lists(TEXT, min_size=1, max_size=6), data=st.data())
def test_any_substring_of_indexed_text_finds_its_event(backend: str, texts: list[str], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = k.store_path(Path(tmp), backend)
        k.run(k.write_session(path, backend, "s1", session_events(texts)))

        async def go() -> None:
            indexer = await k.indexed(path, backend)
            rows = indexer.db.conn.execute("SELECT seq, body FROM docs WHERE seq IS NOT NULL").fetchall()
            assert rows, texts
            seq, body = data.draw(st.sampled_from(rows))
            start = data.draw(st.integers(0, len(body) - 3))
            end = data.draw(st.integers(start + 3, len(body)))
            sub = body[start:end]
            assume(sub.strip())
            searcher = indexer.searcher()
            # Case variants are checked on ASCII: which non-ASCII letters fold together depends on the
            # Unicode version of SQLite's folding table (CJK and other scripts are in the unit tests).
            variants = [sub, sub.upper(), sub.lower()] if sub.isascii() else [sub]
            for text in variants:
                found = {h.seq for h in searcher.search(phrase(text), SearchFilters(), limit=1000).hits}
                assert seq in found, (sub, text, body)
            await indexer.aclose()

        k.run(go())

"""Two-letter CJK terms through the pair side index (``app.search.cjk``): found, narrowed, kept in step."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import searchkit as k
import sessionkit as sk
from hypothesis import given, settings
from hypothesis import strategies as st

from app.search import SearchFilters
from app.search.cjk import bigram_words, cjk_bigram, is_cjk

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]

TEXTS = {
    1: "请检查订单服务的日志",
    2: "東京・京都 tour: 東京タワー",
    3: "한국어 로그 파일",
    4: "plain ascii about tokyo",
}


@pytest.fixture(params=k.BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path, backend: str) -> str:
    path = k.store_path(tmp_path, backend)
    events = [sk.turn_start(0, 1)] + [sk.user_message(seq, text) for seq, text in TEXTS.items()] + [sk.turn_end(5, 1)]
    k.run(k.write_session(path, backend, "cjk", events))
    return path


def _search(root: str, backend: str, query: str) -> tuple[str, list[int | None]]:
    async def go() -> tuple[str, list[int | None]]:
        indexer = await k.indexed(root, backend)
        try:
            result = indexer.searcher().search(query, SearchFilters(kinds=frozenset({"user"})))
            return result.mode, sorted(h.seq for h in result.hits)
        finally:
            await indexer.aclose()

    return k.run(go())


@pytest.mark.parametrize(
    ("query", "seqs"),
    [
        ("日志", [1]),  # Chinese
        ("東京", [2]),  # Japanese, twice in one row: one hit
        ("京都", [2]),  # after the middle dot
        ("タワ", [2]),  # Katakana
        ("로그", [3]),  # Hangul
        ("東京 OR 로그", [2, 3]),
        ("東京 NOT 京都", []),
        ("日志 AND 订单", [1]),
        ("京・", [2]),  # not a pair of letters: scanned, still found
        ("・京", [2]),
        ("都東", []),  # the letters exist, the pair does not
    ],
)
def test_two_letter_cjk_terms_are_found(root: str, backend: str, query: str, seqs: list[int]) -> None:
    mode, found = _search(root, backend, query)
    assert found == seqs
    if all(cjk_bigram(t) for t in query.replace(" OR ", " ").replace(" AND ", " ").replace(" NOT ", " ").split()):
        assert mode == "cjk"  # answered by the pair index, not by scanning every row


def test_the_pair_index_follows_a_session_reindexed(tmp_path: Path, backend: str) -> None:
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "a", [sk.turn_start(0, 1), sk.user_message(1, "東京の天気"), sk.turn_end(2, 1)]))

    async def go() -> None:
        indexer = await k.indexed(path, backend)
        try:
            assert [h.seq for h in indexer.searcher().search("天気").hits] == [1]
            file = indexer.db.path
            await k.append(path, backend, "a", [sk.turn_start(3, 2), sk.user_message(4, "大阪の天気"), sk.turn_end(5, 2)])
            await indexer.update()
            assert [h.seq for h in indexer.searcher().search("天気").hits] == [1, 4]
        finally:
            await indexer.aclose()
        if file is not None:
            with sqlite3.connect(file) as conn:
                (pairs,) = conn.execute("SELECT count(*) FROM cjk").fetchone()
                orphans = conn.execute("SELECT count(*) FROM cjk WHERE rowid NOT IN (SELECT id FROM docs)").fetchone()[0]
            assert pairs >= 2 and orphans == 0  # one row per CJK row, none left behind by the re-index

    k.run(go())


def test_pairs_of_a_text() -> None:
    assert bigram_words("abc") is None and bigram_words("") is None and bigram_words(None) is None
    assert bigram_words("é café") is None  # non-ASCII, but no CJK letter
    assert bigram_words("東京・京都") == "東京 京都"  # the dot splits
    assert bigram_words("東京東京") == "東京 京東"  # distinct pairs only
    assert bigram_words("a東b京c") is None  # no two letters side by side
    assert cjk_bigram("東京") == "東京" and cjk_bigram("東") is None and cjk_bigram("東京都") is None
    assert cjk_bigram("a東") is None and not is_cjk("・") and is_cjk("한")


CJK_CHARS = st.characters(min_codepoint=0x4E00, max_codepoint=0x4EFF)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.one_of(CJK_CHARS, st.sampled_from(" a・。")), min_size=2, max_size=40), st.data())
def test_every_adjacent_pair_of_letters_is_in_the_pairs(text: str, data: st.DataObject) -> None:
    """Any two-letter CJK substring of a text is one of its words (so the pair index never misses a match)."""
    words = set((bigram_words(text) or "").split())
    pairs = [text[i : i + 2] for i in range(len(text) - 1) if cjk_bigram(text[i : i + 2])]
    assert set(pairs) == words
    if pairs:
        assert data.draw(st.sampled_from(pairs)) in words


def test_deleted_rows_leave_the_pair_index(tmp_path: Path) -> None:
    from app.search.db import IndexDb

    db = IndexDb.open(str(tmp_path / "index.sqlite"), "root-identity")
    try:
        sid = db.new_session("k1", "s1")
        row = (1, "user", "user/message", None, 1, 0)
        db.insert_rows(sid, [(*row, "東京の天気"), (*row, "ascii only"), (*row, "大阪")])
        db.commit()
        assert db.conn.execute("SELECT count(*) FROM cjk").fetchone()[0] == 2  # ASCII rows write nothing
        db.clear_session(sid)
        db.commit()
        assert db.conn.execute("SELECT count(*) FROM cjk").fetchone()[0] == 0
    finally:
        db.close()


def test_a_pair_at_the_end_of_a_long_cjk_row_is_found(tmp_path: Path) -> None:
    """Every pair of a row is indexed (none capped away): the pair index decides which rows are read."""
    from app.search.db import IndexDb
    from app.search.query import Searcher

    # 90,000 letter pairs side by side: more than 50,000 distinct adjacent pairs before the one searched.
    body = "".join(chr(0x4E00 + x) + chr(0x5000 + y) for x in range(300) for y in range(300)) + "東京"
    assert len(set((bigram_words(body) or "").split())) > 100_000
    db = IndexDb.open(str(tmp_path / "index.sqlite"), "root-identity")
    try:
        sid = db.new_session("k1", "s1")
        db.insert_rows(sid, [(1, "user", "user/message", None, 1, 0, body)])
        db.commit()
        result = Searcher(None, conn=db.conn).search("東京")
        assert result.mode == "cjk" and [h.seq for h in result.hits] == [1]
    finally:
        db.close()


def test_the_index_writes_on_a_sqlite_that_does_not_trust_schemas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQLite built with SQLITE_TRUSTED_SCHEMA=0 would refuse the trigger's function: the writer trusts its own file."""
    from app.search import db as db_module

    real = db_module.sqlite3.connect

    def untrusting(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real(*args, **kwargs)  # type: ignore[arg-type]
        conn.execute("PRAGMA trusted_schema = OFF")
        return conn

    monkeypatch.setattr(db_module.sqlite3, "connect", untrusting)
    monkeypatch.setattr(db_module, "connect_cache", lambda path: untrusting(path, check_same_thread=False, isolation_level=None))
    db = db_module.IndexDb.open(str(tmp_path / "index.sqlite"), "root-identity")
    try:
        assert db.conn.execute("PRAGMA trusted_schema").fetchone()[0] == 1
        sid = db.new_session("k1", "s1")
        db.insert_rows(sid, [(1, "user", "user/message", None, 1, 0, "東京の天気")])
        db.commit()
        assert db.conn.execute("SELECT count(*) FROM cjk").fetchone()[0] == 1
    finally:
        db.close()

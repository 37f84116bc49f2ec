"""The CJK pair words (``app.search.cjk.bigram_words``) are exactly the adjacent CJK letter pairs, in order."""

from __future__ import annotations

import itertools
import random

from app.search.cjk import bigram_words, is_cjk


def reference(body: str) -> str | None:
    """The definition, one character at a time."""
    pairs: dict[str, None] = {}
    for a, b in itertools.pairwise(body):
        if is_cjk(a) and is_cjk(b):
            pairs[a + b] = None
    return " ".join(pairs) if pairs else None


def test_pairs_match_the_definition_on_random_mixed_text() -> None:
    rng = random.Random(25)
    alphabet = "ab 1東京日志订单服务テスト・ーｱｲｳ버킷한〜。、！？\U00020000\U0002a700\u3040\u30ff\u30fb\u3000é"
    for _ in range(5000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert bigram_words(body) == reference(body), body


def test_pairs_of_a_long_english_text_with_one_sentence() -> None:
    body = "the build failed " * 300 + "请检查订单服务的日志" + " done"
    assert bigram_words(body) == "请检 检查 查订 订单 单服 服务 务的 的日 日志"
    assert bigram_words("plain ascii") is None
    assert bigram_words("東・京") is None  # the middle dot splits: no pair

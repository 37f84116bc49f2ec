"""Two-character CJK terms, which a trigram index cannot answer: a bigram side index.

Chinese and Japanese words are often two characters (``東京``, ``日志``), and the trigram index
holds nothing shorter than three, so such a query used to scan every row of ``docs`` with ``LIKE``
(108 ms on a 10,000-session index, 540k rows).  The indexer also writes, for each row that holds
CJK text, the overlapping pairs of adjacent CJK characters as space-separated words into a small
FTS5 table (``cjk``, unicode61 tokenizer: each pair is one token); a two-character CJK term is then
one token lookup (~1 ms), its candidates checked with the same ``LIKE`` as any other term.

Rows without CJK text cost one ``str.isascii`` call (C speed) and write nothing; what is written is
about 3 bytes per CJK character (two characters per pair, UTF-8).  Every pair of a row is written,
never a capped subset: the index narrows a two-letter query to the rows it lists, so a pair left out
would be a match never found.  A row holds at most ``extract.MAX_BODY_CHARS`` (200,000) characters,
which bounds its pairs.

May import: the standard library only.
"""

from __future__ import annotations

import re

# Code point ranges of the scripts written without spaces between words: Hiragana and Katakana,
# CJK Unified Ideographs (with extension A and the compatibility block), Hangul syllables,
# half-width Katakana, and the supplementary ideograph planes (extensions B and later).
_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3FFFF),
)


def is_cjk(ch: str) -> bool:
    """A CJK letter (punctuation such as the Katakana middle dot is not: unicode61 splits at it)."""
    o = ord(ch)
    return any(lo <= o <= hi for lo, hi in _RANGES) and ch.isalnum()


def cjk_bigram(term: str) -> str | None:
    """``term`` when it is exactly two CJK letters (a pair the side index holds), else None."""
    return term if len(term) == 2 and is_cjk(term[0]) and is_cjk(term[1]) else None


_RUN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _RANGES) + "]{2,}")  # two or more in-range characters


def bigram_words(body: str | None) -> str | None:
    """The distinct adjacent CJK letter pairs of ``body`` as space-separated words; None when it has none.

    The runs of CJK-range characters are found by a regular expression (C speed) and only they are walked
    in Python: a 5,000-character English tool output with one Chinese sentence costs one ``finditer``."""
    if not body or body.isascii():
        return None
    pairs: dict[str, None] = {}
    for match in _RUN.finditer(body):
        run = match.group()
        if run.isalnum():  # letters only (the usual case): every adjacent pair
            for i in range(len(run) - 1):
                pairs[run[i : i + 2]] = None
            continue
        prev = False  # punctuation inside the ranges (the Katakana middle dot) splits the run
        for i, ch in enumerate(run):
            cur = ch.isalnum()
            if cur and prev:
                pairs[run[i - 1 : i + 1]] = None
            prev = cur
    return " ".join(pairs) if pairs else None


__all__ = ["bigram_words", "cjk_bigram", "is_cjk"]

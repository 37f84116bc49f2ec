"""The query language: what a person types, parsed into a tree, and the tree's translations (FTS5 trigram
skeletons, LIKE checks, a Python check, the highlight pattern).

The language (what a person types; every match is a case-insensitive substring):

- ``order.ts``, ``S3``: a term matches where it occurs, also inside words and paths; terms side by
  side must all match (``npm build`` = both somewhere in the same event text);
- ``"npm run build"``: a phrase, matched as one substring, spaces included;
- ``build*``: a term that starts a word (``rebuild`` does not match ``build*``, ``builder`` does);
- ``AND``, ``OR``, ``NOT`` (upper case; ``a NOT b`` as in FTS5) and parentheses.
A syntax error (an unclosed quote or parenthesis, an operator without a term) is a
``SearchQueryError`` saying where; so is any FTS5 error the translation could still meet.

Pure: no SQL runs here (``query.Searcher`` runs what these functions build).  May import: the standard
library and ``app.search``'s own modules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.search.cjk import cjk_bigram

TRIGRAM_CHARS = 3  # the shortest term a trigram index can answer
MAX_TRIGRAMS_PER_TERM = 12  # trigrams of one term sent to the index (more narrow little, and each costs a merge)


class SearchQueryError(ValueError):
    """A query that cannot be run: a syntax error, an unknown filter value.  The message says what to fix."""


# ---------------------------------------------------------------- the query language


@dataclass(frozen=True, slots=True)
class Term:
    text: str
    word_start: bool = False  # ``term*``
    phrase: bool = False  # ``"..."``


@dataclass(frozen=True, slots=True)
class Op:
    op: str  # "AND" | "OR" | "NOT"
    parts: tuple[Node, ...]


Node = Term | Op

_OPERATORS = ("AND", "OR", "NOT")


def _tokens(query: str) -> list[tuple[str, str, int]]:
    """(kind, text, position) tokens: ``term``, ``phrase``, ``(``, ``)``, ``op``."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            out.append((ch, ch, i))
            i += 1
        elif ch == '"':
            # A phrase runs to the next lone quote; "" inside it is a literal quote (FTS5's rule).
            end = i + 1
            while True:
                end = query.find('"', end)
                if end < 0:
                    raise SearchQueryError(f'unclosed quote at character {i + 1}: close the phrase with another "')
                if query.startswith('""', end):
                    end += 2
                    continue
                break
            text = query[i + 1 : end].replace('""', '"')
            star = end + 1 < n and query[end + 1] == "*"
            out.append(("phrase*" if star else "phrase", text, i))
            i = end + (2 if star else 1)
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in '()"':
                j += 1
            word = query[i:j]
            out.append(("op" if word in _OPERATORS else "term", word, i))
            i = j
    return out


class _Parser:
    """FTS5's grammar and precedence: NOT binds tightest, then AND (also implicit), then OR."""

    def __init__(self, tokens: list[tuple[str, str, int]]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> Node:
        if not self.tokens:
            raise SearchQueryError("empty query: type something to search for")
        node = self.or_expr()
        tok = self.peek()
        if tok is not None:
            raise SearchQueryError(
                f"unexpected {tok[1]!r} at character {tok[2] + 1}" + (": no ( to close" if tok[0] == ")" else "")
            )
        return node

    def or_expr(self) -> Node:
        parts = [self.and_expr()]
        while (tok := self.peek()) is not None and tok[:2] == ("op", "OR"):
            self.i += 1
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else Op("OR", tuple(parts))

    def and_expr(self) -> Node:
        parts = [self.not_expr()]
        while (tok := self.peek()) is not None and (tok[0] in ("term", "phrase", "phrase*", "(") or tok[:2] == ("op", "AND")):
            if tok[0] == "op":
                self.i += 1
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else Op("AND", tuple(parts))

    def not_expr(self) -> Node:
        node = self.primary()
        while (tok := self.peek()) is not None and tok[:2] == ("op", "NOT"):
            self.i += 1
            node = Op("NOT", (node, self.primary()))
        return node

    def primary(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise SearchQueryError("the query ends with an operator: add a term after it")
        kind, text, pos = tok
        self.i += 1
        if kind == "(":
            node = self.or_expr()
            close = self.peek()
            if close is None or close[0] != ")":
                raise SearchQueryError(f"unclosed parenthesis at character {pos + 1}: add a )")
            self.i += 1
            return node
        if kind == ")":
            raise SearchQueryError(f"unexpected ) at character {pos + 1}")
        if kind == "op":
            hint = " (a NOT needs a term on its left: 'build NOT test')" if text == "NOT" else ""
            raise SearchQueryError(
                f'{text} at character {pos + 1} has no term before it{hint}; search for the word itself in quotes: "{text}"'
            )
        if kind in ("phrase", "phrase*"):
            if not text.strip():
                raise SearchQueryError(f"empty phrase at character {pos + 1}")
            return Term(text, word_start=kind == "phrase*", phrase=True)
        star = text.endswith("*")
        core = text.rstrip("*")
        if not core:
            raise SearchQueryError(f"a lone * at character {pos + 1}: put it after a term, as in build*")
        if "*" in core:
            raise SearchQueryError(f"* at character {pos + 1 + core.index('*')} must end a term, as in build*")
        return Term(core, word_start=star)


def parse_query(query: str) -> Node:
    """The query's syntax tree, or ``SearchQueryError`` saying what is wrong and where."""
    return _Parser(_tokens(query)).parse()


def terms_of(node: Node, positive: bool = True) -> Iterable[Term]:
    """The terms that must occur (not those under the right side of a NOT): what a snippet highlights."""
    if isinstance(node, Term):
        if positive:
            yield node
        return
    for k, part in enumerate(node.parts):
        yield from terms_of(part, positive and not (node.op == "NOT" and k == 1))


def all_terms(node: Node) -> Iterable[Term]:
    if isinstance(node, Term):
        yield node
    else:
        for part in node.parts:
            yield from all_terms(part)


def _fts_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def trigrams(text: str) -> list[str]:
    """The distinct trigrams of ``text``, at most
    ``MAX_TRIGRAMS_PER_TERM`` spread over the term: the check on the text is exact anyway, and a
    60-character phrase needs no 58-way merge to be narrowed."""
    # Sliced from the text as typed: the index folds each quoted token itself (``str.lower`` may change
    # a character's length, and with it which trigrams exist).
    grams = list(dict.fromkeys(text[i : i + TRIGRAM_CHARS] for i in range(len(text) - TRIGRAM_CHARS + 1)))
    if len(grams) > MAX_TRIGRAMS_PER_TERM:
        step = len(grams) / MAX_TRIGRAMS_PER_TERM
        grams = [grams[int(k * step)] for k in range(MAX_TRIGRAMS_PER_TERM - 1)] + [grams[-1]]
    return grams


def skeleton(node: Node) -> str | None:
    """An FTS5 MATCH expression whose rows are a superset of the tree's matches (None: no narrowing).

    A term is the AND of its trigrams; a short term cannot narrow (an AND drops it, an OR holding
    it cannot narrow at all); ``a NOT b`` narrows by ``a`` only, since rows that hold all of b's
    trigrams need not hold b.  Every token is quoted, so the expression is always valid FTS5.
    """
    if isinstance(node, Term):
        grams = trigrams(node.text) if len(node.text) >= TRIGRAM_CHARS else []
        if not grams:
            return None
        if len(grams) == 1:
            return _fts_quote(grams[0])
        return "(" + " AND ".join(_fts_quote(g) for g in grams) + ")"
    if node.op == "NOT":
        return skeleton(node.parts[0])
    parts = [skeleton(p) for p in node.parts]
    if node.op == "OR":
        if any(p is None for p in parts):
            return None
        return "(" + " OR ".join(p for p in parts if p is not None) + ")"
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"


def pair_skeleton(node: Node) -> str | None:
    """A MATCH expression for the ``cjk`` pair index whose rows are a superset of the tree's matches,
    or None: the same rules as ``skeleton``, where only a term of exactly two CJK letters narrows."""
    if isinstance(node, Term):
        pair = cjk_bigram(node.text)
        return _fts_quote(pair) if pair is not None else None
    if node.op == "NOT":
        return pair_skeleton(node.parts[0])
    parts = [pair_skeleton(p) for p in node.parts]
    if node.op == "OR":
        if any(p is None for p in parts):
            return None
        return "(" + " OR ".join(p for p in parts if p is not None) + ")"
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"


def exact_in_index(node: Node) -> bool:
    """Whether the skeleton's rows are exactly the matches: 3-character terms under AND/OR only."""
    if isinstance(node, Term):
        return len(node.text) == TRIGRAM_CHARS and not node.word_start
    return node.op != "NOT" and all(exact_in_index(p) for p in node.parts)


def like_contains(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere (its ``%``, ``_`` and ``\\`` escaped with ``ESCAPE '\\'``)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _needs_python_case(text: str) -> bool:
    """Whether SQLite's LIKE (ASCII-only case folding) would miss a case variant of ``text``."""
    return any(ord(ch) > 127 and ch.lower() != ch.upper() for ch in text)


def to_like(node: Node, params: list[Any], column: str = "d.body") -> str:
    """A SQL boolean expression over ``column`` equivalent to the tree (the short-term fallback)."""
    if isinstance(node, Term):
        if _needs_python_case(node.text):
            params.append(node.text)
            expr = f"ss_contains({column}, ?)"
        else:
            params.append(like_contains(node.text))
            expr = f"{column} LIKE ? ESCAPE '\\'"
        return expr
    if node.op == "NOT":
        return f"({to_like(node.parts[0], params, column)} AND NOT {to_like(node.parts[1], params, column)})"
    return "(" + f" {node.op} ".join(to_like(p, params, column) for p in node.parts) + ")"


def term_pattern(term: Term) -> str:
    body = re.escape(term.text)
    return rf"(?<!\w){body}" if term.word_start else body


def evaluate(node: Node, text: str) -> bool:
    """Whether ``text`` matches the tree (Python's reading: used to check word-start terms)."""
    if isinstance(node, Term):
        return re.search(term_pattern(node), text, re.IGNORECASE) is not None
    if node.op == "AND":
        return all(evaluate(p, text) for p in node.parts)
    if node.op == "OR":
        return any(evaluate(p, text) for p in node.parts)
    return evaluate(node.parts[0], text) and not evaluate(node.parts[1], text)


def highlight_pattern(node: Node) -> re.Pattern[str] | None:
    """A regex matching every positive term (longest first, so a phrase wins over its words)."""
    terms = sorted({(t.text, t.word_start) for t in terms_of(node)}, key=lambda t: -len(t[0]))
    if not terms:
        return None
    return re.compile("|".join(term_pattern(Term(t, w)) for t, w in terms), re.IGNORECASE)

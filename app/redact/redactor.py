"""``Redactor``: replaces secrets in strings and JSON values with stable placeholders, and keeps the count.

One ``Redactor`` serves one bundle: the same secret gets the same number wherever it occurs
(``sk-abc…`` is ``[redacted:api-key#1]`` in the transcript, the header and ``verify.json`` alike),
numbered per kind in order of first appearance.  It also keeps what a preview shows: occurrences per
kind, distinct secrets per kind, and the first few replacements in their context, taken from the
*redacted* text, so a preview never shows a secret (not even a neighbouring one); the secret itself is
shown only as its rule's documented prefix (``sk-…[redacted:api-key#1]``).

JSON values: strings are redacted wherever they are (object values, array items); object *keys* are
never changed (they are the log's structure, and a key that held a secret would have to be renamed,
which no reader expects).  A string under a key named like a credential (``password``, ``api_key``,
``client_secret``, ``access_token``, ...) is replaced whole.  At the top level of a record, ``type``,
``id``, ``parentSession`` and ``sessionId`` are never touched: they are the event type and the
session ids a reader needs to open the result.

May import: the standard library and ``app.redact.rules``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.redact.rules import (
    HOME_KIND,
    HOME_RULE,
    LINE_TRIGGERS,
    RULES,
    RULES_VERSION,
    TRIGGERS,
    combined,
    home_replacement,
    placeholder,
)

SAMPLES = 8  # replacements kept for a preview
CONTEXT_CHARS = 36  # characters of redacted text each side of a sample's placeholder
KEY_RULE = "credential-field"
# A key that names a credential: its string value is replaced whole (``db_password``, ``apiKey``, ``client_secret``).
SECRET_KEY = re.compile(
    r"(?i)^(?:.*[_-])?(?:password|passwd|secret|client_?secret|api_?key|access_?token|auth_?token|refresh_?token|private_?key)$"
)
KEPT_TOP_KEYS = frozenset({"type", "id", "parentSession", "sessionId"})


@dataclass(frozen=True, slots=True)
class Sample:
    """One replacement in context, for a preview: nothing in ``context`` is a secret."""

    kind: str
    where: str  # "seq 12 tool/result", "header", "verify.json"
    context: str


@dataclass(frozen=True, slots=True)
class RedactionReport:
    """What a redaction replaced: occurrences and distinct secrets per kind, and the first samples."""

    counts: Mapping[str, int]
    distinct: Mapping[str, int]
    samples: tuple[Sample, ...]
    home: bool  # the home folder rule was on

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def rules(self) -> tuple[str, ...]:
        names = (*(r.name for r in RULES), KEY_RULE)
        return (*names, HOME_RULE) if self.home else names

    def to_json(self) -> dict[str, Any]:
        """The bundle manifest's ``redaction`` block."""
        return {
            "redacted": True,
            "rulesVersion": RULES_VERSION,
            "rules": list(self.rules),
            "homeFolder": self.home,
            "placeholder": "[redacted:KIND#N]",
            "counts": dict(sorted(self.counts.items())),
            "distinct": dict(sorted(self.distinct.items())),
        }

    def summary(self) -> str:
        """One line: ``3 replaced: api-key 2, email 1`` (or ``nothing to redact``)."""
        if not self.total:
            return "nothing to redact found"
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{self.total} replaced: {kinds}"


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", "⏎").replace("\t", " ")


class Redactor:
    """Stateful redaction for one bundle (see the module docstring); ``home`` is the folder to hide, or None."""

    def __init__(self, *, home: str | None = None, samples: int = SAMPLES) -> None:
        self.home = home.rstrip("/") or None if home else None
        self._pattern = combined(self.home)
        self._home_index = len(RULES)
        self._numbers: dict[str, dict[str, int]] = {}
        self.counts: Counter[str] = Counter()
        self.samples: list[Sample] = []
        self._sample_limit = samples

    # ------------------------------------------------------------ strings

    def might_hold(self, text: str) -> bool:
        """False when no rule can match ``text`` (a cheap check before the full alternation)."""
        return TRIGGERS.search(text) is not None or (self.home is not None and self.home in text)

    @property
    def line_triggers(self) -> tuple[bytes, ...]:
        """Lower-case literals one of which a lower-cased JSON line must hold to need a look (``LINE_TRIGGERS``
        plus the home folder): the other lines of a transcript are kept without being decoded or parsed."""
        if self.home is None:
            return LINE_TRIGGERS
        return (*LINE_TRIGGERS, self.home.encode("utf-8", "surrogateescape").lower())

    def _number(self, kind: str, secret: str) -> int:
        numbers = self._numbers.setdefault(kind, {})
        return numbers.setdefault(secret, len(numbers) + 1)

    def _find(self, s: str) -> list[tuple[int, int, str, str, str | None]]:
        """Every replacement in ``s``: (start, end, replacement, kind, preview hint), in order."""
        found: list[tuple[int, int, str, str, str | None]] = []
        for m in self._pattern.finditer(s):
            i = int((m.lastgroup or "r0")[1:])
            if i == self._home_index:
                assert self.home is not None
                found.append((m.start(), m.end(), home_replacement(self.home), HOME_KIND, None))
                self.counts[HOME_KIND] += 1
                continue
            rule = RULES[i]
            start, end = m.span(f"v{i}") if rule.has_value_group else m.span()
            secret = s[start:end]
            shown = re.match(rule.shown_prefix, secret) if rule.shown_prefix else None
            rep = placeholder(rule.kind, self._number(rule.kind, secret))
            found.append((start, end, rep, rule.kind, shown.group() if shown else None))
            self.counts[rule.kind] += 1
        return found

    def _splice(self, s: str, found: list[tuple[int, int, str, str, str | None]], where: str) -> str:
        out: list[str] = []
        pos = 0
        marks: list[tuple[int, int, str, str | None]] = []  # placements in the output, for samples
        size = 0
        for start, end, rep, kind, hint in found:
            out.append(s[pos:start])
            size += start - pos
            marks.append((size, size + len(rep), kind, hint))
            out.append(rep)
            size += len(rep)
            pos = end
        out.append(s[pos:])
        text = "".join(out)
        for a, b, kind, hint in marks:
            if len(self.samples) >= self._sample_limit:
                break
            before = text[max(0, a - CONTEXT_CHARS) : a]
            after = text[b : b + CONTEXT_CHARS]
            shown = f"{hint}…{text[a:b]}" if hint else text[a:b]
            lead = "…" if a > CONTEXT_CHARS else ""
            tail = "…" if b + CONTEXT_CHARS < len(text) else ""
            self.samples.append(Sample(kind, where, _one_line(f"{lead}{before}{shown}{after}{tail}")))
        return text

    def text(self, s: str, where: str = "") -> str:
        """``s`` with every secret replaced."""
        if not self.might_hold(s):
            return s
        found = self._find(s)
        return self._splice(s, found, where) if found else s

    def pieces(self, parts: list[str], where: str = "") -> list[str]:
        """Consecutive pieces of one text (a packed run of streaming deltas) redacted as one text: a secret
        split across pieces is replaced in the piece where it starts and cut from the others, so the
        number of pieces (events) stays the same."""
        joined = "".join(parts)
        if not self.might_hold(joined):
            return parts
        found = self._find(joined)
        if not found:
            return parts
        self._splice(joined, found, where)  # the samples, from the joined text
        out: list[str] = []
        a = 0
        for part in parts:
            b = a + len(part)
            buf: list[str] = []
            pos = a
            for start, end, rep, _kind, _hint in found:
                if end <= a or start >= b:
                    continue
                if start >= a:
                    buf.append(joined[pos:start])
                    buf.append(rep)
                pos = min(end, b)
            buf.append(joined[pos:b])
            out.append("".join(buf))
            a = b
        return out

    def _whole(self, secret: str, where: str) -> str:
        rep = placeholder("password", self._number("password", secret))
        self.counts["password"] += 1
        if len(self.samples) < self._sample_limit:
            self.samples.append(Sample("password", where, rep))
        return rep

    # ------------------------------------------------------------ JSON values

    def value(self, v: Any, where: str = "", *, top: bool = False) -> Any:
        """A JSON value with every string redacted (keys kept; see the module docstring).  Containers are
        copied only where something changed; ``top``: ``v`` is a record, whose ids and type are kept."""
        if type(v) is str:
            return self.text(v, where)
        if type(v) is dict:
            out: dict[str, Any] | None = None
            for k, item in v.items():
                if top and k in KEPT_TOP_KEYS:
                    continue
                if type(item) is str and item and SECRET_KEY.match(k) and not item.startswith("[redacted:"):
                    new: Any = self._whole(item, where)
                else:
                    new = self.value(item, where)
                if new is not item:
                    if out is None:
                        out = dict(v)
                    out[k] = new
            return v if out is None else out
        if type(v) is list:
            items: list[Any] | None = None
            for j, item in enumerate(v):
                new = self.value(item, where)
                if new is not item:
                    if items is None:
                        items = list(v)
                    items[j] = new
            return v if items is None else items
        if isinstance(v, Mapping):  # a read-only view of a record (the engine's FrozenDict): walked as a dict
            new = self.value(dict(v), where, top=top)
            return v if all(new[k] is v[k] for k in new) else new
        if isinstance(v, (tuple, Sequence)) and not isinstance(v, (str, bytes, bytearray)):
            new = self.value(list(v), where)
            return v if all(a is b for a, b in zip(new, v, strict=True)) else new
        return v

    def report(self) -> RedactionReport:
        distinct = {k: len(n) for k, n in self._numbers.items() if n}
        if self.counts.get(HOME_KIND):
            distinct[HOME_KIND] = 1
        return RedactionReport(dict(self.counts), distinct, tuple(self.samples), self.home is not None)


__all__ = ["CONTEXT_CHARS", "KEY_RULE", "SAMPLES", "SECRET_KEY", "RedactionReport", "Redactor", "Sample"]

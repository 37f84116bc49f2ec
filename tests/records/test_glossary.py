"""The app's one vocabulary (issue 24 item 4): one name per status, damage kind and unit, numbers one way,
plural forms right; and no old variant left in any user-visible string of ``app/``."""

from __future__ import annotations

import pytest

from app import glossary
from persistence import RawDamage


@pytest.mark.parametrize(
    ("n", "word", "expected"),
    [
        (1, "session", "1 session"),
        (2, "session", "2 sessions"),
        (0, "turn", "0 turns"),
        (2465, "byte", "2,465 bytes"),
        (1, "entry", "1 entry"),
        (3, "entry", "3 entries"),
        (2, "day", "2 days"),
        (4, "match", "4 matches"),
        (2, "synthetic closer", "2 synthetic closers"),
    ],
)
def test_plural_forms(n: int, word: str, expected: str) -> None:
    assert glossary.plural(n, word) == expected


def test_numbers_and_positions_one_way() -> None:
    assert glossary.number(2465) == "2,465"
    assert glossary.at_byte(2465) == "byte 2,465"
    assert glossary.tail_position("jsonl", 4893) == "byte 4,893"
    assert glossary.tail_position("sqlite", 4893) == "row 4,893"
    assert glossary.records(2, "sqlite") == "2 rows"
    assert glossary.records(1, "jsonl-zstd") == "1 line"
    assert glossary.size(512) == "512 B"
    assert glossary.size(1536) == "1.5 KB"


def test_each_status_and_damage_kind_has_exactly_one_name() -> None:
    names = list(glossary.STATUS_NAMES.values())
    assert len(names) == len(set(names)), names
    kinds = [
        RawDamage.TORN_LINE,
        RawDamage.TORN_FRAME,
        RawDamage.UNDECODABLE,
        RawDamage.UNDECODABLE_TORN_FRAME,
        RawDamage.BAD_FRAME,
    ]
    damage = [glossary.damage_name(k) for k in kinds]
    assert all(d != k for d, k in zip(damage, kinds, strict=True)), damage  # each kind has a name of its own
    assert len(set(damage)) == len(damage), damage
    # The open turn's three states all start with the status's one name.
    states = [glossary.open_turn_name(s) for s in ("live", "idle", "crashed")]
    assert len(set(states)) == 3 and all(s.startswith(glossary.status_name("open-turn") + " · ") for s in states), states

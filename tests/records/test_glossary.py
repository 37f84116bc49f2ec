"""The app's one vocabulary (issue 24 item 4): one name per status, damage kind and unit, numbers one way,
plural forms right; and no old variant left in any user-visible string of ``app/``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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


# ---------------------------------------------------------------- the old variants, nowhere in app/

APP = Path(__file__).resolve().parents[2] / "app"

# What issue 24 found said several ways; each pattern is a variant the glossary replaced.
DENIED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("'(s)' plurals: use glossary.plural", re.compile(r"\w\(s\)")),
    ("'1 sessions'", re.compile(r"\b1 (sessions|turns|events|bytes|rows|lines)\b")),
    ("'byte/row': say byte or row (glossary.tail_position)", re.compile(r"byte/row")),
    ("'file offset': say 'byte N' (glossary.at_byte)", re.compile(r"file offset", re.IGNORECASE)),
    ("'frame at byte': name the frame (glossary.damage_at)", re.compile(r"\bframe at byte")),
    ("'not closed (running or crashed)': glossary.OPEN_TURN_INFO", re.compile(r"not closed \(running")),
    ("'createdAt' as a label: glossary.CREATED", re.compile(r"createdAt")),
    ("'Started' as the name of createdAt (the list says 'Created'): glossary.CREATED", re.compile(r"^Started$")),
)

# Calls whose string arguments are record keys or patterns, not words for the user.
_KEY_CALLS = frozenset(
    {"get", "header", "pop", "setdefault", "num", "field_name", "compile", "match", "search", "sub", "fullmatch"}
)

# Old variants that existing tests pin word for word (tests keep their assertions): left for the lead to decide,
# each with the test that pins it.  (file, a fragment of the string)
PINNED: frozenset[tuple[str, str]] = frozenset(
    {
        ("app/actions/repair.py", " intact record(s) after the damage would be cut"),  # tests/actions/test_repair_safety.py
        ("app/gui/window/restore_offer.py", " record(s) that session "),  # tests/gui/test_gui_restore.py
        ("app/timeline/damaged.py", " stored row(s) from there on are not shown"),  # tests/gui/test_gui_damaged_timeline.py
        ("app/gui/views/stats_pane.py", " call(s), "),  # tests/gui/test_gui_insight.py ("bash — 4 call(s), 2 error(s)")
        ("app/gui/views/stats_pane.py", " error(s) ("),  # same
        ("app/gui/dialogs/lineage_dialog.py", " session(s) · "),  # tests/gui/test_gui_insight.py ("5 session(s)")
        ("app/gui/dialogs/lineage_dialog.py", " root session(s) · "),  # the same sentence as the pinned one
        ("app/gui/dialogs/lineage_dialog.py", " fork(s) · "),
        ("app/gui/dialogs/lineage_dialog.py", " subagent(s)"),
        ("app/gui/dialogs/lineage_dialog.py", " orphan(s) whose parent is missing"),  # ("1 orphan(s)")
        ("app/gui/views/session_banner.py", " would-be closer(s) are shown"),  # tests/gui/test_gui_live_truth.py
        ("app/compare/sessions.py", " call(s) in A, "),  # tests/compare/test_compare_sessions.py, tests/cli/test_cli_diff.py
        # tests/actions/test_repair_fixtures.py: r"cut \d+ byte\(s\) from offset \d+; 33 record\(s\) re-appended"
        ("app/cli/render.py", " byte(s) from offset "),
        ("app/cli/render.py", " record(s) re-appended"),
    }
)


def _pinned(path: str, text: str) -> bool:
    return any(path == f and frag in text for f, frag in PINNED)


def _key_constants(tree: ast.AST) -> set[int]:
    """ids of the str constants used as record keys: subscripts, dict keys, comparisons, key-taking calls,
    and the bare field names of a tuple of keys (``HEADER_FIELDS``)."""
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Dict):
            keys.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, ast.Compare):
            keys.update(id(c) for c in [node.left, *node.comparators])
            for c in node.comparators:
                if isinstance(c, (ast.Tuple, ast.List, ast.Set)):
                    keys.update(id(e) for e in c.elts)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _KEY_CALLS:
                keys.update(id(a) for a in node.args)
        elif isinstance(node, (ast.Tuple, ast.List)) and node.elts:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.isidentifier() for e in node.elts):
                keys.update(id(e) for e in node.elts)
    return keys


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def user_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every str constant of a module that can reach a user: f-strings' constant parts included,
    docstrings and record keys left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _key_constants(tree) | _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            out.append((node.lineno, node.value))
    return out


def test_the_walker_sees_f_string_parts_and_leaves_keys_alone(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text('x = f"{n} turn(s)"\ny = d["createdAt"]\nz = r.get("createdAt")\nw = "label createdAt"\n')
    texts = [t for _, t in user_strings(mod)]
    assert " turn(s)" in texts and "label createdAt" in texts
    assert "createdAt" not in texts


def test_no_old_variant_in_any_user_visible_string() -> None:
    found = []
    for path in sorted(APP.rglob("*.py")):
        for line, text in user_strings(path):
            rel = path.relative_to(APP.parent).as_posix()
            for why, pattern in DENIED:
                if pattern.search(text) and not _pinned(rel, text):
                    found.append(f"{rel}:{line}: {text!r} ({why})")
    assert not found, "\n".join(found)


# ---------------------------------------------------------------- the Raw tab's damage lines


def _markers(data: bytes, compression: str) -> list[str]:
    from app.rawview.raw_text import decode_jsonl

    text = decode_jsonl(data, compression)
    return [text.line_text(i).removeprefix("⚠ ") for i in sorted(text.markers)]


def test_raw_damage_lines_say_byte_n_and_name_the_frame() -> None:
    from persistence.jsonl.frames import compress_frame

    header = b'{"type":"session","version":0,"id":"s","createdAt":1000,"delegationDepth":0}\n'
    line = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
    torn = compress_frame(line)[:-2]
    zstd = compress_frame(header) + compress_frame(line) + torn
    at = len(zstd) - len(torn)
    assert _markers(zstd, "zstd") == [
        f"torn tail: frame 3 at byte {at:,} is incomplete ({len(torn)} bytes, not committed; a repair cuts it)"
    ]
    plain = header + line + b'{"type":"step'
    assert _markers(plain, "none") == [
        f"torn tail: an incomplete final line of 13 bytes at byte {len(header) + len(line):,} (not committed; a repair cuts it)"
    ]
    bad = bytearray(compress_frame(line))
    bad[-5] ^= 0xFF  # a damaged frame with its structure intact
    marker = _markers(compress_frame(header) + bytes(bad) + compress_frame(line), "zstd")[0]
    assert marker.startswith(f"frame 2 at byte {len(compress_frame(header))} ({len(bad)} bytes) failed to decode: "), marker
    assert "file offset" not in marker and "frame at byte" not in marker

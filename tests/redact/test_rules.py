"""Each kind of secret is replaced (and its near misses are not), numbering is stable, JSON keys and record
ids are kept, streamed pieces are redacted as one text, and a preview never shows a secret."""

from __future__ import annotations

import re

import pytest
import redactkit as rk

from app.redact import RULES, Redactor
from app.redact.rules import home_replacement

PLACEHOLDER = re.compile(r"\[redacted:([a-z-]+)#(\d+)\]")


@pytest.mark.parametrize(("kind", "text", "secret"), [(k, t, s) for k, pairs in rk.POSITIVE.items() for t, s in pairs])
def test_each_kind_is_replaced(kind: str, text: str, secret: str) -> None:
    r = Redactor()
    out = r.text(text)
    assert secret not in out
    assert [m.group(1) for m in PLACEHOLDER.finditer(out)] == [kind]
    assert r.report().counts == {kind: 1}


@pytest.mark.parametrize(("kind", "text"), [(k, t) for k, texts in rk.NEAR_MISSES.items() for t in texts])
def test_near_misses_are_kept(kind: str, text: str) -> None:
    r = Redactor()
    assert r.text(text) == text, kind
    assert r.report().total == 0


def test_every_rule_has_an_example_and_a_false_positive_note() -> None:
    kinds = {rule.kind for rule in RULES}
    assert kinds == set(rk.POSITIVE) == set(rk.NEAR_MISSES)
    for rule in RULES:
        assert rule.example and rule.false_positives, rule.name


def test_the_same_secret_gets_the_same_number_everywhere() -> None:
    r = Redactor()
    a, b = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34", "sk-0123456789abcdef0123456789abcdef"
    first = r.text(f"{a} then {b}")
    second = r.value({"x": [f"again {b}", {"y": a}], "mail": "bob@example.com"})
    assert first == "[redacted:api-key#1] then [redacted:api-key#2]"
    assert second == {"x": ["again [redacted:api-key#2]", {"y": "[redacted:api-key#1]"}], "mail": "[redacted:email#1]"}
    report = r.report()
    assert report.counts == {"api-key": 4, "email": 1} and report.distinct == {"api-key": 2, "email": 1}


def test_json_keys_and_record_ids_are_kept_credential_keys_replace_their_value() -> None:
    r = Redactor()
    record = {
        "type": "tool/call",
        "id": "alice@example.com",  # a record's own ids are the log's structure
        "data": {"alice@example.com": "x", "db_password": "pl4in", "apiKey": "k", "password": "", "n": 3, "ok": True},
    }
    out = r.value(record, top=True)
    assert out["type"] == "tool/call" and out["id"] == "alice@example.com"
    assert out["data"] == {
        "alice@example.com": "x",
        "db_password": "[redacted:password#1]",
        "apiKey": "[redacted:password#2]",
        "password": "",
        "n": 3,
        "ok": True,
    }
    clean = {"type": "turn/start", "data": {"turn": 1}}
    assert r.value(clean, top=True) is clean  # nothing copied when nothing changed


def test_a_secret_streamed_in_pieces_is_cut_from_every_piece_and_the_pieces_stay() -> None:
    r = Redactor()
    out = r.pieces(rk.SPLIT_PIECES, "seq 9 assistant/chunk")
    assert len(out) == len(rk.SPLIT_PIECES)
    assert "".join(out) == "the key is [redacted:api-key#1] and more text"
    assert out[0] == "the key is [redacted:api-key#1]" and out[1] == "" and out[2] == " and more"
    assert rk.SPLIT_PIECES[1] not in "".join(out)
    assert r.pieces(["no ", "secret"]) == ["no ", "secret"]


def test_home_folder_stays_an_absolute_path_and_only_as_a_whole_component() -> None:
    r = Redactor(home="/home/alice/")
    assert r.text("cd /home/alice/proj && ls /home/alice2 /home/alice") == (
        "cd /home/[redacted:home]/proj && ls /home/alice2 /home/[redacted:home]"
    )
    assert r.report().counts == {"home": 2}
    assert home_replacement("/root") == "/[redacted:home]"
    assert Redactor().text("cd /home/alice/proj") == "cd /home/alice/proj"  # only on request


def test_samples_show_context_and_a_documented_prefix_never_a_secret() -> None:
    r = Redactor(samples=3)
    secrets = [s for pairs in rk.POSITIVE.values() for _, s in pairs]
    for text, _ in (p for pairs in rk.POSITIVE.values() for p in pairs):
        r.text("before " + text + " after", "seq 4 user/message")
    report = r.report()
    assert len(report.samples) == 3
    first = report.samples[0]
    assert first.kind == "api-key" and first.where == "seq 4 user/message"
    assert "OPENAI_API_KEY=sk-…[redacted:api-key#1] ./run" in first.context
    for sample in report.samples:
        assert not any(s in sample.context for s in secrets)
        assert "\n" not in sample.context
    assert report.summary().startswith(f"{report.total} replaced: ")
    assert Redactor().report().summary() == "nothing to redact found"


def test_read_only_views_of_records_are_walked_too() -> None:
    from persistence.model.frozen import freeze

    r = Redactor()
    record = freeze({"type": "user/message", "data": {"content": [{"type": "text", "text": "mail bob@example.com"}]}})
    out = r.value(record, top=True)
    assert out["data"]["content"][0]["text"] == "mail [redacted:email#1]"
    assert dict(r.value(freeze({"a": ("clean",)}))) == {"a": ("clean",)} and r.report().counts == {"email": 1}

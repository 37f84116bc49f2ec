"""Every export format: Markdown and HTML content, HTML escaping (a log holding markup exports inert text),
JSONL byte-identical to ``sessionscope raw``, the support bundle's contents (and nothing from other
sessions), read-only reads, refused targets, and the ``run_export`` command shape."""

from __future__ import annotations

import importlib.metadata
import io
import json
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import insightkit as ik
import pytest
import sessionkit as sk
import zstandard

from app.actions import verify
from app.cli import main
from app.export import export_session, run_export, suggested_name
from app.export.document import TOOL_TEXT_CHARS
from persistence import SessionArgumentError, SessionPersistenceError, js_dumps

EVIL = '<script>alert("x")</script> <a href="javascript:alert(1)">x</a> "><img src=x onerror=alert(1)> </details></section>'


def export(path: str, backend: str, sid: str, fmt: str, out: Path) -> Any:
    async def go() -> Any:
        store = ik.reader(path, backend)
        try:
            return await export_session(store, sid, fmt, str(out))
        finally:
            await store.close()

    return ik.run(go())


def raw_cli_bytes(path: str, sid: str, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, int]:
    """What ``sessionscope raw ROOT ID`` writes to a UTF-8 stdout, as bytes."""
    buf = io.BytesIO()
    stream = io.TextIOWrapper(buf, encoding="utf-8", newline="\n", write_through=True)
    monkeypatch.setattr(sys, "stdout", stream)
    code = main(["raw", path, sid])
    stream.flush()
    monkeypatch.undo()
    return buf.getvalue(), code


def _long_and_odd_session() -> list[dict[str, Any]]:
    big = "line of output\n" * 800  # 12,000 characters
    msg = sk.assistant_message(4, 1, 1, "I will read it")
    msg["data"]["message"]["content"].append(sk.tool_call_block("c1", "read_file", '{"path":"a.txt"}'))
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, "please look"),
        sk.ev("session/title", 2, {"title": "Odd one", "messageSeqs": [1], "source": {"kind": "fallback"}}),
        sk.step_start(3, 1, 1),
        msg,
        sk.tool_call(5, 1, 1, "c1", "read_file"),
        sk.tool_result(6, 1, 1, "c1", "```\nfence inside\n```\n" + big + "not shown"),
        sk.step_end(7, 1, 1),
        sk.step_start(8, 1, 2),
        sk.text_delta(9, 1, 2, "partial answer "),
        sk.text_delta(10, 1, 2, "that never finished"),
        sk.step_end(11, 1, 2),  # no message: a cancelled stream
        sk.turn_end(12, 1, "aborted"),
    ]


def test_markdown_turns_messages_tools_results_and_truncation(tmp_path: Path) -> None:
    path = ik.store_path(tmp_path, "jsonl-zstd")
    ik.run(ik.write_sessions(path, "jsonl-zstd", {"s": (_long_and_odd_session(), {}), "r": (ik.rich_session(2, 3), {})}))
    out = tmp_path / "s.md"
    result = export(path, "jsonl-zstd", "s", "md", out)
    text = out.read_text(encoding="utf-8")
    assert result.bytes == out.stat().st_size and result.events == 13
    assert text.startswith("# Odd one\n")
    assert "| Session | s |" in text and "| Tool calls | 1 |" in text
    for part in ("## Turn 1", "**User**\n\nplease look", "**Assistant**\n\nI will read it", "**Tool call · read_file** (`c1`)"):
        assert part in text
    assert "**Result · read_file**\n\n````\n" in text  # a fence longer than the payload's own
    total = 21 + 12000 + 9
    assert f"[truncated: {total - TOOL_TEXT_CHARS:,} of {total:,} characters not shown" in text
    assert "fence inside" in text and "not shown\n" not in text
    assert "**Streamed, no message** (2 chunks; cancelled or crashed)\n\n> partial answer that never finished" in text
    assert "*Turn 1 aborted" in text
    rich = tmp_path / "r.md"
    export(path, "jsonl-zstd", "r", "md", rich)
    body = rich.read_text(encoding="utf-8")
    assert "**Reasoning**" in body and "answer 1.1" in body and body.count("## Turn ") == 3


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "table", "tr", "th", "td", "main", "section",
                "h2", "div", "details", "summary", "pre", "span", "b", "footer"}  # fmt: skip


def _evil_session() -> list[dict[str, Any]]:
    msg = sk.assistant_message(4, 1, 1, EVIL, calls=[])
    msg["data"]["message"]["content"].insert(0, {"type": "reasoning", "text": EVIL})
    msg["data"]["message"]["content"].append({"type": "tool-call", "id": EVIL, "name": EVIL, "arguments": EVIL})
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, EVIL),
        sk.ev("session/title", 2, {"title": EVIL, "messageSeqs": [], "source": {"kind": "user"}}),
        sk.step_start(3, 1, 1),
        msg,
        sk.ev("tool/call", 5, {"turn": 1, "step": 1, "callId": EVIL, "name": EVIL, "arguments": EVIL}),
        sk.tool_result(6, 1, 1, EVIL, EVIL, is_error=True),
        sk.step_end(7, 1, 1),
        sk.ev("turn/end", 8, {"turn": 1, "reason": {"kind": "error", "error": {"message": EVIL, "code": "UNKNOWN"}}}),
    ]


@pytest.mark.parametrize("backend", ["jsonl-none", "sqlite"])
def test_html_is_self_contained_and_transcript_markup_is_inert(tmp_path: Path, backend: str) -> None:
    path = ik.store_path(tmp_path, backend)
    ik.run(ik.write_sessions(path, backend, {"evil": (_evil_session(), {"cwd": "/w/<script>"})}))
    out = tmp_path / "evil.html"
    export(path, backend, "evil", "html", out)
    page = out.read_text(encoding="utf-8")
    parser = _Page()
    parser.feed(page)
    assert set(parser.tags) <= ALLOWED_TAGS, set(parser.tags) - ALLOWED_TAGS
    assert "script" not in parser.tags and "a" not in parser.tags and "img" not in parser.tags
    assert {name for name, _v in parser.attrs} <= {"lang", "charset", "http-equiv", "content", "name", "class"}
    assert not any(v and "javascript" in v.lower() for _n, v in parser.attrs)
    assert parser.tags.count("section") == 1 and page.count("</section>") == 1  # the payload closed nothing
    # Every copy of the payload is text: the reader sees it, inert.
    text = "".join(parser.text)
    assert text.count(EVIL) >= 8
    assert "&lt;script&gt;" in page and "<script" not in page.lower().replace("&lt;script", "")
    assert "http://" not in page and "https://" not in page and "<link" not in page and "url(" not in page
    assert "default-src 'none'" in page  # the second wall
    assert parser.tags.count("details") == 3  # reasoning, tool call, result: collapsible


def _plant_bytes(path: str, backend: str, sid: str, data: bytes) -> Path:
    log = next(Path(path).glob(f"*/{sid}/session.jsonl*"))
    if backend == "jsonl-zstd":
        data = zstandard.ZstdCompressor().compress(data)
    with open(log, "ab") as f:
        f.write(data)
    return log


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
@pytest.mark.parametrize(
    "damage", [b"", b'{"type":"feedback/record","seq":999,"time":1,"data":{"text":"\xff\xfe bad"}}\n', b'{"type":"tu']
)
def test_jsonl_is_byte_identical_to_raw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, damage: bytes) -> None:
    path = ik.store_path(tmp_path, backend)
    events = ik.rich_session(4, 4)
    events[1]["data"]["content"][0]["text"] = "unicode ✓ \u2028 and an astral 𝄞"
    ik.run(ik.write_sessions(path, backend, {"s": (events, {})}))
    if damage:
        _plant_bytes(path, backend, "s", damage)
    expected, code = raw_cli_bytes(path, "s", monkeypatch)
    assert code == 0 and expected
    out = tmp_path / "s.jsonl"
    export(path, backend, "s", "jsonl", out)
    assert out.read_bytes() == expected


def test_sqlite_jsonl_is_the_rows_as_a_transcript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ik.store_path(tmp_path, "sqlite")
    events = ik.rich_session(6, 3)
    ik.run(ik.write_sessions(path, "sqlite", {"s": (events, {})}))
    out = tmp_path / "s.jsonl"
    export(path, "sqlite", "s", "jsonl", out)
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b"" and json.loads(lines[0])["type"] == "session" and json.loads(lines[0])["id"] == "s"
    assert [json.loads(line) for line in lines[1:-1]] == events

    async def stored() -> list[dict[str, Any]]:
        store = ik.reader(path, "sqlite")
        try:
            return (await store.view("s")).stored.records()
        finally:
            await store.close()

    assert lines[1:-1] == [js_dumps(r) for r in ik.run(stored())]  # the engine's own serialization of each row
    assert raw_cli_bytes(path, "s", monkeypatch)[1] == 1  # `sessionscope raw` refuses a SQLite store


def _members(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


async def _verify_row(path: str, backend: str, sid: str) -> dict[str, Any]:
    store = ik.reader(path, backend)
    try:
        rows, _err = await verify.verify_root(store)
    finally:
        await store.close()
    return next(r.to_json() for r in rows if r.session_id == sid)


@pytest.mark.parametrize("backend", ik.BACKENDS)
def test_bundle_contents_and_nothing_from_other_sessions(tmp_path: Path, backend: str) -> None:
    path = ik.store_path(tmp_path, backend)
    other = "other-session-7f3a9c"
    ik.run(
        ik.write_sessions(
            path, backend, {"mine": (ik.rich_session(7, 3), {}), other: (ik.rich_session(8, 3), {"cwd": "/w/secret"})}
        )
    )
    out = tmp_path / "mine.zip"
    result = export(path, backend, "mine", "bundle", out)
    members = _members(out)
    manifest = json.loads(members["manifest.json"])
    header = json.loads(members["header.json"])
    verdict = json.loads(members["verify.json"])
    assert header["id"] == "mine" and header["version"] == 0 and result.events > 0
    assert manifest["sessionscope"] == importlib.metadata.version("sessionscope")
    assert (manifest["sessionFormatVersion"], manifest["headerVersion"], manifest["sessionId"]) == (0, 0, "mine")
    row = ik.run(_verify_row(path, backend, "mine"))
    assert {k: verdict[k] for k in row} == row  # the verify row of this session, as `verify` prints it
    assert verdict["diagnosis"]["eventCount"] == result.events
    if backend == "sqlite":
        assert set(members) == {"README.txt", "session/session.rows.jsonl", "header.json", "verify.json", "manifest.json"}
        assert manifest["sqliteSchemaVersion"] == 17
        jsonl = tmp_path / "mine.jsonl"
        export(path, backend, "mine", "jsonl", jsonl)
        assert members["session/session.rows.jsonl"] == jsonl.read_bytes()
        plain = b"".join(members.values())
    else:
        (artifact,) = [n for n in members if n.startswith("session/")]
        stored = next(Path(path).glob(f"*/mine/{artifact.split('/')[1]}")).read_bytes()
        assert members[artifact] == stored and manifest["sqliteSchemaVersion"] is None
        plain = b"".join(members.values())
        if artifact.endswith(".zstd"):
            plain += zstandard.ZstdDecompressor().decompressobj().decompress(stored)
    for f in manifest["files"]:
        import hashlib

        assert hashlib.sha256(members[f["name"]]).hexdigest() == f["sha256"] and len(members[f["name"]]) == f["bytes"]
    assert other.encode() not in plain and b"/w/secret" not in plain


def test_bundle_of_damaged_sessions(tmp_path: Path) -> None:
    path = ik.store_path(tmp_path, "jsonl-none")
    ik.run(
        ik.write_sessions(
            path, "jsonl-none", {"open": ([*sk.one_turn_log(), *sk.open_turn2()], {}), "bad": (ik.rich_session(3, 2), {})}
        )
    )
    log = next(Path(path).glob("*/bad/session.jsonl"))
    lines = log.read_bytes().split(b"\n")
    lines[4] = b'{"type":"turn/start","seq":99999,"time":1,"data":{"turn":1}}'
    log.write_bytes(b"\n".join(lines))
    v_open = json.loads(_members(_bundle(path, "open", tmp_path))["verify.json"])
    assert v_open["verdict"] == "repairable" and [c["type"] for c in v_open["diagnosis"]["closers"]][-1] == "turn/end"
    members = _members(_bundle(path, "bad", tmp_path))
    v_bad = json.loads(members["verify.json"])
    assert v_bad["verdict"] == "corrupt" and members["session/session.jsonl"] == log.read_bytes()
    assert json.loads(members["header.json"])["id"] == "bad"
    with pytest.raises(SessionPersistenceError, match="corrupt"):
        export(path, "jsonl-none", "bad", "md", tmp_path / "bad.md")
    assert not (tmp_path / "bad.md").exists()


def _bundle(path: str, sid: str, tmp: Path) -> Path:
    out = tmp / f"{sid}.zip"
    export(path, "jsonl-none", sid, "bundle", out)
    return out


@pytest.mark.parametrize("backend", ik.BACKENDS)
def test_exports_never_write_the_session(tmp_path: Path, backend: str) -> None:
    path = ik.store_path(tmp_path, backend)
    ik.run(
        ik.write_sessions(path, backend, {"s": (ik.rich_session(5, 3), {}), "o": ([*sk.one_turn_log(), *sk.open_turn2()], {})})
    )
    main_file = Path(path) if backend == "sqlite" else None
    before = ik.tree_digest(path) if main_file is None else main_file.read_bytes()
    outs = tmp_path / "outs"
    outs.mkdir()
    for sid in ("s", "o"):
        for fmt in ("md", "html", "jsonl", "bundle"):
            export(path, backend, sid, fmt, outs / f"{sid}.{fmt}")
    after = ik.tree_digest(path) if main_file is None else main_file.read_bytes()
    assert after == before  # an open turn is not repaired, nothing is appended


def test_refused_targets(tmp_path: Path) -> None:
    path = ik.store_path(tmp_path, "jsonl-none")
    ik.run(ik.write_sessions(path, "jsonl-none", {"s": (sk.one_turn_log(), {})}))
    for target, why in (
        (Path(path) / "s.md", "inside the session root"),
        (tmp_path / "missing" / "s.md", "does not exist"),
        (tmp_path, "is a folder"),
    ):
        with pytest.raises(SessionArgumentError, match=why):
            export(path, "jsonl-none", "s", "md", target)
    with pytest.raises(SessionArgumentError, match="unknown export format"):
        export(path, "jsonl-none", "s", "pdf", tmp_path / "s.pdf")
    sqlite_path = ik.store_path(tmp_path, "sqlite")
    ik.run(ik.write_sessions(sqlite_path, "sqlite", {"s": (sk.one_turn_log(), {})}))
    with pytest.raises(SessionArgumentError, match="the session store itself"):
        export(sqlite_path, "sqlite", "s", "jsonl", Path(sqlite_path + "-wal"))
    export(sqlite_path, "sqlite", "s", "md", Path(sqlite_path).parent / "beside-the-store.md")  # beside it is fine


def test_run_export_command_shape(tmp_path: Path) -> None:
    path = ik.store_path(tmp_path, "jsonl-zstd")
    ik.run(ik.write_sessions(path, "jsonl-zstd", {"s": (sk.one_turn_log(), {})}))
    out = tmp_path / "s.html"
    text, code = run_export(path, "s", "html", str(out))
    assert code == 0 and text == f"exported html of session s to {out} ({out.stat().st_size:,} bytes)\n"
    text, code = run_export(path, "nope", "md", str(tmp_path / "n.md"))
    assert (text, code) == ('sessionscope: Error: session "nope" not found\n', 1)
    text, code = run_export(path, "nope", "md", str(tmp_path / "n.md"), json_output=True)
    assert code == 1 and json.loads(text) == {"error": {"class": "Error", "message": 'session "nope" not found'}}
    text, code = run_export(path, "s", "jsonl", str(tmp_path / "s.jsonl"), json_output=True)
    assert code == 0 and json.loads(text)["format"] == "jsonl"
    assert not (tmp_path / "n.md").exists()
    assert suggested_name("a/b:c", "bundle") == "a_b_c.zip" and suggested_name("..", "md") == "session.md"

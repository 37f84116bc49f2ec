"""A redacted support bundle on every backend: no secret anywhere in the zip's bytes, the transcript re-encoded
like the original and read back through the engine with the same events, seqs and types, the manifest
saying what was replaced; the preview's counts are the export's; the command line's ``--redact``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
import redactkit as rk
import sessionkit as sk

from app.cli import main
from app.export import ExportTargetError, export_session, preview_redaction, run_export
from app.redact import RedactionReport, Redactor
from app.sources import close_source, open_source, store_for
from persistence import RawChunk, iter_raw, js_dumps, open_store
from persistence.jsonl.frames import compress_frame


def _export(path: str, backend: str, out: Path, redactor: Redactor | None, fmt: str = "bundle") -> Any:
    async def go() -> Any:
        store = open_store(path, backend, read_only=True, create=False)
        try:
            return await export_session(store, "sec", fmt, str(out), redactor=redactor)
        finally:
            await store.close()

    return asyncio.run(go())


def _preview(path: str, backend: str, home: str | None) -> RedactionReport:
    async def go() -> RedactionReport:
        store = open_store(path, backend, read_only=True, create=False)
        try:
            return await preview_redaction(store, "sec", home=home)
        finally:
            await store.close()

    return asyncio.run(go())


def _members(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _all_plaintext(zip_path: Path) -> bytes:
    """Every byte the zip holds, with every member decompressed (zstd frames too, a torn one included)."""
    out = [zip_path.read_bytes()]
    for name, data in _members(zip_path).items():
        out.append(data)
        if name.endswith(".zstd"):
            out.append(b"".join(sk.zstd_frames(data)))
            # Every frame a lenient reader decodes, the torn last one included.
            out.extend(piece.text for piece in iter_raw(data, "zstd") if isinstance(piece, RawChunk))
    return b"".join(out)


def _read_back(transcript: bytes, name: str, header: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    """The bundle's transcript opened by the engine, planted in a fresh JSONL root at the header's place."""
    compression = "zstd" if name.endswith(".zstd") else "none"
    root = tmp / "readback"
    target = sk.artifact(root, header.get("cwd"), header["id"], compression)
    target.parent.mkdir(parents=True)
    target.write_bytes(transcript)

    async def go() -> list[dict[str, Any]]:
        store = open_store(str(root), "jsonl-" + compression, read_only=True, create=False)
        try:
            view = await store.view(header["id"])
            assert view.readable, (view.status, view.reason)
            return sk.wire(view.stored)
        finally:
            await store.close()

    return asyncio.run(go())


def _plant(root: Path, data: bytes, compression: str, cwd: str = "/w/p") -> None:
    target = sk.artifact(root, cwd, "sec", compression)
    target.parent.mkdir(parents=True)
    target.write_bytes(data)


def _events(path: str, backend: str) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        store = open_store(path, backend, read_only=True, create=False)
        try:
            return sk.wire((await store.view("sec")).stored)
        finally:
            await store.close()

    return asyncio.run(go())


@pytest.mark.parametrize("backend", rk.BACKENDS)
def test_redacted_bundle_holds_no_secret_and_reads_back_with_the_same_events(tmp_path: Path, backend: str) -> None:
    home = os.path.expanduser("~")  # the test's private HOME
    header, events, secrets = rk.secret_session(home)
    path = rk.store_path(tmp_path, backend)
    rk.write_session(path, backend, header, events)
    plain_zip, red_zip = tmp_path / "plain.zip", tmp_path / "red.zip"
    _export(path, backend, plain_zip, None)
    result = _export(path, backend, red_zip, Redactor(home=home))

    everything = _all_plaintext(plain_zip)
    assert all(s.encode() in everything or json.dumps(s)[1:-1].encode() in everything for s in secrets)  # the test sees them
    everything = _all_plaintext(red_zip)
    for secret in [*secrets, home]:
        assert secret.encode() not in everything, secret
        assert json.dumps(secret)[1:-1].encode() not in everything, secret  # nor JSON-escaped

    members = _members(red_zip)
    manifest = json.loads(members["manifest.json"])
    red_header = json.loads(members["header.json"])
    assert red_header["id"] == "sec" and red_header["cwd"] == os.path.dirname(home) + "/[redacted:home]/proj"
    (name,) = [n for n in members if n.startswith("session/")]
    assert set(members) == set(_members(plain_zip))  # the same members, the transcript under the same name
    back = _read_back(members[name], name, red_header, tmp_path)
    original = _events(path, backend)
    assert [(e["seq"], e["type"]) for e in back] == [(e["seq"], e["type"]) for e in original]
    assert len(back) == len(events) == result.events
    # Each place a secret was: the user prompt, the title, the assistant text and a tool call's arguments,
    # the tool result (home folder, key blocks), and a key streamed in pieces (the same number as whole).
    by_seq = {e["seq"]: e for e in back}
    prompt = by_seq[1]["data"]["content"][0]["text"]
    assert "[redacted:api-key#1]" in prompt and "[redacted:email#1]" in prompt
    assert by_seq[2]["data"]["title"].startswith("Deploy with [redacted:api-key#")
    text, call = by_seq[4]["data"]["message"]["content"]
    assert "[redacted:api-key#" in text["text"] and "[redacted:aws-key#1]" in text["text"]
    assert json.loads(call["arguments"])["password"].startswith("[redacted:password#")
    assert json.loads(call["arguments"])["token"] == "[redacted:slack-token#1]"
    output = by_seq[6]["data"]["message"]["content"][0]["content"][0]["text"]
    assert f"read {os.path.dirname(home)}/[redacted:home]/proj/.env" in output and "[redacted:private-key#2]" in output
    streamed = "".join(by_seq[9 + k]["data"]["chunk"]["text"] for k in range(len(rk.SPLIT_PIECES)))
    whole = by_seq[9 + len(rk.SPLIT_PIECES)]["data"]["message"]["content"][0]["text"]
    assert streamed == whole and re.fullmatch(r"the key is \[redacted:api-key#\d+\] and more text", whole)
    # The bundle itself opened as a source (verified against its manifest), as a support engineer would.
    src = open_source(red_zip)
    try:
        assert src.bundle_check is not None and src.bundle_check.ok

        async def via_source() -> list[dict[str, Any]]:
            store, sid = await store_for(src, None)
            try:
                return sk.wire((await store.view(sid)).stored)
            finally:
                await store.close()

        assert [(e["seq"], e["type"]) for e in asyncio.run(via_source())] == [(e["seq"], e["type"]) for e in back]
    finally:
        close_source(src)
    if backend == "jsonl-zstd":  # re-encoded as the engine's frames: one per line batch, like the original
        plain_members = _members(plain_zip)
        assert len(sk.zstd_frames(members[name])) == len(sk.zstd_frames(plain_members[name]))

    redaction = manifest["redaction"]
    assert redaction["redacted"] is True and redaction["homeFolder"] is True
    assert {"openai-style-key", "private-key", "email", "home-folder"} <= set(redaction["rules"])
    kinds = {k for k in rk.POSITIVE} | {"home"}
    assert set(redaction["counts"]) == kinds
    assert redaction["counts"] == dict(sorted(result.redaction.counts.items()))
    assert redaction["distinct"]["api-key"] >= 4  # three in the texts plus the streamed one
    for f in manifest["files"]:  # the manifest hashes what the bundle holds
        import hashlib

        assert hashlib.sha256(members[f["name"]]).hexdigest() == f["sha256"]
    # Every key of a plain bundle's manifest is still there (the layout others read), plus redaction.
    assert set(json.loads(_members(plain_zip)["manifest.json"])) == set(manifest)
    assert json.loads(_members(plain_zip)["manifest.json"])["redaction"] == {"redacted": False}

    preview = _preview(path, backend, home)
    assert dict(preview.counts) == dict(result.redaction.counts) and preview.samples
    assert not any(s in sample.context for s in secrets for sample in preview.samples)


def test_torn_tail_stays_torn_and_redacted(tmp_path: Path) -> None:
    for compression in ("zstd", "none"):
        root = tmp_path / compression
        header = sk.header_line("sec", "/w/p")
        torn = b'{"type":"assistant/chunk","seq":6,"time":7,"data":{"text":"AKIAIOSFODNN7EXAMPLE'
        body = b"".join(js_dumps(e) + b"\n" for e in sk.one_turn_log())
        body = body.replace(b'"text":"hi"', b'"text":"hi alice@example.org"')
        if compression == "zstd":
            data = compress_frame(js_dumps(header) + b"\n") + compress_frame(body) + compress_frame(torn)[:-2]
        else:
            data = js_dumps(header) + b"\n" + body + torn
        _plant(root, data, compression)
        out = tmp_path / f"{compression}.zip"
        _export(str(root), "jsonl-" + compression, out, Redactor())
        members = _members(out)
        everything = _all_plaintext(out)
        assert b"AKIAIOSFODNN7EXAMPLE" not in everything and b"alice@example.org" not in everything
        verdict = json.loads(members["verify.json"])
        assert verdict["status"] == "torn-tail"
        name = "session/session.jsonl" + (".zstd" if compression == "zstd" else "")
        # Still torn: the redacted bundle's transcript diagnoses like the original.
        planted = tmp_path / f"back-{compression}"
        _plant(planted, members[name], compression)

        async def diagnose(planted: Path = planted, compression: str = compression) -> str:
            store = open_store(str(planted), "jsonl-" + compression, read_only=True, create=False)
            try:
                return (await store.view("sec")).status
            finally:
                await store.close()

        assert asyncio.run(diagnose()) == "torn-tail"
        assert json.loads(members["manifest.json"])["redaction"]["counts"] == {"aws-key": 1, "email": 1}


def test_undecodable_bytes_are_left_out_and_said_so(tmp_path: Path) -> None:
    root = tmp_path / "r"
    data = compress_frame(js_dumps(sk.header_line("sec", "/w/p")) + b"\n")
    data += compress_frame(b"".join(js_dumps(e) + b"\n" for e in sk.one_turn_log()))
    data += b"\x28\xb5\x2f\xfdGARBAGE ghp_0123456789abcdefghijKLMNOPQRSTUVWXyz" * 3
    _plant(root, data, "zstd")
    out = tmp_path / "b.zip"
    _export(str(root), "jsonl-zstd", out, Redactor())
    assert b"ghp_0123456789abcdefghijKLMNOPQRSTUVWXyz" not in _all_plaintext(out)
    problems = json.loads(_members(out)["manifest.json"])["problems"]
    assert any("left out of the redacted transcript" in p for p in problems)


def test_redaction_applies_to_bundles_only(tmp_path: Path) -> None:
    header, events, _secrets = rk.secret_session("/home/alice")
    path = rk.store_path(tmp_path, "jsonl-none")
    rk.write_session(path, "jsonl-none", header, events)
    with pytest.raises(ExportTargetError, match="bundles only"):
        _export(path, "jsonl-none", tmp_path / "x.md", Redactor(), fmt="md")
    assert not (tmp_path / "x.md").exists()


def test_cli_export_redact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = os.path.expanduser("~")
    header, events, secrets = rk.secret_session(home)
    path = rk.store_path(tmp_path, "jsonl-zstd")
    rk.write_session(path, "jsonl-zstd", header, events)
    out = tmp_path / "cli.zip"
    code = main(["export", path, "sec", "--format", "bundle", "--redact", "-o", str(out), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0 and printed["redaction"]["redacted"] is True and printed["redaction"]["homeFolder"] is False
    everything = _all_plaintext(out)
    assert not any(s.encode() in everything for s in secrets)
    assert home.encode() in everything  # the home folder only with --redact-home

    out2 = tmp_path / "cli2.zip"
    assert main(["export", path, "sec", "--format", "bundle", "--redact-home", "-o", str(out2)]) == 0
    text = capsys.readouterr().out
    assert "redacted: " in text and "home " in text
    assert home.encode() not in _all_plaintext(out2)

    text, code = run_export(path, "sec", "md", str(tmp_path / "x.md"), redact=True)
    assert code == 2 and "bundles only" in text
    text, code = run_export(path, "sec", "bundle", str(tmp_path / "r.zip"), redact=True)
    assert code == 0 and "redacted: " in text

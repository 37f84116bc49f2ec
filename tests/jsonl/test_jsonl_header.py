"""JSONL header line: shape, version refusal, validation (jsonl-backend §5, §15.2 cases 10-21)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from sessionkit import encode_log, header_line, meta, one_turn_log, plant, run

from persistence import (
    JsonlSessionPersistence,
    SessionFormatUnsupportedError,
    SessionPersistenceCorruptionError,
    SessionPersistenceError,
)
from persistence.errors import upstream_class_of
from persistence.jsonl.lines import parse_header_meta, parse_header_record
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.usefixtures("fast_fsync")

ENCODINGS = ["zstd", "none"]


def _load_error(root: Path, session_id: str, compression: str) -> SessionPersistenceError:
    async def body() -> SessionPersistenceError:
        with pytest.raises(SessionPersistenceError) as info:
            await JsonlSessionPersistence(root, compression=compression).load(session_id)
        return info.value

    return run(body())


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_10_newer_version_refused_before_shape(tmp_path: Path, compression: str) -> None:
    """§15 case 10: version 42 without createdAt is refused (not "not a header") with the raw path."""
    head = b'{"type":"session","version":42,"id":"future-shape","futureOnly":true}\n'
    path = plant(tmp_path, "_no-cwd/future-shape", encode_log(head, [b'{"future":"row"}\n'], compression), compression)
    err = _load_error(tmp_path, "future-shape", compression)
    assert isinstance(err, SessionFormatUnsupportedError)
    assert upstream_class_of(err) == "SessionFormatUnsupportedError"
    message = str(err)
    assert message.startswith('session "future-shape" uses log format v42, but this harness reads only v0: ')
    assert "written by a newer harness \u2014 upgrade the harness to open it" in message
    assert message.endswith(f" (raw log: {path})")
    assert err.location == {"kind": "jsonl", "path": str(path)}


def test_case_11_scalar_first_line(tmp_path: Path) -> None:
    """§15 case 11: a scalar first line skips the version check and is "not a session header"."""
    plant(tmp_path, "_no-cwd/x", b"42\n", "none")
    err = _load_error(tmp_path, "x", "none")
    assert not isinstance(err, SessionFormatUnsupportedError)
    assert str(err) == "corrupt session log: first line is not a session header"


def test_case_12_non_string_id_in_refusal(tmp_path: Path) -> None:
    """§15 case 12: ``js_string(id)`` in the refusal; ``undefined`` when the id is missing."""
    plant(tmp_path, "_no-cwd/x", b'{"type":"session","version":42,"id":123}\n', "none")
    assert 'session "123" uses log format v42' in str(_load_error(tmp_path, "x", "none"))
    with pytest.raises(SessionFormatUnsupportedError, match=r'session "undefined" uses log format v0\.5'):
        parse_header_record(b'{"version":0.5}\n', "/p")
    with pytest.raises(SessionFormatUnsupportedError, match=r'session "null" uses log format v-1, older'):
        parse_header_record(b'{"version":-1,"id":null}\n', "/p")


@pytest.mark.parametrize("compression", ENCODINGS)
@pytest.mark.parametrize(
    ("version", "pattern"),
    [
        (7, r"v7, .*written by a newer harness.*upgrade the harness"),
        (99, r"written by a newer harness.*upgrade the harness"),
        (-1, r"older than the supported v0.*no upgrade path"),
    ],
)
def test_case_13_created_foreign_version_refused_with_raw_path(
    tmp_path: Path, compression: str, version: int, pattern: str
) -> None:
    """§15 case 13: create does not check the version; load refuses it and cites the raw log."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        await store.create(meta("foreign", "/proj", version=version))
        await store.append("foreign", one_turn_log())

    run(body())
    path = tmp_path / "--proj--" / "foreign" / ("session.jsonl.zstd" if compression == "zstd" else "session.jsonl")
    err = _load_error(tmp_path, "foreign", compression)
    assert isinstance(err, SessionFormatUnsupportedError)
    assert err.location == {"kind": "jsonl", "path": str(path)}
    assert str(err).endswith(f" (raw log: {path})")
    assert re.search(pattern, str(err))


@pytest.mark.parametrize("record", [b"", b'{"type":"session"}', b'{"type":"session"}\n{"x":1}\n', b"\n\n"])
def test_case_14_header_record_must_be_exactly_one_line(record: bytes) -> None:
    """§15 case 14."""
    with pytest.raises(SessionPersistenceError, match="header-less"):
        parse_header_record(record, "/p")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty or header-less session log"),
        (b"no newline at all", "empty or header-less session log"),
        (b"not json\n", "corrupt session log: header line is not valid JSON"),
        (b'{"type":"event"}\n', "corrupt session log: first line is not a session header"),
        (b"\xef\xbb\xbf" + js_dumps(header_line("x")) + b"\n", "corrupt session log: header line is not valid JSON"),
    ],
)
def test_case_15_bad_header_records(tmp_path: Path, content: bytes, message: str) -> None:
    """§15 case 15 (+ §10 note: a BOM before the header is "not valid JSON" and ``list`` skips the file)."""
    plant(tmp_path, "_no-cwd/x", content, "none")
    err = _load_error(tmp_path, "x", "none")
    assert str(err) == message
    assert not isinstance(err, SessionPersistenceCorruptionError)  # backend errors propagate unwrapped

    async def listing() -> list[Any]:
        return await JsonlSessionPersistence(tmp_path, compression="none").list()

    assert run(listing()) == []


def _header_text(**fields: Any) -> bytes:
    base: dict[str, Any] = {"type": "session", "version": 0, "id": "h", "createdAt": 1000, "delegationDepth": 0}
    for k, v in fields.items():
        if v is _DROP:
            base.pop(k)
        else:
            base[k] = v
    text = js_dumps(base)
    # ``-0`` cannot be produced by js_dumps; patch the literal in.
    return text.replace(b'"@NEGZERO@"', b"-0") + b"\n"


_DROP = object()
NEGZERO = "@NEGZERO@"


@pytest.mark.parametrize(
    "fields",
    [
        {"createdAt": 1.5},
        {"createdAt": -1},
        {"createdAt": 2**53},
        {"createdAt": NEGZERO},
        {"createdAt": _DROP},
        {"delegationDepth": _DROP},
        {"delegationDepth": "1"},
        {"delegationDepth": 1.5},
        {"delegationDepth": -1},
        {"delegationDepth": NEGZERO},
        {"agentPreset": 7},
        {"agentPreset": None},
        {"origin": None},
        {"origin": "external"},
        {"id": 5},
        {"type": "header"},
        {"version": "0"},
        {"version": True},
    ],
    ids=lambda f: ",".join(f"{k}={v if v is not _DROP else 'missing'}" for k, v in f.items()),
)
def test_cases_16_17_18_header_shape(fields: dict[str, Any]) -> None:
    """§15 cases 16 (createdAt), 17 (delegationDepth), 18 (agentPreset) and §5.2 step 4."""
    with pytest.raises(SessionPersistenceError, match="corrupt session log: first line is not a session header"):
        parse_header_record(_header_text(**fields), "/p")
    assert parse_header_meta(_header_text(**fields)[:-1]) is None


def test_case_18_agent_preset_round_trips_and_build_rules() -> None:
    """§15 case 18 and §5.2 step 6: optional keys copied as-is, unknown keys dropped, integral floats kept."""
    parsed = parse_header_record(
        _header_text(
            agentPreset="minimal", cwd="/p", parentSession="par", seedLength=3, origin="subagent", pad="x" * 10, createdAt=5.0
        ),
        "/p",
    )
    assert parsed == {
        "version": 0,
        "id": "h",
        "createdAt": 5,
        "cwd": "/p",
        "parentSession": "par",
        "seedLength": 3,
        "origin": "subagent",
        "delegationDepth": 0,
        "agentPreset": "minimal",
    }
    assert list(parsed) == [
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "seedLength",
        "origin",
        "delegationDepth",
        "agentPreset",
    ]
    assert parse_header_record(_header_text(cwd=None), "/p")["cwd"] is None


@pytest.mark.parametrize("retired", ["sandboxMode", "approvalPolicy"])
@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_19_retired_policy_fields(tmp_path: Path, retired: str, compression: str) -> None:
    """§15 case 19: from the load scan and from list."""
    with pytest.raises(SessionPersistenceError, match="retired policy baseline fields"):
        parse_header_record(_header_text(**{retired: None}), "/p")
    head = js_dumps(header_line("ret", "/proj", **{retired: "x"})) + b"\n"
    plant(tmp_path, "--proj--/ret", encode_log(head, [one_turn_log()], compression), compression)
    assert "retired policy baseline fields" in str(_load_error(tmp_path, "ret", compression))

    async def listing() -> None:
        with pytest.raises(SessionPersistenceError, match="session header uses retired policy baseline fields"):
            await JsonlSessionPersistence(tmp_path, compression=compression).list()

    run(listing())


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_20_written_header_line(tmp_path: Path, compression: str) -> None:
    """§15 case 20 (and §5.1 key order with every optional field)."""
    from sessionkit import artifact, plaintext

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        await store.create(meta("mixed", "/proj"))
        await store.append("mixed", one_turn_log())
        await store.create(
            meta(
                "child",
                "/proj",
                agentPreset="explorer",
                delegationDepth=1,
                origin="subagent",
                seedLength=232,
                parentSession="parent",
            )
        )
        await store.append("child", one_turn_log())

    run(body())
    first = plaintext(artifact(tmp_path, "/proj", "mixed", compression).read_bytes(), compression).split(b"\n")[0]
    assert first == b'{"type":"session","version":0,"id":"mixed","createdAt":1000,"cwd":"/proj","delegationDepth":0}'
    child = plaintext(artifact(tmp_path, "/proj", "child", compression).read_bytes(), compression).split(b"\n")[0]
    assert child == (
        b'{"type":"session","version":0,"id":"child","createdAt":1000,"cwd":"/proj","parentSession":"parent",'
        b'"seedLength":232,"origin":"subagent","delegationDepth":1,"agentPreset":"explorer"}'
    )


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_21_padded_header_spans_read_chunks(tmp_path: Path, compression: str) -> None:
    """§15 case 21: a 9000-char extra field; listing reads the header over several 8 KiB chunks."""
    head = js_dumps(header_line("padded", "/proj", pad="p" * 9000)) + b"\n"
    plant(tmp_path, "--proj--/padded", encode_log(head, [one_turn_log()], compression), compression)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        headers = await store.list()
        assert [h.to_json() for h in headers] == [
            {"version": 0, "id": "padded", "createdAt": 1000, "cwd": "/proj", "delegationDepth": 0}
        ]
        assert len((await store.load("padded")).events) == 6

    run(body())


def test_relative_cwd_is_listed_but_refused_on_load(tmp_path: Path) -> None:
    """§5.1 / session-model §8 rule 2: the writer does not validate; the reader refuses a relative cwd."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        await store.create(meta("rel", "relative/dir"))
        await store.append("rel", one_turn_log())
        assert (tmp_path / "--relative-dir--" / "rel" / "session.jsonl").is_file()
        assert [h.cwd for h in await store.list()] == ["relative/dir"]
        with pytest.raises(
            SessionPersistenceCorruptionError, match=r'failed validation: .*cwd must be an absolute path, got "relative/dir"'
        ):
            await store.load("rel")

    run(body())


def test_origin_external_disappears_from_list(tmp_path: Path) -> None:
    """§5.1: ``origin: "external"`` is written, then fails the shape check (silently unlisted)."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        await store.create(meta("ext", "/proj", origin="external"))
        await store.append("ext", one_turn_log())
        assert await store.list() == []
        with pytest.raises(SessionPersistenceError, match="first line is not a session header"):
            await store.read_from("ext", 0)

    run(body())


def test_session_model_rule_09_missing_delegation_depth_and_default(tmp_path: Path) -> None:
    """session-model §8 rule 9: a JSONL header without delegationDepth is not a header; a stored
    top-level session loads with ``delegationDepth: 0``."""
    assert parse_header_meta(_header_text(delegationDepth=_DROP)[:-1]) is None

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("top", "/proj"))
        await store.append("top", one_turn_log())
        assert (await JsonlSessionPersistence(tmp_path).load("top")).meta.to_json()["delegationDepth"] == 0

    run(body())

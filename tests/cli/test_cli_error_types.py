"""Every printed failure is put in the engine's terms first (issue 21 item 6).

A stray ``TypeError`` becomes the engine's argument error, a codec error the engine's corruption error
with the bytes named (never the codec's own text), anything else the engine's base error; the printed
``class`` is then the JS class upstream throws for it.  The command line, ``search`` and ``export``
build the form the same way (``persistence.error_fields``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import error_payload, main
from persistence import (
    SessionArgumentError,
    SessionForkError,
    SessionPersistenceError,
    SessionStorageCorruptError,
    as_engine_error,
    error_fields,
)


@pytest.mark.parametrize(
    ("err", "cls", "engine_type"),
    [
        (TypeError("bad argument"), "TypeError", SessionArgumentError),
        (UnicodeDecodeError("utf-8", b"a\xff", 1, 2, "invalid start byte"), "Error", SessionStorageCorruptError),
        (ValueError("odd"), "Error", SessionPersistenceError),
        (SessionForkError("no such turn", "INVALID_BOUNDARY"), "SessionForkError", SessionForkError),
    ],
)
def test_every_failure_is_put_in_the_engine_terms(err: BaseException, cls: str, engine_type: type) -> None:
    assert type(as_engine_error(err)) is engine_type
    fields = error_payload(err)["error"]
    assert fields == error_fields(err)
    assert fields["class"] == cls
    assert "invalid start byte" not in fields["message"] and "codec" not in fields["message"]


def test_a_codec_error_names_the_bytes() -> None:
    err = UnicodeDecodeError("utf-8", b"ab\xfe", 2, 3, "invalid start byte")
    assert error_fields(err)["message"] == "bytes that are not valid UTF-8 (0xfe at byte 2)"


@pytest.mark.parametrize("verb", [["list", "--json"], ["verify", "--json"], ["search", "--json", "word"]])
def test_a_missing_root_is_typed_on_every_verb(verb: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    absent = tmp_path / "absent"
    code = main([verb[0], str(absent), *verb[1:]])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 2
    assert error == {"class": "Error", "message": f"no session root at {absent}"}
    assert not absent.exists()

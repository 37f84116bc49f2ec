"""How the command line writes: results that never crash the write, and failures in one typed shape.

A failure is ``{"error": {"class", "message"}}`` (upstream's shape) on stdout with ``--json``, else
one line ``sessionscope: <class>: <message>`` on stderr; exit code 1 either way, except a usage error
and a session root that does not exist (exit 2, what argparse and ``ls`` use for "you asked wrongly").
The class is the JS class upstream would throw (``upstream_class_of``).  A failure that is not the
engine's own (an OS error, a codec error, a stray Python exception) is first put in the engine's
terms (``engine_error``): a clean one-line message, never a raw codec text.
A character the stream cannot encode is written as an escape, never raised.

May import the standard library and the engine's JS-compatible JSON text and error classes.
"""

from __future__ import annotations

import argparse
import codecs
import re
import sys
from typing import Any, TextIO

from persistence import (
    SessionNotFoundError,
    SessionPersistenceError,
    as_engine_error,
    error_fields,
    js_dumps_str,
)


class NoSessionRoot(SessionNotFoundError):
    """The root a verb was given does not exist (nothing is created for it): exit code 2."""

    exit_code = 2

    def __init__(self, path: str) -> None:
        super().__init__(f"no session root at {path}")


def dump(value: Any) -> str:
    """``value`` as JSON text, the way the engine writes it.

    The engine's JS-compatible serializer, not orjson: numbers print as JavaScript does (1e20 is
    100000000000000000000), lone surrogates become \\udXXX escapes as in our own files, and nesting
    of any depth works (orjson stops at 255 levels).
    """
    return js_dumps_str(value)


def _json_escape(err: UnicodeError) -> tuple[str, int]:
    """Encode error handler for JSON text: an unencodable character becomes its \\uXXXX escape(s)."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for ch in err.object[err.start : err.end]:
        o = ord(ch)
        if o > 0xFFFF:
            o -= 0x10000
            out.append(f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}")
        else:
            out.append(f"\\u{o:04x}")
    return "".join(out), err.end


codecs.register_error("sessionscope.jsonescape", _json_escape)


def write_out(stream: TextIO, text: str, *, json_text: bool = False) -> None:
    """Write ``text`` so that no character can crash the write.

    A character the stream cannot encode (a lone surrogate from a log, or anything outside a
    narrow locale) is written as an escape: ``\\udXXX`` in text, like the engine's own files; a
    JSON ``\\uXXXX`` escape in JSON, so the output stays valid JSON that decodes to the same data.
    """
    encoding = getattr(stream, "encoding", None) or "utf-8"
    handler = "sessionscope.jsonescape" if json_text else "backslashreplace"
    stream.write(text.encode(encoding, handler).decode(encoding))
    stream.flush()


# A token longer than this many characters is elided in a message (longer than any real path a user reads).
LONG_TOKEN_CHARS = 1000
_LONG_TOKEN = re.compile(rf"[^\s\"']{{{LONG_TOKEN_CHARS + 1},}}")


def _elide(message: str) -> str:
    # A 10,000-character id or path is noise in a message: keep both ends of any long token.
    return _LONG_TOKEN.sub(lambda m: f"{m[0][:120]}\u2026[{len(m[0]) - 200} characters]\u2026{m[0][-80:]}", message)


def engine_error(err: BaseException) -> SessionPersistenceError:
    """``err`` as one of the engine's errors with a clean message (``persistence.as_engine_error``)."""
    return as_engine_error(err)


def error_payload(err: BaseException) -> dict[str, Any]:
    """The upstream-shaped ``{"error": {"class", "message"}}`` of any failure (``persistence.error_fields``)."""
    fields = error_fields(err)
    return {"error": {**fields, "message": _elide(fields["message"])}}


def exit_code_of(err: BaseException) -> int:
    """2 for a usage error or a missing root, else 1."""
    code = getattr(err, "exit_code", 1)
    return code if isinstance(code, int) else 1


def report_error(args: argparse.Namespace | None, err: BaseException, *, json_text: bool | None = None) -> int:
    """Print a failure in the typed form (``--json``: on stdout; else one line on stderr); its exit code.

    ``json_text`` overrides ``args.json`` (a usage error has no parsed arguments to ask).
    """
    payload = error_payload(err)["error"]
    if json_text if json_text is not None else getattr(args, "json", False):
        write_out(sys.stdout, dump({"error": payload}) + "\n", json_text=True)
    else:
        write_out(sys.stderr, f"sessionscope: {payload['class']}: {payload['message']}\n")
    return exit_code_of(err)

"""How the command line writes: results that never crash the write, and failures in one typed shape.

A failure is ``{"error": {"class", "message"}}`` (upstream's shape) on stdout with ``--json``, else
one line ``sessionscope: <class>: <message>`` on stderr; exit code 1 either way.  A character the
stream cannot encode is written as an escape, never raised.

May import the standard library and the engine's JS-compatible JSON text and error classes.
"""

from __future__ import annotations

import argparse
import codecs
import re
import sys
from typing import Any, TextIO

from persistence import js_dumps_str, upstream_class_of


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


def error_payload(err: BaseException) -> dict[str, Any]:
    """The upstream-shaped ``{"error": {"class", "message"}}`` of any failure."""
    message = str(err) or type(err).__name__
    return {"error": {"class": upstream_class_of(err), "message": _elide(message)}}


def report_error(args: argparse.Namespace, err: BaseException) -> int:
    """Print a failure in the typed form (``--json``: on stdout; else one line on stderr); exit code 1."""
    payload = error_payload(err)["error"]
    if getattr(args, "json", False):
        write_out(sys.stdout, dump({"error": payload}) + "\n", json_text=True)
    else:
        message = " ".join(payload["message"].splitlines())
        write_out(sys.stderr, f"sessionscope: {payload['class']}: {message}\n")
    return 1

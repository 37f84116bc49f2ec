"""Redaction: secrets in a session replaced by stable placeholders before a support bundle leaves the machine.

- ``rules``       one compiled pattern per kind of secret, each with an example and its false positives
- ``redactor``    ``Redactor``: strings and JSON values redacted with numbered placeholders
                  (``[redacted:api-key#1]``, the same secret the same number everywhere in a bundle), the
                  counts per kind and masked samples for a preview (``RedactionReport``)
- ``transcript``  a JSONL artifact or a SQLite session's rows redacted and re-encoded the engine's way

What it catches: API keys of the common providers (OpenAI/DeepSeek-style ``sk-…``, Anthropic
``sk-ant-…``), AWS access key ids (``AKIA…``/``ASIA…``) and ``aws_secret_access_key`` values, GitHub
tokens (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), Slack tokens (``xox[abprs]-``),
JWTs, private key blocks, ``password=``/``passwd:`` values, passwords in URLs, ``Authorization:
Bearer|Basic|token`` values, string values under credential-named keys, e-mail addresses, and (on
request) the user's home folder (``/home/alice`` -> ``/home/[redacted:home]``; it stays an absolute
path because a session header's ``cwd`` must be one).

What it does NOT catch (say so to whoever relies on it):
- generic high-entropy strings: a secret without a known prefix or a ``password=``-like key (a bare
  AWS secret key, a random database password typed into a prompt, an internal token format);
- secrets split across events: a key streamed in pieces is caught within one packed run of deltas,
  not across separate delta events or runs (the final assistant message, which carries the whole
  text, is redacted);
- encoded secrets: base64-wrapped, URL-encoded, hex-escaped or compressed content (a ``.env`` file read
  as base64, an image);
- the user's name anywhere but inside the home folder path, host names, IP addresses, customer names
  and other personal data in prose;
- bytes of a transcript that cannot be decoded (left out of a redacted bundle, and said so).

Import rule: the standard library, orjson and the public ``persistence`` package; never Qt, the window,
the actions, the command line or ``app.export`` (a ``forbidden`` contract in pyproject.toml checks it).
"""

from __future__ import annotations

from app.redact.redactor import RedactionReport, Redactor, Sample
from app.redact.rules import RULES, RULES_VERSION, Rule
from app.redact.transcript import redact_artifact, redact_line, redact_record, redacted_rows

__all__ = [
    "RULES",
    "RULES_VERSION",
    "RedactionReport",
    "Redactor",
    "Rule",
    "Sample",
    "redact_artifact",
    "redact_line",
    "redact_record",
    "redacted_rows",
]

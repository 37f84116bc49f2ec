"""The redaction rules: one compiled pattern per kind of secret, each with an example and its false positives.

Why our own patterns and not a detector library: Yelp's ``detect-secrets`` (1.5.0, pure Python) was
weighed.  It scans files line by line and reports secret *values* per line, not their positions in a
string; its high-entropy plugins flag hex and base64 strings, which a session log is full of (ids,
SHA-256 sums, base64 images); and it pulls in ``requests`` and ``PyYAML``.  What a bundle needs is
the span of each secret in a JSON string value so that it can be replaced by a stable placeholder,
and the prefixes the providers document are few and stable: a dozen regular expressions, each
testable with a positive example and a near miss (tests/redact/test_rules.py).

Each rule's ``pattern`` matches the secret itself, or, when the rule has a ``value`` group, the
context that identifies it (``password=``, ``Authorization: Bearer``) plus the value, and only the
value is replaced.  All rules are joined into one alternation (``combined``): the leftmost match in a
string wins, and at one position the earlier rule in ``RULES`` wins (a private key block before the
tokens inside it, ``sk-ant-`` before ``sk-``).

May import: the standard library only.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

# A value after ``password=`` / ``passwd:`` ends at white space, a quote, a backslash (a JSON escape
# inside a string that holds JSON) or a separator a config or command line would use.
_VALUE = r"[^\s\"'\\,;&<>`)}\]]+"
# Before a value: optional (escaped) quote around the key, the separator, optional (escaped) quote.
_SEP = r"\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of secret.

    ``kind`` names the placeholder (``[redacted:KIND#N]``); ``name`` is the rule's id in the bundle's
    manifest (several rules may share a kind); ``shown_prefix`` matches the part of a secret a preview
    may show (the provider's documented, non-secret prefix such as ``sk-``), ``None`` to show nothing
    (the rules with a ``value`` group show their key in the context anyway).
    """

    name: str
    kind: str
    pattern: str
    example: str
    false_positives: str
    shown_prefix: str | None = None
    has_value_group: bool = False


RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        "private-key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "-----BEGIN RSA PRIVATE KEY-----\\nMIIEow...\\n-----END RSA PRIVATE KEY-----",
        "none known; a block cut off before its END line is replaced to the end of the string",
        shown_prefix=r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----",
    ),
    Rule(
        "authorization",
        "authorization",
        r"(?i:\bauthorization)" + _SEP + r"(?i:bearer|basic|token)[ \t]+(?P<value>[A-Za-z0-9._~+/=-]{8,})",
        "Authorization: Bearer abcdef0123456789",
        "a header quoted in documentation with a made-up value (harmless to replace); `Bearer $TOKEN` is not matched",
        has_value_group=True,
    ),
    Rule(
        "aws-secret-access-key",
        "aws-secret",
        r"(?i:aws_?secret_?access_?key)" + _SEP + r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "only exactly 40 characters after the key name; a secret key alone, without its name, is not caught",
        has_value_group=True,
    ),
    Rule(
        "password",
        "password",
        r"(?<![A-Za-z])(?i:password|passwd)" + _SEP + r"(?!\[redacted:|[$%])(?P<value>" + _VALUE + ")",
        'password=hunter2, DB_PASSWORD: s3cret, "password": "x"',
        "prose such as 'password: see below' loses the word after the colon; `password=$VAR` / `%VAR%` is left alone",
        has_value_group=True,
    ),
    Rule(
        "url-password",
        "password",
        r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:(?P<value>[^/\s@\"']+)@",
        "postgres://app:hunter2@db.example.com/app",
        "none known (the user name stays)",
        has_value_group=True,
    ),
    Rule(
        "jwt",
        "jwt",
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "any base64url JSON object pair joined by dots (rare outside tokens)",
        shown_prefix="eyJ",
    ),
    Rule(
        "anthropic-key",
        "api-key",
        r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        "sk-ant-api03-AbCdEf0123456789AbCdEf0123456789",
        "none known",
        shown_prefix="sk-ant-",
    ),
    Rule(
        "openai-style-key",
        "api-key",
        r"\bsk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}",
        "sk-proj-AbCdEf0123456789AbCdEf01 (OpenAI), sk-0123456789abcdef0123456789abcdef (DeepSeek)",
        "a kebab-case name starting `sk-` with a digit and 20+ characters; `sk-learn` is too short",
        shown_prefix="sk-",
    ),
    Rule(
        "aws-access-key-id",
        "aws-key",
        r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
        "AKIAIOSFODNN7EXAMPLE",
        "none known (20 upper-case characters with that prefix)",
        shown_prefix="AKIA|ASIA",
    ),
    Rule(
        "github-token",
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
        "ghp_0123456789abcdefghijklmnopqrstuvwxyz, github_pat_11AAAA...",
        "none known",
        shown_prefix="gh[pousr]_|github_pat_",
    ),
    Rule(
        "slack-token",
        "slack-token",
        r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "none known",
        shown_prefix="xox[abprs]-",
    ),
    Rule(
        "email",
        "email",
        r"\b(?!git@)[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
        "alice@example.com",
        "a version pin like name@1.2.3 is not matched (digits only after the dot); `git@github.com` is left alone",
    ),
)

HOME_KIND = "home"
HOME_RULE = "home-folder"
RULES_VERSION = 1  # bumped when a pattern changes what it catches: the manifest names it


def placeholder(kind: str, number: int) -> str:
    return f"[redacted:{kind}#{number}]"


def home_replacement(home: str) -> str:
    """What the home folder becomes: its parent plus ``[redacted:home]`` (``/home/alice`` ->
    ``/home/[redacted:home]``).  Not ``~``: a session header's ``cwd`` must stay an absolute path
    (session-model §1.3), and the redacted bundle must still read as a valid session."""
    parent = os.path.dirname(home.rstrip("/")) or "/"
    return parent.rstrip("/") + "/[redacted:" + HOME_KIND + "]"


@functools.lru_cache(maxsize=8)
def combined(home: str | None) -> re.Pattern[str]:
    """Every rule (and the home folder, when given) as one alternation: group ``r<i>`` is rule ``i``,
    ``v<i>`` its value; the home folder is the last alternative (``r<len(RULES)>``)."""
    parts = []
    for i, rule in enumerate(RULES):
        pattern = rule.pattern.replace("(?P<value>", f"(?P<v{i}>")
        parts.append(f"(?P<r{i}>{pattern})")
    if home:
        # The home folder as a whole path component: ``/home/alice`` but not ``/home/alice2``.
        parts.append(f"(?P<r{len(RULES)}>{re.escape(home.rstrip('/'))}(?![A-Za-z0-9_.-]))")
    return re.compile("|".join(parts))


# Substrings one of the rules needs: a string without any of them is left as it is without running
# the full alternation (most strings of a log hold none).
TRIGGERS = re.compile(
    r"(?i)-----BEGIN|authorization|password|passwd|aws_?secret|://|eyJ|sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox|@"
)
# The same, as lower-case literals for the bytes of a lower-cased JSON line (``bytes.find`` is far faster
# than a case-insensitive alternation over megabytes); ``\\u``: a JSON escape could spell a trigger.
LINE_TRIGGERS: tuple[bytes, ...] = (
    b"-----begin",
    b"authorization",
    b"password",
    b"passwd",
    b"aws_secret",
    b"awssecret",
    b"://",
    b"eyj",
    b"sk-",
    b"akia",
    b"asia",
    *(b"gh" + c + b"_" for c in (b"p", b"o", b"u", b"s", b"r")),
    b"github_pat_",
    b"xox",
    b"@",
    b"\\u",
)


__all__ = [
    "HOME_KIND",
    "HOME_RULE",
    "LINE_TRIGGERS",
    "RULES",
    "RULES_VERSION",
    "TRIGGERS",
    "Rule",
    "combined",
    "home_replacement",
    "placeholder",
]

"""Secrets of every kind the redaction catches, their near misses, and a session that carries them.

Importable as ``redactkit`` (pytest puts this folder on ``sys.path``).  Every secret here is made up;
each is shaped like the real thing (the provider's prefix, length and alphabet).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import sessionkit as sk

from persistence import open_store

BACKENDS = ("jsonl-zstd", "jsonl-none", "sqlite")

# kind -> (text holding the secret, the secret itself: what must not survive)
POSITIVE: dict[str, list[tuple[str, str]]] = {
    "api-key": [
        ("OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34 ./run", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34"),
        ("deepseek key sk-0123456789abcdef0123456789abcdef.", "sk-0123456789abcdef0123456789abcdef"),
        ("anthropic: sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0-AAA", "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0-AAA"),
    ],
    "aws-key": [
        ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("session key ASIAY34FZKBOKMUTVV7A here", "ASIAY34FZKBOKMUTVV7A"),
    ],
    "aws-secret": [
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ],
    "github-token": [
        ("git clone https://ghp_0123456789abcdefghijKLMNOPQRSTUVWXyz@github.com/o/r", "ghp_0123456789abcdefghijKLMNOPQRSTUVWXyz"),
        ("GH_TOKEN=gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        (
            "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ end",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
        ),
    ],
    "slack-token": [
        (
            "SLACK_BOT_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        ),
    ],
    "jwt": [
        (
            "cookie: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U; path=/",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
    ],
    "private-key": [
        (
            "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nQyNTUxOQAAACBvcGVuc3NoLWtleQ\n"
            "-----END OPENSSH PRIVATE KEY-----\ndone",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE",
        ),
        ("cut: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAqTruncatedBody", "MIIEowIBAAKCAQEAqTruncatedBody"),
    ],
    "password": [
        ("mysql -u root password=hunter2-Xq9! -h db", "hunter2-Xq9!"),
        ('{"user": "app", "DB_PASSWORD": "c0rrect-horse"}', "c0rrect-horse"),
        ("passwd: Sup3rS3cret", "Sup3rS3cret"),
        ("DATABASE_URL=postgres://app:S3cretPw0rd@db.internal.example/app", "S3cretPw0rd"),
    ],
    "authorization": [
        ('curl -H "Authorization: Bearer abcDEF123456ghiJKL789" https://api', "abcDEF123456ghiJKL789"),
        ("authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"),
    ],
    "email": [
        ("Signed-off-by: Alice Smith <alice.smith@example.org>", "alice.smith@example.org"),
    ],
}

# kind -> texts that look close but hold no secret of that kind (nothing may be replaced)
NEAR_MISSES: dict[str, list[str]] = {
    "api-key": ["pip install sk-learn", "sk-short123", "task-0123456789abcdef0123456789abcdef", "sk-ant-short"],
    "aws-key": ["AKIAIOSFODNN7EXAMPL", "AKIAiosfodnn7example", "XAKIAIOSFODNN7EXAMPLE1"],
    "aws-secret": ["aws_secret_access_key = tooShort", "aws_secret_access_key = $AWS_SECRET"],
    "github-token": ["ghp_short123", "ghx_0123456789abcdefghijKLMNOPQRSTUVWXyz", "github_pat_short"],
    "slack-token": ["xoxz-123456789012-abcdefghijkl", "xoxb-short"],
    "jwt": ["eyJhbGciOiJIUzI1NiJ9.notjson.signature", "eyJ alone"],
    "private-key": ["-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----"],
    "password": ["passwordless login works", "password: ", "password=$DB_PASSWORD", "password=<your password>"],
    "authorization": ["Authorization: Bearer $TOKEN", "Authorization: Bearer short", "authorization header missing"],
    "email": ["lodash@4.17.21", "user@localhost", "git@github.com:org/repo.git", "@decorator"],
}

# One secret streamed in pieces (a packed run of text deltas), and its distinctive middle piece.
SPLIT_KEY = "sk-proj-Sp1itAcr0ssDe1tasZZ9988776655"
SPLIT_PIECES = ["the key is sk-proj-Sp1it", "Acr0ssDe1tas", "ZZ9988776655 and more", " text"]


def store_path(tmp: Path, backend: str, name: str = "root") -> str:
    if backend == "sqlite":
        folder = tmp / f"{name}-store"
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder / "sessions.sqlite")
    return str(tmp / name)


def secret_session(home: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(header, events, secrets): a session whose user prompt, assistant text, tool-call arguments, tool
    result, streamed deltas and header cwd (under ``home``) hold secrets of every kind."""
    texts = [text for pairs in POSITIVE.values() for text, _ in pairs]
    secrets = [secret for pairs in POSITIVE.values() for _, secret in pairs]
    prompt = "please fix it, my key: " + texts[0] + " and mail me: " + POSITIVE["email"][0][0]
    answer = sk.assistant_message(4, 1, 1, "I see " + " | ".join(texts[1:6]))
    args = '{"cmd":"deploy","password":"' + "hunter2-Xq9!" + '","token":"' + POSITIVE["slack-token"][0][1] + '"}'
    answer["data"]["message"]["content"].append(sk.tool_call_block("c1", "bash", args))
    # A private key block cut off before its END line is redacted to the end of its string: last.
    cut = POSITIVE["private-key"][1][0]
    result = f"read {home}/proj/.env\n" + "\n".join(t for t in texts[6:] if t != cut) + "\n" + cut
    events = [
        sk.turn_start(0, 1),
        sk.user_message(1, prompt),
        sk.ev(
            "session/title",
            2,
            {"title": "Deploy with sk-0123456789abcdef0123456789abcdef", "messageSeqs": [1], "source": {"kind": "fallback"}},
        ),
        sk.step_start(3, 1, 1),
        answer,
        sk.tool_call(5, 1, 1, "c1", "bash"),
        sk.tool_result(6, 1, 1, "c1", result),
        sk.step_end(7, 1, 1),
        sk.step_start(8, 1, 2),
        *[sk.text_delta(9 + k, 1, 2, piece) for k, piece in enumerate(SPLIT_PIECES)],
        sk.assistant_message(9 + len(SPLIT_PIECES), 1, 2, "".join(SPLIT_PIECES)),
        sk.step_end(10 + len(SPLIT_PIECES), 1, 2),
        sk.turn_end(11 + len(SPLIT_PIECES), 1),
    ]
    header = sk.meta("sec", f"{home}/proj")
    return header, events, [*secrets, "hunter2-Xq9!", SPLIT_KEY, SPLIT_PIECES[1]]


def write_session(path: str, backend: str, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    async def go() -> None:
        store = open_store(path, backend)
        try:
            await store.create(header)
            await store.append(header["id"], events)
        finally:
            await store.close()

    asyncio.run(go())

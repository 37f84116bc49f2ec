"""What the diagnosis-cache tests share: stores of a few ready sessions, waiting out the race margin,
and running the command line for its ``--json`` output."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk

from app.diagnosis.cache import RACY_NS
from persistence import open_store

CWD = sk.WORK


def write_sessions(path: Path, backend: str, sids: tuple[str, ...] | list[str]) -> None:
    """A store of ``backend`` (``open_store``'s names) at ``path`` holding ``sids``, one finished turn each."""

    async def go() -> None:
        store = open_store(path, backend)
        try:
            for sid in sids:
                await store.create(sk.meta(sid, CWD))
                await store.append(sid, sk.one_turn_log())
        finally:
            await store.close()

    sk.run(go())


def age() -> None:
    """Let every log become older than the race margin, so its verdict may be stored."""
    time.sleep(RACY_NS / 1e9 + 0.05)


def main_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``sessionscope ARGS --json`` in this process: (exit code, the parsed output, stderr)."""
    from app.cli import main

    capsys.readouterr()
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err

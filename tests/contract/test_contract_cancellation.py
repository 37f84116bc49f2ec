"""Cancellation: a pre-aborted signal rejects with its reason, after argument checks
(persistence-contract §2.11, §9.8: R-25).

Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

import pytest
from contract_backends import BackendKit
from sessionkit import run

from persistence import AbortSignal

pytestmark = pytest.mark.usefixtures("fast_fsync")


def test_R_25_aborted_signal_rejects_with_the_reason(backend: BackendKit) -> None:
    """R-25."""

    async def body() -> None:
        store = backend.make()
        signal = AbortSignal()
        assert await store.list_snapshots(signal) == []
        reason = RuntimeError("stop now")
        signal.abort(reason)
        calls = [
            store.list(signal),
            store.list_snapshots(signal),
            store.inspect("unknown", signal),
            store.read_from("unknown", 0, signal),
        ]
        for call in calls:
            with pytest.raises(RuntimeError) as info:
                await call
            assert info.value is reason

    run(body())


def test_R_25_read_from_validates_argument_before_abort(backend: BackendKit) -> None:
    """Contract §2.11: read_from checks ``from_seq`` first, then the pre-aborted signal."""

    async def body() -> None:
        store = backend.make()
        signal = AbortSignal.aborted_with(ValueError("gone"))
        with pytest.raises(TypeError, match="non-negative safe integer"):
            await store.read_from("x", -1, signal)

    run(body())

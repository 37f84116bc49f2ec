"""Hypothesis profiles for the property tests: a fast fixed one for local runs, a randomized one for CI.

Why two: with ``derandomize=True`` every run draws the same inputs, so a property test never meets a new
one (issue 21 item 14); randomized runs find new inputs but must be reproducible from the CI log.
``dev`` (the default on a workstation) stays derandomized and small; ``ci`` (``.ci/run`` sets
``HYPOTHESIS_PROFILE=ci``; ``CI=true`` picks it too) draws fresh inputs from the seed ``.ci/run`` echoes
and passes as ``--hypothesis-seed``, runs more examples and prints the ``@reproduce_failure`` blob of a
failure.

A test that needs its own budget writes ``@settings(max_examples=examples(N))``: N examples under
``dev``, N times the profile's scale under ``ci``, so one number keeps both profiles in proportion.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from hypothesis import HealthCheck, settings

PROFILE_ENV = "HYPOTHESIS_PROFILE"
DEV = "dev"
CI = "ci"


@dataclass(frozen=True, slots=True)
class Profile:
    max_examples: int
    derandomize: bool
    print_blob: bool
    # Multiplies a test's own budget (``examples(N)``); the whole suite must stay under 3 minutes on 2 cores.
    scale: float


PROFILES: dict[str, Profile] = {
    DEV: Profile(max_examples=25, derandomize=True, print_blob=False, scale=1.0),
    CI: Profile(max_examples=60, derandomize=False, print_blob=True, scale=2.0),
}

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


def profile_name(environ: Mapping[str, str]) -> str:
    """The profile the environment asks for: ``$HYPOTHESIS_PROFILE``, else ``ci`` when ``$CI`` is true, else ``dev``."""
    asked = environ.get(PROFILE_ENV, "").strip()
    if asked:
        if asked not in PROFILES:
            raise ValueError(f"{PROFILE_ENV}={asked!r} names no profile; use one of {', '.join(sorted(PROFILES))}")
        return asked
    return CI if environ.get("CI", "").strip().lower() in ("1", "true", "yes") else DEV


def register() -> None:
    for name, p in PROFILES.items():
        settings.register_profile(
            name,
            max_examples=p.max_examples,
            derandomize=p.derandomize,
            print_blob=p.print_blob,
            deadline=None,
            # No example database: a dev run is derandomized (it would not use one), a CI run is reproduced from
            # its seed or blob; and the tests run in a private working folder, where it would only leave litter.
            database=None,
            suppress_health_check=_SUPPRESSED,
        )


def load(environ: Mapping[str, str] = os.environ) -> str:
    """Register the profiles and load the one the environment asks for; returns its name."""
    global _loaded
    register()
    name = profile_name(environ)
    settings.load_profile(name)
    _loaded = name
    return name


def active() -> Profile:
    """The loaded profile's numbers (the one ``load`` chose)."""
    return PROFILES[_loaded]


def examples(n: int) -> int:
    """A test's own example budget under the loaded profile: ``n`` under ``dev``, scaled under ``ci``."""
    return max(1, round(n * active().scale))


_loaded = DEV

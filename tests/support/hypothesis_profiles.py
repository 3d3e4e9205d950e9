"""Hypothesis profiles: `quick` by default (a maintainer's run of the suite), `thorough` in
CI (`HYPOTHESIS_PROFILE=thorough`, set by .ci/run). A test that sets its own number of
examples writes it as `examples(n)`: n under `thorough`, a fifth of it (at least 5) under
`quick`. Neither profile has a deadline: the machines are shared and loaded, and a
verdict must not depend on their speed."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "examples"]

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "quick")

settings.register_profile(
    "thorough", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "quick", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """The number of examples for a test that asks for `n` under the loaded profile."""
    return n if PROFILE == "thorough" else max(5, n // 5)

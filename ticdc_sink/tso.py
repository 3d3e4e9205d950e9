"""TiDB TSO arithmetic: a 64-bit timestamp of 46 bits of physical milliseconds and 18 bits
of logical counter (tikv `oracle.ExtractPhysical` / `ComposeTS`).
"""

from __future__ import annotations

import time

from ticdc_sink.errors import InputError

__all__ = [
    "LOGICAL_BITS",
    "MAX_TSO",
    "compose",
    "now",
    "physical_ms",
]

LOGICAL_BITS = 18
MAX_TSO = (1 << 64) - 1
_LOGICAL_MASK = (1 << LOGICAL_BITS) - 1


def physical_ms(ts: int) -> int:
    """The physical part of a TSO: milliseconds since the Unix epoch."""
    return ts >> LOGICAL_BITS


def compose(physical: int, logical_part: int = 0) -> int:
    """Build a TSO from milliseconds since the epoch and a logical counter.

    Raises:
        InputError: the parts do not fit a 64-bit TSO.
    """
    if physical < 0 or not 0 <= logical_part <= _LOGICAL_MASK:
        raise InputError(f"cannot build a TSO from physical {physical} ms, logical {logical_part}")
    ts = (physical << LOGICAL_BITS) | logical_part
    if ts > MAX_TSO:
        raise InputError(f"physical time {physical} ms does not fit a TSO")
    return ts


def now() -> int:
    """The current wall-clock time as a TSO with logical part 0."""
    return compose(time.time_ns() // 1_000_000)

"""TiDB TSO arithmetic: a 64-bit timestamp of 46 bits of physical milliseconds and 18 bits
of logical counter (tikv `oracle.ExtractPhysical` / `ComposeTS`).
"""

from __future__ import annotations

import datetime as dt
import time

from ticdc_sink.errors import InputError

__all__ = [
    "LOGICAL_BITS",
    "MAX_TSO",
    "compose",
    "from_datetime",
    "logical",
    "now",
    "physical_ms",
    "to_datetime",
]

LOGICAL_BITS = 18
MAX_TSO = (1 << 64) - 1
_LOGICAL_MASK = (1 << LOGICAL_BITS) - 1
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def physical_ms(ts: int) -> int:
    """The physical part of a TSO: milliseconds since the Unix epoch."""
    return ts >> LOGICAL_BITS


def logical(ts: int) -> int:
    """The logical counter of a TSO."""
    return ts & _LOGICAL_MASK


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


def from_datetime(value: dt.datetime) -> int:
    """The TSO of an aware datetime, logical part 0 (sub-millisecond digits dropped)."""
    if value.tzinfo is None:
        raise InputError("a naive datetime has no instant; give it a time zone")
    delta = value - _EPOCH
    return compose((delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000)


def to_datetime(ts: int) -> dt.datetime:
    """The UTC datetime of a TSO's physical part."""
    return _EPOCH + dt.timedelta(milliseconds=physical_ms(ts))


def now() -> int:
    """The current wall-clock time as a TSO with logical part 0."""
    return compose(time.time_ns() // 1_000_000)

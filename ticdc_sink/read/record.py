"""One message as the read side sees it, whichever client read it: the Kafka consumer
(`read.consumer`), the CLI's `tail`, the tests' logs. Its own module so that decoding a
message needs nothing of Kafka's client."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Record"]


class Record(NamedTuple):
    """One message read back from Kafka; `timestamp` is milliseconds since the epoch, None
    when the broker has none; `headers` its (key, value) headers in order, None when they
    were not asked for or it has none."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int | None
    headers: tuple[tuple[str, bytes | None], ...] | None = None

"""The one fake of the sink's producer (`ticdc_sink.producer.Producer`, what the writer
calls of a `KafkaProducer`), for tests of the write loop and the commit step without a
broker.

`FakeProducer(partitions=3, topic_limit=None)` is its own factory (`producer_factory=
fake`), so a test reads what a task or the commit step sent:

| call | what the fake does |
| --- | --- |
| `partition_count(topic)` | `partitions`, for every topic |
| `partition_counts(topics)` | the same for many; each call's topics kept in `lookups` |
| `topic_max_message_bytes(topic)` | `topic_limit` (None: the brokers do not say) |
| `topics_max_message_bytes(topics)` | the same for many |
| `send(topic, partition, key, value)` | appends to `sent`; fails after `flush()` |
| `send_many(topic, partition(s), key, values, keys=)` | `send` for each value |
| `flush()`, `close()` | set `flushed` (counting `flushes`), `closed`; all sent is delivered |
| `delivered` | messages and key + value bytes per (topic, partition) |

`values()` parses every sent value as JSON. `tests/support/fake_kafka.py` fakes the level
below: confluent_kafka's clients under a real `KafkaProducer`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

from ticdc_sink.config import KafkaConfig
from ticdc_sink.producer import PartitionStats, ProducerFactory

__all__ = ["FakeProducer"]


class FakeProducer:
    """Records sends; every message counts as delivered at flush."""

    def __init__(self, partitions: int = 3, topic_limit: int | None = None) -> None:
        self.partitions = partitions
        self.topic_limit = topic_limit
        self.sent: list[tuple[str, int, bytes | None, bytes | None]] = []
        self.flushed = self.closed = False
        self.flushes = 0
        self.lookups: list[list[str]] = []

    def __call__(self, config: KafkaConfig) -> FakeProducer:
        return self

    def partition_count(self, topic: str) -> int:
        return self.partition_counts([topic])[topic]

    def partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        topics = list(dict.fromkeys(topics))
        self.lookups.append(topics)
        return dict.fromkeys(topics, self.partitions)

    def topic_max_message_bytes(self, topic: str) -> int | None:
        return self.topic_limit

    def topics_max_message_bytes(self, topics: Iterable[str]) -> dict[str, int | None]:
        return dict.fromkeys(topics, self.topic_limit)

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        assert not self.flushed
        self.sent.append((topic, partition, key, value))

    def send_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        values: list[bytes | None],
        *,
        keys: list[bytes | None] | None = None,
    ) -> None:
        partitions = [partition] * len(values) if isinstance(partition, int) else partition
        keys = [key] * len(values) if keys is None else keys
        for p, k, value in zip(partitions, keys, values, strict=True):
            self.send(topic, p, k, value)

    def flush(self) -> None:
        self.flushed = True
        self.flushes += 1

    def close(self) -> None:
        self.closed = True

    @property
    def delivered(self) -> dict[tuple[str, int], PartitionStats]:
        stats: dict[tuple[str, int], PartitionStats] = {}
        for topic, partition, key, value in self.sent:
            old = stats.get((topic, partition), PartitionStats(0, 0))
            size = len(key or b"") + len(value or b"")
            stats[(topic, partition)] = PartitionStats(old.messages + 1, old.bytes + size)
        return stats

    def values(self) -> list[dict[str, Any]]:
        values = [v for _, _, _, v in self.sent]
        assert None not in values, "a tombstone was sent: no JSON to parse"
        return [orjson.loads(v) for v in values if v is not None]


if TYPE_CHECKING:
    # The fake is a ProducerFactory making a Producer: `mypy` checks this file with the
    # package (.ci/run's part lint), so the fake cannot drift from what the writer calls.
    _FACTORY: ProducerFactory = FakeProducer()

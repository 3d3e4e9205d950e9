"""A fake of confluent_kafka's `Consumer`, for tests of `ticdc_sink.read.consumer.TopicLog`
without a broker: `FakeConsumer(...)` is passed as the log's consumer factory.

| behaviour | FakeConsumer |
| --- | --- |
| topics | every topic (`t`, `u`; the metadata also lists `__consumer_offsets`) has |
|  | the partitions of `sizes`: partition p holds offsets `lows[p]`..`sizes[p]-1` |
| gaps | offsets in `gaps` hold no message (transaction markers, compaction) |
| `get_watermark_offsets` | (low, size), minus `lag` on the high side (at least low): |
|  | a broker whose ListOffsets answer lags behind its log, as Tansu's does |
| `assign` / `consume` / `poll` | the messages of the assigned partitions from their |
|  | offsets on, interleaved across partitions; with `enable.partition.eof`, an EOF |
|  | event at each partition's end; an offset below a partition's low is an |
|  | `_AUTO_OFFSET_RESET` error event (auto.offset.reset=error) |
| messages | offset o has timestamp `timestamp_of(o)` (1000 + 10 o); odd offsets carry |
|  | headers [("at", b"o"), ("empty", None)], even ones none |
| `offsets_for_times` | the first kept offset whose timestamp is at or after the one |
|  | asked, -1 when none is (as librdkafka) |
| `silent` | fetches at a partition's end go unanswered: no EOF event |
| `unreachable` | `list_topics` and `get_watermark_offsets` raise `_TRANSPORT` |
| `timeouts` | every timeout a metadata or offsets request was given |
| `settings` | the settings the consumer was made with |
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from confluent_kafka import KafkaError, KafkaException

__all__ = ["FakeConsumer", "FakeMessage", "timestamp_of"]


class FakeMessage:
    def __init__(
        self, topic: str, partition: int, offset: int, error: KafkaError | None = None
    ) -> None:
        self._topic, self._partition, self._offset, self._error = topic, partition, offset, error

    def error(self) -> KafkaError | None:
        return self._error

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> None:
        return None

    def value(self) -> bytes:
        return b"%d:%d" % (self._partition, self._offset)

    def timestamp(self) -> tuple[int, int]:
        return (1, timestamp_of(self._offset))

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        """Odd offsets carry two headers (one without a value), even ones none."""
        return [("at", b"%d" % self._offset), ("empty", None)] if self._offset % 2 else None


def timestamp_of(offset: int) -> int:
    """The (CreateTime) timestamp of the message at `offset`: 1000 + 10 * offset."""
    return 1000 + 10 * offset


class FakeConsumer:
    def __init__(
        self,
        sizes: dict[int, int],
        *,
        lows: dict[int, int] | None = None,
        gaps: frozenset[int] = frozenset(),
        lag: int = 0,
        unreachable: bool = False,
        silent: bool = False,
    ) -> None:
        self.sizes = sizes
        self.lows = lows or {}
        self.gaps = gaps
        self.lag = lag
        self.unreachable = unreachable
        self.silent = silent
        self.pending: list[FakeMessage] = []
        self.settings: dict[str, Any] = {}
        self.timeouts: list[float] = []

    def __call__(self, settings: dict[str, Any]) -> FakeConsumer:
        self.settings = settings
        return self

    def _low(self, partition: int) -> int:
        return self.lows.get(partition, 0)

    def list_topics(self, topic: str | None = None, *, timeout: float) -> Any:
        self.timeouts.append(timeout)
        if self.unreachable:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        partitions = {p: None for p in self.sizes}
        found = SimpleNamespace(error=None, partitions=partitions)
        names = ["t", "u", "__consumer_offsets"] if topic is None else [topic]
        return SimpleNamespace(topics=dict.fromkeys(names, found))

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        self.timeouts.append(timeout)
        if self.unreachable:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        low = self._low(tp.partition)
        return (low, max(low, self.sizes[tp.partition] - self.lag))

    def assign(self, tps: list[Any]) -> None:
        eof = self.settings.get("enable.partition.eof") == "true" and not self.silent
        queues = []
        for tp in tps:
            low, size = self._low(tp.partition), self.sizes[tp.partition]
            start = low if tp.offset < 0 else tp.offset
            if start < low:
                reset = KafkaError(KafkaError._AUTO_OFFSET_RESET)
                queues.append([FakeMessage(tp.topic, tp.partition, start, reset)])
                continue
            queue = [
                FakeMessage(tp.topic, tp.partition, o)
                for o in range(start, size)
                if o not in self.gaps
            ]
            if eof:
                end = KafkaError(KafkaError._PARTITION_EOF)
                queue.append(FakeMessage(tp.topic, tp.partition, size, end))
            queues.append(queue)
        self.pending = [
            q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)
        ]

    def unassign(self) -> None:
        self.pending = []

    def consume(self, count: int, timeout: float) -> list[FakeMessage]:
        out, self.pending = self.pending[:count], self.pending[count:]
        return out

    def poll(self, timeout: float) -> FakeMessage | None:
        found = self.consume(1, timeout)
        return found[0] if found else None

    def offsets_for_times(self, tps: list[Any], timeout: float) -> list[Any]:
        self.timeouts.append(timeout)
        if self.unreachable:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        found = []
        for tp in tps:
            low, size = self._low(tp.partition), self.sizes[tp.partition]
            kept = [o for o in range(low, size) if o not in self.gaps]
            offset = next((o for o in kept if timestamp_of(o) >= tp.offset), -1)
            found.append(
                SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=offset, error=None)
            )
        return found

    def close(self) -> None:
        pass

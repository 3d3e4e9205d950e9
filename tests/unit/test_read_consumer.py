"""The reader's consumer over a fake librdkafka consumer: a range stops at its end (and
skips what lies past it), a topic's partitions are checked, the decode command's quiet
read is ordered, and broker failures are DeliveryErrors that name the brokers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import attrs
import pytest
from confluent_kafka import KafkaError, KafkaException

from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig

CONFIG = ReadConfig("h:1", "t", poll_timeout_s=0.5)


class FakeMessage:
    def __init__(self, partition: int, offset: int) -> None:
        self._partition, self._offset = partition, offset

    def error(self) -> None:
        return None

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> None:
        return None

    def value(self) -> bytes:
        return b"%d:%d" % (self._partition, self._offset)

    def timestamp(self) -> tuple[int, int]:
        return (1, 1000)


class FakeConsumer:
    """Partition p holds offsets 0..sizes[p]-1, then `markers[p]` offsets without a
    message (transaction markers); consume() hands out up to `count` messages of the
    assigned partitions, in two interleaved calls; position() is past the markers once
    every message was handed out, as librdkafka's."""

    def __init__(
        self,
        sizes: dict[int, int],
        *,
        unreachable: bool = False,
        markers: dict[int, int] | None = None,
    ) -> None:
        self.sizes = sizes
        self.markers = markers or {}
        self.unreachable = unreachable
        self.pending: list[FakeMessage] = []
        self.settings: dict[str, Any] = {}
        self.positions: dict[int, int] = {}

    def __call__(self, settings: dict[str, Any]) -> FakeConsumer:
        self.settings = settings
        return self

    def list_topics(self, topic: str | None = None, *, timeout: float) -> Any:
        if self.unreachable:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        partitions = {p: None for p in self.sizes}
        found = SimpleNamespace(error=None, partitions=partitions)
        names = ["t", "u", "__consumer_offsets"] if topic is None else [topic]
        return SimpleNamespace(topics=dict.fromkeys(names, found))

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        return (0, self.sizes[tp.partition])

    def assign(self, tps: list[Any]) -> None:
        offsets = {tp.partition: max(tp.offset, 0) for tp in tps}
        self.pending = [
            FakeMessage(p, o)
            for o in range(max(self.sizes.values()))
            for p in offsets
            if offsets[p] <= o < self.sizes[p]
        ]

    def unassign(self) -> None:
        self.pending = []
        self.positions = {}

    def consume(self, count: int, timeout: float) -> list[FakeMessage]:
        out, self.pending = self.pending[:count], self.pending[count:]
        for message in out:
            p = message.partition()
            self.positions[p] = message.offset() + 1
            if self.positions[p] == self.sizes[p]:
                self.positions[p] += self.markers.get(p, 0)
        return out

    def position(self, tps: list[Any]) -> list[Any]:
        return [SimpleNamespace(offset=self.positions.get(tp.partition, -1001)) for tp in tps]

    def close(self) -> None:
        pass


def test_a_range_reads_from_start_to_end_and_no_further() -> None:
    fake = FakeConsumer({0: 10})
    log = TopicLog(CONFIG, fake)
    assert [r.offset for r in log.read(OffsetRange("t", 0, 3, 6))] == [3, 4, 5]
    assert list(log.read(OffsetRange("t", 0, 4, 4))) == []
    assert fake.settings["bootstrap.servers"] == "h:1"
    assert fake.settings["enable.auto.commit"] == "false"


def test_a_range_whose_messages_never_come_fails_after_the_poll_timeout() -> None:
    log = TopicLog(CONFIG, FakeConsumer({0: 3}))
    with pytest.raises(DeliveryError) as info:
        list(log.read(OffsetRange("t", 0, 0, 5)))
    assert str(info.value).startswith(
        "ticdc: no message arrived from Kafka brokers h:1 from offset 3 of partition 0 of topic "
        "t within 0.5 s, though the read ends at offset 5; check that the brokers are up"
    )


def test_a_range_ending_in_offsets_without_messages_ends_when_the_consumer_passes_them() -> None:
    # A transactional topic: the high watermark is past the last message's offset.
    log = TopicLog(CONFIG, FakeConsumer({0: 3}, markers={0: 2}))
    assert [r.offset for r in log.read(OffsetRange("t", 0, 1, 5))] == [1, 2]


def test_bounds_partitions_and_the_quiet_read() -> None:
    log = TopicLog(CONFIG, FakeConsumer({0: 2, 1: 3}))
    assert log.bounds() == {0: (0, 2), 1: (0, 3)}
    records = log.read_until_idle(None, idle_s=0.01, timeout_s=5)
    assert [(r.partition, r.offset) for r in records] == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    assert [r.partition for r in log.read_until_idle([1], idle_s=0.01, timeout_s=5)] == [1] * 3
    with pytest.raises(ConfigError, match="topic t has no partition 4; its partitions are 0..1"):
        log.partitions([4])


def test_the_brokers_topics_and_the_bounds_of_several() -> None:
    log = TopicLog(CONFIG, FakeConsumer({0: 2, 1: 3}))
    assert log.topics() == ["t", "u"]  # Kafka's internal topics left out
    assert log.all_bounds(["t", "u"]) == {
        ("t", 0): (0, 2),
        ("t", 1): (0, 3),
        ("u", 0): (0, 2),
        ("u", 1): (0, 3),
    }


def test_unreachable_brokers_are_a_delivery_error_naming_them() -> None:
    log = TopicLog(CONFIG, FakeConsumer({0: 1}, unreachable=True))
    with pytest.raises(DeliveryError, match="cannot reach Kafka brokers h:1 within 0.5 s") as e:
        log.bounds()
    assert e.value.brokers == "h:1"
    with pytest.raises(DeliveryError, match="cannot reach Kafka brokers h:1 .* list their topics"):
        log.topics()


def test_refused_kafka_settings_are_a_config_error() -> None:
    def refuse(settings: dict[str, Any]) -> Any:
        raise KafkaException(KafkaError(KafkaError._INVALID_ARG, "No such configuration property"))

    with pytest.raises(ConfigError, match="kafka.\\* settings are refused"):
        TopicLog(CONFIG, refuse)


def test_the_broker_holds_an_empty_fetch_briefly_unless_kafka_settings_say_otherwise() -> None:
    # A log visits partitions one after another; librdkafka's 500 ms default held the
    # first fetch of each next partition behind the last one's idle fetch.
    fake = FakeConsumer({0: 1})
    TopicLog(CONFIG, fake)
    assert fake.settings["fetch.wait.max.ms"] == "20"
    given = attrs.evolve(CONFIG, client=(("fetch.wait.max.ms", "500"),))
    TopicLog(given, fake)
    assert fake.settings["fetch.wait.max.ms"] == "500"

"""The reader's consumer over a fake librdkafka consumer: a range stops at its end (and
skips what lies past it, and the gaps at its end), a partition's end is found past a
broker's lagging report, an explicit end the partition does not reach fails naming it,
offsets gone from the brokers are data loss, a topic's partitions are checked, a range's
messages come a consume call at a time (`read_chunks`, cut where the tests' FakeTopicLog
cuts them), the messages before a failed fetch are read before it fails, the decode
command's quiet read is ordered, and broker failures are DeliveryErrors that name the
brokers within broker-timeout-ms."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from confluent_kafka import KafkaError, KafkaException

from tests.support.fake_consumer import FakeConsumer, FakeMessage, timestamp_of
from tests.support.read_log import FakeTopicLog
from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig

CONFIG = ReadConfig("h:1", "t", poll_timeout_s=0.5, broker_timeout_s=0.5)


def test_a_range_reads_from_start_to_end_and_no_further() -> None:
    fake = FakeConsumer({0: 10})
    log = TopicLog(CONFIG, fake)
    assert [r.offset for r in log.read(OffsetRange("t", 0, 3, 6))] == [3, 4, 5]
    assert list(log.read(OffsetRange("t", 0, 4, 4))) == []
    assert fake.settings["bootstrap.servers"] == "h:1"
    assert fake.settings["enable.auto.commit"] == "false"


def test_a_range_whose_messages_never_come_fails_after_the_poll_timeout() -> None:
    log = TopicLog(CONFIG, FakeConsumer({0: 3}, silent=True))
    with pytest.raises(DeliveryError) as info:
        list(log.read(OffsetRange("t", 0, 0, 5)))
    assert str(info.value).startswith(
        "ticdc: no message arrived from offset 3 of partition 0 of topic t on Kafka brokers "
        "h:1 within 0.5 s, though the read ends at offset 5; check that the brokers are up"
    )


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
    # A log moves from range to range; the fetch in flight at one range's end held the
    # first fetch of the next for as long as the broker may hold it.
    fake = FakeConsumer({0: 1})
    TopicLog(CONFIG, fake)
    assert fake.settings["fetch.wait.max.ms"] == "1"
    given = attrs.evolve(CONFIG, client=(("fetch.wait.max.ms", "50"),))
    TopicLog(given, fake)
    assert fake.settings["fetch.wait.max.ms"] == "50"


def test_a_drained_queue_is_fetched_for_again_soon_unless_kafka_settings_say_otherwise() -> None:
    # librdkafka's 1000 ms left a read of a partition of more than queued.min.messages
    # messages idle once it had drained the queue it filled.
    fake = FakeConsumer({0: 1})
    TopicLog(CONFIG, fake)
    assert fake.settings["fetch.queue.backoff.ms"] == "10"
    given = attrs.evolve(CONFIG, client=(("fetch.queue.backoff.ms", "500"),))
    TopicLog(given, fake)
    assert fake.settings["fetch.queue.backoff.ms"] == "500"


def test_a_log_that_follows_a_topic_lets_the_broker_hold_its_idle_fetches() -> None:
    # `decode --follow` waits at the topic's end: a 1 ms wait would ask the broker a
    # thousand times a second while nothing is written.
    fake = FakeConsumer({0: 1})
    TopicLog(CONFIG, fake, following=True)
    assert fake.settings["fetch.wait.max.ms"] == "500"


def test_the_reader_finds_ends_by_eof_and_never_jumps_over_lost_offsets() -> None:
    fake = FakeConsumer({0: 1})
    given = attrs.evolve(
        CONFIG, client=(("enable.partition.eof", "false"), ("auto.offset.reset", "latest"))
    )
    TopicLog(given, fake)
    assert fake.settings["enable.partition.eof"] == "true"
    assert fake.settings["auto.offset.reset"] == "error"


def test_a_lagging_reported_end_is_read_past_to_the_partitions_true_end() -> None:
    # Tansu answers ListOffsets with 102 for a partition of 202 messages written in
    # multi-record batches: the bounds say 202, and a latest read reads all of them.
    fake = FakeConsumer({0: 202, 1: 5}, lag=100)
    log = TopicLog(CONFIG, fake)
    assert log.bounds() == {0: (0, 202), 1: (0, 5)}
    assert log.all_bounds(["t", "u"])[("u", 0)] == (0, 202)
    assert len(list(log.read(OffsetRange("t", 0, 0, 202)))) == 202


def test_bounds_of_a_right_broker_cost_one_eof_per_partition() -> None:
    fake = FakeConsumer({0: 7, 1: 0})
    log = TopicLog(CONFIG, fake)
    assert log.bounds() == {0: (0, 7), 1: (0, 0)}
    assert fake.pending == []


def test_a_range_whose_last_offsets_hold_no_message_ends_at_the_partitions_end() -> None:
    # Transaction markers (or compaction) at the end: no message ever comes for offsets
    # 8 and 9, and the EOF at 10 ends the range at once instead of after the poll timeout.
    log = TopicLog(
        attrs.evolve(CONFIG, poll_timeout_s=600), FakeConsumer({0: 10}, gaps=frozenset({3, 8, 9}))
    )
    assert [r.offset for r in log.read(OffsetRange("t", 0, 0, 10))] == [0, 1, 2, 4, 5, 6, 7]


def test_an_end_the_partition_does_not_reach_fails_naming_where_it_ends() -> None:
    log = TopicLog(CONFIG, FakeConsumer({0: 102}))
    with pytest.raises(DeliveryError) as caught:
        list(log.read(OffsetRange("t", 0, 100, 202)))
    message = str(caught.value)
    assert message.startswith(
        "ticdc: partition 0 of topic t ends at offset 102 on Kafka brokers h:1, and no "
        "message came within 0.5 s to reach offset 202"
    )
    assert "endingOffsets" in message and caught.value.brokers == "h:1"


def test_offsets_gone_from_the_brokers_are_data_loss_unless_fail_on_data_loss_is_false() -> None:
    fake = FakeConsumer({0: 10}, lows={0: 6})
    with pytest.raises(DeliveryError) as caught:
        list(TopicLog(CONFIG, fake).read(OffsetRange("t", 0, 2, 10)))
    assert str(caught.value).startswith(
        "ticdc: offsets 2..5 of partition 0 of topic t are no longer on Kafka brokers h:1"
    )
    assert "failOnDataLoss=false" in str(caught.value)
    lenient = TopicLog(attrs.evolve(CONFIG, fail_on_data_loss=False), fake)
    assert [r.offset for r in lenient.read(OffsetRange("t", 0, 2, 10))] == [6, 7, 8, 9]


def test_requests_to_the_brokers_wait_broker_timeout_ms_not_the_poll_timeout() -> None:
    fake = FakeConsumer({0: 3})
    log = TopicLog(attrs.evolve(CONFIG, broker_timeout_s=2.5, poll_timeout_s=120.0), fake)
    log.topics()
    log.bounds()
    assert set(fake.timeouts) == {2.5}
    down = TopicLog(
        attrs.evolve(CONFIG, broker_timeout_s=2.5), FakeConsumer({0: 1}, unreachable=True)
    )
    with pytest.raises(
        DeliveryError,
        match=r"cannot reach Kafka brokers h:1 within 2.5 s \(option broker-timeout-ms\)",
    ):
        down.bounds()


def test_headers_are_read_only_when_asked_for() -> None:
    plain = TopicLog(CONFIG, FakeConsumer({0: 3}))
    assert [r.headers for r in plain.read(OffsetRange("t", 0, 0, 3))] == [None] * 3
    asked = TopicLog(attrs.evolve(CONFIG, include_headers=True), FakeConsumer({0: 3}))
    assert [r.headers for r in asked.read(OffsetRange("t", 0, 0, 3))] == [
        None,
        (("at", b"1"), ("empty", None)),
        None,
    ]


def test_offsets_for_times_is_the_first_offset_at_or_after_each_timestamp() -> None:
    fake = FakeConsumer({0: 5, 1: 3}, gaps=frozenset({2}))
    log = TopicLog(CONFIG, fake)
    asked = {("t", 0): timestamp_of(2), ("t", 1): timestamp_of(3), ("u", 0): 0}
    assert log.offsets_for_times(asked) == {("t", 0): 3, ("t", 1): None, ("u", 0): 0}
    assert log.offsets_for_times({}) == {}
    with pytest.raises(DeliveryError, match="h:1"):
        TopicLog(CONFIG, FakeConsumer({0: 1}, unreachable=True)).offsets_for_times({("t", 0): 1})


def test_assign_reads_the_partitions_it_names_only() -> None:
    config = attrs.evolve(CONFIG, assign=(("t", 0), ("t", 2)))
    log = TopicLog(config, FakeConsumer({0: 2, 1: 3, 2: 4}))
    assert log.all_bounds(["t"]) == {("t", 0): (0, 2), ("t", 2): (0, 4)}
    missing = TopicLog(attrs.evolve(CONFIG, assign=(("t", 5),)), FakeConsumer({0: 2, 1: 3}))
    with pytest.raises(ConfigError, match="assign names partition 5 of topic t") as caught:
        missing.all_bounds(["t"])
    assert caught.value.option == "assign"


def test_a_ranges_chunks_are_its_messages_a_consume_call_at_a_time() -> None:
    # read_chunks gives what read gives, cut where a consume call ends (500 messages, or
    # fewer where the range ends or a gap is), none empty; the tests' FakeTopicLog cuts a
    # range of every offset where TopicLog cuts it.
    rng = OffsetRange("t", 0, 2, 1203)
    gapless = [
        [r.offset for r in c] for c in TopicLog(CONFIG, FakeConsumer({0: 1203})).read_chunks(rng)
    ]
    assert [(c[0], len(c)) for c in gapless] == [(2, 500), (502, 500), (1002, 201)]
    fake = FakeTopicLog({0: [b"v"] * 1203})
    assert [[r.offset for r in c] for c in fake.read_chunks(rng)] == gapless
    gaps = frozenset({3, 700, 1202})
    chunks = list(TopicLog(CONFIG, FakeConsumer({0: 1203}, gaps=gaps)).read_chunks(rng))
    assert all(chunks)
    assert [r.offset for c in chunks for r in c] == [
        r.offset for r in TopicLog(CONFIG, FakeConsumer({0: 1203}, gaps=gaps)).read(rng)
    ]
    assert [r.offset for c in chunks for r in c] == [o for o in range(2, 1203) if o not in gaps]


class _FailingConsumer(FakeConsumer):
    """A consumer whose fetch fails after offset `fails_at` - 1, in the same consume call
    as the messages before it."""

    fails_at = 3

    def assign(self, tps: list[Any]) -> None:
        super().assign(tps)
        failed = FakeMessage("t", 0, self.fails_at, KafkaError(KafkaError._TRANSPORT))
        self.pending.insert(self.fails_at - tps[0].offset, failed)


def test_the_messages_before_a_failed_fetch_are_read_before_it_fails() -> None:
    read: list[int] = []
    with pytest.raises(DeliveryError, match="cannot read topic t from Kafka brokers h:1"):
        for record in TopicLog(CONFIG, _FailingConsumer({0: 10})).read(OffsetRange("t", 0, 0, 10)):
            read.append(record.offset)
    assert read == [0, 1, 2]

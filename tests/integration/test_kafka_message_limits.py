"""Message size limits as Apache Kafka enforces them: a topic's `max.message.bytes` and the
broker's `message.max.bytes` (the default of topics the sink creates), checked by Kafka
against whole record batches.

The sink learns a topic's limit, lowers max-message-bytes to it (less 128 bytes, as TiCDC)
and applies `large-message-handle-option`, or fails naming both numbers; its record
batches fit the limit; and a message the broker refuses fails the write naming the topic,
partition, size and limit: no row is lost without an error. One broker of this module's
own, with `message.max.bytes` 20000.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.kafka import KafkaBroker
from tests.support.spark_read import write_frame
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration

BROKER_LIMIT = 20_000  # the broker's message.max.bytes: topics the sink creates get it
TOPIC_LIMIT = 10_000  # max.message.bytes of the topics these tests create themselves
# Incompressible: Kafka checks the size of the compressed record batch (lz4 by default).
HUGE = "".join(random.Random(22).choices(string.ascii_letters, k=50_000))


@pytest.fixture(scope="module")
def kafka_limits() -> Iterator[KafkaBroker]:
    with KafkaBroker(settings={"message.max.bytes": str(BROKER_LIMIT)}) as running:
        yield running


def save(spark: Any, kafka: KafkaBroker, df: Any, topic: str, **options: str) -> None:
    table = {
        "database": "db",
        "table": "t",
        "primary-key": "id",
    }
    write_frame(df, kafka, topic, **{**table, **options})


def decoded(kafka: KafkaBroker, topic: str, protocol: str = "simple") -> list[Any]:
    decoder = decoder_for(protocol)
    return [decoder.decode_message(r.key, r.value) for r in kafka.consume_all(topic)]


def ids(events: list[Any]) -> list[int]:
    found = []
    for event in events:
        if isinstance(event, DecodedRow):
            image = event.data if event.data is not None else event.old
            found.append(int(image["id"]))
    return sorted(found)


def big_and_small(spark: Any) -> Any:
    rows = [(1, "small one"), (2, HUGE), (3, "small three")]
    return spark.createDataFrame(rows, "id bigint, payload string").coalesce(1)


def many_rows(spark: Any, count: int) -> Any:
    # ~400-byte Simple messages: each far below the limit, 25 of them above it.
    return spark.range(count).selectExpr("id", "repeat(cast(id as string), 40) as payload")


def test_a_topic_limit_below_max_message_bytes_is_learned_and_the_policy_applied(
    spark: Any, kafka_limits: KafkaBroker
) -> None:
    topic = "limit_topic_key_only"
    kafka_limits.create_topic(topic, 1, config={"max.message.bytes": str(TOPIC_LIMIT)})
    # max-message-bytes is 10 MiB by default: the 50 KB row fits the option, not the topic.
    save(
        spark,
        kafka_limits,
        big_and_small(spark),
        topic,
        **{"large-message-handle-option": "handle-key-only"},
    )
    events = decoded(kafka_limits, topic)
    rows = [e for e in events if isinstance(e, DecodedRow)]
    assert [(r.data, r.handle_key_only) for r in rows] == [
        ({"id": 1, "payload": "small one"}, False),
        ({"id": 2}, True),
        ({"id": 3, "payload": "small three"}, False),
    ]
    assert isinstance(events[-1], DecodedWatermark)


def test_a_row_above_the_topic_limit_fails_naming_both_limits_and_sends_no_watermark(
    spark: Any, kafka_limits: KafkaBroker
) -> None:
    topic = "limit_topic_none"
    kafka_limits.create_topic(topic, 1, config={"max.message.bytes": str(TOPIC_LIMIT)})
    with pytest.raises(Exception) as failure:
        save(spark, kafka_limits, big_and_small(spark), topic)
    text = str(failure.value)
    assert "MessageTooLargeError" in text
    assert "message for table db.t key id=2 is 50" in text
    assert (
        f"above {TOPIC_LIMIT - 128}: topic {topic} has max.message.bytes {TOPIC_LIMIT} (less "
        "128 bytes, as TiCDC keeps), below max-message-bytes 10485760; raise the topic's "
        "max.message.bytes or set large-message-handle-option"
    ) in text
    assert not [e for e in decoded(kafka_limits, topic) if isinstance(e, DecodedWatermark)]


@pytest.mark.parametrize("protocol", ["simple", "debezium"])
def test_many_small_messages_to_a_topic_with_a_small_limit_all_arrive(
    spark: Any, kafka_limits: KafkaBroker, protocol: str
) -> None:
    # Kafka checks max.message.bytes against a whole record batch: librdkafka's default
    # batches of up to 1,000,000 bytes were refused whole (MSG_SIZE_TOO_LARGE) though
    # every message in them fit.
    topic = f"limit_topic_batches_{protocol}"
    kafka_limits.create_topic(topic, 2, config={"max.message.bytes": str(TOPIC_LIMIT)})
    count = 20_000
    save(spark, kafka_limits, many_rows(spark, count), topic, protocol=protocol)
    assert ids(decoded(kafka_limits, topic, protocol)) == list(range(count))


def test_a_message_the_broker_refuses_fails_the_write_naming_topic_partition_size_and_limit(
    spark: Any, kafka_limits: KafkaBroker
) -> None:
    # Debezium checks no size before sending (as TiCDC): Kafka refuses the 50 KB message.
    topic = "limit_topic_refused"
    kafka_limits.create_topic(topic, 1, config={"max.message.bytes": str(TOPIC_LIMIT)})
    with pytest.raises(Exception) as failure:
        save(spark, kafka_limits, big_and_small(spark), topic, protocol="debezium")
    text = str(failure.value)
    assert "DeliveryError" in text
    assert f"Kafka brokers {kafka_limits.bootstrap} refused a message of " in text
    assert (
        f"for topic {topic} partition 0 as too large: the topic's max.message.bytes is "
        f"{TOPIC_LIMIT}"
    ) in text
    assert "MSG_SIZE_TOO_LARGE" in text
    # The row before it is there, the refused one is not: the write failed for it. (Row 3
    # comes after the refused batch: librdkafka's idempotent producer decides.)
    found = ids(decoded(kafka_limits, topic, "debezium"))
    assert 1 in found and 2 not in found


def test_a_topic_the_sink_creates_takes_the_brokers_message_max_bytes(
    spark: Any, kafka_limits: KafkaBroker
) -> None:
    topic = "limit_broker_created"
    save(
        spark,
        kafka_limits,
        big_and_small(spark),
        topic,
        **{"large-message-handle-option": "handle-key-only"},
    )
    rows = [e for e in decoded(kafka_limits, topic) if isinstance(e, DecodedRow)]
    assert sorted((r.data["id"], r.handle_key_only) for r in rows) == [
        (1, False),
        (2, True),
        (3, False),
    ]
    topic = "limit_broker_created_batches"
    count = 20_000
    save(spark, kafka_limits, many_rows(spark, count), topic)
    assert ids(decoded(kafka_limits, topic)) == list(range(count))

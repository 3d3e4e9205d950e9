"""`acks`, idempotence and `min.insync.replicas` as Apache Kafka enforces them, on a cluster
of two brokers (this module's own: Kafka caps min.insync.replicas at a partition's replica
count, so a single broker accepts every acks=all write).

With a follower down, a partition has fewer in-sync replicas than its topic's
min.insync.replicas: Kafka refuses acks=all writes (NOT_ENOUGH_REPLICAS), and librdkafka
retries them until `message.timeout.ms` and reports a timeout. The sink fails such a write
before sending, naming the partition, the counts and the setting; with the follower back,
the same write delivers every row once. `required-acks=1` (TiCDC's sink-uri parameter)
turns the idempotent producer off instead of being refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.support.kafka import (
    CONTROLLER_SETTINGS,
    KafkaBroker,
    KafkaFollower,
    create_replicated_topic,
    wait_for_in_sync,
)
from tests.support.topic_check import simple_topic
from ticdc_sink.codec.config import CodecConfig
from ticdc_sink.codec.protocols import encode_watermark

pytestmark = pytest.mark.integration

ROWS = 5_000


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[KafkaBroker, KafkaFollower]]:
    with (
        KafkaBroker(settings=CONTROLLER_SETTINGS, heap="384m") as first,
        KafkaFollower(first, heap="384m") as second,
    ):
        yield first, second


def save(spark: Any, bootstrap: str, topic: str, **options: str) -> None:
    writer = (
        spark.range(ROWS)
        .selectExpr("id", "concat('row-', id) as name")
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("database", "db")
        .option("table", "t")
        .option("primary-key", "id")
    )
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def replicated(broker: KafkaBroker, topic: str, partitions: int) -> None:
    """Return once what an acks=1 write sent to `topic` is replicated. Kafka hands readers
    a partition up to its high watermark, which every in-sync replica holds, and an acks=1
    write returns before the follower has it: a read at once could find nothing. A Simple
    watermark written after it with acks=all returns once every in-sync replica holds it,
    and so all before it (readers take it as a watermark, not a row)."""
    mark = encode_watermark(CodecConfig(), 1, build_ts_ms=1)
    assert mark is not None
    failed: list[Any] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
    for partition in range(partitions):
        producer.produce(
            topic,
            value=mark.value,
            partition=partition,
            on_delivery=lambda error, _: failed.append(error) if error is not None else None,
        )
    assert producer.flush(120) == 0
    assert failed == []


def test_acks_all_with_too_few_in_sync_replicas_fails_naming_the_setting_and_loses_nothing(
    spark: Any, cluster: tuple[KafkaBroker, KafkaFollower], tmp_path: Any
) -> None:
    first, second = cluster
    topic = "acks_min_insync"
    create_replicated_topic(first, topic, 2, replicas=2, config={"min.insync.replicas": "2"})
    wait_for_in_sync(first, topic, 2)
    second.stop()
    try:
        wait_for_in_sync(first, topic, 1)
        options = {
            "checkpointLocation": str(tmp_path / "chk"),
            # Bounds the write if the sink sent anyway: librdkafka retries
            # NOT_ENOUGH_REPLICAS until this timeout (5 minutes by default).
            "kafka.message.timeout.ms": "15000",
        }
        with pytest.raises(Exception) as failure:
            save(spark, first.bootstrap, topic, **options)
    finally:
        second.start()
    text = str(failure.value)
    assert "DeliveryError" in text
    assert f"of topic {topic} on Kafka brokers {first.bootstrap} has 1 in-sync replica(s) of 2" in (
        text
    )
    assert "fewer than the topic's min.insync.replicas 2" in text
    assert "Kafka refuses writes with acks=all (NOT_ENOUGH_REPLICAS)" in text

    wait_for_in_sync(first, topic, 2)
    # Nothing was sent, nothing claimed: the same write now delivers every row once.
    assert simple_topic(first, topic).ids == []
    save(spark, first.bootstrap, topic, **options)
    written = simple_topic(first, topic)
    assert written.ids == list(range(ROWS))
    assert {p: len(w) for p, w in written.watermarks.items()} == {0: 1, 1: 1}


def test_required_acks_1_turns_the_idempotent_producer_off_instead_of_being_refused(
    spark: Any, cluster: tuple[KafkaBroker, KafkaFollower]
) -> None:
    first, _ = cluster
    topic = "acks_one"
    create_replicated_topic(first, topic, 2, replicas=2, config={})
    save(
        spark,
        first.bootstrap,
        topic,
        **{"sink-uri": f"kafka://{first.bootstrap}/{topic}?required-acks=1"},
    )
    replicated(first, topic, 2)
    written = simple_topic(first, topic)
    assert Counter(written.ids) == Counter(range(ROWS))

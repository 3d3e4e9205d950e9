"""Where reads start and end, through Spark and a real broker: a debezium topic written with
defaults reads back every row (a `latest` end is where the partition really ends, whatever
the brokers' ListOffsets answer says; an explicit `endingOffsets` is read up to exactly or
fails naming where the partition ends), with the writer's own options; a stream of it
needs watermarks it does not have and says so; a sink-written topic with more partitions
than the writer's `partition-num` streams with it; a topic deleted and recreated under a
stream's checkpoint is data loss (`failOnDataLoss`); a checkpoint of another topic says
so; brokers that are down fail a read within `broker-timeout-ms`.

Nothing here relies on a broker's quirks: each test has topics of its own, and reads end
where the partitions end (no end markers)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.support.read_log import WATERMARK, simple_messages, simple_stream, table
from tests.support.spark_read import stream_rows, write_frame
from ticdc_sink._local_broker import free_port
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

ROWS = 202
USERS = table("users")


@pytest.fixture(scope="module")
def debezium_topic(spark: Any, broker: Any) -> dict[str, str]:
    """ROWS rows written with protocol=debezium and the writer's defaults (no
    watermarks), by two tasks at once, to a topic of one partition; the write's options,
    brokers and topic included."""
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": "ro_debezium_defaults",
        "protocol": "debezium",
        "database": "shop",
        "table": "items",
        "primary-key": "id",
        "max-message-bytes": "1048576",
    }
    broker.create_topic(options["topic"], 1)
    df = spark.range(ROWS).selectExpr("id", "concat('n', id) AS name").repartition(2)
    writer = df.write.format("ticdc").mode("append")
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()
    return options


def _read(spark: Any, options: dict[str, str]) -> Any:
    reader = spark.read.format("ticdc")
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def _reading(written: dict[str, str]) -> dict[str, str]:
    """The reading options of a write's options."""
    return {k: written[k] for k in ("kafka.bootstrap.servers", "topic", "protocol")}


def test_a_debezium_topic_written_with_defaults_reads_back_every_row(spark, debezium_topic):
    options = _reading(debezium_topic)
    everything = _read(spark, options)
    assert sorted(r["id"] for r in everything.collect()) == list(range(ROWS))
    topic = options["topic"]
    exact = _read(spark, {**options, "endingOffsets": json.dumps({topic: {"0": ROWS}})})
    assert exact.count() == ROWS
    part = _read(spark, {**options, "endingOffsets": json.dumps({topic: {"0": 50}})})
    assert part.count() == 50


def test_a_read_with_the_writes_option_map_ignores_what_only_the_writer_takes(
    spark, debezium_topic
):
    # primary-key and max-message-bytes mean nothing to a read: noted, not refused.
    read = _read(spark, debezium_topic)
    assert sorted(r["id"] for r in read.collect()) == list(range(ROWS))


def test_an_ending_offset_the_partition_does_not_reach_fails_naming_where_it_ends(
    spark, debezium_topic
):
    topic = debezium_topic["topic"]
    beyond = {
        **_reading(debezium_topic),
        "endingOffsets": json.dumps({topic: {"0": ROWS + 30}}),
        "kafkaConsumer.pollTimeoutMs": "1000",
    }
    with pytest.raises(Exception) as caught:
        _read(spark, beyond).collect()
    message = str(caught.value)
    assert f"partition 0 of topic {topic} ends at offset {ROWS} on Kafka brokers" in message
    assert f"to reach offset {ROWS + 30}" in message


def test_a_stream_of_a_topic_without_watermarks_needs_consistency_none(
    spark, debezium_topic, tmp_path
):
    bootstrap, topic = debezium_topic["kafka.bootstrap.servers"], debezium_topic["topic"]
    with pytest.raises(Exception) as caught:
        stream_rows(spark, bootstrap, topic, str(tmp_path / "a"), protocol="debezium")
    message = str(caught.value)
    assert "option consistency is watermark (the default) but protocol debezium carries" in (
        message
    )
    assert "set option consistency=none" in message and "enable-tidb-extension" in message
    rows = stream_rows(
        spark, bootstrap, topic, str(tmp_path / "b"), protocol="debezium", consistency="none"
    )
    assert sorted(r[0] for r in rows) == list(range(ROWS))


def test_a_stream_of_a_topic_with_more_partitions_than_the_writers_partition_num(
    spark, broker, tmp_path
):
    topic = "ro_partition_num"
    broker.create_topic(topic, 3)
    written = {"database": "shop", "table": "users", "primary-key": "id", "partition-num": "2"}
    for first in (0, 10):
        df = spark.createDataFrame(
            [(i, f"n{i}") for i in range(first, first + 10)], "id long, name string"
        )
        write_frame(df, broker, topic, **written)
    # Partition 2 never gets a watermark: it holds a stream that does not know back.
    assert stream_rows(spark, broker.bootstrap, topic, str(tmp_path / "a")) == []
    rows = stream_rows(
        spark, broker.bootstrap, topic, str(tmp_path / "b"), **{"partition-num": "2"}
    )
    assert sorted(r[0] for r in rows) == list(range(20))


def _send(bootstrap: str, topic: str, partitions: dict[int, list[Any]]) -> None:
    """Simple messages of USERS to each partition: a BOOTSTRAP, then the items, one
    message per request (no broker's end offsets can be wrong about them)."""
    producer = Producer({"bootstrap.servers": bootstrap, "batch.num.messages": 1})
    for partition, items in partitions.items():
        for value in simple_messages(USERS, []) + simple_stream(USERS, items):
            producer.produce(topic, value=value, partition=partition)
            assert producer.flush(30) == 0


def test_a_topic_recreated_under_a_stream_checkpoint_is_data_loss(spark, broker, tmp_path):
    topic = "ro_recreated"
    broker.create_topic(topic, 2)
    old = [(Op.INSERT, 10 + i, (i, "old")) for i in range(3)] + [(WATERMARK, 20)]
    _send(broker.bootstrap, topic, {0: old, 1: old})  # 5 messages each
    checkpoint = str(tmp_path / "chk")
    assert len(stream_rows(spark, broker.bootstrap, topic, checkpoint)) == 6

    # Deleted and created again with one more partition, and fewer messages so far than
    # the stream's offsets: reading on at the old offsets would skip them.
    broker.delete_topic(topic)
    broker.create_topic(topic, 3)
    new = {p: [(Op.INSERT, 30, (100 + p, "new")), (WATERMARK, 30)] for p in range(3)}
    _send(broker.bootstrap, topic, new)  # 3 messages each
    with pytest.raises(Exception) as caught:
        stream_rows(spark, broker.bootstrap, topic, checkpoint)
    message = str(caught.value)
    assert f"partition 0 of topic {topic} ends at offset 3, below the stream's offset 5" in (
        message
    )
    assert "failOnDataLoss=false" in message

    # As Spark's Kafka source, failOnDataLoss=false reads on (here: from the new start).
    rows = stream_rows(spark, broker.bootstrap, topic, checkpoint, failOnDataLoss="false")
    assert sorted(r[0] for r in rows) == [100, 101, 102]


def test_a_restart_with_another_topic_says_the_checkpoint_is_of_other_topics(
    spark, broker, tmp_path
):
    for topic in ("ro_checkpoint_a", "ro_checkpoint_b"):
        broker.create_topic(topic, 1)
        _send(broker.bootstrap, topic, {0: [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]})
    checkpoint = str(tmp_path / "chk")
    assert len(stream_rows(spark, broker.bootstrap, "ro_checkpoint_a", checkpoint)) == 1
    with pytest.raises(Exception) as caught:
        stream_rows(spark, broker.bootstrap, "ro_checkpoint_b", checkpoint)
    message = str(caught.value)
    assert (
        "the stream's checkpoint belongs to a query of other topics: it holds offsets of "
        "topic ro_checkpoint_a, and this query reads topic ro_checkpoint_b" in message
    )
    assert "is gone" not in message


def test_a_read_against_brokers_that_are_down_fails_within_broker_timeout_ms(spark):
    down = f"127.0.0.1:{free_port()}"
    reader = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", down)
        .option("topic", "anything")
        .option("broker-timeout-ms", "1500")
    )
    with pytest.raises(Exception) as caught:
        reader.load()
    assert f"cannot reach Kafka brokers {down} within 1.5 s (option broker-timeout-ms)" in str(
        caught.value
    )

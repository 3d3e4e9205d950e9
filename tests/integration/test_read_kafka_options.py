"""Spark's Kafka source's options on `format("ticdc")` through Spark and Apache Kafka:
`includeHeaders` gives each row its message's headers; `startingTimestamp` /
`endingTimestamp` (and by partition) read exactly the messages of a time window, found by
the brokers' offsetsForTimes (messages are produced with explicit timestamps, so nothing
depends on the clock); a stream starts at a timestamp; `subscribe`, `subscribePattern`
and `assign` read what `topic`, `topicPattern` and a subset of partitions name."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.support.read_log import WATERMARK, simple_messages, simple_stream, table
from tests.support.spark_read import read_topic, stream_rows
from tests.support.topics import TopicNames
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

USERS = table("users")
#: The first row's message timestamp; row n of a partition is sent at T0 + n * 1000 ms.
T0 = 1_700_000_000_000
ROWS = 6
PARTITIONS = (0, 1)


def _row(partition: int, n: int) -> int:
    return partition * 100 + n


def _headers(partition: int, n: int) -> list[tuple[str, bytes | None]]:
    return [("n", f"{partition}:{n}".encode()), ("empty", None)]


@pytest.fixture(scope="module")
def topic(broker: Any) -> str:
    """Two partitions, each: a BOOTSTRAP (at T0 - 1000), then rows n = 0..5 (commit ts
    100 + 10 n, sent at T0 + 1000 n with headers), each followed by a watermark of its
    commit ts (sent at T0 + 1000 n + 500)."""
    name = TopicNames()("ro_kafka_options")
    # Timestamps in the past, kept: time-based retention would delete them at once.
    broker.create_topic(name, len(PARTITIONS), config={"retention.ms": "-1"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": "true"})
    failures: list[Any] = []

    def send(partition: int, value: bytes | None, at: int, headers: Any = None) -> None:
        producer.produce(
            name,
            value,
            partition=partition,
            timestamp=at,
            headers=headers,
            on_delivery=lambda e, _m: e and failures.append(e),
        )

    for p in PARTITIONS:
        send(p, simple_messages(USERS, [])[0], T0 - 1000)
        for n in range(ROWS):
            ts = 100 + 10 * n
            (row,) = simple_stream(USERS, [(Op.INSERT, ts, (_row(p, n), f"r{n}"))])
            send(p, row, T0 + 1000 * n, _headers(p, n))
            (mark,) = simple_stream(USERS, [(WATERMARK, ts)])
            send(p, mark, T0 + 1000 * n + 500)
    assert producer.flush(30) == 0 and not failures, failures
    return name


def _ids(rows: list[Any]) -> list[int]:
    return sorted(r["id"] for r in rows)


def _window(first: int, last: int, partitions: tuple[int, ...] = PARTITIONS) -> list[int]:
    """The rows n = first..last of `partitions`."""
    return sorted(_row(p, n) for p in partitions for n in range(first, last + 1))


def test_include_headers_gives_each_row_its_messages_headers(spark, broker, topic):
    read = read_topic(spark, broker, topic, includeHeaders="true")
    assert read.schema["_headers"].dataType.simpleString() == (
        "array<struct<key:string,value:binary>>"
    )
    rows = read.collect()
    assert len(rows) == ROWS * len(PARTITIONS)
    for r in rows:
        p, n = divmod(r["id"], 100)
        got = [(h["key"], None if h["value"] is None else bytes(h["value"])) for h in r["_headers"]]
        assert got == _headers(p, n)
    assert "_headers" not in read_topic(spark, broker, topic).columns


def test_a_batch_read_of_a_time_window_returns_exactly_its_rows(spark, broker, topic):
    # Rows 1..3: sent at or after T0 + 1000 and before T0 + 4000 (row 4's time, excluded).
    window = read_topic(
        spark,
        broker,
        topic,
        startingTimestamp=str(T0 + 1000),
        endingTimestamp=str(T0 + 4000),
        startingOffsets="latest",  # the timestamp takes precedence, as in Spark
    )
    assert _ids(window.collect()) == _window(1, 3)
    # Per partition: partition 0 from row 2 to its end, partition 1 from row 0 to row 1.
    starting = {topic: {"0": T0 + 1500, "1": T0 - 5000}}
    ending = {topic: {"0": T0 + 99_000, "1": T0 + 1500}}
    by_partition = read_topic(
        spark,
        broker,
        topic,
        startingOffsetsByTimestamp=json.dumps(starting),
        endingOffsetsByTimestamp=json.dumps(ending),
    )
    assert _ids(by_partition.collect()) == sorted(_window(2, 5, (0,)) + _window(0, 1, (1,)))
    with pytest.raises(Exception, match=f"startingTimestamp: partition 0 of topic {topic} has no"):
        read_topic(spark, broker, topic, startingTimestamp=str(T0 + 99_000)).collect()
    latest = read_topic(
        spark,
        broker,
        topic,
        startingTimestamp=str(T0 + 99_000),
        startingOffsetsByTimestampStrategy="latest",
    )
    assert latest.collect() == []


def test_a_stream_started_by_timestamp_reads_from_that_time_on(spark, broker, topic, tmp_path):
    # stream_rows asks for startingOffsets=earliest: the timestamp takes precedence.
    rows = stream_rows(
        spark, broker.bootstrap, topic, str(tmp_path / "chk"), startingTimestamp=str(T0 + 3000)
    )
    assert sorted(r[0] for r in rows) == _window(3, ROWS - 1)


def test_sparks_topic_options_read_the_same_rows(spark, broker, topic):
    everything = _window(0, ROWS - 1)

    def read(**options: str) -> list[int]:
        reader = spark.read.format("ticdc").option("kafka.bootstrap.servers", broker.bootstrap)
        for name, value in options.items():
            reader = reader.option(name, value)
        return _ids(reader.load().collect())

    assert read(subscribe=topic) == everything
    assert read(subscribePattern=f"{topic[:-3]}.*") == everything
    assert read(assign=json.dumps({topic: [1]})) == _window(0, ROWS - 1, (1,))
    with pytest.raises(Exception, match="options subscribe and topic are both set"):
        read(subscribe=topic, topic=topic)

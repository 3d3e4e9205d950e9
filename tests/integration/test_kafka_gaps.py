"""Reads of topics whose offsets have gaps, on Apache Kafka: a topic written by a
transactional producer with aborted transactions (their records and the transaction
markers take offsets no committed message fills; a partition ends on an abort marker),
and a compacted topic after the log cleaner removed superseded records.

Batch and streaming reads end, read every committed row once and nothing aborted
(read_committed), and do not wait on a gap: the reads' poll timeout is set low, so a read
waiting for a message that never comes fails instead of passing late.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.support.kafka import KafkaBroker
from tests.support.spark_read import run_stream, write_frame
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedRow

pytestmark = pytest.mark.integration

ROWS = 600
PARTITIONS = 2
# A read that waits for a message the gap never brings fails after this (default 120 s).
POLL_TIMEOUT = {"kafkaConsumer.pollTimeoutMs": "20000"}


def write(spark: Any, kafka: KafkaBroker, df: Any, topic: str, **options: str) -> None:
    table = {
        "database": "db",
        "table": "t",
        "primary-key": "id",
        "partition-num": str(PARTITIONS),
    }
    write_frame(df, kafka, topic, **{**table, **options})


def batch_read(spark: Any, kafka: KafkaBroker, topic: str, **options: str) -> list[Any]:
    reader = spark.read.format("ticdc").option("kafka.bootstrap.servers", kafka.bootstrap)
    reader = reader.option("topic", topic)
    for name, value in {**POLL_TIMEOUT, **options}.items():
        reader = reader.option(name, value)
    return reader.load().collect()


def stream_read(
    spark: Any, kafka: KafkaBroker, topic: str, checkpoint: str, **options: str
) -> list[Any]:
    """Every row one availableNow run of a streaming read gives, batch after batch."""
    rows: list[Any] = []
    run_stream(
        spark,
        kafka.bootstrap,
        topic,
        checkpoint,
        lambda df, _batch_id: rows.extend(df.collect()),
        **{**POLL_TIMEOUT, **options},
    )
    return rows


def frame(spark: Any, ids: range, version: str) -> Any:
    return spark.range(ids.start, ids.stop).selectExpr(
        "id", f"concat('{version}-', cast(id as string)) as name"
    )


# -- a transactional producer with aborted transactions ------------------------------------


def transactional_copy(
    kafka: KafkaBroker, topic: str, committed: list[Any], aborted: list[Any]
) -> None:
    """`committed` records (read from a topic the sink wrote) in committed transactions of
    ~50 records per partition, each preceded by an aborted transaction holding
    `aborted` records; every partition ends with an aborted transaction."""
    kafka.create_topic(topic, PARTITIONS)
    producer = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": topic})
    producer.init_transactions(60)

    def transaction(records: list[Any], *, commit: bool) -> None:
        producer.begin_transaction()
        for record in records:
            producer.produce(topic, record.value, record.key, partition=record.partition)
        # In the log before the outcome: an abort leaves its records there, skipped by
        # read_committed consumers.
        assert producer.flush(60) == 0
        if commit:
            producer.commit_transaction(60)
        else:
            producer.abort_transaction(60)

    def chunks(records: list[Any]) -> list[list[Any]]:
        size = 50 * PARTITIONS
        return [records[i : i + size] for i in range(0, len(records), size)]

    junk = chunks(aborted)
    for n, chunk in enumerate(chunks(committed)):
        transaction(junk[n % len(junk)], commit=False)
        transaction(chunk, commit=True)
    transaction(junk[0], commit=False)


def test_reads_of_a_topic_with_aborted_transactions_end_and_read_only_committed_rows(
    spark: Any, kafka: KafkaBroker, tmp_path: Any
) -> None:
    write(spark, kafka, frame(spark, range(ROWS), "kept"), "gaps_tx_source")
    write(spark, kafka, frame(spark, range(10_000, 10_000 + ROWS), "aborted"), "gaps_tx_junk")
    committed = kafka.consume_all("gaps_tx_source")
    aborted = kafka.consume_all("gaps_tx_junk")
    topic = "gaps_tx"
    transactional_copy(kafka, topic, committed, aborted)
    # What the topic holds: every partition ends on a transaction marker after aborted
    # records, past the last committed message.
    ends = kafka.end_offsets(topic)
    last = {p: max(r.offset for r in kafka.consume_all(topic) if r.partition == p) for p in ends}
    assert all(ends[p] > last[p] + 1 for p in ends), (ends, last)

    rows = batch_read(spark, kafka, topic)
    assert Counter(r["id"] for r in rows) == Counter(range(ROWS))
    assert {r["name"] for r in rows} == {f"kept-{i}" for i in range(ROWS)}

    streamed = stream_read(spark, kafka, topic, str(tmp_path / "stream"))
    assert Counter(r["id"] for r in streamed) == Counter(range(ROWS))
    assert {r["name"] for r in streamed} == {f"kept-{i}" for i in range(ROWS)}


# -- a compacted topic ------------------------------------------------------------------


def wait_for_compaction(
    kafka: KafkaBroker, topic: str, records: int, timeout: float = 120.0
) -> None:
    """Wait until the log cleaner left `records` records in `topic` (it runs every 15 s
    on the test broker, and only on segments no longer written to)."""
    deadline = time.monotonic() + timeout
    while True:
        left = len(kafka.consume_all(topic))
        if left == records:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"topic {topic}: {left} records, not {records}, after compaction")
        time.sleep(1.0)


def test_reads_of_a_compacted_topic_end_and_read_each_surviving_row_once(
    spark: Any, kafka: KafkaBroker, tmp_path: Any
) -> None:
    # Debezium keys its messages by primary key: compaction keeps each key's last one.
    topic = "gaps_compacted"
    kafka.create_topic(
        topic,
        PARTITIONS,
        config={
            "cleanup.policy": "compact",
            "segment.ms": "100",  # each write below starts a new segment
            "min.cleanable.dirty.ratio": "0.01",
        },
    )
    half = ROWS // 2
    write(spark, kafka, frame(spark, range(ROWS), "v1"), topic, protocol="debezium")
    write(spark, kafka, frame(spark, range(half), "v2"), topic, protocol="debezium")
    # A last write rolls the segment holding v2: the cleaner never touches the active one.
    write(spark, kafka, frame(spark, range(ROWS, ROWS + 1), "v1"), topic, protocol="debezium")
    wait_for_compaction(kafka, topic, ROWS + 1)
    decoder = decoder_for("debezium")
    survivors = sorted(
        (int(e.data["id"]), e.data["name"])
        for e in (decoder.decode_message(r.key, r.value) for r in kafka.consume_all(topic))
        if isinstance(e, DecodedRow)
    )
    expected = sorted(
        [(i, f"v2-{i}") for i in range(half)] + [(i, f"v1-{i}") for i in range(half, ROWS + 1)]
    )
    assert survivors == expected

    rows = batch_read(spark, kafka, topic, protocol="debezium")
    assert sorted((r["id"], r["name"]) for r in rows) == expected

    streamed = stream_read(
        spark, kafka, topic, str(tmp_path / "stream"), protocol="debezium", consistency="none"
    )
    assert sorted((r["id"], r["name"]) for r in streamed) == expected

"""Spark's own Kafka connector and our topics, both ways: `format("kafka")` + `from_json`
reads each JSON protocol's topic written by `format("ticdc")` with the input's values, ops
and order per key; and a TiCDC-shaped topic that Spark's Kafka sink writes (Canal-JSON
built with `to_json`, watermarks included) reads back through `format("ticdc")`, batch and
streaming."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.changelog import (
    Change,
    apply,
    expected_per_key,
    make_row,
    per_key,
    source_table,
)
from tests.support.consumers import CONSUMERS
from tests.support.spark_kafka import connector_version, ending_offsets
from tests.support.tables import CHANGES

pytestmark = pytest.mark.interop

SOURCE = CONSUMERS["spark-kafka-source"]
SINK = CONSUMERS["spark-kafka-sink"]

_ROW = "struct<id: string, name: string, amount: string>"
# Per protocol: the `from_json` schema of a message, which messages are row changes, and
# the op, new (deleted) row and old row of one, as Spark SQL over the parsed column `m`.
_READS = {
    "simple": (
        f"type string, data {_ROW}, old {_ROW}",
        "m.type IN ('INSERT', 'UPDATE', 'DELETE')",
        "m.type",
        "CASE WHEN m.type = 'DELETE' THEN m.old ELSE m.data END",
        "CASE WHEN m.type = 'UPDATE' THEN m.old END",
    ),
    "debezium": (
        "payload struct<op: string, "
        "before: struct<id: bigint, name: string, amount: double>, "
        "after: struct<id: bigint, name: string, amount: double>>",
        "m.payload.op IN ('c', 'u', 'd')",
        "CASE m.payload.op WHEN 'c' THEN 'INSERT' WHEN 'u' THEN 'UPDATE' ELSE 'DELETE' END",
        "CASE WHEN m.payload.op = 'd' THEN m.payload.before ELSE m.payload.after END",
        "CASE WHEN m.payload.op = 'u' THEN m.payload.before END",
    ),
    "canal-json": (
        f"type string, isDdl boolean, data array<{_ROW}>, old array<{_ROW}>",
        "NOT m.isDdl AND m.type IN ('INSERT', 'UPDATE', 'DELETE')",
        "m.type",
        "m.data[0]",
        "CASE WHEN m.type = 'UPDATE' THEN m.old[0] END",
    ),
}


def _announce_spark(announce: Any) -> None:
    import pyspark

    version = connector_version()
    announce(
        f'Spark {pyspark.__version__} format("kafka"): spark-sql-kafka-0-10_2.13 {version}, '
        f"spark-avro_2.13 {version}"
    )


def _changes(rows: list[Any]) -> list[Change]:
    def row(image: Any) -> dict[str, Any] | None:
        return None if image is None else make_row(image["id"], image["name"], image["amount"])

    return [(r["op"], row(r["row"]), row(r["before"])) for r in rows]


@pytest.mark.parametrize("protocol", SOURCE.protocols)
def test_from_json_reads_each_json_protocol(spark_kafka, write_topic, kafka, announce, protocol):
    _announce_spark(announce)
    topic = f"interop_spark_{protocol.replace('-', '_')}"
    ends = write_topic(topic, {**SOURCE.options, "protocol": protocol})
    schema, is_change, op, row, before = _READS[protocol]
    reader = spark_kafka.read.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap)
    raw = (
        reader.options(**SOURCE.settings)
        .option("subscribe", topic)
        .option("endingOffsets", ending_offsets(topic, ends))
        .load()
    )
    from pyspark.sql import functions as F

    parsed = raw.select(
        "partition", "offset", F.from_json(F.col("value").cast("string"), schema).alias("m")
    )
    changes = (
        parsed.where(is_change)
        .selectExpr("partition", "offset", f"{op} AS op", f"{row} AS row", f"{before} AS before")
        .orderBy("partition", "offset")
        .collect()
    )
    assert per_key(_changes(changes)) == expected_per_key()


def _canal_json(spark: Any, changes: list[tuple[Any, ...]], partitions: int) -> Any:
    """Canal-JSON messages for `changes` (op, commit ts, id, name, amount, before) built
    with Spark SQL as a user would: key null, `partition` by id."""
    frame = spark.createDataFrame(
        changes,
        "op string, ts bigint, id bigint, name string, amount decimal(10,2), "
        "before struct<id: bigint, name: string, amount: decimal(10,2)>",
    ).coalesce(1)  # one task: each key's messages in order
    image = (
        "named_struct('id', CAST({0}.id AS STRING), 'name', {0}.name, "
        "'amount', CAST({0}.amount AS STRING))"
    )
    message = f"""named_struct(
        'id', 0, 'database', 'shop', 'table', 'items', 'pkNames', array('id'),
        'isDdl', false, 'type', op, 'es', shiftright(ts, 18), 'ts', shiftright(ts, 18),
        'sql', '',
        'sqlType', named_struct('id', -5, 'name', 12, 'amount', 3),
        'mysqlType', named_struct('id', 'bigint(20)', 'name', 'varchar(64)',
                                  'amount', 'decimal(10,2)'),
        'old', CASE WHEN op = 'UPDATE' THEN array({image.format("before")}) END,
        'data', array({image.format("r")}),
        '_tidb', named_struct('commitTs', ts))"""
    return frame.selectExpr(
        "*", "named_struct('id', id, 'name', name, 'amount', amount) AS r"
    ).selectExpr(
        f"to_json({message}, map('ignoreNullFields', 'false')) AS value",
        f"CAST(pmod(xxhash64(id), {partitions}) AS INT) AS partition",
    )


def _canal_watermark(spark: Any, ts: int, partitions: int) -> Any:
    """TiCDC's Canal-JSON TIDB_WATERMARK, one to every partition."""
    message = f"""named_struct(
        'id', 0, 'database', '', 'table', '', 'pkNames', CAST(NULL AS ARRAY<STRING>),
        'isDdl', false, 'type', 'TIDB_WATERMARK', 'es', {ts >> 18}, 'ts', {ts >> 18},
        'sql', '', 'sqlType', CAST(NULL AS MAP<STRING, INT>),
        'mysqlType', CAST(NULL AS MAP<STRING, STRING>),
        'data', CAST(NULL AS ARRAY<MAP<STRING, STRING>>),
        'old', CAST(NULL AS ARRAY<MAP<STRING, STRING>>),
        '_tidb', named_struct('watermarkTs', {ts}L))"""
    return spark.range(partitions).selectExpr(
        f"to_json({message}, map('ignoreNullFields', 'false')) AS value",
        "CAST(id AS INT) AS partition",
    )


def _split_key_changes() -> list[tuple[Any, ...]]:
    """CHANGES as TiCDC sends them: a key-changing UPDATE is a DELETE and an INSERT."""
    ops = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    out: list[tuple[Any, ...]] = []
    for op, ts, key, name, amount, before in CHANGES:
        if op == "u" and before[0] != key:
            out.append(("DELETE", ts, *before, None))
            out.append(("INSERT", ts, key, name, amount, None))
        else:
            out.append((ops[op], ts, key, name, amount, before))
    return out


def test_spark_kafka_sink_writes_a_topic_format_ticdc_reads(spark_kafka, kafka, announce, tmp_path):
    _announce_spark(announce)
    topic = "interop_spark_sink_canal"
    kafka.create_topic(topic, 3)
    changes = _split_key_changes()
    half = len(changes) // 2
    rounds = [changes[:half], changes[half:]]
    for batch in rounds:
        # Each round's rows, then its watermark to every partition: a later write job, so
        # after the rows in each partition.
        for frame in (
            _canal_json(spark_kafka, batch, 3),
            _canal_watermark(spark_kafka, max(c[1] for c in batch), 3),
        ):
            frame.write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap).option(
                "topic", topic
            ).save()
    ends = kafka.end_offsets(topic)

    read = (
        spark_kafka.read.format("ticdc")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .options(**SINK.options)
        .option("kafka-columns", "true")
        .option("endingOffsets", ending_offsets(topic, ends))
        .load()
    )
    # the column definitions as read: an integer's display width is not kept (MySQL 8)
    assert [f.metadata["mysql_type"] for f in read.schema.fields[:3]] == [
        "bigint NOT NULL",
        "varchar(64)",
        "decimal(10,2)",
    ]

    def as_changes(rows: list[Any]) -> list[Change]:
        return [
            (
                r["_op"],
                make_row(r["id"], r["name"], r["amount"]),
                None if r["_before"] is None else make_row(*r["_before"]),
            )
            for r in rows
        ]

    got = read.orderBy("_partition", "_offset").collect()  # the topic's order
    assert per_key(as_changes(got)) == expected_per_key()
    assert sorted(r["_commit_ts"] for r in got) == sorted(c[1] for c in changes)

    # A stream ends its micro-batches at the watermarks Spark's sink wrote.
    batches: list[list[Any]] = []
    query = (
        spark_kafka.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .options(**SINK.options)
        .option("kafka-columns", "true")
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.foreachBatch(lambda frame, _id: batches.append(frame.collect()))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    streamed = [row for batch in batches for row in batch]
    streamed.sort(key=lambda r: (r["_partition"], r["_offset"]))
    assert per_key(as_changes(streamed)) == expected_per_key()
    watermarks = [max(c[1] for c in batch) for batch in rounds]
    for batch in filter(None, batches):
        # whole rounds only: no micro-batch ends between two watermarks
        assert max(r["_commit_ts"] for r in batch) in watermarks
    assert apply(as_changes(got)) == source_table()

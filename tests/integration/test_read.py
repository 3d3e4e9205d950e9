"""Reading with `spark.read.format("ticdc")`: what the sink wrote reads back as the same
changes (rows, ops, commit ts, before images), every MySQL type survives a read and a
second write byte for byte, and offsets, Kafka columns, a user schema and bad messages
behave as documented."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.read_log import WATERMARK, simple_messages, simple_stream, table
from tests.support.spark_read import produce
from tests.support.tables import CHANGES, CHANGES_SCHEMA, all_types_frame, all_types_options
from ticdc_sink import tso
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow
from ticdc_sink.events import Op
from ticdc_sink.writer.table import declared_table

pytestmark = pytest.mark.integration


def write(df: Any, broker: Any, topic: str, **options: str) -> None:
    writer = df.write.format("ticdc").mode("append")
    writer = writer.option("kafka.bootstrap.servers", broker.bootstrap).option("topic", topic)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def read(spark: Any, broker: Any, topic: str, schema: str | None = None, **options: str) -> Any:
    reader = spark.read.format("ticdc").option("kafka.bootstrap.servers", broker.bootstrap)
    if schema is not None:
        reader = reader.schema(schema)
    reader = reader.option("topic", topic)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def expected_changes() -> list[tuple[Any, ...]]:
    """CHANGES as the sink writes them: an UPDATE of the primary key is a DELETE of the
    old row and an INSERT of the new one (TiCDC's Kafka sink splits it)."""
    ops = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    out = []
    for op, ts, key, name, amount, before in CHANGES:
        if op == "u" and before[0] != key:
            out.append(("DELETE", ts, *before, None))
            out.append(("INSERT", ts, key, name, amount, None))
        else:
            out.append((ops[op], ts, key, name, amount, tuple(before) if before else None))
    return sorted(out, key=lambda c: (c[1], c[0], c[2]))


@pytest.mark.spark_version
@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_a_written_change_stream_reads_back_as_the_same_changes(spark, broker, topics, encoding):
    topic = topics("read_changes")
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA)
    options = {"database": "shop", "table": "items", "primary-key": "id"}
    options |= {"encoding-format": encoding, "partition": "index-value", "partition-num": "3"}
    write(df, broker, topic, **options)
    result = read(spark, broker, topic, **{"encoding-format": encoding})
    assert result.rdd.getNumPartitions() == 1  # 3 small Kafka partitions: one task
    # Each column as it was written (a write of the read sends the same schema).
    assert [f.metadata.get("mysql_type") for f in result.schema.fields[:3]] == [
        "bigint NOT NULL",
        "text",
        "decimal(10,2)",
    ]
    got = sorted(
        (
            r["_op"],
            r["_commit_ts"],
            r["id"],
            r["name"],
            r["amount"],
            None if r["_before"] is None else tuple(r["_before"]),
        )
        for r in result.collect()
    )
    assert sorted(got, key=lambda c: (c[1], c[0], c[2])) == expected_changes()
    assert {(r["_database"], r["_table"]) for r in result.collect()} == {("shop", "items")}


@pytest.mark.spark_version
def test_every_type_survives_a_read_and_a_second_write(spark, broker, topics):
    options = all_types_options()
    write(all_types_frame(spark), broker, topics("read_types_1"), **options)
    result = read(spark, broker, topics("read_types_1"))
    again = {k: v for k, v in options.items() if k != "column-types"}  # metadata carries them
    write(result, broker, topics("read_types_2"), **again)

    def changes(topic: str) -> list[tuple[Any, ...]]:
        decoder = SimpleDecoder()
        events = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
        rows = [e for e in events if isinstance(e, DecodedRow)]
        return sorted(
            ((r.database, r.table, r.op, r.commit_ts, r.data, r.old) for r in rows),
            key=lambda c: c[4]["id"],
        )

    first = changes(topics("read_types_1"))
    assert len(first) == 2
    assert changes(topics("read_types_2")) == first


def test_offsets_kafka_columns_and_latest(spark, broker, topics):
    topic = topics("read_offsets")
    df = spark.createDataFrame(CHANGES[:6], CHANGES_SCHEMA).coalesce(1)
    write(
        df,
        broker,
        topic,
        database="shop",
        table="items",
        **{"primary-key": "id", "partition-num": "1"},
    )
    everything = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("kafka-columns", "true")
        .load()
    )
    rows = everything.orderBy("_offset").collect()
    # A BOOTSTRAP at offset 0, the six rows, then the watermark.
    assert [(r["_topic"], r["_partition"], r["_offset"]) for r in rows] == [
        (topic, 0, offset) for offset in range(1, 7)
    ]
    middle = read(
        spark,
        broker,
        topic,
        startingOffsets=f'{{"{topic}": {{"0": 3}}}}',
        endingOffsets=f'{{"{topic}": {{"0": 5}}}}',
    )
    assert [r["id"] for r in middle.collect()] == [rows[2]["id"], rows[3]["id"]]
    nothing = read(spark, broker, topic, startingOffsets="latest", endingOffsets="latest")
    assert nothing.count() == 0 and nothing.columns == everything.columns[:-3]


def test_a_read_from_latest_has_the_schema_written_last_whatever_its_version(spark, broker, topics):
    # The sink's schema versions are no order (derived ones hash the schema): the newer
    # schema goes out here with the lower version. A read from latest holds no row, so its
    # columns are those of the schema messages last in the log, in every partition.
    topic = topics("read_latest_schema")
    options = {"database": "shop", "table": "users", "primary-key": "id", "partition-num": "2"}
    ts = tso.compose(1_750_000_000_000)
    older = spark.createDataFrame(
        [("c", ts, 1, "a")], "_op string, _commit_ts bigint, id bigint, name string"
    )
    newer = spark.createDataFrame(
        [("c", ts + 1, 2, "b", 30)],
        "_op string, _commit_ts bigint, id bigint, name string, age int",
    )
    write(older, broker, topic, **options, **{"schema-version": "2000"})
    write(newer, broker, topic, **options, **{"schema-version": "1000"})
    latest = read(spark, broker, topic, startingOffsets="latest")
    assert latest.columns[:3] == ["id", "name", "age"]
    declared = declared_table(latest.schema, "_table")
    assert declared is not None and declared.version == 1000


def test_a_user_schema_picks_and_casts_columns(spark, broker, topics):
    topic = topics("read_user_schema")
    df = spark.createDataFrame(CHANGES[:3], CHANGES_SCHEMA)
    write(df, broker, topic, database="shop", table="items", **{"primary-key": "id"})
    result = read(spark, broker, topic, "id string, name string, _commit_ts long")
    assert sorted(tuple(r) for r in result.collect()) == sorted(
        (str(key), name, ts) for _op, ts, key, name, _amount, _before in CHANGES[:3]
    )


def test_a_message_of_another_protocol_fails_naming_topic_partition_offset(spark, broker, topics):
    topic = topics("read_bad")
    df = spark.createDataFrame(CHANGES[:2], CHANGES_SCHEMA)
    write(
        df,
        broker,
        topic,
        database="shop",
        table="items",
        **{"primary-key": "id", "partition-num": "1"},
    )
    produce(broker, topic, [(None, b"")], create=False)  # an empty record: not a Simple message
    with pytest.raises(Exception, match=rf"ticdc: topic {topic} partition 0 offset \d+: "):
        read(spark, broker, topic).collect()


def test_a_batch_read_drops_replays_as_a_stream_of_the_topic_does(spark, broker, topics, tmp_path):
    # A retried write sends rows 1 and 2 again before watermark 10; a restart of TiCDC
    # sends row 1 again after it.
    topic = topics("read_replays")
    users = table("users")
    rows = [(Op.INSERT, 10, (1, "a")), (Op.INSERT, 10, (2, "b")), (Op.INSERT, 10, (3, "c"))]
    values = simple_messages(users, []) + simple_stream(
        users,
        [*rows, *rows[:2], (WATERMARK, 10), rows[0], (Op.INSERT, 11, (4, "d")), (WATERMARK, 11)],
    )
    produce(broker, topic, [(None, value) for value in values])

    def read_batch(**options: str) -> list[int]:
        reader = spark.read.format("ticdc").option("kafka.bootstrap.servers", broker.bootstrap)
        for name, value in {"topic": topic, **options}.items():
            reader = reader.option(name, value)
        return sorted(r["id"] for r in reader.load().collect())

    streamed: list[int] = []
    query = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.foreachBatch(lambda df, _id: streamed.extend(r["id"] for r in df.collect()))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    assert read_batch() == sorted(streamed) == [1, 2, 3, 4]
    assert read_batch(replays="keep") == [1, 1, 1, 2, 2, 3, 4]

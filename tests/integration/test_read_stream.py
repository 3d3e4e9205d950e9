"""Streaming reads with `spark.readStream.format("ticdc")`: transactions across 3
partitions with watermarks read into micro-batches that each end at a watermark in every
partition and hold whole commit ts; a restart from the checkpoint continues with no loss
and no duplicate; a replayed range (the same messages produced again) adds no row.
`availableNow` synchronises."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from pyspark.errors import StreamingQueryException

from tests.support.read_log import WATERMARK, simple_messages, simple_stream, table
from tests.support.spark_read import progress_offset
from ticdc_sink.events import Op

# spark_version: the stream reader: latestOffset's arguments and read limits (4.2+)
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]

PARTITIONS = (0, 1, 2)
USERS = table("users")


def transactions(first: int, count: int) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """(commit ts, [(partition, id)]) of `count` transactions from number `first` on; each
    has 1 to 4 rows spread over the partitions."""
    for n in range(first, first + count):
        rows = [(n * 7 + i) % 3 for i in range(1 + n % 4)]
        yield 1000 + 10 * n, [(p, n * 10 + i) for i, p in enumerate(rows)]


class TopicWriter:
    """Writes the topic's messages and remembers each partition's items by offset."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap})
        self.topic = topic
        self.items: dict[int, list[Any]] = {p: [] for p in PARTITIONS}

    def send(self, partition: int, value: bytes | None, item: Any) -> None:
        self.producer.produce(self.topic, value=value, partition=partition)
        self.producer.flush(30)  # one at a time: `items` in offset order
        self.items[partition].append(item)

    def bootstrap(self) -> None:
        for p in PARTITIONS:
            self.send(p, simple_messages(USERS, [])[0], ("bootstrap",))

    def write(self, txns: list[tuple[int, list[tuple[int, int]]]], every: int = 2) -> None:
        """The transactions, with a watermark to every partition after each `every`-th."""
        for number, (ts, rows) in enumerate(txns, 1):
            for p, key in rows:
                (value,) = simple_stream(USERS, [(Op.INSERT, ts, (key, f"n{key}"))])
                self.send(p, value, ("row", ts, key))
            if number % every == 0:
                for p in PARTITIONS:
                    self.send(p, simple_stream(USERS, [(WATERMARK, ts)])[0], (WATERMARK, ts))


def run(
    spark: Any,
    bootstrap: str,
    checkpoint: str,
    topic: str,
    *,
    available_now: bool = True,
    batches: list[dict[str, Any]] | None = None,
    **options: str,
) -> list[dict[str, Any]]:
    """One availableNow run (else a default-trigger query run until all available data
    is processed); each micro-batch's rows and its offsets (collected into `batches`
    when given, which keeps those of a query that fails)."""
    batches = [] if batches is None else batches

    def collect(df: Any, batch_id: int) -> None:
        rows = [(r["id"], r["_commit_ts"]) for r in df.collect()]
        batches.append({"id": batch_id, "rows": rows})

    reader = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    writer = reader.load().writeStream.foreachBatch(collect)
    writer = writer.option("checkpointLocation", checkpoint)
    if available_now:
        writer = writer.trigger(availableNow=True)
    query = writer.start()
    try:
        if available_now:
            query.awaitTermination()
        else:
            query.processAllAvailable()
    finally:
        query.stop()
    ends = {}
    for progress in query.recentProgress:
        ends[progress["batchId"]] = progress_offset(progress["sources"][0]["endOffset"])
    for batch in batches:
        batch["end"] = ends[batch["id"]]
    return batches


def check_batches(batches: list[dict[str, Any]], writer: TopicWriter) -> None:
    """Each batch ends just after a watermark of the same ts in every partition and holds
    every row of its commit ts."""
    for batch in batches:
        ends = batch["end"][writer.topic]
        marks = {writer.items[int(p)][o - 1] for p, o in ends.items()}
        assert len(marks) == 1 and next(iter(marks))[0] == WATERMARK, marks
        (_, resolved) = next(iter(marks))
        assert batch["end"]["ticdc:resolved-ts"] == {writer.topic: dict.fromkeys(ends, resolved)}
        in_batch = {ts for _, ts in batch["rows"]}
        everywhere = [
            (item[2], item[1])
            for items in writer.items.values()
            for item in items
            if item[0] == "row" and item[1] in in_batch
        ]
        assert sorted(batch["rows"]) == sorted(set(everywhere))


try:  # PySpark 4.2+ gives Python stream sources read limits
    from pyspark.sql.streaming.datasource import ReadMaxRows  # noqa: F401

    READ_LIMITS = True
except ImportError:
    READ_LIMITS = False
LIMIT = {"maxOffsetsPerTrigger": "6"} if READ_LIMITS else {}


@pytest.mark.skipif(READ_LIMITS, reason="PySpark 4.2+ applies maxOffsetsPerTrigger")
def test_max_offsets_per_trigger_is_refused_where_spark_gives_no_read_limits(spark, broker, topics):
    # Spark 4.0/4.1 hand Python stream sources no read limit: a reader-side cap would end
    # Trigger.AvailableNow after its first batch.
    topic = topics("read_stream_limit")
    broker.create_topic(topic, len(PARTITIONS))
    writer = TopicWriter(broker.bootstrap, topic)
    writer.bootstrap()
    writer.producer.flush(30)
    del writer
    with pytest.raises(Exception, match="maxOffsetsPerTrigger.*PySpark 4.2"):
        (
            spark.readStream.format("ticdc")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topic", topic)
            .option("maxOffsetsPerTrigger", "6")
            .load()
            .writeStream.format("noop")
            .start()
            .processAllAvailable()
        )


@pytest.mark.parametrize("scan", ["all", "watermarks"])
def test_micro_batches_end_at_watermarks_restart_and_replays(spark, broker, topics, tmp_path, scan):
    # driver-scan=watermarks: the driver reads watermarks back from the ends, not rows.
    topic = topics("read_stream_tx")
    broker.create_topic(topic, 3)
    writer = TopicWriter(broker.bootstrap, topic)
    writer.bootstrap()
    first = list(transactions(0, 8))
    writer.write(first)
    checkpoint = str(tmp_path / "chk")

    options = {**LIMIT, "driver-scan": scan}
    batches = run(spark, broker.bootstrap, checkpoint, topic, **options)
    if READ_LIMITS:
        assert len([b for b in batches if b["rows"]]) > 1  # the limit split the read
    check_batches(batches, writer)
    rows = [row for b in batches for row in b["rows"]]
    assert sorted(rows) == sorted((key, ts) for ts, keys in first for _, key in keys)

    # More transactions, the last one not yet resolved: a restart reads on from the
    # checkpoint, up to the last watermark.
    second = list(transactions(8, 5))
    writer.write(second)
    more = run(spark, broker.bootstrap, checkpoint, topic, **options)
    check_batches(more, writer)
    rows += [row for b in more for row in b["rows"]]
    resolved = second[:4]
    assert sorted(rows) == sorted((key, ts) for ts, keys in first + resolved for _, key in keys)

    # TiCDC replays: every message so far sent again (rows at or below the resolved ts,
    # and the unresolved transaction already read past it), then new transactions.
    writer.write(first + second)
    third = list(transactions(13, 2))
    writer.write(third)
    again = run(spark, broker.bootstrap, checkpoint, topic, **{"driver-scan": scan})
    check_batches(again, writer)
    rows += [row for b in again for row in b["rows"]]
    expected = first + second + third
    assert sorted(rows) == sorted((key, ts) for ts, keys in expected for _, key in keys)
    assert len(rows) == len(set(rows))
    writer.producer.flush(30)
    del writer  # its producer, before the broker stops


def test_micro_batches_of_watermarks_only_run_without_tasks_and_the_stream_reads_on(
    spark, broker, topics, tmp_path
):
    # An idle table: TiCDC keeps sending watermarks to every partition. Those micro-batches
    # hold no row, so the reader plans no task for them (Spark runs them with none).
    topic = topics("read_stream_idle")
    broker.create_topic(topic, 3)
    writer = TopicWriter(broker.bootstrap, topic)
    writer.bootstrap()
    first = list(transactions(0, 4))
    writer.write(first)
    checkpoint = str(tmp_path / "chk")
    rows = [row for b in run(spark, broker.bootstrap, checkpoint, topic) for row in b["rows"]]

    for ts in (2000, 2010, 2020):  # watermarks alone, above every row
        for p in PARTITIONS:
            writer.send(p, simple_stream(USERS, [(WATERMARK, ts)])[0], (WATERMARK, ts))
    idle = run(spark, broker.bootstrap, checkpoint, topic)
    assert idle and all(b["rows"] == [] for b in idle)

    later = [(ts + 2000, keys) for ts, keys in transactions(4, 4)]
    writer.write(later)
    more = run(spark, broker.bootstrap, checkpoint, topic)
    check_batches(more, writer)
    rows += [row for b in more for row in b["rows"]]
    assert sorted(rows) == sorted((key, ts) for ts, keys in first + later for _, key in keys)
    writer.producer.flush(30)
    del writer


def test_a_query_started_at_latest_restarts_at_its_checkpoint_and_ends_at_watermarks(
    spark, broker, topics, tmp_path
):
    # PySpark 4.0/4.1 ask a Python source for its next end without the start: after a
    # restart the reader plans from the checkpoint's last end (Spark names it through
    # `partitions`), not from startingOffsets, which at `latest` is the topic's end by
    # then, inside a transaction not yet resolved.
    topic = topics("read_stream_latest")
    broker.create_topic(topic, len(PARTITIONS))
    writer = TopicWriter(broker.bootstrap, topic)
    writer.bootstrap()
    checkpoint = str(tmp_path / "chk")
    batches: list[dict[str, Any]] = []

    def collect(df: Any, batch_id: int) -> None:
        batches.append({"id": batch_id, "rows": [(r["id"], r["_commit_ts"]) for r in df.collect()]})

    query = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "latest")
        .load()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    try:
        query.processAllAvailable()  # starts at the topic's end: after the bootstraps
        first = list(transactions(0, 4))
        writer.write(first)
        query.processAllAvailable()
    finally:
        query.stop()
    rows = [row for b in batches for row in b["rows"]]
    assert sorted(rows) == sorted((key, ts) for ts, keys in first for _, key in keys)

    second = list(transactions(4, 3))  # the third not yet resolved
    writer.write(second)
    more = run(
        spark, broker.bootstrap, checkpoint, topic, available_now=False, startingOffsets="latest"
    )
    check_batches(more, writer)
    rows += [row for b in more for row in b["rows"]]
    resolved = first + second[:2]
    assert sorted(rows) == sorted((key, ts) for ts, keys in resolved for _, key in keys)
    writer.producer.flush(30)
    del writer  # its producer, before the broker stops


def write_column_added(broker: Any, topic: str) -> None:
    """`topic`, one partition: users(id, name) with a row at ts 10, then users with a
    column `age` added (a BOOTSTRAP of version 2) and a row at ts 11, each transaction
    followed by its watermark."""
    broker.create_topic(topic, 1)
    writer = TopicWriter(broker.bootstrap, topic)
    wider = table("users", {"name": "varchar(20)", "age": "int"}, version=2)
    for schema, ts, row in ((USERS, 10, (1, "a")), (wider, 11, (2, "b", 30))):
        for value in simple_messages(schema, []) + simple_stream(
            schema, [(Op.INSERT, ts, row), (WATERMARK, ts)]
        ):
            writer.send(0, value, None)
    writer.producer.flush(30)
    del writer  # its producer, before the broker stops


def test_a_column_added_mid_stream_fails_the_query_saying_how_to_restart(
    spark, broker, topics, tmp_path
):
    topic = topics("read_stream_ddl")
    write_column_added(broker, topic)

    with pytest.raises(StreamingQueryException) as caught:
        # PySpark 4.0/4.1 ask a source for its latest offset once per AvailableNow run
        # (the run ends before the change without failing): a default trigger there.
        run(spark, broker.bootstrap, str(tmp_path / "a"), topic, available_now=READ_LIMITS)
    message = str(caught.value)
    assert "SchemaError" in message and "table db.users changed at topic" in message
    assert "column age added (int" in message
    assert f"""startingOffsets '{{"{topic}":{{"0":3}}}}'""" in message

    kept = run(
        spark,
        broker.bootstrap,
        str(tmp_path / "b"),
        topic,
        **{"schema-evolution": "ignore-new-columns"},
    )
    assert sorted(row for b in kept for row in b["rows"]) == [(1, 10), (2, 11)]


def test_under_driver_scan_watermarks_a_task_meets_the_change_and_a_restart_reads_every_row(
    spark, broker, topics, tmp_path
):
    # The driver reads no row: the task that meets the BOOTSTRAP of users with `age`
    # fails the batch, naming the batch's start. From there a query with driver-scan=all
    # reads the rows before the change and stops before it, naming where the new schema
    # starts; a query from there reads the rest.
    topic = topics("read_stream_tail_ddl")
    write_column_added(broker, topic)
    with pytest.raises(StreamingQueryException) as caught:
        run(spark, broker.bootstrap, str(tmp_path / "a"), topic, **{"driver-scan": "watermarks"})
    message = str(caught.value)
    assert "SchemaError" in message and "table db.users changed at topic" in message
    assert f"{topic} partition 0 offset 3: column age added (int" in message
    start = f"""{{"{topic}":{{"0":0}}}}"""
    assert f"startingOffsets '{start}' and option driver-scan=all" in message

    restart = f"""{{"{topic}":{{"0":3}}}}"""
    delivered: list[dict[str, Any]] = []
    with pytest.raises(StreamingQueryException, match=f"startingOffsets '{restart}' to read"):
        # A default trigger on PySpark 4.0/4.1 (as in the test above).
        run(
            spark,
            broker.bootstrap,
            str(tmp_path / "b"),
            topic,
            available_now=READ_LIMITS,
            batches=delivered,
            startingOffsets=start,
            **{"driver-scan": "all"},
        )
    rows = [row for b in delivered for row in b["rows"]]
    last = run(spark, broker.bootstrap, str(tmp_path / "c"), topic, startingOffsets=restart)
    rows += [row for b in last for row in b["rows"]]
    assert rows == [(1, 10), (2, 11)]


def test_a_stream_without_startingoffsets_on_a_changed_table_is_refused_at_its_start(
    spark, broker, topics, tmp_path
):
    # Spark takes the schema as for a batch read (from the earliest offsets: users(id,
    # name)); the stream starts at the end, where users has a column more. Streaming on
    # would fail at the first row, or drop `age` under ignore-new-columns.
    topic = topics("read_stream_latest")
    write_column_added(broker, topic)

    for evolution in ("fail", "ignore-new-columns"):
        frame = (
            spark.readStream.format("ticdc")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topic", topic)
            .option("schema-evolution", evolution)
            .load()
        )
        assert frame.columns[:2] == ["id", "name"] and "age" not in frame.columns
        with pytest.raises(Exception) as caught:
            query = (
                frame.writeStream.format("noop")
                .option("checkpointLocation", str(tmp_path / evolution))
                .trigger(availableNow=True)
                .start()
            )
            try:
                query.awaitTermination()
            finally:
                query.stop()
        message = str(caught.value)
        assert "a stream without option startingOffsets starts at the end of" in message
        assert "column age added (int" in message and "set option startingOffsets" in message

    # Named, the start is consistent with the schema.
    frame = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "latest")
        .load()
    )
    assert "age" in frame.columns

"""Reads of several topics through Spark and Kafka: a batch read of two topics by list and
by pattern, a read configured by `sink-uri`, and a streaming read of two topics whose
every micro-batch ends at one watermark across both, restarting from the checkpoint with
no loss and no duplicate, and a topic that comes to match a pattern mid-stream. A
partition added mid-stream is tested on the planning (tests/unit/read/test_stream.py).
`availableNow` synchronises."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Producer

from tests.support.read_log import WATERMARK, simple_messages, simple_stream, table
from tests.support.spark_read import progress_offset, read_topic, write_frame
from tests.support.tables import CHANGES, CHANGES_SCHEMA
from tests.support.topics import TopicNames
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

USERS = table("users")
WRITTEN = {"database": "shop", "table": "items", "primary-key": "id", "partition-num": "2"}
Key = tuple[str, int]


def _changes(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((r["_op"], r["_commit_ts"], r["id"], r["name"]) for r in rows)


@pytest.fixture(scope="module")
def expected(spark: Any, broker: Any, two_topics: list[str]) -> list[Any]:
    """The changes of one topic, read alone."""
    changes = _changes(read_topic(spark, broker, two_topics[0]).collect())
    assert len(changes) >= len(CHANGES)
    return changes


@pytest.fixture(scope="module")
def names() -> TopicNames:
    """The names of the module's topics."""
    return TopicNames()


@pytest.fixture(scope="module")
def two_topics(spark: Any, broker: Any, names: TopicNames) -> list[str]:
    """CHANGES written with the sink to two topics of 2 partitions, and a third topic of
    another table that the pattern below does not match."""
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA)
    topics = [names("rt_batch_a"), names("rt_batch_b")]
    for topic in [*topics, names("rt_other")]:
        broker.create_topic(topic, 2)
    for topic in topics:
        write_frame(df, broker, topic, **WRITTEN)
    other = spark.createDataFrame([(1, "x")], "id bigint, note string")
    write_frame(other, broker, names("rt_other"), **{**WRITTEN, "table": "notes"})
    return topics


def test_a_batch_read_of_a_topic_list_tells_the_topics_apart(spark, broker, two_topics, expected):
    result = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", ",".join(two_topics))
        .option("kafka-columns", "true")
        .load()
    )
    assert result.rdd.getNumPartitions() == 1  # 2 small partitions of each topic: one task
    rows = result.collect()
    for topic in two_topics:
        assert _changes([r for r in rows if r["_topic"] == topic]) == expected
    assert {r["_topic"] for r in rows} == set(two_topics)


def test_a_batch_read_of_a_pattern_reads_the_matching_topics_only(
    spark, broker, names, two_topics, expected
):
    result = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topicPattern", names("rt_batch_.*"))
        .option("kafka-columns", "true")
        .load()
    )
    rows = result.collect()
    assert {r["_topic"] for r in rows} == set(two_topics)  # not rt_other (another table)
    for topic in two_topics:
        assert _changes([r for r in rows if r["_topic"] == topic]) == expected
    with pytest.raises(Exception, match=rf"topicPattern '{names.prefix}rt_nothing.\*' matches no"):
        (
            spark.read.format("ticdc")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topicPattern", names("rt_nothing.*"))
            .load()
        )


def test_a_read_configured_by_the_writers_sink_uri(spark, broker, two_topics, expected):
    uri = (
        f"kafka://{broker.bootstrap}/{two_topics[0]}?protocol=simple&partition-num=2"
        "&max-message-bytes=1048576&enable-tidb-extension=false&kafka-client-id=reader"
    )
    result = spark.read.format("ticdc").option("sink-uri", uri).load()
    assert _changes(result.collect()) == expected


class TopicsWriter:
    """Writes Simple messages to partitions of several topics and remembers each
    partition's items by offset."""

    def __init__(self, bootstrap: str, partitions: list[Key]) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap})
        self.items: dict[Key, list[Any]] = {}
        for key in partitions:
            self.add(key)

    def add(self, key: Key) -> None:
        """A partition joins: its BOOTSTRAP first."""
        self.items[key] = []
        self.send(key, simple_messages(USERS, [])[0], ("bootstrap",))

    def send(self, key: Key, value: bytes | None, item: Any) -> None:
        self.producer.produce(key[0], value=value, partition=key[1])
        self.producer.flush(30)  # one at a time: `items` in offset order
        self.items[key].append(item)

    def write(self, first: int, count: int, *, marks: list[str] | None = None) -> None:
        """Transactions `first`.. with rows spread over every partition, and after each a
        watermark to every partition (of the `marks` topics only, when given)."""
        keys = sorted(self.items)
        for n in range(first, first + count):
            ts = 1000 + 10 * n
            for i in range(1 + n % 3):
                key, row = keys[(n + i) % len(keys)], n * 10 + i
                (value,) = simple_stream(USERS, [(Op.INSERT, ts, (row, f"n{row}"))])
                self.send(key, value, ("row", ts, row))
            for key in keys:
                if marks is None or key[0] in marks:
                    self.send(key, simple_stream(USERS, [(WATERMARK, ts)])[0], (WATERMARK, ts))

    def rows(self, up_to: int) -> list[tuple[str, int, int]]:
        return sorted(
            (key[0], item[2], item[1])
            for key, items in self.items.items()
            for item in items
            if item[0] == "row" and item[1] <= up_to
        )


def run(spark: Any, bootstrap: str, checkpoint: str, **options: str) -> list[dict[str, Any]]:
    """One availableNow run; each micro-batch's rows (topic, id, commit ts) and end."""
    batches: list[dict[str, Any]] = []

    def collect(df: Any, batch_id: int) -> None:
        rows = [(r["_topic"], r["id"], r["_commit_ts"]) for r in df.collect()]
        batches.append({"id": batch_id, "rows": rows})

    reader = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("startingOffsets", "earliest")
        .option("kafka-columns", "true")
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()
    ends = {
        p["batchId"]: progress_offset(p["sources"][0]["endOffset"]) for p in query.recentProgress
    }
    for batch in batches:
        batch["end"] = ends[batch["id"]]
    return batches


def check_batches(batches: list[dict[str, Any]], writer: TopicsWriter, previous: int) -> int:
    """Each batch ends just after a watermark of one ts in every partition of every topic
    and holds exactly the rows of both topics with commit ts above the previous batch's
    resolved ts and at or below its own; the last resolved ts returned."""
    for batch in batches:
        end = batch["end"]
        resolved_json = end.pop("ticdc:resolved-ts")
        assert set(end) == {t for t, _ in writer.items}
        marks = {
            writer.items[t, int(p)][o - 1] for t, offsets in end.items() for p, o in offsets.items()
        }
        assert len(marks) == 1 and next(iter(marks))[0] == WATERMARK, marks
        resolved = next(iter(marks))[1]
        assert {ts for offsets in resolved_json.values() for ts in offsets.values()} == {resolved}
        expected = [r for r in writer.rows(resolved) if r[2] > previous]
        assert sorted(batch["rows"]) == expected
        previous = resolved
    return previous


@pytest.mark.spark_version
def test_a_stream_of_two_topics_is_consistent_across_them_and_restarts(
    spark, broker, topics, tmp_path
):
    pair = [topics("rt_stream_a"), topics("rt_stream_b")]
    broker.create_topic(pair[0], 2)
    broker.create_topic(pair[1], 1)
    writer = TopicsWriter(broker.bootstrap, [(pair[0], 0), (pair[0], 1), (pair[1], 0)])
    writer.write(0, 4)
    writer.write(4, 3, marks=[pair[0]])  # topic b lags: its watermarks stop at ts 1030
    checkpoint = str(tmp_path / "chk")

    batches = run(spark, broker.bootstrap, checkpoint, topic=",".join(pair))
    resolved = check_batches(batches, writer, 0)
    assert resolved == 1030  # the smallest watermark across the topics, not a's 1060
    read = [row for b in batches for row in b["rows"]]

    # Topic b catches up, and more transactions come: a restart reads on from there.
    writer.send((pair[1], 0), simple_stream(USERS, [(WATERMARK, 1060)])[0], (WATERMARK, 1060))
    writer.write(7, 3)
    more = run(spark, broker.bootstrap, checkpoint, topic=",".join(pair))
    assert check_batches(more, writer, resolved) == 1090
    read += [row for b in more for row in b["rows"]]
    assert sorted(read) == writer.rows(1090) and len(read) == len(set(read))
    writer.producer.flush(30)
    del writer  # its producer, before the broker stops


@pytest.mark.spark_version
def test_a_topic_that_comes_to_match_the_pattern_joins_the_stream(spark, broker, topics, tmp_path):
    a, b = topics("rt_join_a"), topics("rt_join_b")
    broker.create_topic(a, 1)
    writer = TopicsWriter(broker.bootstrap, [(a, 0)])
    writer.write(0, 2)
    checkpoint = str(tmp_path / "chk")
    first = run(spark, broker.bootstrap, checkpoint, topicPattern=topics("rt_join_.*"))
    resolved = check_batches(first, writer, 0)
    read = [row for b in first for row in b["rows"]]

    broker.create_topic(b, 1)
    writer.add((b, 0))
    writer.write(2, 3)
    more = run(spark, broker.bootstrap, checkpoint, topicPattern=topics("rt_join_.*"))
    # The batch that finds the new topic reads it from its earliest offset.
    assert check_batches(more, writer, resolved) == 1040
    read += [row for b in more for row in b["rows"]]
    assert sorted(read) == writer.rows(1040) and len(read) == len(set(read))
    assert {t for t, _, _ in read} == {a, b}
    writer.producer.flush(30)
    del writer

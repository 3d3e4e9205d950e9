"""`minPartitions` against Kafka: a one-partition topic with replays read by 4 tasks gives
the rows of the one-task read, batch and streaming; `offsets-per-task`: a topic of 4
small partitions read by one task gives the rows of a task per partition, batch and
streaming; `minOffsetsPerTrigger` holds a stream until enough offsets arrived (PySpark
4.2+; refused before), and the progress reports the latest offset."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.read_log import (
    WATERMARK,
    protocol_messages,
    simple_messages,
    simple_stream,
    table,
)
from tests.support.spark_read import (
    produce,
    progress_offset,
    read_topic,
    run_stream,
    stream_rows,
)
from ticdc_sink.config import CodecConfig
from ticdc_sink.events import Op

# spark_version: the stream reader's read limits (4.2+) and their refusal (4.0, 4.1)
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]

USERS = table("users")

try:  # PySpark 4.2+ gives Python stream sources read limits
    from pyspark.sql.streaming.datasource import ReadMinRows  # noqa: F401

    READ_LIMITS = True
except ImportError:
    READ_LIMITS = False


def _transactions(first: int, count: int, *, replay_at: int | None = None) -> list[Any]:
    """`count` transactions of two rows, each followed by its watermark; at `replay_at`,
    TiCDC restarting: every transaction so far sent again, watermarks too."""
    items: list[Any] = []
    for n in range(first, first + count):
        ts = 1000 + 10 * n
        items += [(Op.INSERT, ts, (2 * n, "a")), (Op.INSERT, ts, (2 * n + 1, "b"))]
        items.append((WATERMARK, ts))
        if n == replay_at:
            items += list(items)
    return items


def _values(items: list[Any]) -> list[tuple[bytes | None, bytes | None]]:
    return [(None, value) for value in simple_stream(USERS, items)]


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((r["_offset"], r["id"], r["_commit_ts"]) for r in df.collect())


def test_a_batch_read_with_min_partitions_splits_one_partition_and_keeps_the_rows(
    spark, broker, topics
):
    topic = topics("read_split")
    bootstrap = [(None, value) for value in simple_messages(USERS, [])]
    produce(broker, topic, bootstrap + _values(_transactions(0, 30, replay_at=12)))
    options = {"kafka-columns": "true"}
    whole = read_topic(spark, broker, topic, **options)
    split = read_topic(spark, broker, topic, minPartitions="4", **options)
    assert whole.rdd.getNumPartitions() == 1
    assert split.rdd.getNumPartitions() == 4
    rows = _rows(split)
    assert rows == _rows(whole)
    assert sorted(r[1] for r in rows) == list(range(60))  # the replay dropped
    kept = read_topic(spark, broker, topic, minPartitions="4", replays="keep", **options)
    assert kept.rdd.getNumPartitions() == 4
    assert len(_rows(kept)) == 60 + 26  # the 13 transactions replayed kept


def test_a_stream_with_min_partitions_keeps_the_rows(spark, broker, topics, tmp_path):
    topic = topics("read_split_stream")
    bootstrap = [(None, value) for value in simple_messages(USERS, [])]
    produce(broker, topic, bootstrap + _values(_transactions(0, 20, replay_at=7)))
    whole = stream_rows(spark, broker.bootstrap, topic, str(tmp_path / "whole"))
    tasks: list[int] = []
    split: list[tuple[Any, ...]] = []

    def collect(df: Any, _batch_id: int) -> None:
        tasks.append(df.rdd.getNumPartitions())
        split.extend((r["id"], r["_commit_ts"], r["_op"]) for r in df.collect())

    run_stream(spark, broker.bootstrap, topic, str(tmp_path / "split"), collect, minPartitions="3")
    assert tasks == [3]
    assert sorted(split) == sorted(whole)
    assert sorted(r[0] for r in split) == list(range(40))


@pytest.mark.parametrize(
    ("options", "tasks"),
    [
        ({"protocol": "canal-json"}, 4),
        ({"protocol": "debezium", "consistency": "none"}, 4),
        # The options say the writer sends watermarks: the driver looks for them, finds
        # none, and the range stays whole.
        ({"protocol": "debezium", "enable-tidb-extension": "true"}, 1),
    ],
    ids=["canal-json", "debezium", "debezium-tidb-extension"],
)
def test_a_batch_read_of_a_topic_without_watermarks_is_cut_where_spark_cuts_it(
    spark, broker, topics, options, tasks
):
    # No watermark, so no resolved ts, and rows of these protocols are never compared
    # (the identical-row rule needs a table's key): a part needs nothing from before it.
    # TiCDC re-sends the last 10 rows, as after a restart: kept, as TiCDC's consumer does.
    protocol = options["protocol"]
    topic = topics(f"read_split_{protocol.replace('-', '_')}_{len(options)}")
    codec = CodecConfig(protocol=protocol, enable_tidb_extension="enable-tidb-extension" in options)
    changes = [(Op.INSERT, (100 + n) << 18, (n, f"r{n}"), None) for n in range(40)]
    produce(broker, topic, protocol_messages(codec, USERS, changes + changes[30:]))
    whole = read_topic(spark, broker, topic, **options, **{"kafka-columns": "true"})
    split = read_topic(
        spark, broker, topic, minPartitions="4", **options, **{"kafka-columns": "true"}
    )
    assert split.rdd.getNumPartitions() == tasks
    rows = _rows(split)
    assert rows == _rows(whole)
    assert sorted(r[1] for r in rows) == sorted([*range(40), *range(30, 40)])


def _small_partitions(broker: Any, topic: str) -> None:
    """4 partitions, each a BOOTSTRAP and its rows of 5 transactions, every watermark in
    every partition; TiCDC restarting in two of them (all sent again, watermarks too)."""
    broker.create_topic(topic, 4)
    bootstrap = [(None, value) for value in simple_messages(USERS, [])]
    for p in range(4):
        items: list[Any] = []
        for n in range(5):
            ts = 1000 + 10 * n
            items += [(Op.INSERT, ts, (100 * p + 2 * n + i, "a")) for i in (0, 1)]
            items.append((WATERMARK, ts))
            if n == 2 and p % 2:
                items += list(items)
        produce(broker, topic, bootstrap + _values(items), create=False, partition=p)


def test_a_batch_read_of_small_partitions_is_one_task_with_the_rows_of_four(spark, broker, topics):
    topic = topics("read_packed")
    _small_partitions(broker, topic)
    options = {"kafka-columns": "true"}
    packed = read_topic(spark, broker, topic, **options)
    alone = read_topic(spark, broker, topic, **{"offsets-per-task": "0"}, **options)
    assert packed.rdd.getNumPartitions() == 1
    assert alone.rdd.getNumPartitions() == 4
    rows = _rows(packed)
    assert rows == _rows(alone)
    assert sorted(r[1] for r in rows) == [100 * p + k for p in range(4) for k in range(10)]
    # minPartitions keeps its tasks: packing never leaves fewer.
    assert read_topic(spark, broker, topic, minPartitions="3").rdd.getNumPartitions() >= 3


def test_a_stream_of_small_partitions_runs_one_task_per_micro_batch(
    spark, broker, topics, tmp_path
):
    topic = topics("read_packed_stream")
    _small_partitions(broker, topic)

    def stream(name: str, **options: str) -> tuple[list[int], list[tuple[Any, ...]]]:
        tasks: list[int] = []
        rows: list[tuple[Any, ...]] = []

        def collect(df: Any, _batch_id: int) -> None:
            tasks.append(df.rdd.getNumPartitions())
            rows.extend((r["id"], r["_commit_ts"], r["_op"]) for r in df.collect())

        run_stream(spark, broker.bootstrap, topic, str(tmp_path / name), collect, **options)
        return tasks, sorted(rows)

    packed_tasks, packed = stream("packed")
    alone_tasks, alone = stream("alone", **{"offsets-per-task": "0"})
    assert (packed_tasks, alone_tasks) == ([1], [4])
    assert packed == alone
    assert len(packed) == 40  # each transaction once: the replays dropped


@pytest.mark.skipif(not READ_LIMITS, reason="PySpark 4.2+ gives stream sources read limits")
def test_min_offsets_per_trigger_holds_a_stream_until_enough_offsets_arrive(
    spark, broker, topics, tmp_path
):
    topic = topics("read_split_min")
    bootstrap = [(None, value) for value in simple_messages(USERS, [])]
    produce(broker, topic, bootstrap + _values(_transactions(0, 2)))  # offsets 0..6
    batches: list[list[int]] = []

    def collect(df: Any, _batch_id: int) -> None:
        batches.append(sorted(r["id"] for r in df.collect()))

    query = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .option("minOffsetsPerTrigger", "10")
        .option("maxTriggerDelay", "1h")
        .load()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .start()
    )
    try:
        query.processAllAvailable()  # the first trigger goes, as Spark's Kafka source's
        assert batches == [[0, 1, 2, 3]]
        [source] = query.lastProgress["sources"]
        assert progress_offset(source["latestOffset"]) == {topic: {"0": 7}}
        produce(broker, topic, _values(_transactions(2, 2)), create=False)  # 6 offsets
        query.processAllAvailable()
        assert batches == [[0, 1, 2, 3]]  # held: 6 new offsets < 10
        produce(broker, topic, _values(_transactions(4, 2)), create=False)  # 12 new
        query.processAllAvailable()
        assert batches == [[0, 1, 2, 3], list(range(4, 12))]
        [source] = query.lastProgress["sources"]
        assert progress_offset(source["latestOffset"]) == {topic: {"0": 19}}
    finally:
        query.stop()
    # Trigger.AvailableNow reads what there is and ends: it never waits for more.
    rows = stream_rows(
        spark, broker.bootstrap, topic, str(tmp_path / "now"), minOffsetsPerTrigger="1000"
    )
    assert sorted(r[0] for r in rows) == list(range(12))


@pytest.mark.skipif(READ_LIMITS, reason="PySpark 4.2+ applies the read limits")
@pytest.mark.parametrize(
    ("option", "value"), [("minOffsetsPerTrigger", "10"), ("maxTriggerDelay", "5m")]
)
def test_read_limit_options_are_refused_where_spark_gives_no_read_limits(
    spark, broker, topics, option, value
):
    topic = topics("read_split_refused")
    produce(broker, topic, [(None, value) for value in simple_messages(USERS, [])])
    with pytest.raises(Exception, match=f"{option}.*PySpark 4.2"):
        (
            spark.readStream.format("ticdc")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topic", topic)
            .option(option, value)
            .load()
            .writeStream.format("noop")
            .start()
            .processAllAvailable()
        )

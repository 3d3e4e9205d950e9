"""A fresh Spark session that never calls `register`: PySpark finds `format("ticdc")` in the
`pyspark_ticdc` module by itself, for a batch write and a streaming write. A write from a
thread where the session is not active still fails in Spark's lookup, before any sink code
runs, and works once the session is active there (docs/guides/deploying.md, "Writing from threads").

And a named query whose checkpoint comes only from the session conf
`spark.sql.streaming.checkpointLocation` starts, restarts, re-runs a batch
byte-identically, and keeps every row. Each driver is a child process (a JVM has one
SparkContext, and the shared session has called `register`); the first runs of all three
tests share one driver, the restart has its own."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.runtime_jobs import run_job
from tests.support.spark_job import add_file
from tests.support.topic_check import simple_topic
from tests.support.topics import TopicNames

# spark_version: PySpark's own lookup of `pyspark_ticdc`
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]

ROOT_CONF = "spark.sql.streaming.checkpointLocation"


def sink_options(broker, topics, table: str, **extra: str) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": topics("auto_{schema}_{table}"),
        "partition-num": "2",
        "partition": "index-value",
        "database": "shop",
        "table": table,
        "primary-key": "id",
        **extra,
    }


@pytest.fixture(scope="module")
def first_job(broker, tmp_path_factory):
    """One driver for every first run of this module (a driver's start is most of a run's
    time): the batch, thread and stream writes that never call `register`, the named
    query's first run and the unnamed query's refusal, all under the session conf
    `spark.sql.streaming.checkpointLocation` (the writes that set `checkpointLocation`
    themselves do not read it). The named query's source and root are returned for its
    restart, and the module's topic names (`topics` is per test)."""
    topics = TopicNames()
    base = tmp_path_factory.mktemp("auto")
    stream_in, named_in, anon_in, root = (base / n for n in ("in", "named", "anon", "root"))
    for folder in (stream_in, named_in, anon_in):
        folder.mkdir()
    add_file(stream_in, 0)
    add_file(stream_in, 1)
    add_file(named_in, 0)
    add_file(named_in, 1)
    add_file(anon_in, 0)
    named = named_step(broker, topics, named_in)
    results = run_job(
        [
            {"write": "batch", "rows": 50, "options": sink_options(broker, topics, "batch")},
            {
                "write": "batch",
                "rows": 9,
                "thread": True,
                "options": sink_options(broker, topics, "lost"),
            },
            {
                "write": "batch",
                "rows": 20,
                "thread": "activate",
                "options": sink_options(broker, topics, "thr"),
            },
            {
                "write": "stream",
                "source": str(stream_in),
                "options": sink_options(
                    broker, topics, "stream", checkpointLocation=str(base / "chk")
                ),
            },
            named,  # batches 0 and 1
            {
                "write": "stream",
                "source": str(anon_in),
                "options": sink_options(broker, topics, "anon"),
            },
        ],
        conf={ROOT_CONF: str(root)},
    )
    return {
        "results": results,
        "named": named,
        "named_in": named_in,
        "root": root,
        "topics": topics,
    }


def named_step(broker, topics, source) -> dict:
    return {
        "write": "stream",
        "source": str(source),
        "query_name": "orders_q",
        "options": sink_options(broker, topics, "named"),
    }


def test_format_ticdc_works_without_register_in_batch_thread_and_stream(broker, first_job):
    results, topics = first_job["results"][:4], first_job["topics"]
    assert results[0] == results[2] == results[3] == {"ok": True}
    # Spark looks Python data sources up in the JVM thread's active session only
    # (DataSource.lookupDataSource, SparkSession.getActiveSession), registered or not.
    assert "DATA_SOURCE_NOT_FOUND" in results[1]["message"]
    assert simple_topic(broker, topics("auto_shop_batch")).ids == list(range(50))
    assert simple_topic(broker, topics("auto_shop_thr")).ids == list(range(20))
    stream = simple_topic(broker, topics("auto_shop_stream"))
    assert stream.ids == [0, 1, 2, 100, 101, 102]
    assert len(stream.commit_ts) == 2  # one per micro-batch


def test_a_named_query_checkpointed_by_the_session_conf_restarts_and_keeps_every_row(
    broker, first_job
):
    root, source, step = first_job["root"], first_job["named_in"], first_job["named"]
    topics = first_job["topics"]
    conf = {ROOT_CONF: str(root)}
    assert first_job["results"][4] == {"ok": True}  # batches 0 and 1
    checkpoint = root / "orders_q"  # where Spark put it, and the sink found it
    assert sorted(p.name for p in (checkpoint / "ticdc" / "commit-ts").iterdir()) == ["0", "1"]

    # The sink committed batch 1 (watermark sent), then Spark "crashed" before recording
    # it: the restart re-runs batch 1 from the same offsets, then runs batch 2.
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    add_file(source, 2)
    assert run_job([step], conf=conf) == [{"ok": True}]
    topic = simple_topic(broker, topics("auto_shop_named"))

    # Nothing lost; batch 1's rows are there twice (at-least-once), nothing else is.
    # (Files written in the same instant may make either file batch 0.)
    assert len(topic.commit_ts) == 3
    batch1 = sorted(e.data["id"] for _, e in topic.rows if e.commit_ts == topic.commit_ts[1])
    assert batch1 in ([0, 0, 1, 1, 2, 2], [100, 100, 101, 101, 102, 102])
    assert topic.ids == sorted([0, 1, 2, 100, 101, 102, *batch1[::2], 200, 201, 202])
    # The re-run wrote byte-identical rows to the same partitions (same commit ts).
    copies = Counter((r.partition, r.key, r.value) for r, e in topic.rows if e.data["id"] in batch1)
    assert list(copies.values()) == [2, 2, 2]
    # One commit ts per batch, growing; watermarks one per batch and never backwards.
    for marks in topic.watermarks.values():
        assert marks == topic.commit_ts


def test_an_unnamed_query_checkpointed_by_the_session_conf_is_refused_by_name(first_job):
    result = first_job["results"][5]
    assert not result["ok"]
    assert "ticdc: streaming writes need option 'checkpointLocation'" in result["message"]
    assert "queryName" in result["message"]
    assert "ConfigError" in result["message"]

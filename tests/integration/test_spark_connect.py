"""Spark Connect: a client (`SparkSession.builder.remote(...)`, the pyspark[connect]
packages) against a Connect server started from PySpark's own jars, with no `register`
call. Batch writes (simple and avro), a streaming query restarted from its checkpoint, and
errors as the client sees them: Spark's generic exception classes, whose message keeps the
sink's `ticdc:` line and the error class name (docs/guides/deploying.md, "Spark Connect")."""

from __future__ import annotations

import pytest

from tests.support.runtime_jobs import run_job
from tests.support.spark_cluster import ConnectServer
from tests.support.spark_job import add_file
from tests.support.topic_check import avro_ids, simple_topic

# spark_version: Spark Connect's client and server of each release
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]


@pytest.fixture(scope="module")
def server():
    with ConnectServer() as running:
        yield running


def options(broker, topics, table: str, **extra: str) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": topics("connect_{schema}_{table}"),
        "partition-num": "2",
        "partition": "index-value",
        "database": "shop",
        "table": table,
        "primary-key": "id",
        **extra,
    }


def test_batch_and_streaming_writes_from_a_connect_client(
    server, broker, topics, registry, tmp_path
):
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    add_file(source, 0)
    avro = options(broker, topics, "avro", protocol="avro")
    avro["schema-registry"] = registry.url
    stream = {
        "write": "stream",
        "source": str(source),
        "options": options(broker, topics, "stream", checkpointLocation=str(checkpoint)),
    }
    results = run_job(
        [
            {"write": "batch", "rows": 200, "options": options(broker, topics, "simple")},
            {"write": "batch", "rows": 50, "options": avro},
            stream,
        ],
        remote=server.remote,
    )
    assert results == [{"ok": True}] * 3, server.log()
    add_file(source, 1)
    assert run_job([stream], remote=server.remote) == [{"ok": True}], server.log()

    simple = simple_topic(broker, topics("connect_shop_simple"))
    assert simple.ids == list(range(200))
    assert simple.watermarks == {p: simple.commit_ts for p in range(2)}
    assert avro_ids(broker, registry, topics("connect_shop_avro")) == list(range(50))
    topic = simple_topic(broker, topics("connect_shop_stream"))
    assert topic.ids == [0, 1, 2, 100, 101, 102]  # the restart resumed, lost nothing
    assert len(topic.commit_ts) == 2
    for marks in topic.watermarks.values():
        assert marks == topic.commit_ts


def test_sink_errors_reach_a_connect_client_with_their_class_and_prefix(server, broker, topics):
    unreachable = options(broker, topics, "down", **{"broker-timeout-ms": "1000"})
    unreachable["kafka.bootstrap.servers"] = "127.0.0.1:9"  # discard port: nothing listens
    results = run_job(
        [
            # refused on the driver, before any task
            {"write": "batch", "options": options(broker, topics, "bad", partition="hash")},
            # raised in a task on an executor
            {"write": "batch", "options": unreachable},
        ],
        remote=server.remote,
    )
    config, delivery = results
    assert not config["ok"] and not delivery["ok"]
    # The client raises Spark's classes, never the sink's own...
    assert config["error"] == "AnalysisException"
    assert delivery["error"] in ("PythonException", "SparkException")
    # ...but the message names the sink's error class and keeps its first line.
    assert (
        "ticdc_sink.errors.ConfigError: ticdc: option 'partition' is 'hash'" in (config["message"])
    )
    assert "ticdc_sink.errors.DeliveryError: ticdc: " in delivery["message"]

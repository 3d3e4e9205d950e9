"""How a stream writer's tasks find and check the query's checkpoint, without Spark: a
fake task context hands the local properties Spark sets on every micro-batch task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import LongType, StringType, StructField, StructType

from ticdc_sink import tso
from ticdc_sink.datasource import TiCDCCommitMessage, TiCDCDataSource
from ticdc_sink.errors import ConfigError
from ticdc_sink.state import SinkState
from ticdc_sink.writer import TaskReport
from ticdc_sink.writer.checkpointing import StreamCheckpoint

QUERY = "71fbbf01-7d5b-4cad-a3b1-df5fcb56164c"
SCHEMA = StructType(
    [
        StructField("_op", StringType()),
        StructField("id", LongType()),
        StructField("name", StringType()),
    ]
)
OPTIONS = {
    "kafka.bootstrap.servers": "127.0.0.1:1",
    "topic": "t_{schema}_{table}",
    "database": "shop",
    "table": "users",
    "primary-key": "id",
}


class FakeTaskContext:
    def __init__(self, **properties: str) -> None:
        self.properties = properties

    def getLocalProperty(self, key: str) -> str | None:  # noqa: N802 (Spark's name)
        return self.properties.get(key)


def spark_checkpoint(folder: Path, batches: int, query: str = QUERY) -> None:
    """What Spark has written under a query's checkpoint when it plans `batches - 1`."""
    (folder / "offsets").mkdir(parents=True)
    (folder / "metadata").write_text(json.dumps({"id": query}))
    for batch in range(batches):
        meta = {"batchWatermarkMs": 0, "batchTimestampMs": 1_700_000_000_000 + batch}
        (folder / "offsets" / str(batch)).write_text(f"v1\n{json.dumps(meta)}\n{{}}")


def task(batch: int, query: str = QUERY, root: str | None = None) -> FakeTaskContext:
    properties = {"streaming.sql.batchId": str(batch), "sql.streaming.queryId": query}
    if root is not None:
        properties["spark.sql.streaming.checkpointLocation"] = root
    return FakeTaskContext(**properties)


def stream_writer(**options: str):
    # Spark hands options as a CaseInsensitiveDict, filled key by key (keys lowercased).
    merged = CaseInsensitiveDict()
    for key, value in {**OPTIONS, **options}.items():
        merged[key] = value
    return TiCDCDataSource(merged).streamWriter(SCHEMA, overwrite=False)


def test_the_option_checkpoint_is_checked_against_the_query_the_task_runs_in(tmp_path) -> None:
    spark_checkpoint(tmp_path, batches=3)
    writer = stream_writer(checkpointLocation=str(tmp_path))
    assert writer.checkpoint == StreamCheckpoint(str(tmp_path), query_id=QUERY)
    assert writer._locate(task(2)) == (writer.plan, None)
    with pytest.raises(ConfigError, match="holds query 71fbbf01.*but the query running is x"):
        writer._locate(task(2, query="x"))
    with pytest.raises(ConfigError, match="says micro-batch 2, but the query runs micro-batch 1"):
        writer._locate(task(1))


def test_a_named_querys_tasks_find_the_checkpoint_under_the_session_root(tmp_path) -> None:
    spark_checkpoint(tmp_path / "orders_q", batches=1)
    writer = stream_writer(queryName="orders_q")
    assert writer.checkpoint == StreamCheckpoint(None, query_name="orders_q")
    assert writer.plan.batch_id is None

    first, location = writer._locate(task(0, root=str(tmp_path)))
    again, _ = writer._locate(task(0, root=str(tmp_path)))  # another task of the batch
    assert location == str(tmp_path / "orders_q")
    assert first.batch_id == 0
    assert first.commit_ts == again.commit_ts == tso.compose(1_700_000_000_000)
    assert first.build_ts_ms == tso.physical_ms(first.commit_ts)
    assert SinkState(location).commit_ts_for_batch(0) == first.commit_ts

    # The commit step learns the location and commit ts from the tasks' messages.
    committer = stream_writer(queryName="orders_q")
    report = TaskReport(0, {}, frozenset(), 0, 0, 0, 0)
    message = TiCDCCommitMessage(report, checkpoint_location=location, commit_ts=first.commit_ts)
    committer._resolve([message], 0)
    assert committer.plan.config.checkpoint_location == location
    assert (committer.plan.commit_ts, committer.plan.batch_id) == (first.commit_ts, 0)


def test_a_named_querys_task_refuses_another_querys_checkpoint(tmp_path) -> None:
    spark_checkpoint(tmp_path / "orders_q", batches=1, query="an-older-query")
    writer = stream_writer(queryName="orders_q")
    with pytest.raises(ConfigError, match="holds query an-older-query"):
        writer._locate(task(0, root=str(tmp_path)))


def test_a_due_ddl_message_asks_for_the_option(tmp_path) -> None:
    spark_checkpoint(tmp_path / "orders_q", batches=1)
    writer = stream_writer(queryName="orders_q", **{"ddl-on-first-batch": "true"})
    with pytest.raises(ConfigError, match="needs a DDL message before this micro-batch") as err:
        writer._locate(task(0, root=str(tmp_path)))
    assert err.value.option == "checkpointLocation"
    assert err.value.value == str(tmp_path / "orders_q")


def test_an_unnamed_query_without_the_option_is_refused_on_the_driver() -> None:
    with pytest.raises(ConfigError, match="need option 'checkpointLocation', or a query named"):
        stream_writer()


def test_the_task_without_a_session_root_says_what_to_set(tmp_path) -> None:
    writer = stream_writer(queryName="orders_q")
    with pytest.raises(ConfigError, match="spark.sql.streaming.checkpointLocation and a queryN"):
        writer._locate(task(0))

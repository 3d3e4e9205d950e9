"""A write's batch as the checkpoint location fixes it (`writer.checkpointing`), without
Spark or a broker: Spark's checkpoint folder is written as Spark writes it, a fake
producer records the DDL messages sent before the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from tests.support.fake_producer import FakeProducer
from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.schema import table_schema_to_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer.checkpointing import (
    StreamCheckpoint,
    check_same_query,
    commit_plan,
    plan_batch_write,
    plan_micro_batch,
    refuse_pending_ddl,
    task_plan,
)

QUERY = "71fbbf01-7d5b-4cad-a3b1-df5fcb56164c"
SCHEMA = StructType(
    [
        StructField("_op", StringType()),
        StructField("id", LongType()),
        StructField("name", StringType()),
    ]
)
BATCH_TS_MS = 1_700_000_000_000


def config(**options: str) -> SinkConfig:
    return SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t_{schema}_{table}",
            "database": "shop",
            "table": "users",
            "primary-key": "id",
            **options,
        }
    )


def spark_checkpoint(folder: Path, batches: int, query: str = QUERY) -> None:
    """What Spark has written under a query's checkpoint when it plans `batches - 1`."""
    (folder / "offsets").mkdir(parents=True)
    (folder / "metadata").write_text(json.dumps({"id": query}))
    for batch in range(batches):
        meta = {"batchWatermarkMs": 0, "batchTimestampMs": BATCH_TS_MS + batch}
        (folder / "offsets" / str(batch)).write_text(f"v1\n{json.dumps(meta)}\n{{}}")


# --- the driver: a batch write, a micro-batch ------------------------------------------


def test_a_batch_write_without_a_checkpoint_commits_at_now() -> None:
    before = tso.now()
    plan = plan_batch_write(config(), SCHEMA)
    assert before <= plan.commit_ts <= tso.now()
    assert plan.batch_id is None and plan.watermark_floor is None
    assert plan.build_ts_ms == tso.physical_ms(plan.commit_ts)


def test_a_batch_write_commits_past_the_last_watermark_of_its_checkpoint(tmp_path: Path) -> None:
    ahead = tso.compose(tso.physical_ms(tso.now()) + 3_600_000)  # a watermark an hour ahead
    SinkState(str(tmp_path)).record_watermark(ahead, None)
    plan = plan_batch_write(config(checkpointLocation=str(tmp_path)), SCHEMA)
    assert plan.watermark_floor == ahead
    assert plan.commit_ts == ahead + 1


def test_a_batch_write_to_a_location_it_cannot_write_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "chk"
    blocker.write_text("a file, not a directory")
    with pytest.raises(ConfigError) as caught:
        plan_batch_write(config(checkpointLocation=str(blocker)), SCHEMA)
    assert caught.value.option == "checkpointLocation"


def test_a_ddl_protocol_announces_the_table_once_per_micro_batch(tmp_path: Path) -> None:
    spark_checkpoint(tmp_path, batches=1)
    options = config(checkpointLocation=str(tmp_path), **{"ddl-on-first-batch": "true"})
    producer = FakeProducer(partitions=2)
    plan, checkpoint = plan_micro_batch(options, SCHEMA, query_name=None, producer_factory=producer)
    assert checkpoint == StreamCheckpoint(str(tmp_path), query_id=QUERY)
    assert plan.batch_id == 0
    assert plan.commit_ts == tso.compose(BATCH_TS_MS)
    # Simple's DDL message, to every partition of the table's topic, before any row.
    assert [(topic, partition) for topic, partition, _, _ in producer.sent] == [
        ("t_shop_users", 0),
        ("t_shop_users", 1),
    ]
    assert {v["type"] for v in producer.values()} == {"CREATE"}
    assert producer.closed
    # Spark asks for the writer of a micro-batch more than once: the DDL went out already.
    again = FakeProducer(partitions=2)
    replanned, _ = plan_micro_batch(options, SCHEMA, query_name=None, producer_factory=again)
    assert again.sent == []
    assert replanned.commit_ts == plan.commit_ts


def test_a_batch_write_announces_a_changed_schema_only(tmp_path: Path) -> None:
    options = config(checkpointLocation=str(tmp_path))
    state = SinkState(str(tmp_path))
    first = plan_batch_write(options, SCHEMA, producer_factory=FakeProducer())
    template = first.tables.named_table
    assert template is not None
    state.record_table_schema(template.database, template.table, table_schema_to_json(template))
    same = FakeProducer()
    plan_batch_write(options, SCHEMA, producer_factory=same)
    assert same.sent == []
    wider = StructType([*SCHEMA.fields, StructField("age", LongType())])
    changed = FakeProducer(partitions=1)
    plan_batch_write(options, wider, producer_factory=changed)
    (ddl,) = changed.values()
    assert ddl["type"] == "ALTER"
    assert "`age`" in ddl["sql"]


def test_an_unnamed_location_plans_only_the_encoders_and_names_the_query(tmp_path: Path) -> None:
    plan, checkpoint = plan_micro_batch(config(), SCHEMA, query_name="orders_q")
    assert checkpoint == StreamCheckpoint(None, query_name="orders_q")
    assert plan.batch_id is None


# --- the tasks: the query's checkpoint, found and checked --------------------------------


def test_a_task_outside_a_micro_batch_keeps_the_drivers_plan(tmp_path: Path) -> None:
    plan, _ = plan_micro_batch(config(), SCHEMA, query_name="q")
    checkpoint = StreamCheckpoint(None, query_name="q")
    assert task_plan(plan, checkpoint, batch=None, query_id=None, root=None) == (plan, None)


def test_a_task_checks_the_option_checkpoint_against_its_query(tmp_path: Path) -> None:
    spark_checkpoint(tmp_path, batches=3)
    plan, checkpoint = plan_micro_batch(
        config(checkpointLocation=str(tmp_path)), SCHEMA, query_name=None
    )
    assert task_plan(plan, checkpoint, batch="2", query_id=QUERY, root=None) == (plan, None)
    with pytest.raises(ConfigError, match="holds query 71fbbf01.*but the query running is x"):
        task_plan(plan, checkpoint, batch="2", query_id="x", root=None)
    with pytest.raises(ConfigError, match="says micro-batch 2, but the query runs micro-batch 1"):
        task_plan(plan, checkpoint, batch="1", query_id=QUERY, root=None)


def test_a_named_querys_task_completes_the_plan_and_the_commit_step_learns_it(
    tmp_path: Path,
) -> None:
    spark_checkpoint(tmp_path / "orders_q", batches=1)
    plan, checkpoint = plan_micro_batch(config(), SCHEMA, query_name="orders_q")
    found, location = task_plan(plan, checkpoint, batch="0", query_id=QUERY, root=str(tmp_path))
    again, _ = task_plan(plan, checkpoint, batch="0", query_id=QUERY, root=str(tmp_path))
    assert location == str(tmp_path / "orders_q")
    assert (found.batch_id, found.commit_ts) == (0, tso.compose(BATCH_TS_MS))
    assert again.commit_ts == found.commit_ts  # every task of the batch agrees
    assert found.build_ts_ms == tso.physical_ms(found.commit_ts)

    committed = commit_plan(plan, checkpoint, (location, found.commit_ts), 0)
    assert committed.config.checkpoint_location == location
    assert (committed.commit_ts, committed.batch_id) == (found.commit_ts, 0)
    assert committed.build_ts_ms == found.build_ts_ms
    # No task ran (nothing found), or the driver saw the checkpoint: the driver's plan.
    assert commit_plan(plan, checkpoint, None, 0) is plan
    seen = StreamCheckpoint(str(tmp_path), query_id=QUERY)
    assert commit_plan(plan, seen, (location, found.commit_ts), 0) is plan
    assert commit_plan(plan, None, (location, found.commit_ts), 0) is plan


def test_a_task_without_a_session_root_says_what_to_set() -> None:
    plan, checkpoint = plan_micro_batch(config(), SCHEMA, query_name="orders_q")
    with pytest.raises(ConfigError, match="spark.sql.streaming.checkpointLocation and a queryN"):
        task_plan(plan, checkpoint, batch="0", query_id=QUERY, root=None)


def test_check_same_query() -> None:
    check_same_query("/chk", QUERY, QUERY)
    check_same_query("/chk", None, None)  # Spark names no query: nothing to compare
    with pytest.raises(ConfigError, match="holds no Spark checkpoint, but the query running"):
        check_same_query("/chk", None, QUERY)
    with pytest.raises(ConfigError) as caught:
        check_same_query("/chk", "another", QUERY)
    assert (caught.value.option, caught.value.value) == ("checkpointLocation", "/chk")


def test_a_task_cannot_send_a_due_ddl_message(tmp_path: Path) -> None:
    spark_checkpoint(tmp_path / "q", batches=1)
    options = config(**{"ddl-on-first-batch": "true"})
    plan, checkpoint = plan_micro_batch(options, SCHEMA, query_name="q")
    with pytest.raises(ConfigError, match="needs a DDL message before this micro-batch"):
        task_plan(plan, checkpoint, batch="0", query_id=QUERY, root=str(tmp_path))
    # Sent for this batch already (by the driver of an earlier attempt): nothing to refuse.
    state = SinkState(str(tmp_path / "q"))
    state.record_ddl_sent(0, "CREATE TABLE ...")
    found, _ = task_plan(plan, checkpoint, batch="0", query_id=QUERY, root=str(tmp_path))
    refuse_pending_ddl(found, state, str(tmp_path / "q"))

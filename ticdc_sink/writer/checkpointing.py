"""A write's batch as the checkpoint location fixes it: its commit ts, batch id and
watermark floor, and the DDL message sent before its rows.

The driver plans a batch write (`plan_batch_write`) and a micro-batch whose checkpoint it
sees, the `checkpointLocation` option (`plan_micro_batch`). A query named with `queryName`
and no such option has its checkpoint under Spark's session conf, which only the tasks
see: each task finds it (`StreamCheckpoint`), checks it is the query's own
(`check_same_query`), fixes the micro-batch's commit ts there (the same value in every
task, `SinkState.commit_ts_for_batch`) and completes its plan (`task_plan`); the commit
step takes the location and commit ts from their messages (`commit_plan`). Knows no Spark:
the data source reads the task's local properties and hands their values in.
"""

from __future__ import annotations

from typing import Any

import attrs
import pyarrow as pa

from ticdc_sink import tso
from ticdc_sink.checkpoint import SESSION_ROOT_CONF, session_location
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.producer import KafkaProducer, ProducerFactory
from ticdc_sink.schema import table_schema_from_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer.commit import announce_schema, schema_change_query
from ticdc_sink.writer.plan import WritePlan, make_plan

__all__ = [
    "StreamCheckpoint",
    "check_same_query",
    "commit_plan",
    "plan_batch_write",
    "plan_micro_batch",
    "refuse_pending_ddl",
    "task_plan",
]


@attrs.frozen
class StreamCheckpoint:
    """How a stream writer's tasks find and check the query's checkpoint.

    `location` is the `checkpointLocation` option; without it the tasks use Spark's
    `<spark.sql.streaming.checkpointLocation>/<query_name>`. `query_id` is the query's id
    in `<location>/metadata`, read by the driver, which every task compares with the query
    it runs in: a location read differently from Spark's (another file system) fails.
    """

    location: str | None
    query_name: str | None = None
    query_id: str | None = None


def check_same_query(location: str, checkpoint_query: str | None, task_query: str | None) -> None:
    if task_query is not None and checkpoint_query != task_query:
        found = f"query {checkpoint_query}" if checkpoint_query else "no Spark checkpoint"
        raise ConfigError(
            f"checkpointLocation {location!r} holds {found}, but the query running is "
            f"{task_query}: the sink reads another folder than Spark checkpoints to; give "
            "the location as a full URI (hdfs://, s3a://, file:) when Spark's default file "
            "system is not the local one",
            option="checkpointLocation",
            value=location,
        )


def refuse_pending_ddl(plan: WritePlan, state: SinkState, location: str) -> None:
    """A task that found the checkpoint itself cannot send a DDL message ahead of every
    other task's rows; the driver does that when it sees the checkpoint (the option)."""
    table = plan.tables.named_table
    if table is None or plan.batch_id is None or state.ddl_sent_for_batch(plan.batch_id):
        return
    stored = state.last_table_schema(table.database, table.table)
    query = schema_change_query(plan, table_schema_from_json(stored) if stored else None)
    if query is not None:
        raise ConfigError(
            f"table {table.database}.{table.table} needs a DDL message before this "
            f"micro-batch ({query}), which the sink sends from the driver, and the driver "
            f"sees the checkpoint only as an option: set option checkpointLocation to "
            f"{location!r} (what Spark made of {SESSION_ROOT_CONF} and queryName)",
            option="checkpointLocation",
            value=location,
        )


def plan_batch_write(
    config: SinkConfig,
    schema: Any,
    *,
    arrow_schema: pa.Schema | None = None,
    producer_factory: ProducerFactory = KafkaProducer,
) -> WritePlan:
    """The plan of a batch write (`df.write`), made on the driver (`make_plan`): its
    commit ts now, or past the last watermark recorded under the checkpoint location when
    there is one; the table's DDL message sent first when its schema changed since the
    last committed batch (`announce_schema`, through a producer of `producer_factory`).

    Raises:
        ConfigError: the checkpoint location cannot be written, and what `make_plan` raises.
    """
    commit_ts = tso.now()
    floor = None
    state = None
    if config.checkpoint_location:
        state = SinkState(config.checkpoint_location)
        state.check_writable()
        floor = state.watermark_floor(None)
        commit_ts = max(commit_ts, (floor or 0) + 1)
    plan = make_plan(
        config,
        schema,
        commit_ts,
        batch_id=None,
        watermark_floor=floor,
        arrow_schema=arrow_schema,
    )
    announce_schema(plan, state, producer_factory=producer_factory)
    return plan


def plan_micro_batch(
    config: SinkConfig,
    schema: Any,
    *,
    query_name: str | None,
    arrow_schema: pa.Schema | None = None,
    producer_factory: ProducerFactory = KafkaProducer,
) -> tuple[WritePlan, StreamCheckpoint]:
    """A micro-batch's plan, made on the driver, and how its tasks find the checkpoint.

    With the `checkpointLocation` option: the batch id and commit ts from the checkpoint,
    the table's DDL message sent first when due (`announce_schema`). Without it (a query
    named `query_name`, its checkpoint under Spark's session conf): planned without the
    checkpoint, which the tasks find and complete the plan from (`task_plan`); the plan
    here only compiles the encoders.

    Raises:
        ConfigError: the checkpoint location cannot be written, and what `make_plan` raises.
    """
    if not config.checkpoint_location:
        plan = make_plan(config, schema, tso.now(), batch_id=None, arrow_schema=arrow_schema)
        return plan, StreamCheckpoint(None, query_name=query_name)
    state = SinkState(config.checkpoint_location)
    state.check_writable()
    batch_id = state.current_batch_id()
    checkpoint = StreamCheckpoint(config.checkpoint_location, query_id=state.query_id())
    floor = state.watermark_floor(batch_id)  # before commit_ts_for_batch marks it planned
    commit_ts = state.commit_ts_for_batch(batch_id)
    plan = make_plan(
        config,
        schema,
        commit_ts,
        batch_id=batch_id,
        watermark_floor=floor,
        arrow_schema=arrow_schema,
    )
    announce_schema(plan, state, producer_factory=producer_factory)
    return plan, checkpoint


def task_plan(
    plan: WritePlan,
    checkpoint: StreamCheckpoint,
    *,
    batch: str | None,
    query_id: str | None,
    root: str | None,
) -> tuple[WritePlan, str | None]:
    """A stream task's plan, checked against the query it runs in; when the driver could
    not see the checkpoint, completed here, with the location it found (else None).
    `batch`, `query_id` and `root` are the task's local properties: its micro-batch id,
    its query's id and Spark's checkpoint root (`SESSION_ROOT_CONF`), None when unset.

    Raises:
        ConfigError: the checkpoint the sink reads is not the query's; no checkpoint to
            find; a DDL message due that only the driver can send (`refuse_pending_ddl`).
    """
    if batch is None:  # not a micro-batch (Spark runs every stream write in one)
        return plan, None
    batch_id = int(batch)
    if checkpoint.location is not None:
        check_same_query(checkpoint.location, checkpoint.query_id, query_id)
        if batch_id != plan.batch_id:
            raise ConfigError(
                f"the offset log under checkpointLocation {checkpoint.location!r} says "
                f"micro-batch {plan.batch_id}, but the query runs micro-batch "
                f"{batch_id}: the sink reads another folder than Spark writes; give the "
                "location as a full URI (hdfs://, s3a://, file:)",
                option="checkpointLocation",
                value=checkpoint.location,
            )
        return plan, None
    if not root or not checkpoint.query_name:
        raise ConfigError(
            f"streaming writes need option 'checkpointLocation' (or {SESSION_ROOT_CONF} "
            "and a queryName)",
            option="checkpointLocation",
        )
    location = session_location(root, checkpoint.query_name)
    state = SinkState(location)
    check_same_query(location, state.query_id(), query_id)
    floor = state.watermark_floor(batch_id)  # before commit_ts_for_batch marks it planned
    commit_ts = state.commit_ts_for_batch(batch_id)
    found = attrs.evolve(
        plan,
        commit_ts=commit_ts,
        build_ts_ms=tso.physical_ms(commit_ts),
        batch_id=batch_id,
        watermark_floor=floor,
    )
    refuse_pending_ddl(found, state, location)
    return found, location


def commit_plan(
    plan: WritePlan,
    checkpoint: StreamCheckpoint | None,
    found: tuple[str, int] | None,
    batch_id: int | None,
) -> WritePlan:
    """The commit step's plan: the driver's, or, for a query whose tasks found the
    checkpoint, completed with the location and commit ts they found (`found`, from their
    messages; None when no task ran: nothing was written, no state)."""
    if checkpoint is None or checkpoint.location is not None or found is None:
        return plan
    location, commit_ts = found
    return attrs.evolve(
        plan,
        config=attrs.evolve(plan.config, checkpoint_location=location),
        commit_ts=commit_ts,
        build_ts_ms=tso.physical_ms(commit_ts),
        batch_id=batch_id,
    )

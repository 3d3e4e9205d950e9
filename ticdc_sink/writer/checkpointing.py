"""A streaming write's checkpoint: where its tasks find it (`StreamCheckpoint`), the check
that it is the query's own (`check_same_query`), and the DDL a task that found it itself
cannot send (`refuse_pending_ddl`).

A query named with `queryName` and no `checkpointLocation` option has its checkpoint under
Spark's session conf, which only the tasks see: they fix the micro-batch's commit ts there
(the same value in every task, `SinkState.commit_ts_for_batch`) and tell the commit step
where it is. Knows no Spark: the data source reads the task's local properties and
passes their values in.
"""

from __future__ import annotations

import attrs

from ticdc_sink.checkpoint import SESSION_ROOT_CONF
from ticdc_sink.errors import ConfigError
from ticdc_sink.schema import table_schema_from_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer.commit import schema_change_query
from ticdc_sink.writer.plan import WritePlan

__all__ = ["StreamCheckpoint", "check_same_query", "refuse_pending_ddl"]


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

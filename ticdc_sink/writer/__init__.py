"""Writing one batch, split by where each step runs:

    plan.py    the driver plans the batch (table template, options checked once)
    rules.py   what the configuration's rules do to a table: dispatchers rule, topic,
               target names, dispatcher, columns sent; the [filter] as a RowFilter
    table.py   the table of a DataFrame: Spark schema -> TableSchema (the template)
    task.py    each Spark task writes its partition (encode, route, send, flush)
    bootstrap.py  when a Simple BOOTSTRAP is due, kept per Python worker process
    report.py  what tasks report back, and the batch report made of them
    commit.py  the driver announces DDL before the tasks and commits after them
               (schema and watermark recorded, then the watermark sent)
    checkpointing.py  a streaming write's checkpoint: where the tasks find it, that it
               is the query's, what they may not send when they found it themselves

`task` and `commit` build on `plan` and `report`, never on each other; `task` keeps its
BOOTSTRAP schedule in `bootstrap`. Knows no Spark session (`table` reads a DataFrame's
schema, `pyspark.sql.types` only): `ticdc_sink.datasource` is the glue, and
`checkpointing` plans what it hands over (the checkpoint, the task's properties). The package
re-exports the public names below.
"""

from __future__ import annotations

from ticdc_sink.events import split_key_update
from ticdc_sink.writer.commit import (
    abort_batch,
    announce_schema,
    commit_batch,
    schema_change_query,
    send_schema_change,
    send_watermark,
    watermark_to_send,
)
from ticdc_sink.writer.plan import (
    TableDecision,
    TablePlan,
    WritePlan,
    decide_table,
    key_column_indexes,
    make_plan,
    split_key_indexes,
)
from ticdc_sink.writer.report import TaskReport, batch_report
from ticdc_sink.writer.task import TaskWriter, gather_record_batches, write_batches

__all__ = [
    "TableDecision",
    "TablePlan",
    "TaskReport",
    "TaskWriter",
    "WritePlan",
    "abort_batch",
    "announce_schema",
    "batch_report",
    "commit_batch",
    "decide_table",
    "gather_record_batches",
    "key_column_indexes",
    "make_plan",
    "schema_change_query",
    "send_schema_change",
    "send_watermark",
    "split_key_indexes",
    "split_key_update",
    "watermark_to_send",
    "write_batches",
]

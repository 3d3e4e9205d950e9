"""Writing one batch, split by where each step runs:

    plan.py    the driver plans the batch (table template, options checked once)
    table.py   the table of a DataFrame: Spark schema -> TableSchema (the template)
    task.py    each Spark task writes its partition (encode, route, send, flush)
    bootstrap.py  when a Simple BOOTSTRAP is due, kept per Python worker process
    report.py  what tasks report back, and the batch report made of them
    commit.py  the driver announces DDL before the tasks and commits after them
               (schema and watermark recorded, then the watermark sent)

`task` and `commit` build on `plan` and `report`, never on each other; `task` keeps its
BOOTSTRAP schedule in `bootstrap`. Knows no Spark session (`table` reads a DataFrame's
schema, `pyspark.sql.types` only): `ticdc_sink.datasource` is the glue. The names below
load on first use, so importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_sink.codec import lazy_names

if TYPE_CHECKING:
    from ticdc_sink.events import split_key_update
    from ticdc_sink.writer.commit import (
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

# Hidden from a type checker, which reads the names from the imports above instead.
if not TYPE_CHECKING:
    __getattr__ = lazy_names(
        __name__,
        {
            "TableDecision": "plan",
            "TablePlan": "plan",
            "TaskReport": "report",
            "TaskWriter": "task",
            "WritePlan": "plan",
            "batch_report": "report",
            "commit_batch": "commit",
            "decide_table": "plan",
            "gather_record_batches": "task",
            "key_column_indexes": "plan",
            "make_plan": "plan",
            "schema_change_query": "commit",
            "send_schema_change": "commit",
            "send_watermark": "commit",
            "split_key_indexes": "plan",
            "split_key_update": "task",
            "watermark_to_send": "commit",
            "write_batches": "task",
        },
    )

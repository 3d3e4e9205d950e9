"""The column-wise read path against the row path: one read's outcome, and two outcomes
compared. The column-wise paths (`codec/<p>/read_columns.py`) must give what the row
path gives: the same table (schema, metadata, rows), cut into the same batches, or the
same error.

| function | gives |
| --- | --- |
| `read_outcome(config, log, schema_for_id=..., **read_range kwargs)` | the read's table and |
|  | batch sizes, or its error's type and message (plan, then every range read) |
| `assert_same_outcome(left, right)` | asserts two outcomes are the same |
| `with_headers(log)` | the log with Kafka headers on every third record (one without a value) |
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from tests.support.read_log import FakeTopicLog
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.rows import arrow_schema
from ticdc_sink.read.scan import read_range

__all__ = ["assert_same_outcome", "read_outcome", "with_headers"]


def read_outcome(
    config: ReadConfig,
    log: FakeTopicLog,
    *,
    schema_for_id: Any = None,
    **kwargs: Any,
) -> Any:
    """The read's table and batch sizes, or its error's type and message."""
    try:
        plan = plan_read(config, log, schema_for_id=schema_for_id)
        batches = [
            batch
            for offsets in plan.ranges
            for batch in read_range(
                config,
                plan.table,
                plan.known,
                offsets,
                log=log,
                schema_for_id=schema_for_id,
                **kwargs,
            )
        ]
    except Exception as exc:  # the row path's raw errors too: both must raise the same
        return type(exc), str(exc)
    schema = arrow_schema(
        plan.table, kafka_columns=config.kafka_columns, headers=config.include_headers
    )
    for batch in batches:
        assert batch.schema.equals(schema, check_metadata=True)
    return pa.Table.from_batches(batches, schema), [b.num_rows for b in batches]


def assert_same_outcome(left: Any, right: Any) -> None:
    """Two `read_outcome`s are the same: table and batch sizes, or error."""
    if isinstance(left[0], pa.Table) and isinstance(right[0], pa.Table):
        assert left[0].equals(right[0], check_metadata=True)
        assert left[0].schema.equals(right[0].schema, check_metadata=True)
        assert left[1] == right[1]
    else:
        assert left == right


def with_headers(log: FakeTopicLog) -> FakeTopicLog:
    """`log`, its records at offsets 1, 4, 7, ... given two headers (one without a value),
    the others none: a read with includeHeaders meets both kinds in one run."""
    for key, found in log.records.items():
        log.records[key] = [
            r._replace(headers=(("n", b"%d" % r.offset), ("none", None)))
            if r.offset % 3 == 1
            else r
            for r in found
        ]
    return log

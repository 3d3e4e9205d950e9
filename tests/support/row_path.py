"""The row path, the reference every column-wise path is checked against: a record batch
read row by row (`read_changes`), every row through the writer's per-row loop
(`write_rows`), and the writer's step after `encode_batch` (`with_row_path`). `outcome`
puts what a path sent and the error it raised in one comparable value."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from tests.support.batches import reading
from tests.support.fake_producer import FakeProducer
from ticdc_sink.codec import EncodedBatch
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.schema import TableSchema
from ticdc_sink.writer import TaskWriter, WritePlan

__all__ = ["outcome", "read_changes", "rows_by_table", "with_row_path", "write_rows"]


def read_changes(
    batch: pa.RecordBatch,
    *,
    layout: InputLayout,
    tables: Callable[[str, str], TableSchema],
    default_database: str | None,
    default_table: str | None,
    default_commit_ts: int,
    time_zone: str,
) -> Iterator[RowChange]:
    """One record batch as row changes, in input order: `input_batch.read_change_batches`
    (same conversions, checks and errors) zipped into `RowChange`s, rows of several tables
    put back in the order they came."""
    groups = read_change_batches(
        batch,
        layout=layout,
        tables=tables,
        default_database=default_database,
        default_table=default_table,
        default_commit_ts=default_commit_ts,
        time_zone=time_zone,
    )
    if len(groups) == 1 and groups[0].positions is None:
        return iter(groups[0].to_changes())
    out: list[Any] = [None] * batch.num_rows
    for group in groups:
        assert group.positions is not None
        for position, change in zip(group.positions, group.to_changes(), strict=True):
            out[position] = change
    return iter(out)


def write_rows(
    batches: list[pa.RecordBatch], plan: WritePlan, registry: Any = None
) -> list[tuple[str, int, bytes | None, bytes | None]]:
    """What the per-row write loop sends for `batches`: every row through `read_changes`
    and `TaskWriter.write_change`."""
    producer = FakeProducer()
    task = TaskWriter(plan, producer, 0, registry)
    for batch in batches:
        for change in read_changes(batch, **reading(plan, task.schema_for)):
            task.write_change(change)
    return producer.sent


def with_row_path(
    encoded: EncodedBatch, encoder: Any, batch: ChangeBatch, key_indexes: tuple[int, ...]
) -> EncodedBatch:
    """`encoded` with every message of its `row_path` from `encoder.encode_row` (which
    raises the row path's error for a value it refuses), as `writer.TaskWriter.write_batch`
    does before sending. Messages above max-message-bytes are left as rendered: tests
    compare their sizes."""
    if encoded.row_path:
        events = batch.to_events(key_indexes)
        for i in encoded.row_path:
            encoded.replace(i, encoder.encode_row(events[i]))
    return encoded


def outcome(run: Callable[..., Any], *args: Any) -> Any:
    """`("ok", run(*args))`, or the `InputError` it raised as `("error", type, message)`:
    two paths compare equal when they give the same result or the same error, same words."""
    try:
        return ("ok", run(*args))
    except InputError as exc:
        return ("error", type(exc), str(exc))


def rows_by_table(
    batch: pa.RecordBatch, table_column: str = "_table", database_column: str = "_database"
) -> pa.RecordBatch:
    """`batch` with its rows stably grouped by table, tables in the order they first
    appear: the order in which the writer sends a record batch of several tables (each
    table's rows in input order). A batch without a table column is returned as is."""
    names = batch.schema.names
    parts = [
        batch.column(names.index(c)).to_pylist()
        for c in (database_column, table_column)
        if c in names
    ]
    if not parts:
        return batch
    tables = list(zip(*parts, strict=True))
    first: dict[tuple[Any, ...], int] = {}
    for table in tables:
        first.setdefault(table, len(first))
    order = sorted(range(batch.num_rows), key=lambda i: first[tables[i]])
    return batch.take(pa.array(order, pa.int64()))

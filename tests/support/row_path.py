"""The writer's steps around `encode_batch`, for tests that hold the column-wise path to
the row path: the messages an `EncodedBatch` leaves to the row path (`row_path`) taken
from `encode_row` on their events, as `writer.TaskWriter.write_batch` does before
sending; and a record batch's rows in the order the writer sends them (table by table)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ticdc_sink.codec import EncodedBatch
from ticdc_sink.events import ChangeBatch

__all__ = ["rows_by_table", "with_row_path"]


def with_row_path(
    encoded: EncodedBatch, encoder: Any, batch: ChangeBatch, key_indexes: tuple[int, ...]
) -> EncodedBatch:
    """`encoded` with every message of its `row_path` from `encoder.encode_row` (which
    raises the row path's error for a value it refuses). Messages above max-message-bytes
    are left as rendered: tests compare their sizes."""
    if encoded.row_path:
        events = batch.to_events(key_indexes)
        for i in encoded.row_path:
            encoded.replace(i, encoder.encode_row(events[i]))
    return encoded


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

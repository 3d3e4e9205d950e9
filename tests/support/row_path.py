"""The row path, the reference every column-wise path is checked against: every row
through the writer's per-row loop (`write_rows`), and the writer's step after
`encode_batch` (`with_row_path`). `outcome` puts what a path sent and the error it raised
in one comparable value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from tests.support.batches import reading
from tests.support.fake_producer import FakeProducer
from ticdc_sink.codec import EncodedBatch
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch, read_changes
from ticdc_sink.writer import TaskWriter, WritePlan

__all__ = ["outcome", "with_row_path", "write_rows"]


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

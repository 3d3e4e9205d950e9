"""The writer's step after `encode_batch`, for tests of the column-wise encoders: the
messages an `EncodedBatch` leaves to the row path (`row_path`) taken from `encode_row` on
their events, as `writer.TaskWriter.write_batch` does before sending."""

from __future__ import annotations

from typing import Any

from ticdc_sink.codec import EncodedBatch
from ticdc_sink.events import ChangeBatch

__all__ = ["with_row_path"]


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

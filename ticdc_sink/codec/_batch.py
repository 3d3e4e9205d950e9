"""What a column-wise encoder returns for one `events.ChangeBatch`: the messages of every
row, in the order the row path (`encode_row` per event) would send them.

Encoders that can render whole batches offer `encode_batch(batch, key_indexes)`; the
writer uses it for a record batch of one table and keeps `encode_row` as the reference
(oversized messages, rows of several tables, dispatchers that need each event). Tests
compare both paths byte for byte.
"""

from __future__ import annotations

import attrs

__all__ = ["EncodedBatch"]


@attrs.define(eq=False)
class EncodedBatch:
    """The messages of a batch, in send order.

    `values` and, when the messages' keys differ, `keys` hold one entry per message
    (None: a null key, or a tombstone value); otherwise every message's key is `key`.
    `sizes` gives per message the size the row path compares with max-message-bytes, its
    record overhead included (None: the protocol has no size check); the writer sends a
    message above the limit through `encode_row`, which applies the large-message policy.
    `row_ends[i]` is the index after row i's last message (None: one message per row;
    an UPDATE that changes a key column is two, DELETE then INSERT).
    """

    values: list[bytes | None]
    sizes: list[int] | None
    keys: list[bytes | None] | None = None
    key: bytes | None = b""
    row_ends: list[int] | None = None

    def oversized(self, limit: int) -> list[int]:
        """Indexes of the messages whose size is above `limit`."""
        sizes = self.sizes
        if sizes is None or not sizes or max(sizes) <= limit:
            return []
        return [i for i, size in enumerate(sizes) if size > limit]

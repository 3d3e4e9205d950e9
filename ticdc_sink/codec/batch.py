"""What a column-wise encoder returns for one `events.ChangeBatch`: the messages of every
row, in the order the row path (`encode_row` per event) would send them.

Encoders that can render whole batches offer `encode_batch(batch, key_indexes)`; the
writer uses it for a record batch of one table and keeps `encode_row` as the reference
(oversized messages, rows of several tables, dispatchers that need each event). Tests
compare both paths byte for byte.
"""

from __future__ import annotations

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.events import OP_DELETE, OP_INSERT, OP_UPDATE, ChangeBatch

__all__ = [
    "EncodedBatch",
    "SplitEvents",
    "key_changed",
    "key_changed_rows",
    "re2_class",
    "split_events",
]


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


def key_changed(batch: ChangeBatch, key_indexes: tuple[int, ...]) -> np.ndarray:
    """Per row of `batch`, whether it is an UPDATE with an old image whose key columns
    changed: the rows `events.split_key_update` splits into DELETE + INSERT. Values are
    compared as the row path compares them (Python `!=` on mounter values); integer and
    string columns in Arrow, which agrees (NULL equals only NULL)."""
    split = np.zeros(batch.rows, bool)
    rows = batch.before_rows
    if not rows or not key_indexes:
        return split
    taken = pa.array(rows, pa.int64())
    changed = np.zeros(len(rows), bool)
    for k in key_indexes:
        new, old = batch.columns[k], batch.before_columns[k]
        if (
            isinstance(new, pa.Array)
            and isinstance(old, pa.Array)
            and new.type == old.type
            and (pa.types.is_integer(new.type) or pa.types.is_string(new.type))
        ):
            new = new.take(taken)
            differ = pc.fill_null(pc.not_equal(new, old), False)
            differ = pc.or_(differ, pc.xor(new.is_null(), old.is_null()))
            changed |= differ.to_numpy(zero_copy_only=False)
            continue
        new_values = (
            new.take(taken).to_pylist() if isinstance(new, pa.Array) else [new[r] for r in rows]
        )
        old_values = old.to_pylist() if isinstance(old, pa.Array) else old
        changed |= np.fromiter(
            (a != b for a, b in zip(new_values, old_values, strict=True)), bool, len(rows)
        )
    split[np.asarray(rows, np.int64)[changed]] = True
    return split


def key_changed_rows(batch: ChangeBatch, key_indexes: tuple[int, ...]) -> list[int]:
    """`key_changed` as the ascending indexes of the rows it marks."""
    return np.flatnonzero(key_changed(batch, key_indexes)).tolist()


@attrs.frozen
class SplitEvents:
    """The events of a batch with key-changing UPDATEs split (DELETE of the old row, then
    INSERT of the new one: tiflow trySplitAndSortUpdateEvent), as index arrays over its
    rows. `rows[e]` is event e's row, `ops[e]` its op code; `images[e]` where its image
    comes from (row i's image is i, row i's old image n + j for before_rows[j]);
    `old[e]` the index into before_rows of its old image, -1 for none (UPDATEs keep
    theirs); `row_ends[i]` is the index after row i's last event."""

    rows: np.ndarray
    ops: np.ndarray
    images: np.ndarray
    old: np.ndarray
    row_ends: list[int]


def split_events(ops: np.ndarray, split: np.ndarray, before_of: np.ndarray) -> SplitEvents:
    """`ops`: op code per row; `split`: `key_changed`'s mask; `before_of`: per row the
    index into before_rows of its old image, -1 for none."""
    n = len(ops)
    repeats = 1 + split.astype(np.int64)
    ends = np.cumsum(repeats)
    rows = np.repeat(np.arange(n), repeats)
    first = np.zeros(len(rows), bool)
    first[ends[split] - 2] = True  # the DELETE of a split row
    second = np.zeros(len(rows), bool)
    second[ends[split] - 1] = True
    event_ops = ops[rows]
    event_ops[first] = OP_DELETE
    event_ops[second] = OP_INSERT
    images = rows.copy()
    images[first] = n + before_of[rows[first]]
    old = np.where(event_ops == OP_UPDATE, before_of[rows], -1)
    return SplitEvents(rows, event_ops, images, old, ends.tolist())


def re2_class(chars: str) -> str:
    """A regex character class matching any of `chars`, in the RE2 syntax of Arrow's
    `match_substring_regex` (each character as `\\x{hex}`)."""
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]"

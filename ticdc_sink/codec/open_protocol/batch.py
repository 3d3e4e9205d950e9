"""open-protocol, a record batch at a time: the same events as `row.OpenProtocolRowEncoder`,
rendered column by column.

Per column, once per batch, every value's JSON text is made by the column's renderer in
one pass over the column (one dispatch per column, not per value) and joined with the
column's constant head; per image the column entries are joined in Go's map order once,
and shared by the events that use it (an UPDATE's new image, a split row's DELETE and
INSERT). Per event only the key (its commit ts) and the value's frame are written.

The row path stays the reference: the size check and the large-message policy run there
(the writer re-encodes an oversized message through `encode_row`), and so do the events
of a row with a value the renderer refuses, or of an UPDATE without its old image while
old values are written: they are listed in `EncodedBatch.row_path`, where the row path
raises its error.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pyarrow as pa

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.batch import key_changed, row_messages, split_events
from ticdc_sink.codec.open_protocol.message import FRAME_OVERHEAD, VERSION_HEAD
from ticdc_sink.codec.open_protocol.table import OpenProtocolTable, image_map
from ticdc_sink.codec.open_protocol.values import ColumnEntry, same_text
from ticdc_sink.events import OP_DELETE, OP_INSERT, OP_UPDATE, ChangeBatch

__all__ = ["OpenProtocolBatchEncoder"]

_RENDER_ERRORS = (TypeError, ValueError, OverflowError, AttributeError)
_LENGTH = struct.Struct(">Q")


def _values(column: Any) -> list[Any]:
    return column.to_pylist() if isinstance(column, pa.Array) else list(column)


class OpenProtocolBatchEncoder:
    """The row events of one table, a batch at a time."""

    def __init__(self, table: OpenProtocolTable) -> None:
        self._table = table

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """What `encode_row` gives for every event of `batch` (key-changing UPDATEs split),
        those only the row path can write listed in `row_path`."""
        t = self._table
        n = batch.rows
        ops = (
            np.zeros(n, np.int8)
            if batch.op_codes is None
            else batch.op_codes.to_numpy(zero_copy_only=False)
        )
        before_of = np.full(n, -1, np.int64)
        if batch.before_rows:
            before_of[np.asarray(batch.before_rows, np.int64)] = np.arange(len(batch.before_rows))
        split = key_changed(batch, key_indexes)
        events = split_events(ops, split, before_of)
        bad_rows: set[int] = set()
        # Per column, the entry text of every image: rows 0..n-1 are the images, n + j the
        # old image of before_rows[j].
        texts: dict[int, list[str | None]] = {}
        for entry in t.entries:
            column = _values(batch.columns[entry.position])
            before = _values(batch.before_columns[entry.position]) if batch.before_rows else []
            texts[entry.position] = self._render(
                entry, column + before, n, batch.before_rows, bad_rows
            )
        full_maps: dict[int, str] = {}
        key_maps: dict[int, str] = {}

        def image_text(image: int, key_only: bool) -> str:
            cache = key_maps if key_only else full_maps
            found = cache.get(image)
            if found is None:
                entries = t.key_entries if key_only else t.entries
                found = cache[image] = image_map(
                    entries, [texts[e.position][image] for e in entries]
                )
            return found

        commit_ts = batch.commit_ts_list()
        key_tail = t.key_tail
        compress = t.compress
        keys: list[bytes | None] = []
        values: list[bytes | None] = []
        sizes: list[int] = []
        row_path_rows: set[int] = set(bad_rows)
        for e in range(len(events.rows)):
            row = int(events.rows[e])
            op = int(events.ops[e])
            image = int(events.images[e])
            if row in bad_rows:
                keys.append(None)
                values.append(None)
                sizes.append(0)
                continue
            if op == OP_INSERT:
                value = '{"u":' + image_text(image, False) + "}"
            elif op == OP_DELETE:
                value = '{"d":' + image_text(image, t.delete_key_only) + "}"
            else:
                assert op == OP_UPDATE
                value = '{"u":' + image_text(image, False)
                if t.output_old_value:
                    old = int(events.old[e])
                    if old < 0:  # an UPDATE without `_before`: the row path's error
                        row_path_rows.add(row)
                        keys.append(None)
                        values.append(None)
                        sizes.append(0)
                        continue
                    value += self._old(n + old, image, texts)
                value += "}"
            key = b'{"ts":%d' % commit_ts[row] + key_tail
            data = compress(value.encode())
            keys.append(VERSION_HEAD + _LENGTH.pack(len(key)) + key)
            values.append(_LENGTH.pack(len(data)) + data)
            sizes.append(len(key) + len(data) + FRAME_OVERHEAD + RECORD_OVERHEAD)
        row_ends = events.row_ends if split.any() else None
        return EncodedBatch(
            values=values,
            sizes=sizes,
            keys=keys,
            key=None,
            row_ends=row_ends,
            row_path=row_messages(row_path_rows, row_ends),
        )

    def _old(self, old: int, new: int, texts: dict[int, list[str | None]]) -> str:
        """`,"p":{…}` for an UPDATE (old image `old`, new image `new`), or "" when
        only-output-updated-columns left no column (omitempty)."""
        entries = self._table.entries
        if not self._table.only_updated:
            return ',"p":' + image_map(entries, [texts[e.position][old] for e in entries])
        kept: list[ColumnEntry] = []
        kept_texts: list[str | None] = []
        for e in entries:
            column = texts[e.position]
            if not same_text(e, column[old], column[new]):
                kept.append(e)
                kept_texts.append(column[old])
        return ',"p":' + image_map(kept, kept_texts) if kept else ""

    @staticmethod
    def _render(
        entry: ColumnEntry,
        values: list[Any],
        rows: int,
        before_rows: list[int],
        bad_rows: set[int],
    ) -> list[str | None]:
        render = entry.render
        try:
            return [None if v is None else render(v) for v in values]
        except _RENDER_ERRORS:
            pass
        # A value the renderer refuses: its row goes to the row path, which raises.
        out: list[str | None] = []
        for i, v in enumerate(values):
            try:
                out.append(None if v is None else render(v))
            except _RENDER_ERRORS:
                out.append(None)
                bad_rows.add(i if i < rows else before_rows[i - rows])
        return out

"""open-protocol, a record batch at a time: the same events as `row.OpenProtocolRowEncoder`,
rendered column by column.

Per column, once per batch, every value's JSON text: integer and double columns cast to
text by Arrow, whose text is Go's (a double with an exponent, or NaN / infinity, is
rendered again one by one, as `gotext.json_float` writes it); string columns whose text
needs no escaping (one regex search over the whole column) quoted as they are; every other
column by the column's renderer, one call per value. Each text is joined with the
column's constant head; per image the column entries are joined in Go's map order once,
and shared by the events that use it (an UPDATE's new image, a split row's DELETE and
INSERT). Per event only the key (its commit ts), the value's frame and `p` are written.

The row path stays the reference: the size check and the large-message policy run there
(the writer re-encodes an oversized message through `encode_row`), and so do the events
of a row with a value the renderer refuses, or of an UPDATE without its old image while
old values are written: they are listed in `EncodedBatch.row_path`, where the row path
raises its error.
"""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.batch import key_changed, row_messages, split_events
from ticdc_sink.codec.open_protocol.message import FRAME_OVERHEAD, VERSION_HEAD
from ticdc_sink.codec.open_protocol.table import OpenProtocolTable
from ticdc_sink.codec.open_protocol.values import ColumnEntry, FastText, same_text
from ticdc_sink.events import OP_DELETE, OP_INSERT, OP_UPDATE, ChangeBatch
from ticdc_sink.gotext import JSON_ESCAPED

__all__ = ["OpenProtocolBatchEncoder"]

_RENDER_ERRORS = (TypeError, ValueError, OverflowError, AttributeError)
_LENGTH = struct.Struct(">Q")
_NEEDS_ESCAPE = re.compile("[" + re.escape(JSON_ESCAPED) + "]")


def _values(column: Any) -> list[Any]:
    return column.to_pylist() if isinstance(column, pa.Array) else list(column)


def _arrow_texts(entry: ColumnEntry, column: Any) -> list[str] | None:
    """The JSON texts of an Arrow column ("null" for NULL) where Arrow writes Go's text,
    else None."""
    if not isinstance(column, pa.Array):
        return None
    kind = column.type
    fast = entry.fast
    if fast is FastText.INTEGER and pa.types.is_integer(kind):
        return ["null" if t is None else t for t in pc.cast(column, pa.string()).to_pylist()]
    if fast is FastText.DOUBLE and pa.types.is_float64(kind):
        texts = pc.cast(column, pa.string()).to_pylist()
        render = entry.render
        return [
            "null"
            if t is None
            else (render(column[i].as_py()) if "e" in t or "n" in t or "i" in t else t)
            for i, t in enumerate(texts)
        ]
    if fast is FastText.STRING and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        values = column.to_pylist()
        if _NEEDS_ESCAPE.search("".join(v for v in values if v is not None)) is None:
            return ["null" if v is None else '"' + v + '"' for v in values]
    return None


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
        before_rows = batch.before_rows
        before_of = np.full(n, -1, np.int64)
        if before_rows:
            before_of[np.asarray(before_rows, np.int64)] = np.arange(len(before_rows))
        split = key_changed(batch, key_indexes)
        events = split_events(ops, split, before_of)
        bad_rows: set[int] = set()
        # Per column, the value text of every image: 0..n-1 the rows' images, n + j the old
        # image of before_rows[j]; "null" for NULL.
        texts: dict[int, list[str]] = {}
        for entry in t.entries:
            position = entry.position
            new = self._texts(entry, batch.columns[position], 0, before_rows, bad_rows)
            old = (
                self._texts(entry, batch.before_columns[position], n, before_rows, bad_rows)
                if before_rows
                else []
            )
            texts[position] = new + old
        full = self._maps(t.entries, texts)
        key_only = self._maps(t.key_entries, texts) if t.delete_key_only else full
        commit_ts = batch.commit_ts_list()
        key_tail = t.key_tail
        compress = t.compress
        keys: list[bytes | None] = []
        values: list[bytes | None] = []
        sizes: list[int] = []
        row_path_rows: set[int] = set(bad_rows)
        for row, op, image, old in zip(
            events.rows.tolist(),
            events.ops.tolist(),
            events.images.tolist(),
            events.old.tolist(),
            strict=True,
        ):
            if row in bad_rows or (op == OP_UPDATE and old < 0 and t.output_old_value):
                # A refused value, or an UPDATE without `_before`: the row path's error.
                row_path_rows.add(row)
                keys.append(None)
                values.append(None)
                sizes.append(0)
                continue
            if op == OP_INSERT:
                value = '{"u":' + full[image] + "}"
            elif op == OP_DELETE:
                value = '{"d":' + key_only[image] + "}"
            else:
                value = '{"u":' + full[image]
                if t.output_old_value:
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

    @staticmethod
    def _maps(entries: list[ColumnEntry], texts: dict[int, list[str]]) -> list[str]:
        """Every image's column map of `entries`, in Go's map order."""
        columns = [[e.head + v + "}" for v in texts[e.position]] for e in entries]
        return ["{" + ",".join(parts) + "}" for parts in zip(*columns, strict=True)]

    def _old(self, old: int, new: int, texts: dict[int, list[str]]) -> str:
        """`,"p":{…}` for an UPDATE (old image `old`, new image `new`), or "" when
        only-output-updated-columns left no column (omitempty)."""
        entries = self._table.entries
        if self._table.only_updated:
            entries = [
                e
                for e in entries
                if not same_text(e, texts[e.position][old], texts[e.position][new])
            ]
            if not entries:
                return ""
        return ',"p":{' + ",".join(e.head + texts[e.position][old] + "}" for e in entries) + "}"

    @staticmethod
    def _texts(
        entry: ColumnEntry, column: Any, offset: int, before_rows: list[int], bad_rows: set[int]
    ) -> list[str]:
        """One column's value texts; a value the renderer refuses marks its row (the
        image at `offset + i` is row i, or before_rows[i] for old images) for the row path."""
        fast = _arrow_texts(entry, column)
        if fast is not None:
            return fast
        values = _values(column)
        render = entry.render
        try:
            return ["null" if v is None else render(v) for v in values]
        except _RENDER_ERRORS:
            pass
        out: list[str] = []
        for i, v in enumerate(values):
            try:
                out.append("null" if v is None else render(v))
            except _RENDER_ERRORS:
                out.append("null")
                bad_rows.add(i if not offset else before_rows[i])
        return out

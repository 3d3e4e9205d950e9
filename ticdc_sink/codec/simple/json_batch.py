"""Simple JSON, a record batch at a time: the same bytes as `json_row.JsonMarshaller`, built
column by column with pyarrow compute instead of a dict and an orjson call per row.

Per column, once per batch: the values' JSON string contents (integers and doubles cast to
strings by Arrow, one-digit integers by numpy, strings as they are; only the values that
need escaping -- found by a memchr-speed scan of the data buffer, then one RE2 scan -- are
escaped one by one through `gotext.json_quote`). A column without NULLs goes into the
message as that bare text between literals (`,"name":"` ... `"`); a column with NULLs as
whole values (`"..."` or `null`). Per message, in C: one `binary_join_element_wise` of the
header (one literal, or taken by op), the columns in Go's sorted-key order with the
literals between them merged, and the `old` object of an UPDATE, joined separately for
those rows and placed by new offsets over its buffer (no copy). Arrow's variadic join
costs ~40 ns a row plus ~15 ns a part, literal or array, so the parts are kept few and
nothing is joined twice; only a key-changing UPDATE (split into DELETE + INSERT) takes the
objects per message. Python touches each value only where Arrow cannot produce Go's text
(float32, BIT, ENUM/SET, binary, doubles Arrow writes with an exponent); `to_pylist` of
the finished messages makes the `bytes` the producer sends.

The row path stays the reference: the size check and large-message policy run there, so
the writer re-encodes an oversized message through `SimpleEncoder.encode_row`, and so do
values a column's renderer refuses (the rows are listed in `EncodedBatch.row_path`, where
the row path raises its error). A table without columns, whose messages carry no `data`,
goes to the row path whole. Tests check byte equality of the two paths on random batches.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.batch import (
    key_changed,
    re2_class,
    row_messages,
    row_path_batch,
    split_events,
    string_bytes,
    wrap_strings,
)
from ticdc_sink.codec.checksum import CHECKSUM_VERSION, TableChecksum
from ticdc_sink.codec.gojson import dumps
from ticdc_sink.codec.large_message import ROW_KEY
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.codec.simple.values import PROTOCOL_VERSION, renderer
from ticdc_sink.events import OP_INSERT, ChangeBatch
from ticdc_sink.gotext import JSON_ESCAPED, format_float, json_quote
from ticdc_sink.schema import Column, TableSchema

__all__ = ["JsonBatchMarshaller"]

_TEXT = pa.large_string()
# Characters Go's encoding/json escapes (with its HTML escaping): C0 controls, quote,
# backslash, <, >, &, U+2028, U+2029. Everything else is written raw.
_NEEDS_ESCAPE = re2_class(JSON_ESCAPED)
# Indexed by the op codes of events.ChangeBatch (OP_INSERT, OP_UPDATE, OP_DELETE).
_OP_NAMES = ("INSERT", "UPDATE", "DELETE")
_STRING_KINDS = frozenset(
    {
        ValueKind.DECIMAL,
        ValueKind.DATE,
        ValueKind.DATETIME,
        ValueKind.TIME,
        ValueKind.JSON,
        ValueKind.TEXT,
        ValueKind.VECTOR,
    }
)
_INT_KINDS = frozenset({ValueKind.INT, ValueKind.UINT, ValueKind.ENUM, ValueKind.SET})
# what the row path's renderers raise for a value that does not fit its column
_REFUSED = (TypeError, ValueError, OverflowError)


def _text(value: Any) -> Any:
    return pa.scalar(value, _TEXT) if isinstance(value, str) else value


_EMPTY = pa.scalar("", _TEXT)
_NULL = pa.scalar("null", _TEXT)


def _join(parts: list[Any]) -> Any:
    """Element-wise concatenation of literals and arrays (a null part makes the row null).
    Arrow's variadic join costs ~40 ns a row plus ~15-20 ns a part, literal or array, so
    adjacent literals are merged first; a column without NULLs goes in as its bare text
    between literals, which is cheaper than wrapping it first."""
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if merged and isinstance(merged[-1], str):
                merged[-1] += part
                continue
        merged.append(part)
    if len(merged) == 1:
        return merged[0]
    return pc.binary_join_element_wise(*map(_text, merged), _EMPTY)


# Bytes that may start something Go escapes: C0 controls, quote, backslash, <, >, & and
# 0xE2 (the lead byte of U+2028 / U+2029). A column whose data buffer has none of them
# needs no escaping at all; a memcpy-speed scan, where the RE2 match costs ~120 ns a row.
_SPECIAL_BYTES = tuple(sorted({c.encode()[:1] for c in JSON_ESCAPED if c >= " "}))


def _may_need_escaping(strings: pa.Array) -> bool:
    written = string_bytes(strings)
    if not written:
        return False
    # A SIMD minimum finds the controls, memchr the others: ~4x cheaper than translate.
    if np.frombuffer(written, np.uint8).min() < 0x20:
        return True
    return any(b in written for b in _SPECIAL_BYTES)


def _digits(values: pa.Array) -> pa.Array | None:
    """Integers all within 0..9 (booleans, flags) as their digit, built by numpy in a few ns
    a row where Arrow's cast costs ~30; None for other integers."""
    n = len(values)
    if not n or (values.null_count and values.offset):
        return None
    bounds = pc.min_max(values)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None or low < 0 or high > 9:
        return None
    dtype = np.dtype(values.type.to_pandas_dtype())
    numbers = np.frombuffer(values.buffers()[1], dtype)[values.offset : values.offset + n]
    text = (numbers + 48).astype(np.uint8)
    validity = values.buffers()[0] if values.null_count else None
    offsets = pa.py_buffer(np.arange(n + 1, dtype=np.int64))
    return pa.Array.from_buffers(_TEXT, n, [validity, offsets, pa.py_buffer(text)])


def _place(strings: pa.Array, index: np.ndarray) -> pa.Array:
    """`strings[index[i]]` per row, "" where index[i] < 0. When the rows use the strings
    in order, each once (old images of UPDATEs), only new offsets over the same data
    buffer; else a take."""
    used = index >= 0
    chosen = index[used]
    m = len(strings)
    if strings.null_count or len(chosen) != m or not np.array_equal(chosen, np.arange(m)):
        extended = pa.concat_arrays([strings, pa.array([""], _TEXT)])
        return extended.take(pa.array(np.where(used, index, m)))
    first = strings.offset
    offsets = np.frombuffer(strings.buffers()[1], np.int64)[first : first + m + 1]
    lengths = np.zeros(len(index), np.int64)
    lengths[used] = np.diff(offsets)
    placed = np.empty(len(index) + 1, np.int64)
    placed[0] = offsets[0]
    np.cumsum(lengths, out=placed[1:])
    placed[1:] += offsets[0]
    return pa.Array.from_buffers(
        _TEXT, len(index), [None, pa.py_buffer(placed), strings.buffers()[2]]
    )


class _ColumnRenderer:
    """One column's JSON values for a whole batch."""

    def __init__(self, column: Column, time_zone: str) -> None:
        self.kind = value_kind(column)
        self.render = renderer(column, time_zone)
        self.prefix = json_quote(column.name) + ":"
        if self.kind is ValueKind.TIMESTAMP:
            # A Go map[string]string: keys sorted, so location before value.
            self.open = '{"location":' + json_quote(time_zone) + ',"value":"'
            self.close = '"}'
        else:
            self.open, self.close = '"', '"'
        # Values the sink makes itself (numbers, dates, times) hold nothing to escape.
        self.escapes = self.kind in (ValueKind.TEXT, ValueKind.JSON, ValueKind.VECTOR)

    def parts(self, values: pa.Array | list[Any], separator: str) -> tuple[list[Any], list[int]]:
        """`<separator>"name":<JSON value>` for every row, as parts for `_join`: the bare
        text between literals when the column has no NULL, else each row's whole value
        (`null` for NULL); and the rows whose value the renderer refuses (`null` in their
        place: the row path renders those messages)."""
        text = self._text(values)
        if text is None:
            if isinstance(values, pa.Array):
                values = values.to_pylist()
            texts, refused = self._one_by_one(values)
            return [separator + self.prefix, pa.array(texts, _TEXT)], refused
        if text.null_count:
            whole = pc.coalesce(wrap_strings(text, self.open, self.close), _NULL)
            return [separator + self.prefix, whole], []
        return [separator + self.prefix + self.open, text, self.close], []

    def _text(self, values: pa.Array | list[Any]) -> pa.Array | None:
        """The values' JSON string contents (escaped, without quotes; null for NULL), or
        None where Arrow cannot write them."""
        if not isinstance(values, pa.Array):
            return None
        kind = self.kind
        arrow = values.type
        if kind in _INT_KINDS and pa.types.is_integer(arrow):
            return _digits(values) or pc.cast(values, _TEXT)
        if kind is ValueKind.FLOAT64 and pa.types.is_float64(arrow):
            return self._doubles(values)
        if not (
            (kind in _STRING_KINDS or kind is ValueKind.TIMESTAMP)
            and (pa.types.is_string(arrow) or pa.types.is_large_string(arrow))
        ):
            return None
        text = values.cast(_TEXT)
        if self.escapes and _may_need_escaping(text):
            needs = pc.fill_null(pc.match_substring_regex(text, _NEEDS_ESCAPE), False)
            if pc.any(needs).as_py():
                escaped = [json_quote(v)[1:-1] for v in text.filter(needs).to_pylist()]
                text = pc.replace_with_mask(text, needs, pa.array(escaped, _TEXT))
        return text

    def _doubles(self, values: pa.Array) -> pa.Array:
        # Arrow writes the shortest round-trip digits like Go, but switches to an exponent
        # for large and small magnitudes where Go's 'f' format never does.
        text = pc.cast(values, _TEXT)
        if b"e" not in string_bytes(text):
            return text
        odd = pc.match_substring(text, "e")
        if odd.null_count:
            odd = pc.fill_null(odd, False)
        if pc.any(odd).as_py():
            fixed = [format_float(v, 64) for v in values.filter(odd).to_pylist()]
            text = pc.replace_with_mask(text, odd, pa.array(fixed, _TEXT))
        return text

    def _one_by_one(self, values: list[Any]) -> tuple[list[str], list[int]]:
        """Each value's JSON through the row path's renderer, and the rows it refuses."""
        render = self.render
        try:
            return ["null" if v is None else dumps(render(v)).decode() for v in values], []
        except _REFUSED:
            pass
        texts: list[str] = []
        refused: list[int] = []
        for row, value in enumerate(values):
            try:
                texts.append("null" if value is None else dumps(render(value)).decode())
            except _REFUSED:
                texts.append("null")
                refused.append(row)
        return texts, refused


def _checksum_member(current: int, previous: int) -> str:
    return (
        f',"checksum":{{"version":{CHECKSUM_VERSION},"corrupted":false,'
        f'"current":{current},"previous":{previous}}}'
    )


class JsonBatchMarshaller:
    """Simple JSON DML messages of one table, a `ChangeBatch` at a time.

    `encode_batch` returns the messages in the order the row path sends them: one per
    row, or two for an UPDATE that changes a key column (DELETE of the old row, then
    INSERT of the new one, as `events.split_key_update`).
    """

    def __init__(
        self,
        table: TableSchema,
        *,
        time_zone: str,
        build_ts_ms: int,
        checksum: TableChecksum | None = None,
    ) -> None:
        """With `checksum`, messages carry the row checksum, as the row path's.

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self._checksum = checksum
        order = sorted(range(len(table.columns)), key=lambda i: table.columns[i].name)
        self._order = order
        self._renderers = [_ColumnRenderer(c, time_zone) for c in table.columns]
        head = ['{"version":' + str(PROTOCOL_VERSION)]
        if table.database:
            head.append(',"database":' + json_quote(table.database))
        if table.table:
            head.append(',"table":' + json_quote(table.table))
        if table.table_id:
            head.append(f',"tableID":{table.table_id}')
        head.append(',"type":"')
        self._head = "".join(head)
        tail = f',"buildTs":{build_ts_ms}'
        if table.version:
            tail += f',"schemaVersion":{table.version}'
        self._ts_tail = tail

    def _checksum_members(
        self, batch: ChangeBatch, row_ends: list[int] | None, refused: set[int]
    ) -> pa.Array:
        """Per message, `,"checksum":{...}` (json_row: `TableChecksum.of_change`), or ""
        where it gives none. The rows a checksum refuses join `refused`, for the row path
        to raise its error."""
        assert self._checksum is not None
        split = set()
        if row_ends is not None:
            split = {
                row
                for row, end in enumerate(row_ends)
                if end - (row_ends[row - 1] if row else 0) == 2
            }
        sums = self._checksum.of_batch(batch, split, refused)
        members = ["" if c is None else _checksum_member(c.current, c.previous) for c in sums]
        return pa.array(members, _TEXT)

    def _object_parts(self, columns: list[pa.Array | list[Any]]) -> tuple[list[Any], set[int]]:
        """`"a":..,"b":..` per row (the object without braces) as `_join` parts, keys in
        Go's order; and the rows with a value a renderer refuses."""
        parts: list[Any] = []
        refused: set[int] = set()
        for k, i in enumerate(self._order):
            column_parts, column_refused = self._renderers[i].parts(columns[i], "," if k else "")
            parts += column_parts
            refused.update(column_refused)
        return parts, refused

    def _head_parts(
        self, event_ops: np.ndarray | None, ts: Any, checksums: pa.Array | None
    ) -> list[Any]:
        """Each message up to its first object: the header (type, commitTs, ...), the
        `checksum` member (`checksums`, per message, when on) and `,"data":{` (`,"old":{`
        for a DELETE); `ts` is the commit-ts text, one literal or an array. One literal
        when the messages share an op, else taken by op."""
        if event_ops is None:
            present = [OP_INSERT]
        else:
            present = np.flatnonzero(np.bincount(event_ops, minlength=3)).tolist()
        heads = [self._head + name + '","commitTs":' for name in _OP_NAMES]
        if checksums is not None:
            opens = [',"data":{', ',"data":{', ',"old":{']
            if len(present) == 1:
                return [heads[present[0]], ts, self._ts_tail, checksums, opens[present[0]]]
            index = pa.array(event_ops)
            return [
                pa.array(heads, _TEXT).take(index),
                ts,
                self._ts_tail,
                checksums,
                pa.array(opens, _TEXT).take(index),
            ]
        tails = [self._ts_tail + ',"data":{'] * 2 + [self._ts_tail + ',"old":{']
        if len(present) == 1:
            op = present[0]
            return [heads[op], ts, tails[op]]
        index = pa.array(event_ops)
        if isinstance(ts, str):
            prefixes = [h + ts + t for h, t in zip(heads, tails, strict=True)]
            return [pa.array(prefixes, _TEXT).take(index)]
        return [pa.array(heads, _TEXT).take(index), ts, pa.array(tails, _TEXT).take(index)]

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every row of `batch`; those of a row with a value its column
        refuses are left to the row path (`row_path`), as is a table without columns."""
        if not self._order:
            return row_path_batch(batch, key_indexes, sized=True)
        n = batch.rows
        image_parts, refused = self._object_parts(batch.columns)
        ops = batch.op_codes
        before_rows = batch.before_rows if ops is not None else []
        m = len(before_rows)
        old_parts: list[Any] = []
        if m:
            old_parts, old_refused = self._object_parts(batch.before_columns)
            refused.update(before_rows[j] for j in old_refused)
        commit_ts = batch.commit_ts
        row_ends = None
        event_ops = None
        old_index = None
        # The first object of each message: the row's image, right after the header, or
        # (split rows only) objects taken per message.
        body: list[Any] = image_parts
        if ops is not None:
            event_ops = ops.to_numpy(zero_copy_only=False).astype(np.int8)
            before_of = np.full(n, -1, np.int64)
            rows = np.fromiter(before_rows, np.int64, m)
            if m:
                before_of[rows] = np.arange(m)
            old_index = before_of
            split = key_changed(batch, key_indexes)
            if split.any():
                # tiflow trySplitAndSortUpdateEvent: DELETE of the old row, then INSERT.
                events = split_events(event_ops, split, before_of)
                row_ends = events.row_ends
                event_rows, event_ops = events.rows, events.ops
                source, old_index = events.images, events.old
                objects = pa.concat_arrays([_join(image_parts), _join(old_parts)])
                body = [objects.take(pa.array(source))]
                if commit_ts is not None:
                    commit_ts = commit_ts.take(pa.array(event_rows))
        ts = str(batch.default_commit_ts) if commit_ts is None else pc.cast(commit_ts, _TEXT)
        checksums = None
        if self._checksum is not None:
            checksums = self._checksum_members(batch, row_ends, refused)
        parts = self._head_parts(event_ops, ts, checksums) + body + ["}"]
        if old_index is not None and m and (old_index >= 0).any():
            parts.append(_place(_join([',"old":{', *old_parts, "}"]), old_index))
        parts.append("}")
        values = _join(parts)
        offsets = np.frombuffer(values.buffers()[1], np.int64)
        offsets = offsets[values.offset : values.offset + len(values) + 1]
        return EncodedBatch(
            values=values.cast(pa.large_binary()).to_pylist(),
            sizes=(np.diff(offsets) + RECORD_OVERHEAD).tolist(),
            key=ROW_KEY,
            row_ends=row_ends,
            row_path=row_messages(refused, row_ends),
        )

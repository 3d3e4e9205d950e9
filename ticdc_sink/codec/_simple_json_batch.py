"""Simple JSON, a record batch at a time: the same bytes as `simple.JsonMarshaller`, built
column by column with pyarrow compute instead of a dict and an orjson call per row.

Per column, once per batch: the values' JSON text (integers and doubles cast to strings by
Arrow, strings quoted, and only the values that need escaping -- found by one RE2 scan of
the column -- escaped one by one through `_json.dumps`), prefixed by the column's `"name":`.
Per row, in C: the fragments joined in Go's sorted-key order into the `data` / `old`
objects, and those joined with the header fragments, built once per table. Python touches
each value only where Arrow cannot produce Go's text (float32, BIT, ENUM/SET, binary,
doubles Arrow writes with an exponent); `to_pylist` of the finished messages makes the
`bytes` the producer sends.

The row path stays the reference: the size check and large-message policy run there, so
the writer re-encodes an oversized message through `SimpleEncoder.encode_row`; tests
check byte equality of the two paths on random batches.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec._batch import EncodedBatch
from ticdc_sink.codec._json import dumps
from ticdc_sink.codec._mysql import ValueKind, format_float, value_kind
from ticdc_sink.codec.simple import (
    _ROW_KEY,
    PROTOCOL_VERSION,
    RECORD_OVERHEAD,
    _renderer,
    row_value_error,
)
from ticdc_sink.events import OP_DELETE, OP_INSERT, ChangeBatch
from ticdc_sink.schema import Column, TableSchema

__all__ = ["JsonBatchEncoder"]

_TEXT = pa.large_string()
# Characters Go's encoding/json escapes (with its HTML escaping): C0 controls, quote,
# backslash, <, >, &, U+2028, U+2029. Everything else is written raw.
_NEEDS_ESCAPE = r'[\x00-\x1f"\\<>&\x{2028}\x{2029}]'
# Indexed by the op codes of events.ChangeBatch (OP_INSERT, OP_UPDATE, OP_DELETE).
_OP_NAMES = pa.array(["INSERT", "UPDATE", "DELETE"], _TEXT)
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


def _json_text(text: str) -> str:
    return dumps(text).decode()


def _text(value: Any) -> Any:
    return pa.scalar(value, _TEXT) if isinstance(value, str) else value


_EMPTY = pa.scalar("", _TEXT)
_COMMA = pa.scalar(",", _TEXT)
_NO_INDEX = pa.scalar(None, pa.int64())
_END = 1 << 62  # a slice start past any string's end: replace_slice there appends


def _join(*parts: Any) -> pa.Array:
    """Element-wise concatenation; a null part makes the result null. Arrow's variadic
    join costs ~40 ns a row plus ~15 ns a part, so callers keep the calls few."""
    return pc.binary_join_element_wise(*map(_text, parts), _EMPTY)


def _wrap(strings: pa.Array, before: str, after: str) -> pa.Array:
    """`before + s + after` for each string (null stays null): two slice replacements,
    ~12 ns a row each, several times cheaper than a join."""
    if before:
        strings = pc.binary_replace_slice(strings, start=0, stop=0, replacement=before)
    if after:
        strings = pc.binary_replace_slice(strings, start=_END, stop=_END, replacement=after)
    return strings


# Bytes that may start something Go escapes: C0 controls, quote, backslash, <, >, & and
# 0xE2 (the lead byte of U+2028 / U+2029). A column whose data buffer has none of them
# needs no escaping at all; a memcpy-speed scan, where the RE2 match costs ~120 ns a row.
_SPECIAL_BYTES = tuple(bytes([b]) for b in b'"\\<>&\xe2')


def _may_need_escaping(strings: pa.Array) -> bool:
    data = strings.buffers()[2]
    if data is None or not data.size:
        return False
    # A SIMD minimum finds the controls, memchr the others: ~4x cheaper than translate.
    if np.frombuffer(data, np.uint8).min() < 0x20:
        return True
    written = data.to_pybytes()
    return any(b in written for b in _SPECIAL_BYTES)


class _ColumnRenderer:
    """One column's `"name":value` JSON fragments for a whole batch."""

    def __init__(self, table: TableSchema, column: Column, time_zone: str) -> None:
        self.table = table
        self.column = column
        self.kind = value_kind(column)
        self.render = _renderer(column, time_zone)
        self.prefix = _json_text(column.name) + ":"
        self.null = pa.scalar(self.prefix + "null", _TEXT)
        if self.kind is ValueKind.TIMESTAMP:
            # A Go map[string]string: keys sorted, so location before value.
            self.open = self.prefix + '{"location":' + _json_text(time_zone) + ',"value":"'
            self.close = '"}'
        else:
            self.open, self.close = self.prefix + '"', '"'
        # Values the sink makes itself (numbers, dates, times) hold nothing to escape.
        self.escapes = self.kind in (ValueKind.TEXT, ValueKind.JSON, ValueKind.VECTOR)

    def fragments(self, values: pa.Array | list[Any]) -> pa.Array:
        """`"name":<JSON value>` for every row."""
        kind = self.kind
        text = None
        if isinstance(values, pa.Array):
            arrow = values.type
            if kind in _INT_KINDS and pa.types.is_integer(arrow):
                text = pc.cast(values, _TEXT)
            elif kind is ValueKind.FLOAT64 and pa.types.is_float64(arrow):
                text = self._doubles(values)
            elif (kind in _STRING_KINDS or kind is ValueKind.TIMESTAMP) and (
                pa.types.is_string(arrow) or pa.types.is_large_string(arrow)
            ):
                text = values.cast(_TEXT)
        if text is None:
            if isinstance(values, pa.Array):
                values = values.to_pylist()
            return pc.coalesce(pa.array([self._one(v) for v in values], _TEXT), self.null)
        out = _wrap(text, self.open, self.close)
        if self.escapes and _may_need_escaping(text):
            needs = pc.fill_null(pc.match_substring_regex(text, _NEEDS_ESCAPE), False)
            if pc.any(needs).as_py():
                escaped = [self.prefix + _json_text(v) for v in text.filter(needs).to_pylist()]
                out = pc.replace_with_mask(out, needs, pa.array(escaped, _TEXT))
        return pc.coalesce(out, self.null) if out.null_count else out

    def _doubles(self, values: pa.Array) -> pa.Array:
        # Arrow writes the shortest round-trip digits like Go, but switches to an exponent
        # for large and small magnitudes where Go's 'f' format never does.
        text = pc.cast(values, _TEXT)
        odd = pc.match_substring(text, "e")
        if odd.null_count:
            odd = pc.fill_null(odd, False)
        if pc.any(odd).as_py():
            fixed = [format_float(v, 64) for v in values.filter(odd).to_pylist()]
            text = pc.replace_with_mask(text, odd, pa.array(fixed, _TEXT))
        return text

    def _one(self, value: Any) -> str | None:
        if value is None:
            return None
        try:
            return self.prefix + dumps(self.render(value)).decode()
        except (TypeError, ValueError, OverflowError) as exc:
            raise row_value_error(self.table, self.column, value, exc) from exc


class JsonBatchEncoder:
    """Simple JSON DML messages of one table, a `ChangeBatch` at a time.

    `encode_batch` returns the messages in the order the row path sends them: one per
    row, or two for an UPDATE that changes a key column (DELETE of the old row, then
    INSERT of the new one, as `writer.split_key_update`).
    """

    def __init__(self, table: TableSchema, *, time_zone: str, build_ts_ms: int) -> None:
        """Raises:
        SchemaError: a column type the protocol cannot carry.
        """
        self.table = table
        order = sorted(range(len(table.columns)), key=lambda i: table.columns[i].name)
        self._order = order
        self._renderers = [_ColumnRenderer(table, c, time_zone) for c in table.columns]
        head = ['{"version":' + str(PROTOCOL_VERSION)]
        if table.database:
            head.append(',"database":' + _json_text(table.database))
        if table.table:
            head.append(',"table":' + _json_text(table.table))
        if table.table_id:
            head.append(f',"tableID":{table.table_id}')
        head.append(',"type":"')
        self._head = "".join(head)
        tail = f',"buildTs":{build_ts_ms}'
        if table.version:
            tail += f',"schemaVersion":{table.version}'
        self._ts_tail = tail
        self._aranges: dict[int, pa.Array] = {}

    @property
    def supported(self) -> bool:
        """False for a table without columns (its messages carry no `data`)."""
        return bool(self._order)

    def _objects(self, columns: list[pa.Array | list[Any]]) -> pa.Array:
        """`"a":..,"b":..` per row (the object without braces), keys in Go's order."""
        fragments = [self._renderers[i].fragments(columns[i]) for i in self._order]
        if len(fragments) == 1:
            return fragments[0]
        return pc.binary_join_element_wise(*fragments, _COMMA)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every row of `batch`.

        Raises:
            InputError: a value its column cannot take (as the row path words it).
        """
        n = batch.rows
        images = self._objects(batch.columns)
        if batch.commit_ts is None:
            commit_ts = pa.scalar(str(batch.default_commit_ts), _TEXT)
        else:
            commit_ts = pc.cast(batch.commit_ts, _TEXT)
        ops = batch.op_codes
        row_ends = None
        if ops is None:
            values = _join(
                self._head + 'INSERT","commitTs":',
                commit_ts,
                self._ts_tail + ',"data":{',
                images,
                "}}",
            )
        else:
            split = self._split_rows(batch, key_indexes)
            befores = self._objects(batch.before_columns) if batch.before_rows else None
            if not split:
                event_ops = ops
                data_idx, old_idx = self._indexes(ops, batch.before_rows, n)
                event_rows = None
            else:
                old_of_row: list[int | None] = [None] * n
                for j, row in enumerate(batch.before_rows):
                    old_of_row[row] = n + j
                event_ops, data_idx, old_idx, event_rows = [], [], [], []
                row_ends = []
                for i, op in enumerate(ops.to_pylist()):
                    if i in split:
                        # tiflow trySplitAndSortUpdateEvent: DELETE of the old row first.
                        event_ops += (OP_DELETE, OP_INSERT)
                        data_idx += (None, i)
                        old_idx += (old_of_row[i], None)
                        event_rows += (i, i)
                    else:
                        event_ops.append(op)
                        data_idx.append(None if op == OP_DELETE else i)
                        old_idx.append(i if op == OP_DELETE else old_of_row[i])
                        event_rows.append(i)
                    row_ends.append(len(event_ops))
                event_ops = pa.array(event_ops, pa.int8())
                data_idx = pa.array(data_idx, pa.int64())
                old_idx = pa.array(old_idx, pa.int64())
            objects = images if befores is None else pa.concat_arrays([images, befores])
            data = _wrap(images.take(data_idx), ',"data":{', "}")
            old = _wrap(objects.take(old_idx), ',"old":{', "}")
            data_part = pc.coalesce(data, _EMPTY)
            old_part = pc.coalesce(old, _EMPTY)
            if event_rows is not None and isinstance(commit_ts, pa.Array):
                commit_ts = commit_ts.take(pa.array(event_rows, pa.int64()))
            values = _join(
                self._head,
                _OP_NAMES.take(event_ops),
                '","commitTs":',
                commit_ts,
                self._ts_tail,
                data_part,
                old_part,
                "}",
            )
        return EncodedBatch(
            values=values.cast(pa.large_binary()).to_pylist(),
            sizes=pc.add(pc.binary_length(values), RECORD_OVERHEAD).to_pylist(),
            key=_ROW_KEY,
            row_ends=row_ends,
        )

    def _indexes(self, ops: pa.Array, before_rows: list[int], n: int) -> tuple[Any, Any]:
        """Per row, where its `data` object comes from (the image; none for a DELETE) and
        its `old` one (a DELETE's image, an UPDATE's old image at n + j; else none)."""
        rows = self._arange(n)
        deletes = pc.equal(ops, OP_DELETE)
        data_idx = pc.if_else(deletes, _NO_INDEX, rows)
        old_idx = pc.if_else(deletes, rows, _NO_INDEX)
        if before_rows:
            has_old = pc.is_in(rows, value_set=pa.array(before_rows, pa.int64()))
            old_rows = pa.array(range(n, n + len(before_rows)), pa.int64())
            old_idx = pc.replace_with_mask(old_idx, has_old, old_rows)
        return data_idx, old_idx

    def _arange(self, n: int) -> pa.Array:
        rows = self._aranges.get(n)
        if rows is None:
            if len(self._aranges) > 8:
                self._aranges.clear()
            rows = self._aranges[n] = pa.array(range(n), pa.int64())
        return rows

    @staticmethod
    def _split_rows(batch: ChangeBatch, key_indexes: tuple[int, ...]) -> set[int]:
        """UPDATE rows with an old image whose key columns changed (writer.split_key_update:
        the values compared as the row path compares them, with Python's `!=`)."""
        rows = batch.before_rows
        if not rows or not key_indexes:
            return set()
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
                # Integers and strings compare in Arrow as in Python; NULL equals only NULL.
                new = new.take(taken)
                differ = pc.fill_null(pc.not_equal(new, old), False)
                differ = pc.or_(differ, pc.xor(new.is_null(), old.is_null()))
                changed |= differ.to_numpy(zero_copy_only=False)
                continue
            new_values = (
                new.take(taken).to_pylist() if isinstance(new, pa.Array) else [new[r] for r in rows]
            )
            old_values = old.to_pylist() if isinstance(old, pa.Array) else old
            changed |= np.array([a != b for a, b in zip(new_values, old_values, strict=True)], bool)
        if not changed.any():
            return set()
        return set(np.asarray(rows, np.int64)[changed].tolist())

"""canal-json, a record batch at a time: the same bytes as `row.CanalJsonRowEncoder`,
built column by column with pyarrow compute instead of a dict and an orjson call per row.

Every canal-json value is a JSON string (or `null`), so per column, once per batch, the
values' text is made by Arrow where Arrow writes the row path's text: integers cast to
strings; doubles and floats cast too (Arrow's shortest digits are Go's, float32 included),
re-rendered one by one only where Arrow wrote an exponent or nan/inf; strings as they
are; binary bytes read as ISO-8859-1 by numpy over the data buffer. The text is then
escaped as easyjson does with one `replace_substring` pass per escapable byte actually
present in the column (found by a memcpy-speed scan). Per message, in C: one
`binary_join_element_wise` of the head (op, `es`), the per-table constant parts,
`sqlType`, `old`, `data` (columns without NULLs go in as bare text between literals) and
the `_tidb` tail; `take` places old images and split rows.

Python touches single values only where Arrow cannot: columns given as Python lists are
turned into Arrow arrays (ENUM/SET/BIT/JSON from `events`; values that are not plain
ints, strs or bytes go through the row path's renderer one by one), floats Arrow writes
with an exponent, text bytes with invalid UTF-8 (`gotext.easyjson_quote`), and key values
of UPDATEs that are neither integers nor strings (compared with Python's `!=`, as
`split_key_update`).

`sqlType` is constant unless an unsigned integer value is above its signed Java type
(`java_sql_type`): then the promoted code is chosen per image with `if_else`.
`only-output-updated-columns` (and `content-compatible`) compares each old value's text
with the new one and joins only the changed ones; `delete-only-output-handle-key-columns`
gives DELETE messages the handle-key layout (`if_else` per message).

The row path stays the reference: the size check and the large-message policy run there
(the writer re-encodes an oversized message through `encode_row`), and so do the messages
of a row with a value the renderer refuses, or of an UPDATE without its old image: they
are listed in `EncodedBatch.row_path`, where the row path raises its error (or renders
them, e.g. a bad non-key value of a handle-key-only DELETE). A table without columns goes
to the row path whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.batch import (
    key_changed,
    row_messages,
    row_path_batch,
    split_events,
    string_bytes,
    wrap_strings,
)
from ticdc_sink.codec.canal_json.table import CanalJsonTable
from ticdc_sink.codec.canal_json.values import RENDERERS, CanalJsonLayout
from ticdc_sink.codec.large_message import ROW_KEY
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.codec.row_key import row_keys_base64
from ticdc_sink.events import OP_DELETE, OP_UPDATE, ChangeBatch, Op
from ticdc_sink.gotext import EASYJSON_ESCAPES, easyjson_quote
from ticdc_sink.schema import Column

__all__ = ["CanalJsonBatchEncoder"]

_TEXT = pa.large_string()
_EMPTY = pa.scalar("", _TEXT)
_NULL = pa.scalar("null", _TEXT)
_RENDER_ERRORS = (TypeError, ValueError, OverflowError, AttributeError)

_INT_KINDS = frozenset({ValueKind.INT, ValueKind.UINT, ValueKind.ENUM, ValueKind.SET})
_STRING_KINDS = frozenset(
    {
        ValueKind.DECIMAL,
        ValueKind.DATE,
        ValueKind.DATETIME,
        ValueKind.TIMESTAMP,
        ValueKind.TIME,
        ValueKind.JSON,
        ValueKind.VECTOR,
        ValueKind.TEXT,
    }
)
_FLOAT_BITS = {ValueKind.FLOAT32: 32, ValueKind.FLOAT64: 64}

# The characters easyjson escapes that valid UTF-8 text can hold (an Arrow string has no
# lone surrogates), found by the first byte of their UTF-8 form: a column whose data
# buffer has none of these bytes needs no escaping.
_ESCAPED = [chr(c) for c in EASYJSON_ESCAPES if not 0xD800 <= c < 0xE000]
_SAFE_BYTES = bytes(b for b in range(256) if b not in {c.encode()[0] for c in _ESCAPED})
# One replace_substring pass per escapable character whose first byte is present;
# backslash first, so that the backslashes the later passes write are not doubled.
_PASSES = sorted(
    ((c.encode()[0], c, EASYJSON_ESCAPES[ord(c)]) for c in _ESCAPED),
    key=lambda p: p[1] != "\\",
)


def _escape(texts: pa.Array) -> pa.Array:
    """Strings escaped as easyjson's `Writer.String` writes them, without the quotes
    (valid UTF-8 only: an Arrow string holds no invalid UTF-8)."""
    found = string_bytes(texts).translate(None, _SAFE_BYTES)
    if not found:
        return texts
    present = set(found)
    for byte, pattern, replacement in _PASSES:
        if byte in present:
            texts = pc.replace_substring(texts, pattern, replacement)
    return texts


def _latin1_text(binary: pa.Array) -> pa.Array:
    """Each value's bytes read as ISO-8859-1 (byte b -> U+00bb, the row path's
    `_binary_value`), as UTF-8 strings: bytes below 0x80 stay, each other byte becomes two
    (0xC0 | b >> 6, 0x80 | b & 0x3F); numpy over the data buffer, offsets shifted by the
    count of high bytes before them."""
    binary = binary.cast(pa.large_binary())
    _, offsets_buffer, data_buffer = binary.buffers()
    first = binary.offset
    offsets = np.frombuffer(offsets_buffer, np.int64)[first : first + len(binary) + 1]
    start = int(offsets[0])
    if data_buffer is None:
        data = np.zeros(0, np.uint8)
    else:
        data = np.frombuffer(data_buffer, np.uint8)[start : int(offsets[-1])]
    high = data >= 0x80
    if not high.any():
        text = binary.cast(_TEXT)  # ASCII: the same bytes
    else:
        before = np.zeros(len(data) + 1, np.int64)
        np.cumsum(high, out=before[1:])  # high bytes before each position
        where = np.arange(len(data)) + before[:-1]
        out = np.empty(len(data) + int(before[-1]), np.uint8)
        out[where] = np.where(high, 0xC0 | (data >> 6), data)
        out[where[high] + 1] = 0x80 | (data[high] & 0x3F)
        shifted = offsets - start
        text = pa.Array.from_buffers(
            _TEXT,
            len(binary),
            [None, pa.py_buffer(shifted + before[shifted]), pa.py_buffer(out)],
        )
    if binary.null_count:
        text = pc.if_else(binary.is_valid(), text, pa.scalar(None, _TEXT))
    return text


def _scalar(value: Any) -> Any:
    return pa.scalar(value, _TEXT) if isinstance(value, str) else value


def _join(parts: list[Any]) -> Any:
    """Element-wise concatenation of string literals and arrays (a null part makes the
    row null); adjacent literals are merged first, as each part costs per row."""
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif not (isinstance(part, str) and not part):
            merged.append(part)
    if len(merged) == 1:
        return merged[0]
    return pc.binary_join_element_wise(*map(_scalar, merged), _EMPTY)


class _ColumnValues:
    """One column's JSON string values for a whole batch. `refused` lists the rows of the
    last `bodies` call whose value the row path's renderer refuses (null in their place)."""

    def __init__(self, column: Column) -> None:
        self.kind = value_kind(column)
        self.render = RENDERERS[self.kind]
        self.name = easyjson_quote(column.name)
        self.refused: list[int] = []

    def bodies(self, values: pa.Array | list[Any]) -> pa.Array:
        """Each value's JSON string without its quotes (null for NULL)."""
        self.refused = []
        kind = self.kind
        if isinstance(values, pa.Array):
            arrow = values.type
            if kind in _INT_KINDS and pa.types.is_integer(arrow):
                return pc.cast(values, _TEXT)
            if kind is ValueKind.BIT and pa.types.is_unsigned_integer(arrow):
                return pc.cast(values, _TEXT)
            if kind in _FLOAT_BITS and arrow == (
                pa.float32() if kind is ValueKind.FLOAT32 else pa.float64()
            ):
                return self._floats(values)
            if kind is ValueKind.BINARY and (
                pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow)
            ):
                return _escape(_latin1_text(values))
            if kind in _STRING_KINDS and (
                pa.types.is_string(arrow) or pa.types.is_large_string(arrow)
            ):
                return _escape(values.cast(_TEXT))
            values = values.to_pylist()
        elif kind in _INT_KINDS or kind is ValueKind.BIT:
            types = set(map(type, values))
            types.discard(type(None))
            if types <= {int}:
                try:
                    return pc.cast(pa.array(values, pa.int64()), _TEXT)
                except (OverflowError, pa.ArrowException):
                    pass  # beyond int64: BIT(64) and BIGINT UNSIGNED values, one by one
        elif kind is ValueKind.BINARY:
            types = set(map(type, values))
            types.discard(type(None))
            if types <= {bytes}:
                return _escape(_latin1_text(pa.array(values, pa.large_binary())))
        elif kind in _STRING_KINDS:
            types = set(map(type, values))
            types.discard(type(None))
            if types <= {str}:
                try:
                    return _escape(pa.array(values, _TEXT))
                except UnicodeEncodeError:
                    pass  # lone surrogates: invalid UTF-8 in text bytes
        return self._one_by_one(values)

    def _floats(self, values: pa.Array) -> pa.Array:
        # Arrow writes the shortest round-trip digits like Go (float32 as float32), but
        # with an exponent for large and small magnitudes where Go's 'f' format has none,
        # and NaN/inf as "nan"/"inf" where the row path writes "0".
        text = pc.cast(values, _TEXT)
        written = string_bytes(text)
        if b"e" not in written and b"n" not in written:  # no exponent, no nan / inf
            return text
        odd = pc.or_(pc.match_substring(text, "e"), pc.invert(pc.is_finite(values)))
        if odd.null_count:
            odd = pc.fill_null(odd, False)
        if pc.any(odd).as_py():
            render = self.render
            fixed = [render(v) for v in values.filter(odd).to_pylist()]
            text = pc.replace_with_mask(text, odd, pa.array(fixed, _TEXT))
        return text

    def _one_by_one(self, values: list[Any]) -> pa.Array:
        render = self.render
        try:
            texts = [None if v is None else render(v) for v in values]
        except _RENDER_ERRORS:
            texts = []
            for row, value in enumerate(values):
                try:
                    texts.append(None if value is None else render(value))
                except _RENDER_ERRORS:
                    texts.append(None)
                    self.refused.append(row)
        try:
            return _escape(pa.array(texts, _TEXT))
        except UnicodeEncodeError:
            # Lone surrogates stand for invalid UTF-8 bytes: `easyjson_quote` writes them.
            return pa.array([None if t is None else easyjson_quote(t)[1:-1] for t in texts], _TEXT)


class _Rendered:
    """The rendered columns of one set of images (the batch's rows, or its old images)."""

    def __init__(self, bodies: list[pa.Array]) -> None:
        self.bodies = bodies
        self._values: dict[int, pa.Array] = {}

    def value(self, i: int) -> pa.Array:
        """Column i's JSON values, quotes included, `null` for NULL (never a null)."""
        out = self._values.get(i)
        if out is None:
            body = self.bodies[i]
            out = wrap_strings(body, '"', '"')
            if out.null_count:
                out = pc.coalesce(out, _NULL)
            self._values[i] = out
        return out

    def object_parts(self, names: list[str], positions: list[int]) -> list[Any]:
        """`[{"a":"…","b":null}]` as parts for `_join`: a column without NULLs needs only
        its body between literals."""
        parts: list[Any] = ["[{"]
        for k, i in enumerate(positions):
            separator = "," if k else ""
            body = self.bodies[i]
            if body.null_count:
                parts += [separator + names[i] + ":", self.value(i)]
            else:
                parts += [separator + names[i] + ':"', body, '"']
        parts.append("}]")
        return parts

    def objects(self, names: list[str], positions: list[int]) -> pa.Array:
        joined = _join(self.object_parts(names, positions))
        if isinstance(joined, str):  # no columns
            joined = pa.array([joined] * len(self.bodies[0]) if self.bodies else [], _TEXT)
        return joined


class CanalJsonBatchEncoder:
    """canal-json DML messages of one table, a `ChangeBatch` at a time, built from the
    table's constant parts."""

    def __init__(self, table: CanalJsonTable) -> None:
        self.width = len(table.table.columns)
        self.columns = [_ColumnValues(c) for c in table.table.columns]
        self.names = [c.name for c in self.columns]
        self.layouts: dict[bool, CanalJsonLayout] = table.layouts
        self.positions = {
            only_key: [entry[1] for entry in layout.entries]
            for only_key, layout in self.layouts.items()
        }
        self.mysql_types = {k: v.decode() for k, v in table.mysql_types.items()}
        heads = table.heads
        self.heads = pa.array(
            [heads[Op.INSERT].decode(), heads[Op.UPDATE].decode(), heads[Op.DELETE].decode()],
            _TEXT,
        )
        self.insert_head = heads[Op.INSERT].decode()
        self.middle = table.middle.decode()
        self.only_updated = table.only_updated
        self.delete_key_only = table.delete_key_only
        self.extension = table.extension
        self.row_key_handle = table.row_key_handle
        self.table_id = table.table.table_id

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every row of `batch`, in the row path's order; those of a row
        with a value its column refuses, or of an UPDATE without its old image, are left
        to the row path (`row_path`), as is a batch of a table without columns."""
        ops = batch.op_codes
        before_rows = batch.before_rows
        if (
            not self.width
            or len(batch.columns) != self.width
            or not batch.rows
            or (
                ops is None and before_rows
            )  # old images without UPDATEs: not read_change_batches's
        ):
            return row_path_batch(batch, key_indexes, sized=True)
        n = batch.rows
        refused: set[int] = set()
        if ops is not None:
            updates = pc.equal(ops, OP_UPDATE)
            if (pc.sum(updates).as_py() or 0) != len(before_rows):
                # an UPDATE without its old image: the row path raises its error
                missing = updates.to_numpy(zero_copy_only=False).copy()
                missing[np.asarray(before_rows, np.int64)] = False
                refused.update(np.flatnonzero(missing).tolist())
        images = _Rendered(self._bodies(batch.columns, refused))
        befores = None
        if before_rows:
            old_refused: set[int] = set()
            befores = _Rendered(self._bodies(batch.before_columns, old_refused))
            refused.update(before_rows[j] for j in old_refused)

        # -- events: one per row, two (DELETE old, INSERT new) for a key-changing UPDATE
        b = len(before_rows)
        split = key_changed(batch, key_indexes)
        row_ends = None
        if ops is None:
            event_ops = None
            event_rows = None
            data_source = None  # identity: row i's image
            old_index = None
        else:
            op_codes = ops.to_numpy(zero_copy_only=False).astype(np.int64)
            before_of = np.full(n, -1, np.int64)
            if b:
                before_of[np.asarray(before_rows, np.int64)] = np.arange(b)
            if split.any():
                events = split_events(op_codes, split, before_of)
                row_ends = events.row_ends
                event_rows, event_op = events.rows, events.ops
                data_source, old_index = events.images, events.old
            else:
                event_rows = None
                event_op = op_codes
                data_source = None
                old_index = np.where(op_codes == OP_UPDATE, before_of, -1)
            event_ops = event_op

        m = n if event_rows is None else len(event_rows)
        deletes = None
        if event_ops is not None and self.delete_key_only and (event_ops == OP_DELETE).any():
            deletes = pa.array(event_ops == OP_DELETE)

        # -- head: op and es
        parts: list[Any] = []
        if event_ops is None:
            parts.append(self.insert_head)
        else:
            parts.append(self.heads.take(pa.array(event_ops.astype(np.int8))))
        commit_ts = batch.commit_ts
        if commit_ts is None:
            ts_text: Any = str(batch.default_commit_ts)
            parts.append(str(batch.default_commit_ts >> 18))
        else:
            if event_rows is not None:
                commit_ts = commit_ts.take(pa.array(event_rows))
            ts_text = pc.cast(commit_ts, _TEXT)
            parts.append(pc.cast(pc.shift_right(commit_ts, 18), _TEXT))
        parts.append(self.middle)

        # -- sqlType, mysqlType
        sources = pa.array(data_source) if data_source is not None else None
        sql_types = {
            only_key: self._sql_types(self.layouts[only_key], batch, sources)
            for only_key in ((False, True) if deletes is not None else (False,))
        }
        if deletes is None:
            parts += [sql_types[False], self.mysql_types[False]]
        else:
            parts += [
                pc.if_else(deletes, *map(_scalar, (sql_types[True], sql_types[False]))),
                pc.if_else(
                    deletes, *map(_scalar, (self.mysql_types[True], self.mysql_types[False]))
                ),
            ]

        # -- old
        if old_index is None or befores is None or not (old_index >= 0).any():
            parts.append("null")
        else:
            assert ops is not None
            olds = self._old_objects(images, befores, before_rows)
            index = pa.array(old_index, mask=old_index < 0)
            parts.append(pc.coalesce(olds.take(index), _NULL))

        # -- data
        parts.append(',"data":')
        full = self.positions[False]
        if data_source is None and deletes is None:
            parts += images.object_parts(self.names, full)
        else:
            data = self._data(images, befores, full, sources)
            if deletes is not None:
                keys = self._data(images, befores, self.positions[True], sources)
                data = pc.if_else(deletes, keys, data)
            parts.append(data)

        # -- tail
        if self.extension and self.row_key_handle is not None:
            keys = self._row_keys(batch, sources, refused)
            parts += [',"_tidb":{"commitTs":', ts_text, ',"rowkey":"', keys, '"}}']
        elif self.extension:
            parts += [',"_tidb":{"commitTs":', ts_text, "}}"]
        else:
            parts.append("}")
        values = _join(parts)
        if isinstance(values, str):
            values = pa.array([values] * m, _TEXT)
        sizes = pc.add(pc.binary_length(values), RECORD_OVERHEAD).to_pylist()
        return EncodedBatch(
            values=values.cast(pa.large_binary()).to_pylist(),
            sizes=sizes,
            key=ROW_KEY,
            row_ends=row_ends,
            row_path=row_messages(refused, row_ends),
        )

    def _row_keys(self, batch: ChangeBatch, sources: pa.Array | None, refused: set[int]) -> Any:
        """Each event's `rowkey`, of the image its `data` holds (`row_key`); a batch
        whose handles are not all integers is left to the row path, which names the bad
        value."""
        assert self.row_key_handle is not None
        handles = batch.columns[self.row_key_handle]
        try:
            keys = row_keys_base64(self.table_id, handles)
            if sources is None:
                return keys
            if batch.before_rows:
                old = batch.before_columns[self.row_key_handle]
                keys = pa.concat_arrays([keys, row_keys_base64(self.table_id, old)])
            return keys.take(sources)
        except (TypeError, OverflowError, ValueError):
            refused.update(range(batch.rows))
            return _EMPTY

    def _bodies(self, columns: list[pa.Array | list[Any]], refused: set[int]) -> list[pa.Array]:
        """Each column's bodies (`_ColumnValues.bodies`); the rows with a refused value are
        added to `refused`."""
        bodies = []
        for column, values in zip(self.columns, columns, strict=True):
            bodies.append(column.bodies(values))
            refused.update(column.refused)
        return bodies

    def _data(
        self,
        images: _Rendered,
        befores: _Rendered | None,
        positions: list[int],
        sources: pa.Array | None,
    ) -> pa.Array:
        """Each event's `data` image: row i's image, or an old image (index n + j)."""
        objects = images.objects(self.names, positions)
        if sources is None:
            return objects
        if befores is not None:
            objects = pa.concat_arrays([objects, befores.objects(self.names, positions)])
        return objects.take(sources)

    def _old_objects(
        self, images: _Rendered, befores: _Rendered, before_rows: list[int]
    ) -> pa.Array:
        """The `old` image of each UPDATE with one; with only-output-updated-columns, only
        the columns whose text changed (tiflow shouldIgnoreColumn)."""
        full = self.positions[False]
        if not self.only_updated:
            return befores.objects(self.names, full)
        rows = pa.array(before_rows, pa.int64())
        fragments = []
        for i in full:
            old = befores.value(i)
            changed = pc.not_equal(old, images.value(i).take(rows))
            fragment = wrap_strings(old, "," + self.names[i] + ":", "")
            fragments.append(pc.if_else(changed, fragment, _EMPTY))
        # `,"a":…,"b":…`: the leading comma becomes the `[{`. (Arrow's null_handling="skip"
        # drops the rows whose parts are all null, so unchanged columns are "", not null.)
        body = fragments[0] if len(fragments) == 1 else _join(fragments)
        body = pc.binary_replace_slice(body, start=0, stop=1, replacement="[{")
        return wrap_strings(body, "", "}]")

    def _sql_types(
        self, layout: CanalJsonLayout, batch: ChangeBatch, sources: pa.Array | None
    ) -> Any:
        """`sqlType` per event: the layout's constant text, or per image when an unsigned
        value is promoted to a wider Java type."""
        if not layout.promotions:
            return layout.sql_type.decode()
        masks: dict[int, pa.Array] = {}
        for i, _, threshold, _, _ in layout.promotions:
            parts = [batch.columns[i]]
            if sources is not None and batch.before_rows:
                parts.append(batch.before_columns[i])
            over = [self._over(values, threshold) for values in parts]
            mask = pa.concat_arrays(over) if len(over) > 1 else over[0]
            if pc.any(mask).as_py():
                masks[i] = mask
        if not masks:
            return layout.sql_type.decode()
        promoted = {key: (i, code) for i, key, _, code, _ in layout.promotions if i in masks}
        text: list[Any] = ["{"]
        for k, (key, code) in enumerate(layout.codes):
            text.append(("," if k else "") + key)
            if key in promoted:
                i, wide = promoted[key]
                text.append(pc.if_else(masks[i], _scalar(str(wide)), _scalar(str(code))))
            else:
                text.append(str(code))
        text.append("}")
        joined = _join(text)
        return joined if sources is None else joined.take(sources)

    @staticmethod
    def _over(values: pa.Array | list[Any], threshold: int) -> pa.Array:
        """Per value, whether it is above `threshold` (NULL: no)."""
        if isinstance(values, pa.Array) and pa.types.is_integer(values.type):
            try:
                bound = pa.scalar(threshold, values.type)
            except (OverflowError, pa.ArrowInvalid):  # no value of this type is above it
                return pa.array(np.zeros(len(values), bool))
            return pc.fill_null(pc.greater(values, bound), False)
        if isinstance(values, pa.Array):
            values = values.to_pylist()
        return pa.array([_above(v, threshold) for v in values], pa.bool_())


def _above(value: Any, threshold: int) -> bool:
    """Whether a value is above `threshold`: NULL, and a value the renderer refuses (a
    message left to the row path), are not."""
    try:
        return value is not None and value > threshold
    except TypeError:
        return False

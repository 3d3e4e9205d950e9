"""TiCDC Avro (`protocol=avro`), a record batch at a time: the same Confluent-framed key and
value bytes as `row.AvroRowEncoder.encode_row`, built column by column with numpy and pyarrow
instead of one generated Python function call per row.

Avro binary is a plain concatenation of the fields' encodings, so a record is the
concatenation of per-column fragments. Per column, once per batch:

* fixed-shape parts -- union branch bytes, zig-zag varints (ints, string and bytes
  lengths), doubles and floats, decimals as minimal two's complement, BIT as minimal
  big-endian bytes, the Confluent header and the extension fields -- are written by numpy
  into a byte matrix (one row per record, at most 10 bytes a varint) with a mask of the
  bytes each row uses; neighbouring matrices are concatenated and flattened in one masked
  copy into an Arrow binary array (offsets from the cumulative lengths);
* variable parts (string and binary data) stay the Arrow arrays they are;
* ENUM and SET are rendered once per distinct value through the row path's writer and
  placed with `take`.

One `pc.binary_join_element_wise` per batch then concatenates the parts of every row in C.
Python touches single values only for columns that arrive as lists of types Arrow cannot
hold as given (and for the distinct ENUM/SET values); there the row path's writers run per
value. A column with a value the fast rendering cannot vouch for is written by the row
path's writer value by value; from the first row with a value that writer refuses on, the
messages are left to the row path (`EncodedBatch.row_path`), where `encode_row` raises its
error or renders them (a DELETE writes only its key). Leaving the rest of the batch, not
only that row, keeps the registry requests those of the row path, message by message.
With `avro-include-before-value` every message is left to the row path (not built
column-wise yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.avro import values as avro_values
from ticdc_sink.codec.avro.framing import SchemaHeaders
from ticdc_sink.codec.avro.schema import modes, null_first, value_columns
from ticdc_sink.codec.batch import key_changed_rows, row_path_batch
from ticdc_sink.codec.checksum import TableChecksum
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.events import OP_DELETE, OP_UPDATE, ChangeBatch
from ticdc_sink.schema import Column, TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["AvroBatchEncoder"]

_BIN = pa.large_binary()
_EMPTY = pa.scalar(b"", _BIN)
_NONE_TYPE = type(None)
_INTS = {int, _NONE_TYPE}
_STRS = {str, _NONE_TYPE}
_BYTES = {bytes, _NONE_TYPE}
_U64 = np.uint64


class _Fallback(Exception):
    """A value the column-wise rendering cannot vouch for: the column is written value by
    value by the row path's writer."""


# --- byte matrices ---------------------------------------------------------------------


@attrs.define
class _Mat:
    """Fixed-shape bytes of every row: row r is `mat[r][mask[r]]`, `lens[r]` bytes."""

    mat: np.ndarray  # (n, w) uint8
    mask: np.ndarray  # (n, w) bool
    lens: np.ndarray  # (n,) int64


def _const(data: bytes, n: int) -> _Mat:
    width = len(data)
    mat = np.broadcast_to(np.frombuffer(data, np.uint8), (n, width))
    return _Mat(mat, np.ones((n, width), bool), np.full(n, width, np.int64))


def _varints(values: np.ndarray) -> _Mat:
    """Avro longs (zig-zag, base-128 little-endian groups) of int64 `values`."""
    n = len(values)
    z = ((values << 1) ^ (values >> 63)).view(_U64)
    top = int(z.max()) if n else 0
    width = max(1, (top.bit_length() + 6) // 7)
    if width == 1:
        return _Mat(z.astype(np.uint8).reshape(n, 1), np.ones((n, 1), bool), np.ones(n, np.int64))
    used = np.ones(n, np.int64)
    for k in range(1, width):
        used += z >= _U64(1 << (7 * k))
    mat = np.empty((n, width), np.uint8)
    for k in range(width):
        group = ((z >> _U64(7 * k)) & _U64(0x7F)).astype(np.uint8)
        if k < width - 1:
            group |= (used > k + 1).astype(np.uint8) << 7
        mat[:, k] = group
    return _Mat(mat, _first(width, used), used)


def _minimal_be(values: np.ndarray, signed: bool) -> _Mat:
    """A length byte (Avro bytes length, < 64) and the minimal big-endian bytes of int64
    (`signed`: two's complement, decimal_bytes) or uint64 `values` (BIT, 0 -> 00)."""
    n = len(values)
    if signed:
        magnitude = np.where(values >= 0, values, ~values).view(_U64)
        bounds = [_U64(1 << (8 * k - 1)) for k in range(1, 8)]
    else:
        magnitude = values.view(_U64)
        bounds = [_U64(1 << (8 * k)) for k in range(1, 8)]
    size = np.ones(n, np.int64)
    for bound in bounds:
        size += magnitude >= bound
    mat = np.empty((n, 9), np.uint8)
    mat[:, 0] = (size << 1).astype(np.uint8)
    mat[:, 1:] = values.astype(">i8" if signed else ">u8").view(np.uint8).reshape(n, 8)
    mask = np.empty((9, n), bool)  # built transposed: numpy broadcasts fast along rows
    mask[0] = True
    mask[1:] = np.arange(8)[:, None] >= 8 - size
    return _Mat(mat, mask.T, size + 1)


def _first(width: int, used: np.ndarray) -> np.ndarray:
    """The (n, width) mask of each row's first `used[r]` bytes (built transposed: numpy
    broadcasts several times faster along the long axis)."""
    return (np.arange(width)[:, None] < used).T


def _hstack(mats: list[_Mat]) -> _Mat:
    if len(mats) == 1:
        return mats[0]
    lens = mats[0].lens
    for m in mats[1:]:
        lens = lens + m.lens
    return _Mat(
        np.hstack([m.mat for m in mats]),
        np.hstack([m.mask for m in mats]),
        lens,
    )


def _offsets(lens: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    return offsets


def _flatten(m: _Mat) -> pa.Array:
    data = np.ascontiguousarray(m.mat)[np.ascontiguousarray(m.mask)]
    n = len(m.lens)
    return pa.Array.from_buffers(
        _BIN, n, [None, pa.py_buffer(_offsets(m.lens)), pa.py_buffer(data)]
    )


# A part of a record: a byte matrix, or an Arrow binary array (null: no bytes).
_Part: TypeAlias = _Mat | pa.Array


def _join(parts: list[_Part]) -> pa.Array:
    """Every row's parts concatenated, as one Arrow binary array without nulls."""
    arrays: list[pa.Array] = []
    pending: list[_Mat] = []
    for part in parts:
        if isinstance(part, _Mat):
            pending.append(part)
            continue
        if pending:
            arrays.append(_flatten(_hstack(pending)))
            pending = []
        arrays.append(part)
    if pending:
        arrays.append(_flatten(_hstack(pending)))
    if len(arrays) == 1 and arrays[0].null_count == 0:
        return arrays[0]
    return pc.binary_join_element_wise(
        *arrays, _EMPTY, null_handling="replace", null_replacement=b""
    )


# --- values as numpy / Arrow ---------------------------------------------------------------


def _validity(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _numbers(arr: pa.Array, dtype: Any) -> np.ndarray:
    """The values of a primitive Arrow array as numpy `dtype` (null slots: 0)."""
    if arr.null_count:
        arr = arr.fill_null(0)
    return arr.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _int_array(values: pa.Array | list[Any]) -> pa.Array | None:
    """The values as an Arrow integer array, or None when they are not all plain ints."""
    if isinstance(values, pa.Array):
        return values if pa.types.is_integer(values.type) else None
    if not set(map(type, values)) <= _INTS:
        return None
    for kind in (pa.int64(), pa.uint64()):
        try:
            return pa.array(values, kind)
        except (pa.ArrowInvalid, OverflowError):
            continue
    return None


def _uint64_array(values: pa.Array | list[Any]) -> pa.Array | None:
    """The values as an Arrow integer array (None: not all plain ints).

    Raises:
        _Fallback: a value outside 0..2^64-1.
    """
    arr = _int_array(values)
    if arr is None:
        return None
    low, high = _int_range(arr)
    if not (0 <= low and high < 1 << 64):
        raise _Fallback
    return arr


def _int_range(arr: pa.Array) -> tuple[int, int]:
    bounds = pc.min_max(arr)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    return (0, 0) if low is None else (low, high)


def _text_array(values: pa.Array | list[Any], allow_bytes: bool) -> pa.Array | None:
    """The values as Arrow binary (their UTF-8 bytes), or None when a value needs the
    row path's writer."""
    if isinstance(values, pa.Array):
        kind = values.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return values.cast(_BIN)
        if allow_bytes and (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            return values.cast(_BIN)
        return None
    if not set(map(type, values)) <= _STRS:
        return None
    try:
        return pa.array(values, pa.large_string()).cast(_BIN)
    except (pa.ArrowInvalid, UnicodeError):
        return None  # lone surrogates: the writer raises the row path's error


def _binary_array(values: pa.Array | list[Any]) -> pa.Array | None:
    if isinstance(values, pa.Array):
        kind = values.type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            return values.cast(_BIN)
        return None
    if not set(map(type, values)) <= _BYTES:
        return None
    return pa.array(values, _BIN)


# --- columns ---------------------------------------------------------------------------------


class _ColumnParts:
    """One column's Avro encoding (union branch included) for a whole batch."""

    def __init__(self, column: Column, decimal_string: bool, unsigned_string: bool) -> None:
        self.column = column
        self.kind = value_kind(column)
        self.write = avro_values.value_writer(column, decimal_string, unsigned_string)
        self.nullable = column.nullable
        if self.nullable:
            first = null_first(column, decimal_string, unsigned_string)
            self.branches = (0, 2) if first else (2, 0)  # (null, value)
        self.scale = column.type.scale
        self.decimal_bytes = self.kind is ValueKind.DECIMAL and not decimal_string
        self._distinct: dict[Any, bytes] = {}

    def parts(self, values: pa.Array | list[Any], n: int) -> tuple[list[_Part], list[int]]:
        """The column's parts for `n` rows, and the rows whose value the row path's
        writer refuses (placeholder bytes in their place: the row path renders them)."""
        if not self.nullable:
            has_null = values.null_count > 0 if isinstance(values, pa.Array) else None in values
            if has_null:
                return self._per_value(values)
        try:
            out = self._fast(values, n)
        except _Fallback:
            out = None
        if out is None:
            return self._per_value(values)
        valid, tail = out
        if not self.nullable:
            return tail, []
        null_branch, value_branch = self.branches
        if valid is None:
            return [_const(bytes((value_branch,)), n), *tail], []
        branch = np.where(valid, np.uint8(value_branch), np.uint8(null_branch)).reshape(n, 1)
        head = _Mat(branch, np.ones((n, 1), bool), np.ones(n, np.int64))
        masked: list[_Part] = [head]
        for part in tail:
            if isinstance(part, _Mat):
                lens = np.where(valid, part.lens, 0)
                part = _Mat(part.mat, (part.mask.T & valid).T, lens)
            masked.append(part)  # an Arrow part is null (no bytes) where the value is
        return masked, []

    def _fast(
        self, values: pa.Array | list[Any], n: int
    ) -> tuple[np.ndarray | None, list[_Part]] | None:
        """(validity, parts without the branch byte), or None: render per value."""
        write = self.write
        if write in (
            avro_values.write_int32,
            avro_values.write_int64,
            avro_values.write_uint64_wrapped,
        ):
            arr = _int_array(values)
            if arr is None:
                return None
            low, high = _int_range(arr)
            if write is avro_values.write_int32:
                ok = avro_values.INT32_MIN <= low and high <= avro_values.INT32_MAX
            elif write is avro_values.write_int64:
                ok = -(1 << 63) <= low and high < 1 << 63
            else:
                ok = 0 <= low and high < 1 << 64
            if not ok:
                raise _Fallback
            if pa.types.is_uint64(arr.type):
                numbers = _numbers(arr, np.uint64).view(np.int64)  # int64(uint64) wraps
            else:
                numbers = _numbers(arr, np.int64)
            return _validity(arr), [_varints(numbers)]
        if write is avro_values.write_double or write is avro_values.write_float:
            if not isinstance(values, pa.Array):
                return None
            wanted = pa.float64() if write is avro_values.write_double else pa.float32()
            if values.type != wanted:
                return None
            dtype = "<f8" if write is avro_values.write_double else "<f4"
            numbers = _numbers(values, dtype)
            numbers = np.where(np.isfinite(numbers), numbers, 0).astype(dtype)
            width = numbers.dtype.itemsize
            mat = numbers.view(np.uint8).reshape(n, width)
            return _validity(values), [
                _Mat(mat, np.ones((n, width), bool), np.full(n, width, np.int64))
            ]
        if self.decimal_bytes:
            return self._decimals(values, n)
        if write is avro_values.write_uint64_string:
            arr = _uint64_array(values)
            if arr is None:
                return None
            return self._data(pc.cast(arr, pa.large_string()).cast(_BIN))
        if write is avro_values.write_decimal_string:
            text = _text_array(values, allow_bytes=False)
            if text is None:
                return None
            number = pc.match_substring_regex(text, r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
            if not pc.all(pc.fill_null(number, True)).as_py():
                raise _Fallback
            return self._data(text)
        if write is avro_values.write_str or write is avro_values.write_plain_str:
            text = _text_array(values, allow_bytes=write is avro_values.write_str)
            return None if text is None else self._data(text)
        if write is avro_values.write_bytes:
            data = _binary_array(values)
            return None if data is None else self._data(data)
        if self.kind is ValueKind.BIT:
            arr = _uint64_array(values)
            if arr is None:
                return None
            return _validity(arr), [_minimal_be(_numbers(arr, np.uint64), signed=False)]
        if self.kind in (ValueKind.ENUM, ValueKind.SET):
            return self._by_distinct(values)
        return None

    def _data(self, data: pa.Array) -> tuple[np.ndarray | None, list[_Part]]:
        """Avro string/bytes: avro_values.varint length, then the bytes."""
        lens = _numbers(pc.binary_length(data), np.int64)
        return _validity(data), [_varints(lens), data]

    def _decimals(
        self, values: pa.Array | list[Any], n: int
    ) -> tuple[np.ndarray | None, list[_Part]] | None:
        """Decimal logical type: floor(value x 10^scale) as minimal two's complement, from
        the mounter's text when its unscaled value fits int64."""
        text = _text_array(values, allow_bytes=False)
        if text is None:
            return None
        scale = self.scale
        if scale:
            dots = pc.find_substring(text, ".")
            placed = pc.equal(dots, pc.subtract(pc.binary_length(text), scale + 1))
            if not pc.all(pc.fill_null(placed, True)).as_py():
                return None
            digits = pc.replace_substring(text, ".", "", max_replacements=1)
        else:
            digits = text
        long = pc.greater(pc.binary_length(digits), 18)  # may not fit int64
        wide = pc.any(long).as_py()
        if wide:
            digits = pc.if_else(long, pa.scalar(b"0", _BIN), digits)
        try:
            unscaled = pc.cast(digits.cast(pa.large_string()), pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # not the mounter's form: the writer floors or rejects it
        valid = _validity(text)
        numbers = _minimal_be(_numbers(unscaled, np.int64), signed=True)
        if not wide:
            return valid, [numbers]
        # Values beyond int64 (DECIMAL precision above 18): the writer, value by value.
        picks = pc.indices_nonzero(pc.fill_null(long, False))
        if isinstance(values, pa.Array):
            wide_values = values.take(picks).to_pylist()
        else:
            wide_values = [values[i] for i in picks.to_pylist()]
        try:
            rendered = pa.array([self.write(v) for v in wide_values], _BIN)
        except (TypeError, ValueError, OverflowError):
            raise _Fallback from None
        mask = pc.fill_null(long, False)
        out = pc.replace_with_mask(_flatten(numbers), mask, rendered)
        if valid is not None:
            out = pc.if_else(pa.array(valid), out, pa.scalar(None, _BIN))
        return valid, [out]

    def _by_distinct(
        self, values: pa.Array | list[Any]
    ) -> tuple[np.ndarray | None, list[_Part]] | None:
        """ENUM index / SET bitmask: each distinct value rendered once by the writer."""
        arr = _int_array(values)
        if arr is None:
            return None
        encoded = arr.dictionary_encode()
        cache = self._distinct
        rendered = []
        for value in encoded.dictionary.to_pylist():
            data = cache.get(value)
            if data is None:
                try:
                    data = self.write(value)
                except (TypeError, ValueError, OverflowError):
                    raise _Fallback from None
                if len(cache) < 4096:
                    cache[value] = data
            rendered.append(data)
        taken = pa.array(rendered, _BIN).take(encoded.indices)
        return _validity(arr), [taken]

    def _per_value(self, values: pa.Array | list[Any]) -> tuple[list[_Part], list[int]]:
        """The row path's writer per value, union branch included, and the rows whose
        value it refuses (NULL in a NOT NULL column included)."""
        if isinstance(values, pa.Array):
            values = values.to_pylist()
        write = self.write
        out: list[bytes] = []
        refused: list[int] = []
        if self.nullable:
            null_branch, value_branch = (bytes((b,)) for b in self.branches)
        else:
            null_branch, value_branch = b"", b""
        for row, value in enumerate(values):
            if value is None:
                out.append(null_branch)
                if not self.nullable:
                    refused.append(row)
                continue
            try:
                out.append(value_branch + write(value))
            except (TypeError, ValueError, OverflowError):
                out.append(null_branch)
                refused.append(row)
        return [pa.array(out, _BIN)], refused


# --- the encoder -----------------------------------------------------------------------------


class AvroBatchEncoder:
    """`AvroRowEncoder.encode_row` for every event of a `ChangeBatch`, column-wise."""

    def __init__(self, config: CodecConfig, table: TableSchema, headers: SchemaHeaders) -> None:
        """Raises:
        SchemaError: a column type the protocol cannot carry (or, with the row checksum,
            one the checksum does not cover).
        """
        decimal_string, unsigned_string = modes(config)
        self._columns = [_ColumnParts(c, decimal_string, unsigned_string) for c in table.columns]
        self._key_positions = list(table.handle_key_indexes)
        self._value_positions = value_columns(config, table)
        self._extension = config.enable_tidb_extension
        self._checksum = (
            TableChecksum(table, time_zone=config.time_zone)
            if config.row_checksum and self._extension
            else None
        )
        self._headers = headers
        # avro-include-before-value (pingcap/ticdc master) is written by the row path only.
        self._row_path_only = config.avro_include_before_value

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every event of `batch`, as `encode_row` gives them. From the
        first row with a value the writers refuse on, the messages are left to the row
        path (`row_path`; a table without columns goes to it whole): the registry is then
        asked for ids exactly when the row path would ask, message by message.

        Raises:
            ConfigError, RegistryError: fetching a schema id (as `encode_row` would).
        """
        if not self._columns or not batch.rows or self._row_path_only:
            return row_path_batch(batch, key_indexes, sized=True)
        n = batch.rows
        ops = None if batch.op_codes is None else _numbers(batch.op_codes, np.int8)
        deletes = None if ops is None else ops == OP_DELETE
        split_rows = key_changed_rows(batch, key_indexes) if ops is not None else []

        # keys: the new (or deleted) image of every row; the old image of split rows
        key_new = key_old = None
        refused: set[int] = set()
        if self._key_positions:
            key_new, key_refused = self._record(
                [(self._columns[i], batch.columns[i]) for i in self._key_positions], n
            )
            refused.update(key_refused)
            if split_rows:
                where = {row: j for j, row in enumerate(batch.before_rows)}
                picks = [where[row] for row in split_rows]
                olds = [
                    (self._columns[i], _take(batch.before_columns[i], picks))
                    for i in self._key_positions
                ]
                key_old, old_refused = self._record(olds, len(split_rows))
                refused.update(split_rows[j] for j in old_refused)

        # values: every row's new image (a DELETE's is dropped)
        columns = [(self._columns[i], batch.columns[i]) for i in self._value_positions]
        parts, value_refused = self._record_parts(columns, n)
        refused.update(value_refused)
        if self._extension:
            parts.extend(self._tail(batch, ops, split_rows, n))
            if self._checksum is not None:
                parts.append(self._checksum_fields(self._checksum, batch, split_rows, refused))
        # Rows before the first refused one are rendered here: the headers they need.
        rendered = min(refused, default=n)
        if key_new is not None:
            key_header = self._headers.key() if rendered else b""
            key_new = _join([_const(key_header, n), key_new])
            if key_old is not None:
                key_old = _join([_const(key_header, len(split_rows)), key_old])
        if deletes is not None and deletes.all():
            values = pa.nulls(n, _BIN)
            value_lens = np.zeros(n, np.int64)
        else:
            wanted = rendered and (deletes is None or not deletes[:rendered].all())
            header = self._headers.value() if wanted else b""
            values = _join([_const(header, n), *parts])
            value_lens = _lengths(values)
        if deletes is not None and deletes.any() and not deletes.all():
            value_lens = np.where(deletes, 0, value_lens)
            values = pa.Array.from_buffers(
                _BIN,
                n,
                [pa.array(~deletes).buffers()[1], *values.buffers()[1:]],
                offset=values.offset,
            )
        key_lens = np.zeros(n, np.int64) if key_new is None else _lengths(key_new)

        row_ends = None
        keys = key_new
        if split_rows:
            split = np.zeros(n, np.int64)
            split[split_rows] = 1
            ends = np.cumsum(split + 1)
            row_ends = ends.tolist()
            events = int(ends[-1])
            rows_of = np.repeat(np.arange(n), split + 1)
            first = np.zeros(events, bool)
            first[ends[split_rows] - 2] = True  # the DELETE of a split row
            values = values.take(pa.array(rows_of, mask=first))
            value_lens = np.where(first, 0, value_lens[rows_of])
            if key_new is not None:
                assert key_old is not None
                source = rows_of.copy()
                source[first] = n + np.arange(len(split_rows))
                keys = pa.concat_arrays([key_new, key_old]).take(pa.array(source))
                key_lens = np.concatenate([key_lens, _lengths(key_old)])[source]
        sizes = (key_lens + value_lens + RECORD_OVERHEAD).tolist()
        value_list = values.to_pylist()
        refused_from = (row_ends[rendered - 1] if rendered else 0) if row_ends else rendered
        row_path = list(range(refused_from, len(value_list))) if refused else []
        if keys is None:
            return EncodedBatch(
                values=value_list, sizes=sizes, key=None, row_ends=row_ends, row_path=row_path
            )
        if len(keys) and pc.all(pc.equal(keys, keys[0])).as_py():
            key = keys[0].as_py()
            return EncodedBatch(
                values=value_list, sizes=sizes, key=key, row_ends=row_ends, row_path=row_path
            )
        return EncodedBatch(
            values=value_list,
            sizes=sizes,
            keys=keys.to_pylist(),
            row_ends=row_ends,
            row_path=row_path,
        )

    def _record_parts(
        self, columns: list[tuple[_ColumnParts, pa.Array | list[Any]]], n: int
    ) -> tuple[list[_Part], set[int]]:
        """The parts of `n` records of these columns, and the rows with a refused value."""
        parts: list[_Part] = []
        refused: set[int] = set()
        for column, values in columns:
            column_parts, column_refused = column.parts(values, n)
            parts.extend(column_parts)
            refused.update(column_refused)
        return parts, refused

    def _record(
        self, columns: list[tuple[_ColumnParts, pa.Array | list[Any]]], n: int
    ) -> tuple[pa.Array, set[int]]:
        parts, refused = self._record_parts(columns, n)
        return _join(parts), refused

    def _tail(
        self, batch: ChangeBatch, ops: np.ndarray | None, split_rows: list[int], n: int
    ) -> list[_Part]:
        """`_tidb_op` (c, or u for an UPDATE that is not split), `_tidb_commit_ts` (int64 of
        the TSO) and `_tidb_commit_physical_time` (TSO >> 18)."""
        if ops is None:
            op_chars = np.full(n, ord("c"), np.uint8)
        else:
            op_chars = np.where(ops == OP_UPDATE, np.uint8(ord("u")), np.uint8(ord("c")))
            if split_rows:
                op_chars[split_rows] = ord("c")
        mat = np.empty((n, 2), np.uint8)
        mat[:, 0] = 2  # a string of length 1
        mat[:, 1] = op_chars
        head = _Mat(mat, np.ones((n, 2), bool), np.full(n, 2, np.int64))
        if batch.commit_ts is None:
            ts = batch.default_commit_ts
            signed = ts - (1 << 64) if ts >= 1 << 63 else ts
            rest = avro_values.varint(signed) + avro_values.varint(ts >> 18)
            return [head, _const(rest, n)]
        tso = _numbers(batch.commit_ts, np.uint64)
        return [head, _varints(tso.view(np.int64)), _varints((tso >> _U64(18)).view(np.int64))]

    @staticmethod
    def _checksum_fields(
        checksum: TableChecksum, batch: ChangeBatch, split_rows: list[int], refused: set[int]
    ) -> pa.Array:
        """The row checksum fields of every row's value record (`values.checksum_fields`
        of `TableChecksum.of_batch`): a DELETE's are computed and dropped with its value;
        a split UPDATE's value is its INSERT half, the row's last message. The rows a
        checksum refuses join `refused`, for the row path to raise its error."""
        sums = checksum.of_batch(batch, set(split_rows), refused)
        if split_rows:
            counts = np.ones(batch.rows, np.int64)
            counts[split_rows] = 2
            sums = [sums[end - 1] for end in np.cumsum(counts).tolist()]
        return pa.array([avro_values.checksum_fields(c) for c in sums], _BIN)


def _lengths(arr: pa.Array) -> np.ndarray:
    """The byte length of every entry of a large_binary array (nulls: whatever their
    offsets say; callers mask them)."""
    offsets = np.frombuffer(arr.buffers()[1], np.int64)[arr.offset : arr.offset + len(arr) + 1]
    return np.diff(offsets)


def _take(values: pa.Array | list[Any], picks: list[int]) -> pa.Array | list[Any]:
    if isinstance(values, pa.Array):
        return values.take(pa.array(picks, pa.int64()))
    return [values[j] for j in picks]

"""Simple Avro, a record batch at a time: the same bytes as `avro_row.AvroMarshaller`,
built column by column with numpy and pyarrow compute instead of a join of small byte
strings per value.

Per column, once per batch: every row's map entry, `string(name)` + union branch + value,
as an Arrow binary array made by numpy -- zig-zag varints from int64 values (a matrix of
the ten possible 7-bit groups, of which each row keeps its first few), doubles and floats
as their little-endian bytes -- with, for strings, the varint length in that array and the
UTF-8 bytes left as a second part. A NULL is the key and the null branch (the row path
writes every column, so the map's item count is the table's column count). Per row, in C:
one `binary_join_element_wise` over the map's opening (branch, count), the columns' parts
in name order and the block end; then one more over the header (constant per table and
op), the commit ts varint, and `data` / `old` placed by `take` (DELETE rows and split
key-changing UPDATEs as `json_batch`). Python touches values one by one only for a column
it cannot hand to Arrow (a list holding something Arrow would not type exactly, or an int
outside int64), through the row path's own writer; the rows with a value it refuses are
left to the row path (`EncodedBatch.row_path`), which raises its error.

The row path stays the reference: the size check and the large-message policy run there
(the writer re-encodes oversized messages through `SimpleEncoder.encode_row`), and so do a
table without columns and commit ts that are no TSO (decided before rendering anything).
Tests check byte equality of the two paths on random batches.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.batch import key_changed_rows, row_messages, row_path_batch
from ticdc_sink.codec.checksum import TableChecksum
from ticdc_sink.codec.large_message import ROW_KEY
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.codec.simple.avro_values import (
    BRANCH_BYTES,
    BRANCH_DOUBLE,
    BRANCH_FLOAT,
    BRANCH_LONG,
    BRANCH_STRING,
    BRANCH_TIMESTAMP,
    BRANCH_UNSIGNED_BIGINT,
    NON_NULL,
    NULL,
    VALUE_ERRORS,
    checksum_record,
    dml_heads,
    dml_times,
    encode_long,
    encode_string,
    value_writer,
    wrap_uint64,
)
from ticdc_sink.events import OP_DELETE, OP_INSERT, OP_UPDATE, ChangeBatch, Op
from ticdc_sink.schema import Column, TableSchema

__all__ = ["AvroBatchMarshaller"]

_BINARY = pa.binary()
# A binary array's 32-bit offsets end here; a batch whose bytes may pass it gets 64-bit ones.
_LARGE_BYTES = 2**31 - 1
# a varint needs k + 1 bytes for z >= 2^(7k)
_VARINT_STEPS = [np.uint64(1 << (7 * k)) for k in range(1, 10)]
_SIGNED_KINDS = frozenset({ValueKind.INT})
_UNSIGNED_KINDS = frozenset({ValueKind.UINT, ValueKind.ENUM, ValueKind.SET, ValueKind.BIT})
_STR_KINDS = frozenset(
    {
        ValueKind.DECIMAL,
        ValueKind.DATE,
        ValueKind.DATETIME,
        ValueKind.TIME,
        ValueKind.JSON,
        ValueKind.VECTOR,
    }
)
# a constant (bytes) or one binary value per row (pa.Array), to join
Part: TypeAlias = bytes | pa.Array


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _is_bytes(kind: pa.DataType) -> bool:
    return pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _zigzag(values: np.ndarray) -> np.ndarray:
    """Avro's zig-zag of int64 values, as uint64."""
    return ((values << 1) ^ (values >> 63)).view(np.uint64)


def _varint_rows(head: bytes, z: np.ndarray, nulls: np.ndarray | None, key_len: int) -> pa.Array:
    """`head + varint(z[i])` per row; a null row is `head[:key_len] + 0x00` (the key and
    the null branch). Rows of a (n, len(head) + bytes of the longest varint) matrix, cut
    to their lengths where these differ."""
    n = len(z)
    width = len(head)
    # above[k]: the varint has more than k + 1 bytes (a continuation bit on byte k)
    above: list[np.ndarray] = []
    for step in _VARINT_STEPS:
        more = z >= step
        if not more.any():
            break
        above.append(more)
    steps = len(above)
    matrix = np.empty((n, width + steps + 1), np.uint8)
    if width:
        matrix[:, :width] = np.frombuffer(head, np.uint8)
    for k in range(steps + 1):
        low = (z >> np.uint64(7 * k)).astype(np.uint8) if k else z.astype(np.uint8)
        if k < steps:
            low &= 0x7F
            low |= above[k].view(np.uint8) << 7
        # k == steps: every z < 2^(7(k+1)), so these bytes are below 0x80 already
        matrix[:, width + k] = low
    if nulls is None and (not steps or above[-1].all()):
        return _fixed(matrix)  # every varint has the same length
    lengths = np.full(n, width + 1, np.int64)
    for more in above:
        lengths += more
    if nulls is not None:
        matrix[nulls, key_len] = 0
        lengths[nulls] = key_len + 1
    return _cut(matrix, lengths)


def _fixed(matrix: np.ndarray) -> pa.Array:
    """Each row of `matrix` whole, as a binary array."""
    n, width = matrix.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    return _binary(n, offsets, matrix.reshape(-1))


def _fixed_rows(
    head: bytes, payload: np.ndarray, nulls: np.ndarray | None, key_len: int
) -> pa.Array:
    """`head + payload[i]` (a fixed number of bytes per row); a null row as above."""
    n, size = payload.shape
    width = len(head)
    matrix = np.empty((n, width + size), np.uint8)
    matrix[:, :width] = np.frombuffer(head, np.uint8)
    matrix[:, width:] = payload
    if nulls is None:
        return _fixed(matrix)
    lengths = np.full(n, width + size, np.int64)
    matrix[nulls, key_len] = 0
    lengths[nulls] = key_len + 1
    return _cut(matrix, lengths)


def _cut(matrix: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """Row i of `matrix` cut to `lengths[i]` bytes, as a binary array."""
    n, width = matrix.shape
    # row k of the table: the first k bytes of a row kept (np.take: ~7 ns a row, where
    # broadcasting `arange < lengths` costs ~30)
    table = np.arange(width)[None, :] < np.arange(width + 1)[:, None]
    keep = np.take(table, lengths, axis=0)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return _binary(n, offsets, np.compress(keep.reshape(-1), matrix.reshape(-1)))


def _binary(n: int, offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(_BINARY, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _numbers(values: pa.Array) -> np.ndarray:
    """An integer or float array's values as numpy (nulls as 0)."""
    if values.null_count:
        values = pc.fill_null(values, 0)
    return values.to_numpy(zero_copy_only=False)


def _nulls(values: pa.Array) -> np.ndarray | None:
    if not values.null_count:
        return None
    return values.is_null().to_numpy(zero_copy_only=False)


class _Column:
    """One column's map entries (`string(name)` + branch + value) for a whole batch."""

    def __init__(self, column: Column, time_zone: str) -> None:
        self.column = column
        self.kind = value_kind(column)
        self.write = value_writer(column, time_zone)
        self.key = encode_string(column.name)
        self.null = self.key + NULL
        self.unsigned_bigint = self.kind is ValueKind.UINT and column.type.base == "bigint"
        if self.kind is ValueKind.TIMESTAMP:
            self.text_head = self.key + BRANCH_TIMESTAMP + encode_string(time_zone)
        elif self.kind is ValueKind.BINARY:
            self.text_head = self.key + BRANCH_BYTES
        else:
            self.text_head = self.key + BRANCH_STRING

    def parts(self, values: pa.Array | list[Any]) -> tuple[list[Part], list[int]]:
        """The column's entries for every row (one or two parts to join), and the rows
        whose value the writer refuses (a NULL entry in their place: the row path renders
        those messages)."""
        if isinstance(values, list):
            values = self._from_list(values)
            if isinstance(values, list):
                return self._one_by_one(values)
        kind = self.kind
        arrow = values.type
        if pa.types.is_null(arrow):
            return [self.null], []
        if pa.types.is_integer(arrow):
            if kind in _SIGNED_KINDS:
                return self._integers(values, signed=True)
            if kind in _UNSIGNED_KINDS:
                return self._integers(values, signed=False)
        elif kind is ValueKind.FLOAT64 and pa.types.is_float64(arrow):
            return [self._floats(values, BRANCH_DOUBLE)], []
        elif kind is ValueKind.FLOAT32 and pa.types.is_float32(arrow):
            return [self._floats(values, BRANCH_FLOAT)], []
        elif _is_text(arrow):
            if kind in _STR_KINDS or kind in (ValueKind.TEXT, ValueKind.TIMESTAMP):
                return self._strings(values), []
        elif _is_bytes(arrow):
            if kind in (ValueKind.TEXT, ValueKind.BINARY):
                return self._strings(values), []
        return self._one_by_one(values.to_pylist())

    def _from_list(self, values: list[Any]) -> pa.Array | list[Any]:
        """A list of mounter values as an Arrow array when Arrow types it exactly as the
        writer would take it, else the list."""
        kind = self.kind
        if kind is ValueKind.BINARY and not all(
            type(v) is bytes or v is None for v in values
        ):  # Arrow would take a str as bytes; the writer refuses it
            return values
        try:
            array = pa.array(values)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return values
        # past 2 GiB Arrow gives chunks: the writer per value then
        return values if isinstance(array, pa.ChunkedArray) else array

    def _integers(self, values: pa.Array, *, signed: bool) -> tuple[list[Part], list[int]]:
        numbers = _numbers(values)
        if numbers.dtype == np.uint64:
            if signed and (numbers > np.uint64((1 << 63) - 1)).any():
                return self._one_by_one(values.to_pylist())  # beyond int64: refused
            numbers = numbers.view(np.int64)  # Go's int64(uint64): wraps
        else:
            numbers = numbers.astype(np.int64, copy=False)
            if not signed and (numbers < 0).any():
                return self._one_by_one(values.to_pylist())  # negative unsigned: refused
        branch = BRANCH_UNSIGNED_BIGINT if self.unsigned_bigint else BRANCH_LONG
        entries = _varint_rows(self.key + branch, _zigzag(numbers), _nulls(values), len(self.key))
        return [entries], []

    def _floats(self, values: pa.Array, branch: bytes) -> pa.Array:
        numbers = _numbers(values)
        # tiflow formatColVal: NaN and ±Inf become 0 (simple_avro._finite)
        numbers = np.where(np.isfinite(numbers), numbers, numbers.dtype.type(0))
        payload = numbers.astype(numbers.dtype.newbyteorder("<"), copy=False).view(np.uint8)
        payload = payload.reshape(len(numbers), numbers.dtype.itemsize)
        return _fixed_rows(self.key + branch, payload, _nulls(values), len(self.key))

    def _strings(self, values: pa.Array) -> list[Part]:
        """The varint length with the key and branch, then the bytes as they are: the
        array's own buffers seen as binary without its validity (a NULL slot is empty in
        every array Arrow builds; where one is not, the NULLs are filled first)."""
        nulls = _nulls(values)
        lengths = _lengths(values)
        if nulls is not None and lengths[nulls].any():
            values = pc.fill_null(values, "" if _is_text(values.type) else b"")
            lengths = _lengths(values)
        head = _varint_rows(self.text_head, _zigzag(lengths), nulls, len(self.key))
        buffers = values.buffers()
        data = buffers[2] if buffers[2] is not None else pa.py_buffer(b"")
        kind = pa.large_binary() if _is_large(values) else _BINARY
        payload = pa.Array.from_buffers(
            kind, len(values), [None, buffers[1], data], offset=values.offset
        )
        return [head, payload]

    def _one_by_one(self, values: list[Any]) -> tuple[list[Part], list[int]]:
        """The row path's writer per value, and the rows whose value it refuses."""
        key, write, null = self.key, self.write, self.null
        refused: list[int] = []
        try:
            out = [null if v is None else key + write(v) for v in values]
        except VALUE_ERRORS:
            out = []
            for row, value in enumerate(values):
                try:
                    out.append(null if value is None else key + write(value))
                except VALUE_ERRORS:
                    out.append(null)
                    refused.append(row)
        large = sum(map(len, out)) >= _LARGE_BYTES
        return [pa.array(out, pa.large_binary() if large else _BINARY)], refused


def _lengths(values: pa.Array) -> np.ndarray:
    """Byte length of every slot of a string or binary array, from its offsets (int64)."""
    offsets = np.frombuffer(values.buffers()[1], np.int64 if _is_large(values) else np.int32)
    return np.diff(offsets[values.offset : values.offset + len(values) + 1]).astype(np.int64)


def _is_large(values: pa.Array) -> bool:
    return pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)


def _join(parts: list[Part], n: int) -> pa.Array:
    """Element-wise concatenation of the parts for `n` rows (adjacent constants merged
    first), with 64-bit offsets when the result may pass 2 GiB."""
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, bytes) and merged and isinstance(merged[-1], bytes):
            merged[-1] += part
        else:
            merged.append(part)
    arrays = [p for p in merged if not isinstance(p, bytes)]
    if not arrays:  # every column all NULL: one constant for every row
        return pa.array([b"".join(merged)] * n, _BINARY)
    size = sum(len(p) * n if isinstance(p, bytes) else p.get_total_buffer_size() for p in merged)
    large = size >= _LARGE_BYTES or any(pa.types.is_large_binary(a.type) for a in arrays)
    kind = pa.large_binary() if large else _BINARY
    args = [
        pa.scalar(p, kind) if isinstance(p, bytes) else p.cast(kind) if large else p for p in merged
    ]
    return pc.binary_join_element_wise(*args, pa.scalar(b"", kind))


def _concat(arrays: list[pa.Array]) -> pa.Array:
    """One array of all the rows, 64-bit offsets when one part has them or 2 GiB pass."""
    large = sum(a.get_total_buffer_size() for a in arrays) >= _LARGE_BYTES or any(
        pa.types.is_large_binary(a.type) for a in arrays
    )
    if large:
        arrays = [a.cast(pa.large_binary()) for a in arrays]
    return pa.concat_arrays(arrays)


class AvroBatchMarshaller:
    """Simple Avro DML messages of one table, a `ChangeBatch` at a time.

    `encode_batch` returns the messages in the order the row path sends them: one per row,
    or two for an UPDATE that changes a key column (DELETE of the old row, then INSERT of
    the new one, as `events.split_key_update`).
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
        self._columns = [_Column(c, time_zone) for c in table.columns]
        # [null, map] branch 1, one block: count, entries, 0 (as AvroMarshaller writes it)
        self._map_open = NON_NULL + encode_long(len(order))
        # the DML record up to commitTs, per op code; after it buildTs, schemaVersion, and
        # null claimCheckLocation, handleKeyOnly; then the checksum (`_checksums`).
        heads = dml_heads(table)
        by_code = [b""] * 3
        for code, op in ((OP_INSERT, Op.INSERT), (OP_UPDATE, Op.UPDATE), (OP_DELETE, Op.DELETE)):
            by_code[code] = heads[op]
        self._heads = pa.array(by_code, _BINARY)
        self._insert_head = by_code[OP_INSERT]
        self._after_ts = dml_times(table, build_ts_ms) + NULL + NULL

    def _images(self, columns: list[pa.Array | list[Any]]) -> tuple[pa.Array, set[int]]:
        """The `data`/`old` map (branch, count, entries in name order, block end) per row,
        and the rows with a value a writer refuses."""
        parts: list[Part] = [self._map_open]
        refused: set[int] = set()
        for i in self._order:
            column_parts, column_refused = self._columns[i].parts(columns[i])
            parts += column_parts
            refused.update(column_refused)
        parts.append(b"\x00")
        return _join(parts, len(columns[0])), refused

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every row of `batch`; those of a row with a value its column
        refuses are left to the row path (`row_path`), as is a batch of a table without
        columns or with a commit ts that is no TSO."""
        commit_ts = self._commit_ts(batch)
        if not self._order or not batch.rows or commit_ts is None:
            return row_path_batch(batch, key_indexes, sized=True)
        n = batch.rows
        images, refused = self._images(batch.columns)
        ops = batch.op_codes
        row_ends = None
        split = [] if ops is None else key_changed_rows(batch, key_indexes)
        checksums = self._checksums(batch, split, refused)
        if ops is None:
            values = _join(
                [self._insert_head, commit_ts, self._after_ts, checksums, images, NULL], n
            )
        else:
            before_rows = batch.before_rows
            m = len(before_rows)
            objects = [images]
            if m:
                befores, old_refused = self._images(batch.before_columns)
                objects.append(befores)
                refused.update(before_rows[j] for j in old_refused)
            objects.append(pa.array([NULL], _BINARY))
            nothing = n + m  # index of the null `data` / `old`
            op_codes = ops.to_numpy(zero_copy_only=False).astype(np.int64)
            rows = np.arange(n, dtype=np.int64)
            old_of_row = np.full(n, nothing, np.int64)
            if m:
                old_of_row[np.asarray(before_rows, np.int64)] = np.arange(n, n + m)
            deletes = op_codes == OP_DELETE
            data_idx = np.where(deletes, nothing, rows)
            old_idx = np.where(deletes, rows, np.where(op_codes == OP_INSERT, nothing, old_of_row))
            if split:
                # tiflow trySplitAndSortUpdateEvent: DELETE of the old row, then INSERT.
                counts = np.ones(n, np.int64)
                split_rows = np.fromiter(split, np.int64, len(split))
                counts[split_rows] = 2
                ends = np.cumsum(counts)
                event_rows = np.repeat(rows, counts)
                firsts = ends[split_rows] - 2
                seconds = firsts + 1
                op_codes = op_codes[event_rows]
                data_idx = data_idx[event_rows]
                old_idx = old_idx[event_rows]
                op_codes[firsts] = OP_DELETE
                data_idx[firsts] = nothing
                op_codes[seconds] = OP_INSERT
                old_idx[seconds] = nothing
                row_ends = ends.tolist()
                if isinstance(commit_ts, pa.Array):
                    commit_ts = commit_ts.take(pa.array(event_rows))
            table = _concat(objects)
            values = _join(
                [
                    self._heads.take(pa.array(op_codes)),
                    commit_ts,
                    self._after_ts,
                    checksums,
                    table.take(pa.array(data_idx)),
                    table.take(pa.array(old_idx)),
                ],
                len(op_codes),
            )
        lengths = pc.binary_length(values).to_numpy(zero_copy_only=False)
        return EncodedBatch(
            values=values.to_pylist(),
            sizes=(lengths + RECORD_OVERHEAD).tolist(),
            key=ROW_KEY,
            row_ends=row_ends,
            row_path=row_messages(refused, row_ends),
        )

    def _checksums(self, batch: ChangeBatch, split: list[int], refused: set[int]) -> Part:
        """The `checksum` field of every message (avro_row: `TableChecksum.of_change`), or
        null for all without the row checksum; the rows a checksum refuses join
        `refused`, for the row path to raise its error."""
        if self._checksum is None:
            return NULL
        sums = self._checksum.of_batch(batch, set(split), refused)
        return pa.array([checksum_record(c) for c in sums], _BINARY)

    @staticmethod
    def _commit_ts(batch: ChangeBatch) -> Part | None:
        """The commit ts of every row as Go's int64(uint64) varint: one constant, or one
        per row; None when one is not a uint64 TSO (the row path raises its error)."""
        if batch.commit_ts is None:
            try:
                return encode_long(wrap_uint64(batch.default_commit_ts))
            except OverflowError:
                return None
        ts = batch.commit_ts
        if ts.null_count or not pa.types.is_integer(ts.type):
            return None
        numbers = ts.to_numpy(zero_copy_only=False)
        if numbers.dtype != np.uint64:
            if (numbers < 0).any():
                return None
            numbers = numbers.astype(np.int64)
        return _varint_rows(b"", _zigzag(numbers.view(np.int64)), None, 0)

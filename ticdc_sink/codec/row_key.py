"""TiDB's record key of a row, as pingcap/ticdc's canal-json `output-row-key` writes it
(`_tidb.rowkey`): the TiKV key the change was read from, base64 (std, padded).

TiDB `pkg/tablecodec` `EncodeRowKeyWithHandle(tableID, kv.IntHandle(h))`:

    't' + EncodeInt(tableID) + '_r' + EncodeInt(h)

with `codec.EncodeInt(v)` the 8 big-endian bytes of `uint64(v) ^ 0x8000000000000000`.
The handle is the row's integer primary key when it is the row handle (TiDB
`PKIsHandle`; a BIGINT UNSIGNED value as the int64 of its bits). Other tables are keyed
by the memcomparable encoding of a clustered primary key or by TiDB's hidden
`_tidb_rowid`, which a DataFrame does not carry: `handle_position` refuses them.

Protocol-neutral; no I/O.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pyarrow as pa

from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import TableSchema

__all__ = ["handle_position", "row_key", "row_keys_base64"]

_SIGN = 1 << 63
_MASK = (1 << 64) - 1
_KEY_BYTES = 19  # 't', 8, '_r', 8
_TEXT = pa.large_string()


def _encode_int(value: int) -> bytes:
    # tidb pkg/util/codec/number.go EncodeInt / EncodeIntToCmpUint
    return ((value & _MASK) ^ _SIGN).to_bytes(8, "big")


def _prefix(table_id: int) -> bytes:
    # tidb pkg/tablecodec appendTableRecordPrefix
    return b"t" + _encode_int(table_id) + b"_r"


def handle_position(table: TableSchema, option: str) -> int:
    """The position in `table.columns` of its integer handle (the one-column integer
    primary key that is the row handle).

    Raises:
        SchemaError: the table has none: its rows are keyed by what the DataFrame does
            not carry; `option` is named as what to turn off.
    """
    if table.pk_is_handle:
        return table.column_position(table.primary_key[0])
    name = f"{table.database}.{table.table}"
    if not table.primary_key:
        why = "it has no primary key, so TiDB keys its rows by the hidden _tidb_rowid"
    elif table.pk_clustered is False:
        why = "its primary key is NONCLUSTERED, so TiDB keys its rows by the hidden _tidb_rowid"
    else:
        why = (
            "its primary key is not one integer column, so TiDB keys its rows by the "
            "primary key's memcomparable encoding (or the hidden _tidb_rowid when "
            "NONCLUSTERED)"
        )
    raise SchemaError(
        f"option '{option}' writes TiDB's row key, and table {name} has none the sink can "
        f"compute: {why}; the sink computes row keys only for tables whose primary key is "
        f"one integer column (the row handle): remove {option} to write this table"
    )


def row_key(table_id: int, handle: int) -> bytes:
    """The record key of the row whose integer handle is `handle` (signed, or an
    unsigned BIGINT value as it is)."""
    return _prefix(table_id) + _encode_int(_integer(handle))


def row_keys_base64(table_id: int, handles: pa.Array | list[Any]) -> pa.Array:
    """Each row's record key, base64 (std, padded), as a large_string array: the text of
    `base64.b64encode(row_key(table_id, h))` per handle, built with numpy.

    Raises:
        TypeError, OverflowError, ValueError: a handle that is not an integer (the row
            path names it).
    """
    bits = _handle_bits(handles)
    n = len(bits)
    # 19 key bytes and 2 zero bytes per row: 21 bytes are 28 base64 characters, the
    # first 26 those of the 19 bytes, and the last two "==" in place of "AA".
    keys = np.zeros((n, _KEY_BYTES + 2), np.uint8)
    keys[:, :11] = np.frombuffer(_prefix(table_id), np.uint8)
    keys[:, 11:19] = (bits ^ np.uint64(_SIGN)).astype(">u8").view(np.uint8).reshape(n, 8)
    text = np.frombuffer(base64.b64encode(keys.tobytes()), np.uint8).reshape(n, 28).copy()
    text[:, 26:] = ord("=")
    offsets = np.arange(0, 28 * (n + 1), 28, dtype=np.int64)
    return pa.Array.from_buffers(_TEXT, n, [None, pa.py_buffer(offsets), pa.py_buffer(text)])


def _handle_bits(handles: pa.Array | list[Any]) -> np.ndarray:
    """The handles' 64 bits as uint64 (a signed value two's complement, as TiDB's int64)."""
    if isinstance(handles, list):
        values = handles
    elif pa.types.is_integer(handles.type) and not handles.null_count:
        if pa.types.is_unsigned_integer(handles.type):
            return handles.cast(pa.uint64()).to_numpy(zero_copy_only=False)
        return handles.cast(pa.int64()).to_numpy(zero_copy_only=False).view(np.uint64)
    else:
        values = handles.to_pylist()
    return np.array([_integer(v) & _MASK for v in values], np.uint64)


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a row handle must be an integer, got {value!r}")
    if not -_SIGN <= value <= _MASK:
        raise OverflowError(f"a row handle must fit 64 bits, got {value}")
    return value

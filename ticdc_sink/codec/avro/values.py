"""Avro protocol values (tiflow `avro.go` `columnToAvroData`, written as goavro v2.14
writes them): one writer per column type, shared by the row path (`row`, which compiles
them into one function per record) and the column-wise path (`batch`, which renders whole
columns and calls a writer where it cannot vouch for a value).

Standard Avro binary: zig-zag varints, IEEE floats, length-prefixed strings and bytes.
Decimals are written as floor(value x 10^scale) in minimal two's complement (fastavro
would size it differently and check the precision; goavro does neither). Input values are
the mounter values of `ticdc_sink.events`; a writer raises TypeError, ValueError or
OverflowError for a value that does not fit its column.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

from ticdc_sink.codec.avro.schema import unscaled_decimal
from ticdc_sink.codec.checksum import RowChecksum
from ticdc_sink.codec.mysql import ValueKind, bit_to_int, value_kind
from ticdc_sink.schema import Column

__all__ = [
    "BYTES_OF",
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "Writer",
    "checksum_fields",
    "decimal_bytes",
    "pack_double",
    "pack_float",
    "value_writer",
    "varint",
    "write_bit",
    "write_bytes",
    "write_decimal_string",
    "write_double",
    "write_float",
    "write_int32",
    "write_int64",
    "write_plain_str",
    "write_str",
    "write_uint64_string",
    "write_uint64_wrapped",
]

Writer = Callable[[Any], bytes]


#: The one-byte strings, by value.
BYTES_OF = [bytes([i]) for i in range(256)]
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
pack_float = struct.Struct("<f").pack
pack_double = struct.Struct("<d").pack


def varint(n: int) -> bytes:
    """Avro long: zig-zag, then base-128 little-endian groups. `n` must fit int64."""
    z = (n << 1) ^ (n >> 63)
    if z < 0x80:
        return BYTES_OF[z]
    if z < 0x4000:
        return bytes((z & 0x7F | 0x80, z >> 7))
    if z < 0x200000:
        return bytes((z & 0x7F | 0x80, z >> 7 & 0x7F | 0x80, z >> 14))
    out = []
    while z > 0x7F:
        out.append(z & 0x7F | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _check_int(value: Any) -> int:
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an int, got {type(value).__name__}")
    return value


def write_int32(value: Any) -> bytes:
    v = _check_int(value)
    if not INT32_MIN <= v <= INT32_MAX:
        raise ValueError("out of range for an Avro int")
    return varint(v)


def write_int64(value: Any) -> bytes:
    v = _check_int(value)
    if not INT64_MIN <= v <= INT64_MAX:
        raise ValueError("out of range for an Avro long")
    return varint(v)


def write_uint64_wrapped(value: Any) -> bytes:
    # tiflow: int64(col.Value.(uint64)); 2^63 and above become negative
    v = _check_int(value)
    if not 0 <= v < 1 << 64:
        raise ValueError("out of range for BIGINT UNSIGNED")
    return varint(v - (1 << 64) if v > INT64_MAX else v)


def write_str(value: Any) -> bytes:
    if type(value) is str:
        data = value.encode("utf-8")
    elif isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)  # Go string([]byte): the bytes as they are
    else:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    return varint(len(data)) + data


def write_bytes(value: Any) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    data = bytes(value)
    return varint(len(data)) + data


def write_uint64_string(value: Any) -> bytes:
    v = _check_int(value)
    if not 0 <= v < 1 << 64:
        raise ValueError("out of range for BIGINT UNSIGNED")
    data = int.__repr__(v).encode("ascii")
    return varint(len(data)) + data


def write_float(value: Any) -> bytes:
    if type(value) not in (float, int):
        raise TypeError(f"expected a float, got {type(value).__name__}")
    # tiflow cdc/entry/mounter.go formatColVal: NaN and ±Inf become 0
    return pack_float(value if value - value == 0 else 0.0)


def write_double(value: Any) -> bytes:
    if type(value) not in (float, int):
        raise TypeError(f"expected a float, got {type(value).__name__}")
    return pack_double(value if value - value == 0 else 0.0)


def write_bit(value: Any) -> bytes:
    # types.NewBinaryLiteralFromUint(v, -1): minimal big-endian bytes, 0 -> 00
    if isinstance(value, bool) or not isinstance(value, int | bytes | bytearray | memoryview):
        raise TypeError(f"expected an int, got {type(value).__name__}")
    n = bit_to_int(value)
    if not 0 <= n < 1 << 64:
        raise ValueError("out of range for BIT")
    data = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
    return BYTES_OF[len(data) << 1] + data


def decimal_bytes(unscaled: int) -> bytes:
    """Minimal big-endian two's complement of an unscaled decimal (reference §6.6):
    0 -> 00, 128 -> 00 80, -128 -> 80, -129 -> ff 7f."""
    size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    return unscaled.to_bytes(size, "big", signed=True)


def _decimal_writer(scale: int) -> Writer:
    def write(value: Any) -> bytes:
        if type(value) is not str:
            raise TypeError(f"expected a decimal str, got {type(value).__name__}")
        whole, _, fraction = value.partition(".")
        digits = whole + fraction
        if len(fraction) == scale and digits.isdigit() and digits.isascii():
            unscaled = int(digits)  # the common case: non-negative, in the mounter's form
        else:
            unscaled = unscaled_decimal(value, scale)
        size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
        if size < 64:
            return BYTES_OF[size << 1] + unscaled.to_bytes(size, "big", signed=True)
        return varint(size) + unscaled.to_bytes(size, "big", signed=True)

    return write


def _enum_writer(elements: tuple[str, ...]) -> Writer:
    encoded = [write_str(e) for e in elements]

    def write(value: Any) -> bytes:
        index = _check_int(value)
        # types.ParseEnumValue: 0 (MySQL's error value) and indexes past the end fail
        if not 1 <= index <= len(encoded):
            raise ValueError(f"ENUM index must be 1..{len(encoded)}")
        return encoded[index - 1]

    return write


def _set_writer(elements: tuple[str, ...]) -> Writer:
    limit = 1 << len(elements)

    @functools.lru_cache(maxsize=1024)
    def names(mask: int) -> bytes:
        return write_str(",".join(e for i, e in enumerate(elements) if mask >> i & 1))

    def write(value: Any) -> bytes:
        mask = _check_int(value)
        # types.ParseSetValue: bits beyond the elements fail
        if not 0 <= mask < limit:
            raise ValueError(f"SET bitmask must be below {limit}")
        return names(mask)

    return write


def value_writer(column: Column, decimal_string: bool, unsigned_string: bool) -> Writer:
    kind = value_kind(column)
    base = column.type.base
    if kind is ValueKind.INT:
        return write_int64 if base == "bigint" else write_int32
    if kind is ValueKind.UINT:
        if base == "bigint":
            return write_uint64_string if unsigned_string else write_uint64_wrapped
        return write_int64 if base == "int" else write_int32
    if kind is ValueKind.FLOAT32:
        return write_float
    if kind is ValueKind.FLOAT64:
        return write_double
    if kind is ValueKind.BIT:
        return write_bit
    if kind is ValueKind.DECIMAL:
        if decimal_string:
            return write_decimal_string
        return _decimal_writer(column.type.scale)
    if kind is ValueKind.BINARY:
        return write_bytes
    if kind is ValueKind.ENUM:
        return _enum_writer(column.type.elements)
    if kind is ValueKind.SET:
        return _set_writer(column.type.elements)
    if kind is ValueKind.TEXT:
        return write_str
    return write_plain_str  # json, temporal, vector: the mounter string


def write_plain_str(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    data = value.encode("utf-8")
    return varint(len(data)) + data


def write_decimal_string(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a decimal str, got {type(value).__name__}")
    unscaled_decimal(value, 0)  # reject what is not a number, as big.Rat would in precise mode
    data = value.encode("ascii")
    return varint(len(data)) + data


def checksum_fields(checksum: RowChecksum | None, *, delete: bool = False) -> bytes:
    """`_tidb_row_level_checksum`, `_tidb_corrupted` and `_tidb_checksum_version` of a
    value record (tiflow `nativeValueWithExtension`): the new image's checksum as decimal
    text (a DELETE's, written with avro-include-before-value, the old image's: pingcap/ticdc
    takes `Checksum.Previous` then), the flag and the version; without a checksum
    (`TableChecksum.of_change` gave None) the fields are left out of the native map and
    goavro writes their defaults, "", false and 0."""
    if checksum is None:
        return b"\x00\x00\x00"
    text = str(checksum.previous if delete else checksum.current).encode("ascii")
    corrupted = b"\x01" if checksum.corrupted else b"\x00"
    return varint(len(text)) + text + corrupted + varint(checksum.version)

"""Simple Avro values shared by its row and column-wise Avro marshallers: the bundled
writer schema (tiflow `simple/message.json`), Avro's binary primitives, each column's value
writer (tiflow `simple/message.go` `encodeValue4Avro`) and the constant head of a DML
record.

The writer schema is tiflow's `pkg/sink/codec/simple/message.json`, copied unchanged into
`message.json` here (pingcap/tiflow, last changed in commit
71b5a0ad7be3c69887f950ca02c228ee10d0943c, identical at c7b2588ef6c74ef2a42ef35a539251d026de722e).
It is a union of 12 named types; every message is branch 11 (`Message`), so a body starts
with 0x16, then the MessageType enum index and the payload branch (WATERMARK `00 00`,
BOOTSTRAP `02 02`, DDL `04 04`, DML `06 06`). No Confluent framing, no registry.
`load_message_schema` / `parsed_message_schema` load it via importlib.resources.

Values in `data`/`old` (tiflow `encodeValue4Avro`): integers, YEAR, ENUM index, SET
bitmask and BIT as `long` (unsigned ones as Go's `int64(uint64)`, so BIT(64) and SET
values from 2^63 wrap), BIGINT UNSIGNED as `UnsignedBigint{value: int64(v)}` (wraps
too), FLOAT as `float`, DOUBLE as `double`, TIMESTAMP as `Timestamp{location, value}`,
binary string types as `bytes` (raw, not base64), everything else as `string` (a text
value given as bytes is written as those bytes, as Go's `string([]byte)`, valid UTF-8 or
not). Each writer writes its union branch too: that pins the branch TiCDC picks (a Python
float would match `float` before `double`).
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import operator
import struct
from collections.abc import Callable
from typing import Any

import orjson

from ticdc_sink.codec.checksum import RowChecksum
from ticdc_sink.codec.mysql import ValueKind, bit_to_int, value_kind
from ticdc_sink.codec.simple.values import PROTOCOL_VERSION
from ticdc_sink.events import Op
from ticdc_sink.schema import Column, TableSchema

__all__ = [
    "BRANCH_BYTES",
    "BRANCH_DOUBLE",
    "BRANCH_FLOAT",
    "BRANCH_LONG",
    "BRANCH_STRING",
    "BRANCH_TIMESTAMP",
    "BRANCH_UNSIGNED_BIGINT",
    "NON_NULL",
    "NULL",
    "SCHEMA_RESOURCE",
    "VALUE_ERRORS",
    "VERSION",
    "Writer",
    "checksum_record",
    "dml_heads",
    "dml_times",
    "encode_array",
    "encode_boolean",
    "encode_bytes",
    "encode_long",
    "encode_string",
    "load_message_schema",
    "message_record_schema",
    "parsed_message_record",
    "parsed_message_schema",
    "value_writer",
    "wrap_uint64",
]

SCHEMA_RESOURCE = "message.json"

_MASK64 = (1 << 64) - 1
_MIN_LONG = -(1 << 63)
_MAX_LONG = (1 << 63) - 1

Writer = Callable[[Any], bytes]
#: What a value writer raises for a value that does not fit its column.
VALUE_ERRORS = (TypeError, ValueError, OverflowError, struct.error)


@functools.cache
def load_message_schema() -> list[dict[str, Any]]:
    """The Simple Avro schema (tiflow message.json) as JSON data, read once from the package."""
    resource = importlib.resources.files("ticdc_sink.codec.simple").joinpath(SCHEMA_RESOURCE)
    return orjson.loads(resource.read_bytes())


@functools.cache
def parsed_message_schema() -> Any:
    """The schema parsed by fastavro (once), for `schemaless_reader`."""
    import fastavro

    return fastavro.parse_schema(load_message_schema())


@functools.cache
def message_record_schema() -> tuple[int, dict[str, Any]]:
    """The union branch every message TiCDC writes takes (the `Message` record's index) and
    that record alone as a schema of its own: the named types it refers to written out
    where first used, as Avro requires of a standalone schema (Spark's `from_avro` takes
    it so too)."""
    union = load_message_schema()
    named = {f"{t['namespace']}.{t['name']}": t for t in union}
    written: set[str] = set()

    def inline(node: Any) -> Any:
        if isinstance(node, str) and node in named and node not in written:
            written.add(node)
            return inline(named[node])
        if isinstance(node, list):
            return [inline(n) for n in node]
        if isinstance(node, dict):
            fields = ("type", "items", "values", "fields")
            return {k: inline(v) if k in fields else v for k, v in node.items()}
        return node

    (index,) = [i for i, t in enumerate(union) if t["name"] == "Message"]
    return index, inline(f"{union[index]['namespace']}.Message")


@functools.cache
def parsed_message_record() -> tuple[bytes, Any]:
    """The `Message` branch as Avro writes it, and the record alone
    (`message_record_schema`) parsed once for `schemaless_reader`.

    fastavro marks a parsed schema inside its dict; the top-level union is a list, so a
    read with `parsed_message_schema` parses all twelve named types again, every message
    (110 µs against 70 µs)."""
    import fastavro

    index, record = message_record_schema()
    return encode_long(index), fastavro.parse_schema(record)


# --- Avro binary primitives ---------------------------------------------------------------

# zig-zag bytes of -64..63, at index n + 64
_SMALL = [bytes([((n << 1) ^ (n >> 63)) & 0xFF]) for n in range(-64, 64)]


def encode_long(n: int) -> bytes:
    """Avro `long`/`int`: zig-zag varint.

    Raises:
        OverflowError: n is outside the signed 64-bit range.
    """
    if -64 <= n < 64:
        return _SMALL[n + 64]
    if not _MIN_LONG <= n <= _MAX_LONG:
        raise OverflowError(f"{n} does not fit a signed 64-bit integer")
    n = ((n << 1) ^ (n >> 63)) & _MASK64
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def wrap_uint64(n: int) -> int:
    """Go's int64(uint64(n)) for 0 <= n < 2^64."""
    if not 0 <= n <= _MASK64:
        raise OverflowError(f"{n} does not fit an unsigned 64-bit integer")
    return n - (1 << 64) if n > _MAX_LONG else n


def encode_bytes(raw: bytes) -> bytes:
    """Avro `bytes`: length, then the bytes."""
    n = len(raw)
    return (_SMALL[n + 64] if n < 64 else encode_long(n)) + raw


def encode_string(text: str) -> bytes:
    """Avro `string`: UTF-8 length, then the UTF-8 bytes."""
    raw = text.encode("utf-8")
    n = len(raw)
    return (_SMALL[n + 64] if n < 64 else encode_long(n)) + raw


def encode_array(items: list[bytes]) -> bytes:
    """An Avro array of encoded items, in one block."""
    if not items:
        return b"\x00"
    return encode_long(len(items)) + b"".join(items) + b"\x00"


#: The branches of a [null, X] union.
NULL = b"\x00"
NON_NULL = b"\x02"
_TRUE = b"\x01"
_FALSE = b"\x00"


def encode_boolean(flag: bool) -> bytes:
    """Avro `boolean`."""
    return _TRUE if flag else _FALSE


def checksum_record(checksum: RowChecksum | None) -> bytes:
    """The DML record's `checksum` field, `["null", Checksum]` (tiflow simple/avro.go:
    `version` int, `corrupted` boolean, `current` and `previous` as int64 longs); null
    without a checksum."""
    if checksum is None:
        return NULL
    return b"".join(
        (
            NON_NULL,
            encode_long(checksum.version),
            encode_boolean(checksum.corrupted),
            encode_long(checksum.current),
            encode_long(checksum.previous),
        )
    )


# Message: union branch 11, then MessageType enum index and payload branch.
_DML_HEAD = b"\x16\x06\x06"
#: The `version` field of every message.
VERSION = encode_long(PROTOCOL_VERSION)
_DML_TYPE = {Op.INSERT: b"\x00", Op.UPDATE: b"\x02", Op.DELETE: b"\x04"}

#: Branches of the map value union [null, long, float, double, string, bytes, Timestamp,
#: UnsignedBigint].
BRANCH_LONG = b"\x02"
BRANCH_FLOAT = b"\x04"
BRANCH_DOUBLE = b"\x06"
BRANCH_STRING = b"\x08"
BRANCH_BYTES = b"\x0a"
BRANCH_TIMESTAMP = b"\x0c"
BRANCH_UNSIGNED_BIGINT = b"\x0e"
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
# a branch byte and a length or small long, precomputed for 0..63 / -64..63
_LONG_SMALL = [BRANCH_LONG + b for b in _SMALL]
_STRING_HEADS = [BRANCH_STRING + _SMALL[n + 64] for n in range(64)]
_BYTES_HEADS = [BRANCH_BYTES + _SMALL[n + 64] for n in range(64)]


# --- column values (tiflow simple/message.go encodeValue4Avro) ---------------------------


def _index(value: Any) -> int:
    # operator.index takes ints (and bools, as Go's int64 would) and refuses floats, str.
    return value if type(value) is int else operator.index(value)


def _write_int(value: Any) -> bytes:
    if type(value) is not int:
        value = operator.index(value)
    if -64 <= value < 64:
        return _LONG_SMALL[value + 64]
    return BRANCH_LONG + encode_long(value)


def _write_uint(value: Any) -> bytes:
    if type(value) is not int:
        value = operator.index(value)
    if 0 <= value < 64:
        return _LONG_SMALL[value + 64]
    return BRANCH_LONG + encode_long(wrap_uint64(value))


def _write_unsigned_bigint(value: Any) -> bytes:
    return BRANCH_UNSIGNED_BIGINT + encode_long(wrap_uint64(_index(value)))


def _write_bit(value: Any) -> bytes:
    return BRANCH_LONG + encode_long(wrap_uint64(bit_to_int(value)))


def _finite(value: Any) -> float:
    if type(value) not in (float, int):
        raise TypeError(f"expected a float, got {type(value).__name__}")
    if math.isnan(value) or math.isinf(value):
        # tiflow cdc/entry/mounter.go formatColVal: NaN and ±Inf become 0 (as JSON).
        return 0.0
    return value


def _write_float32(value: Any) -> bytes:
    return BRANCH_FLOAT + _F32.pack(_finite(value))


def _write_float64(value: Any) -> bytes:
    return BRANCH_DOUBLE + _F64.pack(_finite(value))


def _write_str(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    raw = value.encode("utf-8")
    n = len(raw)
    return (_STRING_HEADS[n] if n < 64 else BRANCH_STRING + encode_long(n)) + raw


def _write_text(value: Any) -> bytes:
    if type(value) is str:
        raw = value.encode("utf-8")
    elif isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)  # Go's string([]byte): the bytes as they are
    else:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    n = len(raw)
    return (_STRING_HEADS[n] if n < 64 else BRANCH_STRING + encode_long(n)) + raw


def _write_binary(value: Any) -> bytes:
    if type(value) is not bytes:
        if not isinstance(value, bytearray | memoryview):
            raise TypeError(f"expected bytes, got {type(value).__name__}")
        value = bytes(value)
    n = len(value)
    return (_BYTES_HEADS[n] if n < 64 else BRANCH_BYTES + encode_long(n)) + value


def _timestamp_writer(location: str) -> Writer:
    where = encode_string(location)

    def write(value: Any) -> bytes:
        if type(value) is not str:
            raise TypeError(f"expected a str, got {type(value).__name__}")
        return BRANCH_TIMESTAMP + where + encode_string(value)

    return write


_WRITERS: dict[ValueKind, Writer] = {
    ValueKind.INT: _write_int,
    ValueKind.UINT: _write_uint,
    ValueKind.ENUM: _write_uint,
    ValueKind.SET: _write_uint,
    ValueKind.BIT: _write_bit,
    ValueKind.FLOAT32: _write_float32,
    ValueKind.FLOAT64: _write_float64,
    ValueKind.DECIMAL: _write_str,
    ValueKind.DATE: _write_str,
    ValueKind.DATETIME: _write_str,
    ValueKind.TIME: _write_str,
    ValueKind.JSON: _write_str,
    ValueKind.VECTOR: _write_str,
    ValueKind.TEXT: _write_text,
    ValueKind.BINARY: _write_binary,
}


def value_writer(column: Column, time_zone: str) -> Writer:
    """The writer of a column's map value (union branch included).

    Raises:
        SchemaError: a column type the protocol cannot carry.
    """
    kind = value_kind(column)
    if kind is ValueKind.TIMESTAMP:
        return _timestamp_writer(time_zone)
    if kind is ValueKind.UINT and column.type.base == "bigint":
        return _write_unsigned_bigint
    return _WRITERS[kind]


def dml_heads(table: TableSchema) -> dict[Op, bytes]:
    """Per op, the DML record up to `commitTs`: the Message branch, version, database,
    table, tableID and the DML type."""
    identity = b"".join(
        (
            _DML_HEAD,
            VERSION,
            encode_string(table.database),
            encode_string(table.table),
            encode_long(table.table_id),
        )
    )
    return {op: identity + code for op, code in _DML_TYPE.items()}


def dml_times(table: TableSchema, build_ts_ms: int) -> bytes:
    """The DML record's `buildTs` and `schemaVersion`, after `commitTs`."""
    return encode_long(build_ts_ms) + encode_long(wrap_uint64(table.version))

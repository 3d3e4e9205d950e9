"""TiCDC's Simple protocol, Avro encoding (`encoding-format=avro`, reference §7.5).

The writer schema is tiflow's `pkg/sink/codec/simple/message.json`, copied unchanged into
`simple_message.avsc.json` (pingcap/tiflow, last changed in commit
71b5a0ad7be3c69887f950ca02c228ee10d0943c, identical at c7b2588ef6c74ef2a42ef35a539251d026de722e).
It is a union of 12 named types; every message is branch 11 (`Message`), so a body starts
with 0x16, then the MessageType enum index and the payload branch (WATERMARK `00 00`,
BOOTSTRAP `02 02`, DDL `04 04`, DML `06 06`). No Confluent framing, no registry.

Bytes are written here by hand, following that schema field by field, rather than by
fastavro's `schemaless_writer`: the per-table parts (database, table, ids, map keys) are
encoded once when the marshaller is built, and each column has one function that writes
its union branch and value, so a row costs a join of small byte strings (about three
times faster than building a dict for fastavro). Writing the union branch ourselves also
pins the branch TiCDC picks (a Python float would match `float` before `double`). The
tests check every kind of message against fastavro's writer and reader with this schema
file, which `load_message_schema` / `parsed_message_schema` load via importlib.resources.

Map entries (`data`, `old`) are written sorted by column name, in one block (count,
entries, 0). TiCDC writes them in Go map iteration order, which is random per run, so its
bytes for a multi-column row cannot be reproduced; ours are deterministic and decode to
the same values. `buildTs` is passed in, never read from the clock (see simple.py).

Values in `data`/`old` (tiflow `encodeValue4Avro`): integers, YEAR, ENUM index, SET
bitmask and BIT as `long` (unsigned ones as Go's `int64(uint64)`, so BIT(64) and SET
values from 2^63 wrap), BIGINT UNSIGNED as `UnsignedBigint{value: int64(v)}` (wraps
too), FLOAT as `float`, DOUBLE as `double`, TIMESTAMP as `Timestamp{location, value}`,
binary string types as `bytes` (raw, not base64), everything else as `string` (a text
value given as bytes is written as those bytes, as Go's `string([]byte)`, valid UTF-8 or
not). In table schemas a BIT default is its raw big-endian bytes (TiDB's
`DefaultValueBit`, minimal length) written as the Avro string, as TiCDC does.
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

from ticdc_sink.codec.mysql import (
    ValueKind,
    bit_to_int,
    charset_of,
    collation_of,
    value_kind,
)
from ticdc_sink.codec.simple import (
    PROTOCOL_VERSION,
    row_value_error,
    table_schema_json,
)
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import Column, TableSchema

__all__ = [
    "DDL_TYPES",
    "SCHEMA_RESOURCE",
    "AvroMarshaller",
    "encode_long",
    "load_message_schema",
    "marshal_ddl",
    "marshal_watermark",
    "parsed_message_schema",
    "table_schema_avro",
]

SCHEMA_RESOURCE = "simple_message.avsc.json"
# DDLType symbols in schema order: the enum index is the position.
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")

_MASK64 = (1 << 64) - 1
_MIN_LONG = -(1 << 63)
_MAX_LONG = (1 << 63) - 1

Writer = Callable[[Any], bytes]
# what a value writer raises for a value that does not fit its column
_VALUE_ERRORS = (TypeError, ValueError, OverflowError, struct.error)


@functools.cache
def load_message_schema() -> list[dict[str, Any]]:
    """The Simple Avro schema (tiflow message.json) as JSON data, read once from the package."""
    text = importlib.resources.files("ticdc_sink.codec").joinpath(SCHEMA_RESOURCE).read_bytes()
    return orjson.loads(text)


@functools.cache
def parsed_message_schema() -> Any:
    """The schema parsed by fastavro (once), for `schemaless_reader`."""
    import fastavro

    return fastavro.parse_schema(load_message_schema())


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


def _wrap(n: int) -> int:
    """Go's int64(uint64(n)) for 0 <= n < 2^64."""
    if not 0 <= n <= _MASK64:
        raise OverflowError(f"{n} does not fit an unsigned 64-bit integer")
    return n - (1 << 64) if n > _MAX_LONG else n


def _bytes(raw: bytes) -> bytes:
    n = len(raw)
    return (_SMALL[n + 64] if n < 64 else encode_long(n)) + raw


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    n = len(raw)
    return (_SMALL[n + 64] if n < 64 else encode_long(n)) + raw


def _array(items: list[bytes]) -> bytes:
    if not items:
        return b"\x00"
    return encode_long(len(items)) + b"".join(items) + b"\x00"


_NULL = b"\x00"
_BRANCH1 = b"\x02"  # the second branch of a [null, X] union
_TRUE = b"\x01"
_FALSE = b"\x00"


def _boolean(flag: bool) -> bytes:
    return _TRUE if flag else _FALSE


# Message: union branch 11, then MessageType enum index and payload branch.
_WATERMARK_HEAD = b"\x16\x00\x00"
_BOOTSTRAP_HEAD = b"\x16\x02\x02"
_DDL_HEAD = b"\x16\x04\x04"
_DML_HEAD = b"\x16\x06\x06"
_VERSION = encode_long(PROTOCOL_VERSION)
_DML_TYPE = {Op.INSERT: b"\x00", Op.UPDATE: b"\x02", Op.DELETE: b"\x04"}

# Branches of the map value union [null, long, float, double, string, bytes, Timestamp,
# UnsignedBigint].
_LONG = b"\x02"
_FLOAT = b"\x04"
_DOUBLE = b"\x06"
_STRING = b"\x08"
_BYTES = b"\x0a"
_TIMESTAMP = b"\x0c"
_UNSIGNED_BIGINT = b"\x0e"
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
# a branch byte and a length or small long, precomputed for 0..63 / -64..63
_LONG_SMALL = [_LONG + b for b in _SMALL]
_STRING_HEADS = [_STRING + _SMALL[n + 64] for n in range(64)]
_BYTES_HEADS = [_BYTES + _SMALL[n + 64] for n in range(64)]


# --- column values (tiflow simple/message.go encodeValue4Avro) ---------------------------


def _index(value: Any) -> int:
    # operator.index takes ints (and bools, as Go's int64 would) and refuses floats, str.
    return value if type(value) is int else operator.index(value)


def _write_int(value: Any) -> bytes:
    if type(value) is not int:
        value = operator.index(value)
    if -64 <= value < 64:
        return _LONG_SMALL[value + 64]
    return _LONG + encode_long(value)


def _write_uint(value: Any) -> bytes:
    if type(value) is not int:
        value = operator.index(value)
    if 0 <= value < 64:
        return _LONG_SMALL[value + 64]
    return _LONG + encode_long(_wrap(value))


def _write_unsigned_bigint(value: Any) -> bytes:
    return _UNSIGNED_BIGINT + encode_long(_wrap(_index(value)))


def _write_bit(value: Any) -> bytes:
    return _LONG + encode_long(_wrap(bit_to_int(value)))


def _finite(value: Any) -> float:
    if type(value) not in (float, int):
        raise TypeError(f"expected a float, got {type(value).__name__}")
    if math.isnan(value) or math.isinf(value):
        # tiflow cdc/entry/mounter.go formatColVal: NaN and ±Inf become 0 (as JSON).
        return 0.0
    return value


def _write_float32(value: Any) -> bytes:
    return _FLOAT + _F32.pack(_finite(value))


def _write_float64(value: Any) -> bytes:
    return _DOUBLE + _F64.pack(_finite(value))


def _write_str(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    raw = value.encode("utf-8")
    n = len(raw)
    return (_STRING_HEADS[n] if n < 64 else _STRING + encode_long(n)) + raw


def _write_text(value: Any) -> bytes:
    if type(value) is str:
        raw = value.encode("utf-8")
    elif isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)  # Go's string([]byte): the bytes as they are
    else:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    n = len(raw)
    return (_STRING_HEADS[n] if n < 64 else _STRING + encode_long(n)) + raw


def _write_binary(value: Any) -> bytes:
    if type(value) is not bytes:
        if not isinstance(value, bytearray | memoryview):
            raise TypeError(f"expected bytes, got {type(value).__name__}")
        value = bytes(value)
    n = len(value)
    return (_BYTES_HEADS[n] if n < 64 else _BYTES + encode_long(n)) + value


def _timestamp_writer(location: str) -> Writer:
    where = _string(location)

    def write(value: Any) -> bytes:
        if type(value) is not str:
            raise TypeError(f"expected a str, got {type(value).__name__}")
        return _TIMESTAMP + where + _string(value)

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


def _writer(column: Column, time_zone: str) -> Writer:
    kind = value_kind(column)
    if kind is ValueKind.TIMESTAMP:
        return _timestamp_writer(time_zone)
    if kind is ValueKind.UINT and column.type.base == "bigint":
        return _write_unsigned_bigint
    return _WRITERS[kind]


# --- table schema (tiflow simple/avro.go newTableSchemaMap) ------------------------------

_FLAGGED_TYPES = frozenset(
    {"tinyint", "smallint", "mediumint", "int", "bigint", "float", "double", "bit", "year"}
)


def _data_type_avro(column: Column) -> dict[str, Any]:
    t = column.type
    base = t.base
    result: dict[str, Any] = {
        "mysqlType": base,
        "charset": charset_of(t),
        "collate": collation_of(t),
        "length": t.flen,
        "decimal": None,
        "elements": None,
        "unsigned": None,
        "zerofill": None,
    }
    if base in _FLAGGED_TYPES or base == "decimal":
        # TiDB sets UNSIGNED and ZEROFILL on YEAR, UNSIGNED on BIT; ZEROFILL implies
        # UNSIGNED (as the JSON tableSchema).
        result["unsigned"] = bool(t.unsigned or t.zerofill or base in ("year", "bit"))
        result["zerofill"] = bool(t.zerofill or base == "year")
    if base == "decimal":
        result["decimal"] = t.tidb_decimal
    if base in ("enum", "set"):
        result["elements"] = list(t.elements)
    return result


def _default_avro(column: Column, json_default: Any) -> str | bytes | None:
    """TiDB `GetDefaultValue()`: the default string; for BIT the raw bytes (a Go string)."""
    if json_default is None or column.type.base != "bit":
        return json_default
    value = int(json_default)
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def table_schema_avro(table: TableSchema) -> dict[str, Any]:
    """The Avro `TableSchema` record of BOOTSTRAP and DDL messages as plain data (field
    order as the schema). A BIT default is `bytes` (its raw big-endian value).

    Columns and indexes as `simple.table_schema_json` (sorted by column ID; the integer
    handle's synthetic `primary` index last); `length` is always written (TiDB's flen, -1
    where it has none), `unsigned`/`zerofill` only for numeric, BIT and YEAR types,
    `decimal` only for DECIMAL, `elements` only for ENUM/SET, as tiflow avro.go.

    Raises:
        SchemaError: an index names an unknown column, or a BIT default is not a number.
    """
    as_json = table_schema_json(table)
    by_name = {c.name: c for c in table.columns}
    columns = []
    for entry in as_json["columns"]:
        column = by_name[entry["name"]]
        columns.append(
            {
                "name": column.name,
                "dataType": _data_type_avro(column),
                "nullable": column.nullable,
                "default": _default_avro(column, entry["default"]),
            }
        )
    return {
        "database": table.database,
        "table": table.table,
        "tableID": table.table_id,
        "version": table.version,
        "columns": columns,
        "indexes": as_json["indexes"],
    }


def _write_optional_string(value: str | bytes | None) -> bytes:
    if value is None:
        return _NULL
    return _BRANCH1 + (_bytes(value) if isinstance(value, bytes) else _string(value))


def _write_table_schema(schema: dict[str, Any]) -> bytes:
    columns = []
    for column in schema["columns"]:
        t = column["dataType"]
        parts = [
            _string(column["name"]),
            _string(t["mysqlType"]),
            _string(t["charset"]),
            _string(t["collate"]),
            encode_long(t["length"]),
            _NULL if t["decimal"] is None else _BRANCH1 + encode_long(t["decimal"]),
            _NULL
            if t["elements"] is None
            else _BRANCH1 + _array([_string(e) for e in t["elements"]]),
            _NULL if t["unsigned"] is None else _BRANCH1 + _boolean(t["unsigned"]),
            _NULL if t["zerofill"] is None else _BRANCH1 + _boolean(t["zerofill"]),
            _boolean(column["nullable"]),
            _write_optional_string(column["default"]),
        ]
        columns.append(b"".join(parts))
    indexes = [
        b"".join(
            (
                _string(index["name"]),
                _boolean(index["unique"]),
                _boolean(index["primary"]),
                _boolean(index["nullable"]),
                _array([_string(name) for name in index["columns"]]),
            )
        )
        for index in schema["indexes"]
    ]
    return b"".join(
        (
            _string(schema["database"]),
            _string(schema["table"]),
            encode_long(schema["tableID"]),
            encode_long(_wrap(schema["version"])),
            _array(columns),
            _array(indexes),
        )
    )


# --- messages -----------------------------------------------------------------------------


def marshal_watermark(commit_ts: int, build_ts_ms: int) -> bytes:
    """The Avro WATERMARK message (`Watermark{version, commitTs, buildTs}`)."""
    return b"".join(
        (
            _WATERMARK_HEAD,
            _VERSION,
            encode_long(_wrap(commit_ts)),
            encode_long(build_ts_ms),
        )
    )


def marshal_ddl(
    ddl_type: str,
    sql: str,
    commit_ts: int,
    *,
    build_ts_ms: int,
    table: TableSchema | None = None,
    pre_table: TableSchema | None = None,
) -> bytes:
    """An Avro DDL message (tiflow newDDLMessageMap): the sink writes no DDL, this serves
    tests and tools that feed decoders. `ddl_type` is one of DDL_TYPES.

    Raises:
        InputError: an unknown DDL type.
        SchemaError: see table_schema_avro.
    """
    if ddl_type not in DDL_TYPES:
        raise InputError(
            f"DDL type {ddl_type!r} is not a Simple DDL type; use one of {', '.join(DDL_TYPES)}",
            value=ddl_type,
        )
    optional = [
        _NULL if t is None else _BRANCH1 + _write_table_schema(table_schema_avro(t))
        for t in (table, pre_table)
    ]
    return b"".join(
        (
            _DDL_HEAD,
            _VERSION,
            encode_long(DDL_TYPES.index(ddl_type)),
            _string(sql),
            encode_long(_wrap(commit_ts)),
            encode_long(build_ts_ms),
            *optional,
        )
    )


class AvroMarshaller:
    """Simple Avro for one table, compiled once: the DML record's fixed fields as bytes,
    per column its map key and value writer, in column-name order."""

    def __init__(self, table: TableSchema, *, time_zone: str, build_ts_ms: int) -> None:
        """Compile the table; `time_zone` names TIMESTAMP values' location.

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self.table = table
        self.build_ts_ms = build_ts_ms
        writers = [_writer(c, time_zone) for c in table.columns]
        order = sorted(range(len(table.columns)), key=lambda i: table.columns[i].name)
        self._columns = [(_string(table.columns[i].name), i, writers[i]) for i in order]
        handle = set(table.handle_key)
        self._key_columns = [
            entry for entry in self._columns if table.columns[entry[1]].name in handle
        ]
        identity = b"".join(
            (
                _DML_HEAD,
                _VERSION,
                _string(table.database),
                _string(table.table),
                encode_long(table.table_id),
            )
        )
        self._heads = {op: identity + code for op, code in _DML_TYPE.items()}
        self._times = encode_long(build_ts_ms) + encode_long(_wrap(table.version))
        self._bootstrap: bytes | None = None

    def marshal_row(
        self, change: RowChange, *, handle_key_only: bool = False, claim_check_location: str = ""
    ) -> bytes:
        """The DML message of a row change (tiflow newDMLMessageMap).

        INSERT carries `data`, DELETE `old`, UPDATE both; an UPDATE without a before image
        has a null `old` (as the JSON encoding, which leaves it out). `handleKeyOnly` is
        written (true) only for the handle-key-only form, `claimCheckLocation` only when
        given; `checksum` is always null.

        Raises:
            InputError: a value that does not fit its column's MySQL type.
        """
        try:
            commit_ts = encode_long(_wrap(change.commit_ts))
        except OverflowError as exc:
            raise InputError(
                f"commit ts {change.commit_ts} of a row of {self._where()} is not a uint64 TSO",
                table=self._where(),
                value=change.commit_ts,
            ) from exc
        columns = self._key_columns if handle_key_only else self._columns
        data = _NULL
        if change.op is not Op.DELETE and change.row is not None:
            data = self._map(change.row, columns)
        old = _NULL
        if change.op is not Op.INSERT and change.before is not None:
            old = self._map(change.before, columns)
        return b"".join(
            (
                self._heads[change.op],
                commit_ts,
                self._times,
                _BRANCH1 + _string(claim_check_location) if claim_check_location else _NULL,
                _BRANCH1 + _TRUE if handle_key_only else _NULL,
                _NULL,  # checksum
                data,
                old,
            )
        )

    def _where(self) -> str:
        return f"{self.table.database}.{self.table.table}"

    def _map(self, row: tuple[Any, ...], columns: list[tuple[bytes, int, Writer]]) -> bytes:
        if len(row) != len(self.table.columns):
            raise InputError(
                f"a row of {self._where()} has {len(row)} values; "
                f"the table has {len(self.table.columns)} columns",
                table=self._where(),
            )
        if not columns:
            return _BRANCH1 + b"\x00"
        try:
            entries = [
                key + (_NULL if (value := row[i]) is None else write(value))
                for key, i, write in columns
            ]
        except _VALUE_ERRORS:
            pass
        else:
            # [null, map] branch 1, one block: count, entries, 0
            return b"".join((_BRANCH1, encode_long(len(entries)), *entries, b"\x00"))
        for _, i, write in columns:  # find the culprit for the message
            value = row[i]
            try:
                if value is not None:
                    write(value)
            except _VALUE_ERRORS as exc:
                raise row_value_error(self.table, self.table.columns[i], value, exc) from exc
        raise AssertionError("unreachable: a writer failed only once")  # pragma: no cover

    def marshal_bootstrap(self) -> bytes:
        """The BOOTSTRAP message (`Bootstrap{version, buildTs, tableSchema}`; no commitTs).

        Raises:
            SchemaError: see table_schema_avro.
        """
        if self._bootstrap is None:
            self._bootstrap = b"".join(
                (
                    _BOOTSTRAP_HEAD,
                    _VERSION,
                    encode_long(self.build_ts_ms),
                    _write_table_schema(table_schema_avro(self.table)),
                )
            )
        return self._bootstrap

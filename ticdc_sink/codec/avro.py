"""TiCDC's Avro protocol (`protocol=avro`, reference §6): Confluent-framed Avro key and
value records per table, with schemas registered in a Confluent Schema Registry.

What this module owns, following tiflow `pkg/sink/codec/avro/avro.go`:

* The schema text. It is what Go's `json.Marshal` writes for tiflow's schema structures
  (`columns2AvroSchema`, `columnToAvroSchema`), byte for byte: field maps with their keys
  sorted (`default`, `name`, `type`), `connect.parameters` sorted, the union order flipping
  to `[T, "null"]` when a nullable column has a default, decimal logical types without
  defaults, FLOAT defaults widened through float32, BIT and binary defaults as base64,
  BINARY(n) defaults padded to n bytes and TIMESTAMP literal defaults in UTC (both as TiDB
  stores them; the DDL's TIMESTAMP literal is read in `time-zone`). Registries compare
  schema text, so identical bytes mean identical subjects and ids.
* The record bodies: standard Avro binary (goavro v2.14 writes the same bytes). Per table
  the constructor builds one writer function per column and, from them, one generated
  function that writes a whole record (small ints, str and float values inline, the union
  branch bytes as constants): no dict per row, no schema lookup, no union resolution per
  value. `tests/unit/test_codec_avro.py` checks the bytes against fastavro's writer.
  Decimals are written as floor(value x 10^scale) in minimal two's complement (fastavro
  would size it differently and check the precision; goavro does neither).
* Confluent framing: `0x00`, the big-endian int32 schema id, the body; key and value each
  carry their own id. DELETE writes a tombstone (value None) with the key.
* Whole record batches: `encode_batch` gives the same messages column-wise
  (codec/_avro_batch.py, numpy and pyarrow); `encode_row` stays the reference.

Schema ids come from the injected `SchemaRegistry` (codec/__init__.py), asked once per
encoder for the key and once for the value, lazily on the first row that needs them, so
the driver can build an encoder with `registry=None` to validate a table. This module does
no I/O. Avro has no wall-clock fields, so `build_ts_ms` does not exist here, and no
bootstrap, DDL or watermark messages (`avro-enable-watermark`, a TiCDC testing mode, is
not supported).

Input values are the mounter values of ticdc_sink.events. Not supported: the row checksum
fields (`integrity-check-level=correctness`) and AWS Glue framing. Where TiCDC would write
something no registry or reader accepts (two columns whose names sanitise to the same
field, a column named like an extension field), the constructor raises SchemaError.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import re
import struct
import zoneinfo
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import fastavro
import orjson

from ticdc_sink.codec import RECORD_OVERHEAD, Message, SchemaRegistry
from ticdc_sink.codec.common import (
    escape_enum_option,
    handle_key_text,
    sanitize_name,
    short_repr,
)
from ticdc_sink.codec.gojson import GoFloat, dumps
from ticdc_sink.codec.mysql import ValueKind, bit_to_int, value_kind
from ticdc_sink.config import AvroBigintUnsignedHandling, AvroDecimalHandling, CodecConfig
from ticdc_sink.errors import ConfigError, InputError, MessageTooLargeError, SchemaError
from ticdc_sink.events import ChangeBatch, Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, TableSchema

__all__ = [
    "CONFLUENT_MAGIC",
    "TIDB_COMMIT_TS",
    "TIDB_OP",
    "TIDB_PHYSICAL_TIME",
    "AvroEncoder",
    "decimal_bytes",
    "key_schema_json",
    "record_name",
    "tidb_type",
    "value_schema_json",
]

# First byte of a Confluent-framed message (tiflow avro/confluent_schema_registry.go).
CONFLUENT_MAGIC = 0
# The changefeed namespace of classic TiCDC (model.DefaultNamespace): first namespace part.
_CHANGEFEED_NAMESPACE = "default"

# Extension fields (tiflow avro.go schemaWithExtension), in schema order.
TIDB_OP = "_tidb_op"
TIDB_COMMIT_TS = "_tidb_commit_ts"
TIDB_PHYSICAL_TIME = "_tidb_commit_physical_time"
_EXTENSION_FIELDS: tuple[dict[str, Any], ...] = (
    {"default": "", "name": TIDB_OP, "type": "string"},
    {"default": 0, "name": TIDB_COMMIT_TS, "type": "long"},
    {"default": 0, "name": TIDB_PHYSICAL_TIME, "type": "long"},
)

if TYPE_CHECKING:
    from ticdc_sink.codec import EncodedBatch
    from ticdc_sink.codec._avro_batch import AvroBatchEncoder

Writer = Callable[[Any], bytes]


# --- names (tiflow common/helper.go SanitizeName, avro.go getAvroNamespace) ---------------


def _namespace(database: str) -> str:
    ns = sanitize_name(_CHANGEFEED_NAMESPACE)
    schema = sanitize_name(database)
    return f"{ns}.{schema}" if schema else ns


def record_name(table: TableSchema) -> str:
    """The full name of the table's key and value records: `default.<db>.<table>`, each
    part sanitised (reference §6.4); `default.<table>` when the database sanitises to
    nothing. Record name strategies build their subjects from it."""
    return f"{_namespace(table.database)}.{sanitize_name(table.table)}"


# --- column types (tiflow avro.go columnToAvroSchema, getTiDBTypeFromColumn) -------------

_SMALL_INTS = frozenset({"tinyint", "smallint", "mediumint"})
_TIDB_TYPES: dict[ValueKind, str] = {
    ValueKind.FLOAT32: "FLOAT",
    ValueKind.FLOAT64: "DOUBLE",
    ValueKind.BIT: "BIT",
    ValueKind.DECIMAL: "DECIMAL",
    ValueKind.TEXT: "TEXT",
    ValueKind.BINARY: "BLOB",
    ValueKind.ENUM: "ENUM",
    ValueKind.SET: "SET",
    ValueKind.JSON: "JSON",
    ValueKind.DATE: "DATE",
    ValueKind.DATETIME: "DATETIME",
    ValueKind.TIMESTAMP: "TIMESTAMP",
    ValueKind.TIME: "TIME",
    ValueKind.VECTOR: "TiDBVECTORFloat32",
}


def tidb_type(column: Column) -> str:
    """The `tidb_type` connect parameter of a column: `INT`/`BIGINT` (+ ` UNSIGNED`),
    `YEAR`, `TEXT`, `BLOB`, `FLOAT`, ... (reference §6.5).

    Raises:
        SchemaError: a type TiCDC's Avro encoder does not support.
    """
    kind = value_kind(column)
    base = column.type.base
    if base == "year":
        return "YEAR"
    if kind in (ValueKind.INT, ValueKind.UINT):
        name = "BIGINT" if base == "bigint" else "INT"
        return name + " UNSIGNED" if kind is ValueKind.UINT else name
    return _TIDB_TYPES[kind]


def _modes(config: CodecConfig) -> tuple[bool, bool]:
    """(decimal as string, BIGINT UNSIGNED as string) from the handling-mode options."""
    return (
        config.avro_decimal_handling_mode is AvroDecimalHandling.STRING,
        config.avro_bigint_unsigned_handling_mode is AvroBigintUnsignedHandling.STRING,
    )


def _column_type(column: Column, decimal_string: bool, unsigned_string: bool) -> dict[str, Any]:
    """The Go `avroSchema` / `avroLogicalTypeSchema` struct of one column: keys in struct
    order, `connect.parameters` (a Go map) with sorted keys."""
    kind = value_kind(column)
    t = column.type
    params: dict[str, str] = {"tidb_type": tidb_type(column)}
    if kind in (ValueKind.INT, ValueKind.UINT):
        if t.base == "bigint":
            avro = "string" if kind is ValueKind.UINT and unsigned_string else "long"
        elif t.base == "int" and kind is ValueKind.UINT:
            avro = "long"
        else:
            avro = "int"  # tinyint/smallint/mediumint (also unsigned), int, year
    elif kind is ValueKind.FLOAT32:
        avro = "float"
    elif kind is ValueKind.FLOAT64:
        avro = "double"
    elif kind is ValueKind.BIT:
        avro = "bytes"
        params = {"length": str(t.flen), **params}
    elif kind is ValueKind.DECIMAL:
        if not decimal_string:
            return {
                "type": "bytes",
                "connect.parameters": params,
                "logicalType": "decimal",
                "precision": t.flen,
                "scale": t.scale,
            }
        avro = "string"
    elif kind is ValueKind.BINARY:
        avro = "bytes"
    elif kind in (ValueKind.ENUM, ValueKind.SET):
        avro = "string"
        params = {"allowed": ",".join(escape_enum_option(e) for e in t.elements), **params}
    else:  # text, json, temporal, vector
        avro = "string"
    return {"type": avro, "connect.parameters": params}


# --- defaults (tiflow avro.go columnToAvroData on the column's DefaultValue) -------------

_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")


def _parse_int(text: str, bits: int) -> int:
    # Go strconv.ParseInt(text, 10, bits)
    if not _INT_TEXT.match(text):
        raise ValueError(f"{text!r} is not an integer")
    value = int(text)
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f"{text} is out of range for a {bits}-bit integer")
    return value


def _parse_float(text: str, bits: int) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text!r} is not a finite number")
    return to_float32(value) if bits == 32 else value


def _default_value(
    column: Column, decimal_string: bool, unsigned_string: bool, time_zone: str = "UTC"
) -> Any:
    """The column's default as Go's json.Marshal writes the converted value: None (JSON
    null) without a default; ints as numbers; FLOAT as float64 of ParseFloat(s, 32)
    (3.14 -> 3.140000104904175); binary strings and BIT as base64 of their bytes;
    a TIMESTAMP literal in UTC, as TiDB stores it (the DDL's literal is read in
    `time_zone`, the zone SHOW CREATE TABLE printed it in)."""
    text = column.default
    if text is None:
        return None
    kind = value_kind(column)
    base = column.type.base
    try:
        if kind in (ValueKind.INT, ValueKind.UINT):
            if base == "bigint":
                if kind is ValueKind.UINT:
                    if unsigned_string:
                        return text
                    value = int(text) if _INT_TEXT.match(text) else -1
                    if not 0 <= value < 1 << 64:
                        raise ValueError(f"{text!r} is not a BIGINT UNSIGNED")
                    return value - (1 << 64) if value >= 1 << 63 else value
                return _parse_int(text, 64)
            return _parse_int(text, 64 if base == "int" else 32)
        if kind is ValueKind.FLOAT32:
            return GoFloat(_parse_float(text, 32), 64)
        if kind is ValueKind.FLOAT64:
            return GoFloat(_parse_float(text, 64), 64)
        if kind is ValueKind.BIT:
            # TiDB keeps a BIT default as bytes (ColumnInfo.DefaultValueBit): an integer
            # default as NewBinaryLiteralFromUint(v, -1), minimal big-endian; a b'...'
            # literal as its digits padded to whole bytes, which for the literal SHOW CREATE
            # TABLE prints (leading zeros trimmed) is the same. Our model keeps the integer.
            n = int(text)
            data = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
            return base64.b64encode(data).decode("ascii")
        if kind is ValueKind.DECIMAL:
            _unscaled(text, column.type.scale)  # TiCDC parses it even when unused
            return text
        if kind is ValueKind.BINARY:
            data = text.encode("utf-8", "surrogateescape")
            if base == "binary":  # TiDB pads a BINARY(n) default with 0x00 to n bytes
                data = data.ljust(column.type.flen, b"\x00")
            return base64.b64encode(data).decode("ascii")
        if kind is ValueKind.VECTOR:
            raise ValueError("TiCDC cannot convert a VECTOR default")
        if kind is ValueKind.TIMESTAMP:
            return _timestamp_default_utc(text, time_zone)
        return text  # text, enum, set, json, other temporal types
    except (ValueError, OverflowError) as exc:
        raise SchemaError(
            f"column {column.name} has DEFAULT {text!r}, which "
            f"the avro protocol cannot write as a {column.type.base} default ({exc}); "
            "change or drop the default in table-ddl",
            column=column.name,
        ) from exc


_TIMESTAMP_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d+)?\Z")


def _timestamp_default_utc(text: str, time_zone: str) -> str:
    """TiDB ddl convertTimestampDefaultValToUTC: a TIMESTAMP literal default is stored in
    UTC; CURRENT_TIMESTAMP and the zero value stay as they are."""
    match = _TIMESTAMP_TEXT.match(text)
    if match is None or time_zone == "UTC" or text.startswith("0000-00-00"):
        return text
    y, mo, d, h, mi, sec = (int(g) for g in match.groups()[:6])
    local = dt.datetime(y, mo, d, h, mi, sec, tzinfo=zoneinfo.ZoneInfo(time_zone))
    utc = local.astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S") + (match.group(7) or "")


def _field(
    column: Column, decimal_string: bool, unsigned_string: bool, time_zone: str = "UTC"
) -> dict[str, Any]:
    """One field map (Go map: keys sorted default < name < type), tiflow columns2AvroSchema."""
    avro_type = _column_type(column, decimal_string, unsigned_string)
    default = _default_value(column, decimal_string, unsigned_string, time_zone)
    name = sanitize_name(column.name)
    if "logicalType" in avro_type:
        # goavro cannot default a logical type (linkedin/goavro#202): never a default.
        if column.nullable:
            return {"default": None, "name": name, "type": ["null", avro_type]}
        return {"name": name, "type": avro_type}
    if column.nullable:
        union = ["null", avro_type] if default is None else [avro_type, "null"]
        return {"default": default, "name": name, "type": union}
    if default is None:
        return {"name": name, "type": avro_type}
    return {"default": default, "name": name, "type": avro_type}


def _schema(table: TableSchema, columns: list[Column], config: CodecConfig, extension: bool) -> str:
    decimal_string, unsigned_string = _modes(config)
    fields = []
    seen: dict[str, str] = {}
    reserved = {f["name"]: "the TiDB extension field" for f in _EXTENSION_FIELDS}
    for column in columns:
        try:
            field = _field(column, decimal_string, unsigned_string, config.time_zone)
        except SchemaError as exc:
            raise SchemaError(
                f"table {table.database}.{table.table}: {exc.message}", column=exc.column
            ) from exc
        name = field["name"]
        clash = seen.get(name) or (reserved.get(name) if extension else None)
        if clash is not None:
            raise SchemaError(
                f"table {table.database}.{table.table}: column {column.name!r} and "
                f"{clash} both become Avro field {name!r} (names are sanitised to "
                "[A-Za-z0-9_]); rename one of them",
                column=column.name,
            )
        seen[name] = f"column {column.name!r}"
        fields.append(field)
    if extension:
        fields.extend(_EXTENSION_FIELDS)
    top = {
        "type": "record",
        "name": sanitize_name(table.table),
        "namespace": _namespace(table.database),
        "fields": fields,
    }
    return dumps(top).decode("utf-8")


def _key_columns(table: TableSchema) -> list[Column]:
    return [table.columns[i] for i in table.handle_key_indexes]


def key_schema_json(config: CodecConfig, table: TableSchema) -> str | None:
    """The key schema text (compact Go JSON) over the handle-key columns in column order,
    never with extension fields; None when the table has no handle key (no Kafka key).

    Raises:
        SchemaError: a column type or default the protocol cannot carry, or colliding
            sanitised names.
    """
    columns = _key_columns(table)
    if not columns:
        return None
    return _schema(table, columns, config, extension=False)


def value_schema_json(config: CodecConfig, table: TableSchema) -> str:
    """The value schema text (compact Go JSON) over every column in definition order, plus
    `_tidb_op`, `_tidb_commit_ts`, `_tidb_commit_physical_time` with
    `enable-tidb-extension`.

    Raises:
        SchemaError: a column type or default the protocol cannot carry, or colliding
            sanitised names.
    """
    return _schema(table, list(table.columns), config, extension=config.enable_tidb_extension)


# --- Avro binary writers (tiflow avro.go columnToAvroData + goavro) ----------------------

_BYTE = [bytes([i]) for i in range(256)]
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_FLOAT = struct.Struct("<f").pack
_DOUBLE = struct.Struct("<d").pack


def _varint(n: int) -> bytes:
    """Avro long: zig-zag, then base-128 little-endian groups. `n` must fit int64."""
    z = (n << 1) ^ (n >> 63)
    if z < 0x80:
        return _BYTE[z]
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


def _write_int32(value: Any) -> bytes:
    v = _check_int(value)
    if not _INT32_MIN <= v <= _INT32_MAX:
        raise ValueError("out of range for an Avro int")
    return _varint(v)


def _write_int64(value: Any) -> bytes:
    v = _check_int(value)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError("out of range for an Avro long")
    return _varint(v)


def _write_uint64_wrapped(value: Any) -> bytes:
    # tiflow: int64(col.Value.(uint64)); 2^63 and above become negative
    v = _check_int(value)
    if not 0 <= v < 1 << 64:
        raise ValueError("out of range for BIGINT UNSIGNED")
    return _varint(v - (1 << 64) if v > _INT64_MAX else v)


def _write_str(value: Any) -> bytes:
    if type(value) is str:
        data = value.encode("utf-8")
    elif isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)  # Go string([]byte): the bytes as they are
    else:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    return _varint(len(data)) + data


def _write_bytes(value: Any) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    data = bytes(value)
    return _varint(len(data)) + data


def _write_uint64_string(value: Any) -> bytes:
    v = _check_int(value)
    if not 0 <= v < 1 << 64:
        raise ValueError("out of range for BIGINT UNSIGNED")
    data = int.__repr__(v).encode("ascii")
    return _varint(len(data)) + data


def _write_float(value: Any) -> bytes:
    if type(value) not in (float, int):
        raise TypeError(f"expected a float, got {type(value).__name__}")
    # tiflow cdc/entry/mounter.go formatColVal: NaN and ±Inf become 0
    return _FLOAT(value if value - value == 0 else 0.0)


def _write_double(value: Any) -> bytes:
    if type(value) not in (float, int):
        raise TypeError(f"expected a float, got {type(value).__name__}")
    return _DOUBLE(value if value - value == 0 else 0.0)


def _write_bit(value: Any) -> bytes:
    # types.NewBinaryLiteralFromUint(v, -1): minimal big-endian bytes, 0 -> 00
    if isinstance(value, bool) or not isinstance(value, int | bytes | bytearray | memoryview):
        raise TypeError(f"expected an int, got {type(value).__name__}")
    n = bit_to_int(value)
    if not 0 <= n < 1 << 64:
        raise ValueError("out of range for BIT")
    data = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
    return _BYTE[len(data) << 1] + data


_DECIMAL_TEXT = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?\Z")


def _unscaled(text: str, scale: int) -> int:
    """floor(text x 10^scale) of a decimal string (Go big.Rat then big.Int.Div, which
    floors for the positive denominator).

    Raises:
        ValueError: not a plain decimal number.
    """
    whole, _, fraction = text.partition(".")
    if len(fraction) == scale:  # the mounter's form: exactly `scale` fraction digits
        digits = whole + fraction
        unsigned = digits[1:] if digits[:1] in ("-", "+") else digits
        if unsigned.isascii() and unsigned.isdigit():
            return -int(unsigned) if digits[0] == "-" else int(unsigned)
    match = _DECIMAL_TEXT.match(text)
    if match is None or not (match.group(2) or match.group(3)):
        raise ValueError(f"{text!r} is not a decimal number")
    sign, whole, fraction = match.group(1), match.group(2) or "0", match.group(3) or ""
    if len(fraction) <= scale:
        n = int(whole + fraction.ljust(scale, "0"))
        return -n if sign == "-" else n
    n = int(whole + fraction[:scale])
    if sign == "-":
        # floor of a negative value with dropped non-zero digits goes one further down
        return -n - (1 if fraction[scale:].strip("0") else 0)
    return n


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
            unscaled = _unscaled(value, scale)
        size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
        if size < 64:
            return _BYTE[size << 1] + unscaled.to_bytes(size, "big", signed=True)
        return _varint(size) + unscaled.to_bytes(size, "big", signed=True)

    return write


def _enum_writer(elements: tuple[str, ...]) -> Writer:
    encoded = [_write_str(e) for e in elements]

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
        return _write_str(",".join(e for i, e in enumerate(elements) if mask >> i & 1))

    def write(value: Any) -> bytes:
        mask = _check_int(value)
        # types.ParseSetValue: bits beyond the elements fail
        if not 0 <= mask < limit:
            raise ValueError(f"SET bitmask must be below {limit}")
        return names(mask)

    return write


def _value_writer(column: Column, decimal_string: bool, unsigned_string: bool) -> Writer:
    kind = value_kind(column)
    base = column.type.base
    if kind is ValueKind.INT:
        return _write_int64 if base == "bigint" else _write_int32
    if kind is ValueKind.UINT:
        if base == "bigint":
            return _write_uint64_string if unsigned_string else _write_uint64_wrapped
        return _write_int64 if base == "int" else _write_int32
    if kind is ValueKind.FLOAT32:
        return _write_float
    if kind is ValueKind.FLOAT64:
        return _write_double
    if kind is ValueKind.BIT:
        return _write_bit
    if kind is ValueKind.DECIMAL:
        if decimal_string:
            return _write_decimal_string
        return _decimal_writer(column.type.scale)
    if kind is ValueKind.BINARY:
        return _write_bytes
    if kind is ValueKind.ENUM:
        return _enum_writer(column.type.elements)
    if kind is ValueKind.SET:
        return _set_writer(column.type.elements)
    if kind is ValueKind.TEXT:
        return _write_str
    return _write_plain_str  # json, temporal, vector: the mounter string


def _write_plain_str(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    data = value.encode("utf-8")
    return _varint(len(data)) + data


def _write_decimal_string(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a decimal str, got {type(value).__name__}")
    _unscaled(value, 0)  # reject what is not a number, as big.Rat would in precise mode
    data = value.encode("ascii")
    return _varint(len(data)) + data


def _not_null(write: Writer) -> Writer:
    def checked(value: Any) -> bytes:
        if value is None:
            raise ValueError("NULL in a NOT NULL column")
        return write(value)

    return checked


def _nullable(write: Writer, null_first: bool) -> Writer:
    # ["null", T]: null is branch 0, the value branch 1; [T, "null"]: the other way round.
    null_branch, value_branch = (b"\x00", b"\x02") if null_first else (b"\x02", b"\x00")

    def union(value: Any) -> bytes:
        if value is None:
            return null_branch
        return value_branch + write(value)

    return union


def _writers(
    columns: list[tuple[int, Column]], decimal_string: bool, unsigned_string: bool
) -> list[tuple[int, Writer]]:
    """Per column (row position, writer of the field including its union branch)."""
    out = []
    for position, column in columns:
        write = _value_writer(column, decimal_string, unsigned_string)
        if column.nullable:
            write = _nullable(
                write, null_first=_null_first(column, decimal_string, unsigned_string)
            )
        else:
            write = _not_null(write)
        out.append((position, write))
    return out


def _null_first(column: Column, decimal_string: bool, unsigned_string: bool) -> bool:
    return _field(column, decimal_string, unsigned_string)["type"][0] == "null"


# Writers whose common inputs the compiled body writes inline (see `_compile_body`).
_INT_RANGES: dict[Writer, tuple[int, int]] = {
    _write_int32: (_INT32_MIN, _INT32_MAX),
    _write_int64: (_INT64_MIN, _INT64_MAX),
    _write_uint64_wrapped: (0, _INT64_MAX),  # beyond: the writer wraps
}
_INT_WRITERS = frozenset(_INT_RANGES)
_STR_WRITERS = frozenset({_write_str, _write_plain_str})
# zig-zag varints of -64..63: one byte each
_SMALL_LONGS = [_BYTE[(n << 1) ^ (n >> 63)] for n in range(-64, 64)]


def _compile_body(
    columns: list[tuple[int, Column]], decimal_string: bool, unsigned_string: bool
) -> Callable[[tuple[Any, ...]], bytes]:
    """One function writing a record's fields for a row, generated once per table.

    Per row this costs one call instead of two or three per column (no union closure, and
    small ints and str values are written inline); other values go to the column's
    writer. It raises on a bad value without saying which column: `AvroEncoder._body`
    then finds the culprit with the per-column writers of `_writers`. The code is built
    from constants and column positions only, never from names or values.
    """
    namespace: dict[str, Any] = {
        "S": _SMALL_LONGS,
        "B": _BYTE,
        "V": _varint,
        "D": _DOUBLE,
        "F": _FLOAT,
    }
    lines = ["def body(row):", "    out = []", "    add = out.append"]
    for j, (position, column) in enumerate(columns):
        write = _value_writer(column, decimal_string, unsigned_string)
        namespace[f"w{j}"] = write
        lines.append(f"    v = row[{position}]")
        indent = "    "
        if column.nullable:
            null_first = _null_first(column, decimal_string, unsigned_string)
            null_branch, value_branch = (b"\x00", b"\x02") if null_first else (b"\x02", b"\x00")
            namespace[f"n{j}"], namespace[f"p{j}"] = null_branch, value_branch
            lines += ["    if v is None:", f"        add(n{j})", "    else:", f"        add(p{j})"]
            indent = "        "
        if write in _INT_WRITERS:
            low, high = _INT_RANGES[write]
            lines += [
                f"{indent}if type(v) is int and -64 <= v < 64:",
                f"{indent}    add(S[v + 64])",
                f"{indent}elif type(v) is int and {low} <= v <= {high}:",
                f"{indent}    add(V(v))",
                f"{indent}else:",
                f"{indent}    add(w{j}(v))",
            ]
        elif write is _write_double or write is _write_float:
            lines += [
                f"{indent}if type(v) is float and v - v == 0.0:",  # finite
                f"{indent}    add({'D' if write is _write_double else 'F'}(v))",
                f"{indent}else:",
                f"{indent}    add(w{j}(v))",
            ]
        elif write in _STR_WRITERS:
            lines += [
                f"{indent}if type(v) is str:",
                f"{indent}    d = v.encode()",
                f"{indent}    n = len(d)",
                f"{indent}    add(B[n << 1] if n < 64 else V(n))",
                f"{indent}    add(d)",
                f"{indent}else:",
                f"{indent}    add(w{j}(v))",
            ]
        else:
            lines.append(f"{indent}add(w{j}(v))")
    lines.append("    return b''.join(out)")
    exec(compile("\n".join(lines), "<ticdc_sink.codec.avro body>", "exec"), namespace)
    return namespace["body"]


def _frame(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big", signed=True) + body


class AvroEncoder:
    """The Avro protocol encoder of one table, built once and reused for every row.

    The constructor builds both schema texts and the per-column writers (so a type or
    default the protocol cannot carry fails on the driver) and never calls the registry.
    Messages: key = Confluent-framed record of the handle-key columns (None without a
    handle key); value = Confluent-framed record of the new image, None (a tombstone) for
    DELETE. `len(key) + len(value) + 36 > max-message-bytes` raises MessageTooLargeError:
    Avro has no large-message handling (tiflow AppendRowChangedEvent).
    """

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        topic: str,
        registry: SchemaRegistry | None,
    ) -> None:
        """Compile the table for `topic` (the Kafka topic the messages go to; subjects
        derive from it).

        Raises:
            SchemaError: a column type or default the protocol cannot carry, or column
                names that collide once sanitised.
        """
        self.config = config
        self.table = table
        self.topic = topic
        self.record_name = record_name(table)
        self.key_schema = key_schema_json(config, table)
        self.value_schema = value_schema_json(config, table)
        for text in (self.key_schema, self.value_schema):
            if text is not None:
                try:
                    fastavro.parse_schema(orjson.loads(text))
                except Exception as exc:  # fastavro raises several exception types
                    raise SchemaError(
                        f"table {table.database}.{table.table}: the Avro schema is "
                        f"invalid: {exc}; check the column types and defaults in table-ddl"
                    ) from exc
        decimal_string, unsigned_string = _modes(config)
        self._registry = registry
        self._key_header: bytes | None = None
        self._value_header: bytes | None = None
        self._extension = config.enable_tidb_extension
        self._limit = config.max_message_bytes
        self._has_key = bool(table.handle_key_indexes)
        self._tail_ts = -1
        self._tail_pair = (b"", b"")
        self._name = f"{table.database}.{table.table}"
        self._width = len(table.columns)
        value_columns = list(enumerate(table.columns))
        key_columns = [(i, table.columns[i]) for i in table.handle_key_indexes]
        self._value_writers = _writers(value_columns, decimal_string, unsigned_string)
        self._key_writers = _writers(key_columns, decimal_string, unsigned_string)
        self._value_body = _compile_body(value_columns, decimal_string, unsigned_string)
        self._key_body = _compile_body(key_columns, decimal_string, unsigned_string)
        self._batch_encoder: AvroBatchEncoder | None = None

    # -- registry ids, fetched once each on first use

    def _header(self, is_key: bool) -> bytes:
        """The Confluent header of the key or value: asks the registry the first time."""
        registry = self._registry
        if registry is None:
            raise ConfigError(
                "protocol avro needs a schema registry to encode rows; set option "
                "schema-registry (the encoder was built without one)",
                option="schema-registry",
            )
        schema = self.key_schema if is_key else self.value_schema
        assert schema is not None
        schema_id = registry.schema_id(self.topic, self.record_name, schema, is_key=is_key)
        header = _frame(schema_id, b"")
        if is_key:
            self._key_header = header
        else:
            self._value_header = header
        return header

    # -- bodies

    def _culprit(self, row: tuple[Any, ...], writers: list[tuple[int, Writer]]) -> InputError:
        """The error naming the column whose value the compiled body could not write."""
        for i, write in writers:
            column = self.table.columns[i]
            try:
                write(row[i])
            except (TypeError, ValueError, OverflowError) as exc:
                return InputError(
                    f"column {column.name} of {self._name} ({column.type.to_sql()}) cannot "
                    f"take {short_repr(row[i])}: {exc}",
                    table=self._name,
                    column=column.name,
                    value=row[i],
                )
        raise AssertionError("unreachable: a writer failed only once")  # pragma: no cover

    def _bad_image(self, change: RowChange) -> InputError:
        image = change.before if change.op is Op.DELETE else change.row
        if image is None:
            which = "before (the deleted row)" if change.op is Op.DELETE else "row"
            return InputError(
                f"a {change.op.value} of {self._name} has no {which} image", table=self._name
            )
        return InputError(
            f"a row of {self._name} has {len(image)} values; the table has {self._width} columns",
            table=self._name,
        )

    def _tail(self, commit_ts: int) -> tuple[bytes, bytes]:
        """The extension fields for INSERT and UPDATE at `commit_ts`; rows of one
        transaction (or micro-batch) share them, so the last pair is kept."""
        if commit_ts != self._tail_ts:
            ts = commit_ts - (1 << 64) if commit_ts > _INT64_MAX else commit_ts  # int64()
            rest = _varint(ts) + _varint(commit_ts >> 18)
            self._tail_pair = (b"\x02c" + rest, b"\x02u" + rest)
            self._tail_ts = commit_ts
        return self._tail_pair

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change.

        Raises:
            InputError: a value that does not fit its column (or NULL in a NOT NULL one).
            MessageTooLargeError: key + value + 36 above max-message-bytes.
            ConfigError: the encoder has no registry.
            RegistryError: from the registry, when fetching a schema id.
        """
        op = change.op
        image = change.before if op is Op.DELETE else change.row
        if image is None or len(image) != self._width:
            raise self._bad_image(change)
        key: bytes | None = None
        if self._has_key:
            try:
                body = self._key_body(image)
            except (TypeError, ValueError, OverflowError) as exc:
                raise self._culprit(image, self._key_writers) from exc
            key = (self._key_header or self._header(True)) + body
        value: bytes | None = None
        if op is not Op.DELETE:
            try:
                body = self._value_body(image)
            except (TypeError, ValueError, OverflowError) as exc:
                raise self._culprit(image, self._value_writers) from exc
            header = self._value_header or self._header(False)
            if self._extension:
                insert_tail, update_tail = self._tail(change.commit_ts)
                value = header + body + (insert_tail if op is Op.INSERT else update_tail)
            else:
                value = header + body
        size = (0 if key is None else len(key)) + (0 if value is None else len(value))
        if size + RECORD_OVERHEAD > self._limit:
            raise MessageTooLargeError(
                table=self._name,
                key=handle_key_text(self.table, image),
                size=size + RECORD_OVERHEAD,
                limit=self._limit,
            )
        return Message(key=key, value=value, commit_ts=change.commit_ts, rows=1)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch | None:
        """The messages `encode_row` gives for every event of `batch` (a key-changing
        UPDATE split into DELETE + INSERT), rendered column-wise (codec/_avro_batch.py);
        None when the row path has to render this batch.

        Raises:
            InputError: a value that does not fit its column, as `encode_row` words it.
            ConfigError: the encoder has no registry.
            RegistryError: from the registry, when fetching a schema id.
        """
        if self._batch_encoder is None:
            from ticdc_sink.codec._avro_batch import AvroBatchEncoder

            self._batch_encoder = AvroBatchEncoder(self)
        return self._batch_encoder.encode_batch(batch, key_indexes)

    def encode_bootstrap(self) -> None:
        """None: the Avro protocol has no bootstrap message (schemas live in the registry)."""
        return None

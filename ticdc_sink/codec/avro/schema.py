"""Avro protocol schemas (tiflow `pkg/sink/codec/avro/avro.go` `columns2AvroSchema`,
`columnToAvroSchema`): the key and value schema text of a table, the names and types of
its fields, column defaults as TiCDC converts them, and the decimal text rule the value
writers share.

The schema text is what Go's `json.Marshal` writes for tiflow's schema structures, byte
for byte: field maps with their keys sorted (`default`, `name`, `type`),
`connect.parameters` sorted, the union order flipping to `[T, "null"]` when a nullable
column has a default, decimal logical types without defaults, FLOAT defaults widened
through float32, BIT and binary defaults as base64, BINARY(n) defaults padded to n bytes
and TIMESTAMP literal defaults in UTC (both as TiDB stores them; the DDL's TIMESTAMP
literal is read in `time-zone`). Registries compare schema text, so identical bytes mean
identical subjects and ids. Where TiCDC would write something no registry or reader
accepts (two columns whose names sanitise to the same field, a column named like an
extension field), the functions raise SchemaError.

With `avro-include-before-value` (pingcap/ticdc master, after v26.3.4: `arvo.go`
`schemaWithBeforeValue`, `schemaWithOperation`) the value record gets `_ticdc_before`
after the columns, `["null", <table>_before]` with the columns' record again, and
`_tidb_op` even without the extension fields.

With the row checksum (`integrity-check-level=correctness`, tiflow `EnableRowChecksum`),
`value2AvroSchema` sorts the value columns by column ID (`value_columns`; the key keeps
the handle-key order) and `schemaWithExtension` appends `_tidb_row_level_checksum`,
`_tidb_corrupted` and `_tidb_checksum_version` after the other extension fields.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import zoneinfo
from typing import TYPE_CHECKING, Any

from ticdc_sink.codec.choices import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    SubjectNameStrategy,
)
from ticdc_sink.codec.common import escape_enum_option, sanitize_name
from ticdc_sink.codec.gojson import GoFloat, dumps
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.errors import SchemaError
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = [
    "TIDB_CHECKSUM_VERSION",
    "TIDB_COMMIT_TS",
    "TIDB_CORRUPTED",
    "TIDB_OP",
    "TIDB_PHYSICAL_TIME",
    "TIDB_ROW_LEVEL_CHECKSUM",
    "KEY_RECORD",
    "TICDC_BEFORE",
    "as_fastavro_reads_it",
    "key_record_name",
    "key_schema_json",
    "modes",
    "null_first",
    "record_name",
    "tidb_type",
    "timestamp_default_local",
    "unscaled_decimal",
    "value_columns",
    "value_schema_json",
]

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
# The row checksum fields, after those (schemaWithExtension with EnableRowChecksum).
TIDB_ROW_LEVEL_CHECKSUM = "_tidb_row_level_checksum"
TIDB_CORRUPTED = "_tidb_corrupted"
TIDB_CHECKSUM_VERSION = "_tidb_checksum_version"
_CHECKSUM_FIELDS: tuple[dict[str, Any], ...] = (
    {"default": "", "name": TIDB_ROW_LEVEL_CHECKSUM, "type": "string"},
    {"default": False, "name": TIDB_CORRUPTED, "type": "boolean"},
    {"default": 0, "name": TIDB_CHECKSUM_VERSION, "type": "int"},
)

# The old row with avro-include-before-value (pingcap/ticdc avro/arvo.go
# schemaWithBeforeValue): a nullable `<table>_before` record after the columns, and,
# without the extension fields, `_tidb_op` alone after it (schemaWithOperation).
TICDC_BEFORE = "_ticdc_before"
BEFORE_SUFFIX = "_before"

# --- names (tiflow common/helper.go SanitizeName, avro.go getAvroNamespace) ---------------


def _namespace(database: str) -> str:
    ns = sanitize_name(_CHANGEFEED_NAMESPACE)
    schema = sanitize_name(database)
    return f"{ns}.{schema}" if schema else ns


def record_name(table: TableSchema) -> str:
    """The full name of the table's value record (and, under TiCDC's topic strategy, of
    its key record too): `default.<db>.<table>`, each part sanitised (reference §6.4);
    `default.<table>` when the database sanitises to nothing. Record name strategies
    build their subjects from it."""
    return f"{_namespace(table.database)}.{sanitize_name(table.table)}"


#: The key record's name under the record strategies, in the value record's full name as
#: namespace (Debezium names its key records `<...>.<table>.Key` too).
KEY_RECORD = "Key"


def key_record_name(config: CodecConfig, table: TableSchema) -> str:
    """The full name of the table's key record. TiCDC names it as the value record
    (tiflow avro.go: both `{namespace}.{table}`), and its topic strategy keeps them apart
    by subject (`-key`, `-value`). Confluent's record strategies name a subject after
    the record alone, so the key and value would share one, and a value schema with a NOT
    NULL column is incompatible with the key schema registered before it: under those
    strategies (which TiCDC does not have) the key record is `<value full name>.Key`."""
    if config.subject_name_strategy is SubjectNameStrategy.TOPIC:
        return record_name(table)
    return f"{record_name(table)}.{KEY_RECORD}"


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


def as_fastavro_reads_it(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with a whole-number default of a FLOAT / DOUBLE field written as a float
    (`0.0`) for fastavro, which refuses `0` for a float type with properties although the
    Avro specification allows any JSON number; Go writes `0`, and the schema text sent
    keeps it. The encoder checks and the decoder parses schemas through this."""
    fields = []
    for field in schema.get("fields", []):
        kind = field.get("type")
        name = kind.get("type") if isinstance(kind, dict) else kind
        default = field.get("default")
        if name in ("float", "double") and type(default) is int:
            field = {**field, "default": float(default)}
        if field.get("name") == TICDC_BEFORE and isinstance(kind, list):
            # the before record's fields hold the same defaults
            members = [as_fastavro_reads_it(m) if isinstance(m, dict) else m for m in kind]
            field = {**field, "type": members}
        fields.append(field)
    return {**schema, "fields": fields}


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


def modes(config: CodecConfig) -> tuple[bool, bool]:
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
            unscaled_decimal(text, column.type.scale)  # TiCDC parses it even when unused
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


def timestamp_default_local(text: str, time_zone: str) -> str:
    """The inverse of `_timestamp_default_utc`: a TIMESTAMP default as a schema holds it
    (UTC) read back as the literal in `time_zone`."""
    match = _TIMESTAMP_TEXT.match(text)
    if match is None or time_zone == "UTC" or text.startswith("0000-00-00"):
        return text
    y, mo, d, h, mi, sec = (int(g) for g in match.groups()[:6])
    utc = dt.datetime(y, mo, d, h, mi, sec, tzinfo=dt.UTC)
    local = utc.astimezone(zoneinfo.ZoneInfo(time_zone))
    return local.strftime("%Y-%m-%d %H:%M:%S") + (match.group(7) or "")


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


def _record(
    table: TableSchema,
    columns: list[Column],
    config: CodecConfig,
    extension: tuple[dict[str, Any], ...],
    named: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The record schema (tiflow's avroSchemaTop, in its field order); `named` is its
    (namespace, name), else the table's; the column fields are followed by `extension`.
    A `_ticdc_before` field of `extension` holds the columns' record again, named
    `<table>_before` in the same namespace (pingcap/ticdc schemaWithBeforeValue)."""
    decimal_string, unsigned_string = modes(config)
    fields = []
    seen: dict[str, str] = {}
    reserved = {f["name"]: "the TiDB extension field" for f in extension}
    for column in columns:
        try:
            field = _field(column, decimal_string, unsigned_string, config.time_zone)
        except SchemaError as exc:
            raise SchemaError(
                f"table {table.database}.{table.table}: {exc.message}", column=exc.column
            ) from exc
        name = field["name"]
        clash = seen.get(name) or reserved.get(name)
        if clash is not None:
            raise SchemaError(
                f"table {table.database}.{table.table}: column {column.name!r} and "
                f"{clash} both become Avro field {name!r} (names are sanitised to "
                "[A-Za-z0-9_]); rename one of them",
                column=column.name,
            )
        seen[name] = f"column {column.name!r}"
        fields.append(field)
    namespace, record = named or (_namespace(table.database), sanitize_name(table.table))
    for field in extension:
        if field["name"] == TICDC_BEFORE:
            before = {
                "type": "record",
                "name": record + BEFORE_SUFFIX,
                "namespace": namespace,
                "fields": list(fields),
            }
            field = {"default": None, "name": TICDC_BEFORE, "type": ["null", before]}
        fields.append(field)
    return {"type": "record", "name": record, "namespace": namespace, "fields": fields}


def _schema(
    table: TableSchema,
    columns: list[Column],
    config: CodecConfig,
    extension: tuple[dict[str, Any], ...],
    named: tuple[str, str] | None = None,
) -> str:
    """The record schema text (Go's json.Marshal of `_record`)."""
    return dumps(_record(table, columns, config, extension, named)).decode("utf-8")


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
    namespace, _, name = key_record_name(config, table).rpartition(".")
    return _schema(table, columns, config, extension=(), named=(namespace, name))


def value_schema_json(config: CodecConfig, table: TableSchema) -> str:
    """The value schema text (compact Go JSON) over every column (`value_columns`), plus,
    with `avro-include-before-value`, `_ticdc_before` (`_record`); then `_tidb_op`,
    `_tidb_commit_ts`, `_tidb_commit_physical_time` with `enable-tidb-extension` (and the
    row checksum fields with the row checksum), or `_tidb_op` alone with
    `avro-include-before-value` (pingcap/ticdc avro/arvo.go value2AvroSchema).

    Raises:
        SchemaError: a column type or default the protocol cannot carry, or colliding
            sanitised names.
    """
    extension: tuple[dict[str, Any], ...] = ()
    if config.avro_include_before_value:
        extension = ({"name": TICDC_BEFORE},)
    if config.enable_tidb_extension:
        extension += _EXTENSION_FIELDS + (_CHECKSUM_FIELDS if config.row_checksum else ())
    elif config.avro_include_before_value:
        extension += _EXTENSION_FIELDS[:1]
    columns = [table.columns[i] for i in value_columns(config, table)]
    return _schema(table, columns, config, extension=extension)


def value_columns(config: CodecConfig, table: TableSchema) -> list[int]:
    """The positions of the value record's columns in field order: definition order, or
    column-ID order with the row checksum (tiflow `value2AvroSchema` sorts by ID)."""
    positions = list(range(len(table.columns)))
    if config.row_checksum:
        positions.sort(key=lambda i: table.columns[i].column_id)
    return positions


_DECIMAL_TEXT = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?\Z")


def unscaled_decimal(text: str, scale: int) -> int:
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


def null_first(column: Column, decimal_string: bool, unsigned_string: bool) -> bool:
    """Whether a nullable column's union is `["null", T]` (null is branch 0), not
    `[T, "null"]` (a column with a default)."""
    return _field(column, decimal_string, unsigned_string)["type"][0] == "null"

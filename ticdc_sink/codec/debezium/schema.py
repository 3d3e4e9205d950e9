"""Debezium schemas (tiflow `debezium/codec.go` `writeDebeziumFieldSchema`, `getTiDBType`,
`internal.MySQLType2JdbcType`): each column's field schema, the constant `source` object and
envelope pieces, the schema topic name, and the TSO check every message makes.

The JSON is what tiflow's `util.JSONWriter` (json-iterator with `EscapeHTML:false`,
reference §1.8) writes, byte for byte: keys in the order the Go code writes them.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ticdc_sink.codec.common import escape_enum_option, sanitize_name, sanitize_topic_name
from ticdc_sink.codec.debezium import temporal
from ticdc_sink.codec.debezium.values import bit_renderer, go_parse_float
from ticdc_sink.codec.mysql import ValueKind
from ticdc_sink.errors import InputError
from ticdc_sink.gotext import jsoniter_float, jsoniter_quote
from ticdc_sink.schema import Column, MySQLType
from ticdc_sink.ticdc_version import TiCDCVersion

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = [
    "DEBEZIUM_VERSION",
    "SOURCE_SCHEMA",
    "TAIL_SCHEMA",
    "check_ts",
    "source_schema",
    "connect_type",
    "field_schema",
    "jdbc_type",
    "schema_topic_name",
    "source_parts",
    "source_text",
    "tidb_type",
]

DEBEZIUM_VERSION = "2.4.0.Final"


def schema_topic_name(cluster: str, database: str, table: str) -> str:
    """tiflow `getSchemaTopicName`: `<cluster>.<db>.<table>` sanitised (reference §8.1)."""
    return f"{sanitize_name(cluster)}.{sanitize_name(database)}.{sanitize_topic_name(table)}"


_NO_UNSIGNED_SUFFIX = frozenset(
    {"year", "bit", "varchar", "varbinary", "char", "binary", "decimal"}
)  # TypeYear, TypeBit, TypeVarchar, TypeString, TypeNewDecimal


def tidb_type(mysql_type: MySQLType) -> str:
    """The `tidb_type` of a field schema (tiflow `getTiDBType`): TiDB's `TypeToStr` name,
    plus ` unsigned` except for YEAR, BIT, VARCHAR, CHAR and DECIMAL."""
    base = mysql_type.base
    if mysql_type.unsigned and base not in _NO_UNSIGNED_SUFFIX:
        return base + " unsigned"
    return base


_JDBC = {
    "tinyint": 5,
    "smallint": 5,
    "mediumint": 4,
    "int": 4,
    "year": 4,
    "float": 6,
    "double": 8,
    "decimal": 3,
    "timestamp": 2014,
    "datetime": 93,
    "bigint": -5,
    "date": 91,
    "time": 92,
    "enum": 1,
    "set": 1,
    "tinytext": 12,
    "text": 12,
    "mediumtext": 12,
    "longtext": 12,
    "tinyblob": 2004,
    "blob": 2004,
    "mediumblob": 2004,
    "longblob": 2004,
    "varchar": 12,
    "varbinary": -3,
    "char": 1,
    "binary": -2,
    "bit": -7,
    "json": 1111,
}


def jdbc_type(mysql_type: MySQLType) -> int:
    """tiflow `internal.MySQLType2JdbcType` (java.sql.Types constant); VARCHAR otherwise."""
    return _JDBC.get(mysql_type.base, 12)


# --- field schemas (tiflow writeDebeziumFieldSchema) ---------------------------------------


def _schema_default(column: Column, kind: ValueKind, zone: dt.tzinfo | None) -> str | None:
    """The JSON text of the field schema's `default`, or None for no `default` key."""
    default = column.default
    if default is None:
        return None
    t = column.type
    not_null = not column.nullable
    match kind:
        case ValueKind.BIT:
            width = max(t.flen, 1)
            try:
                value = int(default)
            except ValueError:
                return None
            if width == 1:
                return "true" if value != 0 else "false"
            return bit_renderer(width)(value)
        case ValueKind.TEXT | ValueKind.BINARY | ValueKind.ENUM | ValueKind.SET:
            return jsoniter_quote(default)
        case ValueKind.JSON | ValueKind.VECTOR:
            return jsoniter_quote(default)
        case ValueKind.DATE:
            days = temporal.date_days(default)
            if days is None:
                return "0" if not_null else None
            return int.__repr__(days)
        case ValueKind.DATETIME:
            if default == "CURRENT_TIMESTAMP":
                return "0"
            try:
                parts = temporal.parse_datetime(default)
            except ValueError:
                return "0"
            micros = temporal.epoch_micros(parts)
            if micros is None:
                return "0" if not_null else None
            return int.__repr__(micros // 1000 if t.fsp <= 3 else micros)
        case ValueKind.TIMESTAMP:
            if default == "CURRENT_TIMESTAMP":
                return temporal.EPOCH_ZERO_Z if not_null else None
            try:
                stored = temporal.stored_timestamp_default(default, zone)
            except (ValueError, OverflowError):
                return "0"
            if stored < temporal.MIN_TIMESTAMP:
                return temporal.EPOCH_ZERO_Z if not_null else None
            if not temporal.valid_date(*stored[:3]):
                return "0"
            return temporal.zoned_text(temporal.to_utc(stored, None), t.fsp)
        case ValueKind.TIME:
            try:
                return int.__repr__(temporal.time_micros(default))
            except ValueError:
                return None
        case _:  # integers, YEAR, FLOAT, DOUBLE, DECIMAL: ParseFloat(default, 64)
            try:
                number = go_parse_float(default)
            except ValueError:
                return None
            if t.base == "year":
                if number < 70:
                    number += 2000
                elif number < 100:
                    number += 1900
            return jsoniter_float(number)


_INT_SCHEMA_TYPE = {
    ("tinyint", False): "int16",
    ("tinyint", True): "int16",
    ("smallint", False): "int16",
    ("smallint", True): "int32",
    ("mediumint", False): "int32",
    ("mediumint", True): "int32",
    ("int", False): "int32",
    ("int", True): "int64",
    ("bigint", False): "int64",
    ("bigint", True): "int64",
}


def connect_type(column: Column, kind: ValueKind) -> tuple[str, str | None, str | None]:
    """(`type`, `name`, `parameters` JSON text) of a column's field schema (debezium-avro
    starts from it too)."""
    t = column.type
    match kind:
        case ValueKind.BIT:
            width = max(t.flen, 1)
            if width == 1:
                return "boolean", None, None
            return "bytes", "io.debezium.data.Bits", '{"length":' + jsoniter_quote(str(width)) + "}"
        case ValueKind.ENUM:
            allowed = ",".join(escape_enum_option(e) for e in t.elements)
            return "string", "io.debezium.data.Enum", '{"allowed":' + jsoniter_quote(allowed) + "}"
        case ValueKind.SET:
            allowed = ",".join(t.elements)
            return (
                "string",
                "io.debezium.data.EnumSet",
                '{"allowed":' + jsoniter_quote(allowed) + "}",
            )
        case ValueKind.DATE:
            return "int32", "io.debezium.time.Date", None
        case ValueKind.DATETIME:
            name = "io.debezium.time.Timestamp" if t.fsp <= 3 else "io.debezium.time.MicroTimestamp"
            return "int64", name, None
        case ValueKind.TIMESTAMP:
            return "string", "io.debezium.time.ZonedTimestamp", None
        case ValueKind.TIME:
            return "int64", "io.debezium.time.MicroTime", None
        case ValueKind.JSON:
            return "string", "io.debezium.data.Json", None
        case ValueKind.VECTOR:
            return "string", "io.debezium.data.TiDBVectorFloat32", None
        case ValueKind.FLOAT32:
            return ("double" if t.tidb_decimal != -1 else "float"), None, None
        case ValueKind.FLOAT64 | ValueKind.DECIMAL:
            return "double", None, None
        case ValueKind.INT | ValueKind.UINT if t.base == "year":
            return "int32", "io.debezium.time.Year", None
        case ValueKind.INT | ValueKind.UINT:
            return _INT_SCHEMA_TYPE[(t.base, t.unsigned)], None, None
        case _:
            return "string", None, None


def field_schema(column: Column, kind: ValueKind, extension: bool, zone: dt.tzinfo | None) -> str:
    """The field schema of a column (`tidb_type` with `extension`)."""
    kind_name, name, parameters = connect_type(column, kind)
    parts = []
    if extension:
        parts.append('"tidb_type":' + jsoniter_quote(tidb_type(column.type)))
    parts.append('"type":"' + kind_name + '"')
    parts.append('"optional":' + ("true" if column.nullable else "false"))
    if name is not None:
        parts.append('"name":"' + name + '"')
        if kind is not ValueKind.VECTOR:
            parts.append('"version":1')
    if parameters is not None:
        parts.append('"parameters":' + parameters)
    parts.append('"field":' + jsoniter_quote(column.name))
    default = _schema_default(column, kind, zone)
    if default is not None:
        parts.append('"default":' + default)
    return "{" + ",".join(parts) + "}"


# --- constant envelope pieces --------------------------------------------------------------

#: The fields of `source`'s schema, in the order of tiflow's `writeSourceSchema`.
_SOURCE_FIELDS = (
    '{"type":"struct","fields":['
    '{"type":"string","optional":false,"field":"version"},'
    '{"type":"string","optional":false,"field":"connector"},'
    '{"type":"string","optional":false,"field":"name"},'
    '{"type":"int64","optional":false,"field":"ts_ms"},'
    '{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,'
    '"parameters":{"allowed":"true,last,false,incremental"},"default":"false",'
    '"field":"snapshot"},'
    '{"type":"string","optional":false,"field":"db"},'
    '{"type":"string","optional":true,"field":"sequence"},'
    '{"type":"string","optional":true,"field":"table"},'
    '{"type":"int64","optional":false,"field":"server_id"},'
    '{"type":"string","optional":true,"field":"gtid"},'
    '{"type":"string","optional":false,"field":"file"},'
    '{"type":"int64","optional":false,"field":"pos"},'
    '{"type":"int32","optional":false,"field":"row"},'
    '{"type":"int64","optional":true,"field":"thread"},'
    '{"type":"string","optional":true,"field":"query"}'
)
_SOURCE_END = '],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"}'
#: pingcap/ticdc v26.3 `writeSourceSchema` adds these with enable-tidb-extension.
_EXTENSION_SOURCE_FIELDS = (
    ',{"type":"int64","optional":false,"field":"commit_ts"},'
    '{"type":"string","optional":false,"field":"cluster_id"}'
)
#: The field schema of `source` (tiflow v8.5; pingcap/ticdc v26.3 without the extension).
SOURCE_SCHEMA = _SOURCE_FIELDS + _SOURCE_END
#: The same with the TiDB extension fields of pingcap/ticdc v26.3.
_EXTENDED_SOURCE_SCHEMA = _SOURCE_FIELDS + _EXTENSION_SOURCE_FIELDS + _SOURCE_END


def source_schema(config: CodecConfig) -> str:
    """The field schema of `source` as `config` writes it: from pingcap/ticdc v26.3 on,
    with `enable-tidb-extension` it lists `commit_ts` and `cluster_id` (which the payload
    carries in every version)."""
    if config.enable_tidb_extension and config.ticdc_version.at_least(TiCDCVersion.V26_3):
        return _EXTENDED_SOURCE_SCHEMA
    return SOURCE_SCHEMA


#: The field schemas of `op`, `ts_ms` and `transaction`.
TAIL_SCHEMA = (
    '{"type":"string","optional":false,"field":"op"},'
    '{"type":"int64","optional":true,"field":"ts_ms"},'
    '{"type":"struct","fields":['
    '{"type":"string","optional":false,"field":"id"},'
    '{"type":"int64","optional":false,"field":"total_order"},'
    '{"type":"int64","optional":false,"field":"data_collection_order"}'
    '],"optional":true,"name":"event.block","version":1,"field":"transaction"}'
)


def source_parts(cluster: str, database: str, table: str) -> tuple[str, str, str]:
    """The `source` object around its two variable numbers: (head, middle, tail) with
    head + ts_ms + middle + commit_ts + tail."""
    name = jsoniter_quote(cluster)
    head = '{"version":"' + DEBEZIUM_VERSION + '","connector":"TiCDC","name":' + name + ',"ts_ms":'
    middle = (
        ',"snapshot":"false","db":'
        + jsoniter_quote(database)
        + ',"table":'
        + jsoniter_quote(table)
        + ',"server_id":0,"gtid":null,"file":"","pos":0,"row":0,"thread":0,"query":null,'
        '"commit_ts":'
    )
    tail = ',"cluster_id":' + name + "}"
    return head, middle, tail


def source_text(parts: tuple[str, str, str], commit_ts: int) -> str:
    """The `source` object of a message at `commit_ts` (its `ts_ms` is the TSO's physical
    time)."""
    head, middle, tail = parts
    return head + str(commit_ts >> 18) + middle + str(commit_ts) + tail


def check_ts(value: int, what: str) -> None:
    """Raises InputError when `value` is no TSO (0..2^64-1)."""
    if not 0 <= value < 2**64:
        raise InputError(f"{what} {value} is not a TiDB TSO (0..2^64-1)", value=value)

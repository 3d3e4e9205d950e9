"""The Debezium DDL event (tiflow `debezium/codec.go` `EncodeDDLEvent`, `helper.go`,
reference §8.5): the schema change of a table as `tableChanges`, with its fixed value
schema.

The sink sees no DDL statements; the event is written for a schema change the caller
detected (see `ticdc_sink.schema_change`).
"""

from __future__ import annotations

from ticdc_sink.codec import Message
from ticdc_sink.codec.debezium.schema import (
    check_ts,
    jdbc_type,
    source_parts,
    source_text,
)
from ticdc_sink.codec.debezium.values import utf8_bytes
from ticdc_sink.codec.mysql import charset_of
from ticdc_sink.gotext import jsoniter_float, jsoniter_quote
from ticdc_sink.schema import DEFAULT_CHARSET, Column, MySQLType, TableSchema

__all__ = ["encode_ddl_event"]


def encode_ddl_event(
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    commit_ts: int,
    *,
    cluster: str,
    schema: str | None,
    build_ts_ms: int,
) -> Message:
    """The DDL event of `table` (tiflow `EncodeDDLEvent`, reference §8.5): `CREATE` when
    `previous` is None, else `ALTER` (the table-change `id` names both tables when
    `previous` has another name, as for RENAME TABLE); `query` is the DDL text; `schema`
    is the field schema of `source` (`schema.source_schema`), None without the schema part.

    Raises:
        InputError: a commit ts that is no TSO.
    """
    name = f"{table.database}.{table.table}"
    check_ts(commit_ts, f"table {name}: commit ts")
    change_type = "CREATE" if previous is None else "ALTER"
    database = table.database
    key = '{"payload":{"databaseName":' + jsoniter_quote(database) + "}"
    if schema is not None:
        key += (
            ',"schema":{"type":"struct","name":"io.debezium.connector.mysql.SchemaChangeKey",'
            '"optional":false,"version":1,"fields":[{"field":"databaseName",'
            '"optional":false,"type":"string"}]}'
        )
    key += "}"
    table_id = jsoniter_quote(f'"{database}"."{table.table}"')
    if previous is not None and (previous.database, previous.table) != (
        database,
        table.table,
    ):
        table_id = jsoniter_quote(
            f'"{previous.database}"."{previous.table}","{database}"."{table.table}"'
        )
    columns = ",".join(
        _ddl_column(c, position) for position, c in enumerate(table.columns, start=1)
    )
    primary = ",".join(jsoniter_quote(name) for name in table.primary_key)
    change = (
        '{"type":"'
        + change_type
        + '","id":'
        + table_id
        + ',"table":{"defaultCharsetName":'
        + jsoniter_quote(_table_charset(table))
        + ',"primaryKeyColumnNames":['
        + primary
        + '],"columns":['
        + columns
        + '],"comment":null}}'
    )
    value = (
        '{"payload":{"source":'
        + source_text(source_parts(cluster, database, table.table), commit_ts)
        + ',"ts_ms":'
        + str(int(build_ts_ms))
        + ',"databaseName":'
        + jsoniter_quote(database)
        + ',"schemaName":null,"ddl":'
        + jsoniter_quote(query)
        + ',"tableChanges":['
        + change
        + "]}"
    )
    if schema is not None:
        value += ',"schema":' + _DDL_VALUE_SCHEMA_HEAD + schema + _DDL_VALUE_SCHEMA_TAIL
    value += "}"
    return Message(
        key=utf8_bytes(key, name), value=utf8_bytes(value, name), commit_ts=commit_ts, rows=0
    )


# --- DDL table changes (tiflow EncodeDDLEvent, helper.go) ------------------------------------

# TiDB mysql.defaultLengthAndDecimal (flen, decimal) by TypeToStr name.
_DEFAULT_LEN_DEC = {
    "bit": (1, 0),
    "tinyint": (4, 0),
    "smallint": (6, 0),
    "mediumint": (9, 0),
    "int": (11, 0),
    "bigint": (20, 0),
    "double": (22, -1),
    "float": (12, -1),
    "decimal": (10, 0),
    "time": (10, 0),
    "date": (10, 0),
    "timestamp": (19, 0),
    "datetime": (19, 0),
    "year": (4, 0),
    "char": (1, 0),
    "binary": (1, 0),
    "varchar": (5, 0),
    "varbinary": (5, 0),
    "tinytext": (255, 0),
    "tinyblob": (255, 0),
    "text": (65535, 0),
    "blob": (65535, 0),
    "mediumtext": (16777215, 0),
    "mediumblob": (16777215, 0),
    "longtext": (4294967295, 0),
    "longblob": (4294967295, 0),
    "json": (4294967295, 0),
    "set": (-1, 0),
    "enum": (-1, 0),
}
_CHARSET_TYPES = frozenset(
    {"timestamp", "time", "decimal", "char", "varchar", "binary", "varbinary", "enum", "set"}
    | {"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob"}
)


def _ddl_length(t: MySQLType) -> int:
    """tiflow `getLen`; -1 means null."""
    base = t.base
    default_flen = _DEFAULT_LEN_DEC.get(base, (-1, -1))[0]
    flen = t.flen
    if base in ("timestamp", "time", "datetime"):
        return t.fsp
    if base in ("bit", "varchar", "varbinary", "char", "binary", "vector", "bigint", "float"):
        return flen if flen != default_flen else -1
    if base == "double":
        return flen if flen != default_flen else -1
    if base in ("tinyint", "smallint", "mediumint", "int"):
        if t.unsigned:
            default_flen -= 1
        if base == "tinyint" and t.zerofill:
            default_flen += 1
        return flen if flen != default_flen else -1
    if base in ("year", "decimal"):
        return flen
    if base == "set":
        return 2 * len(t.elements) - 1
    if base == "enum":
        return 1
    return -1


def _ddl_expression_and_name(t: MySQLType) -> tuple[str, str]:
    """tiflow `getExpressionAndName`: (typeExpression, typeName)."""
    prefix = t.base.upper()
    if t.base in ("year", "bit", "varchar", "varbinary", "char", "binary", "decimal"):
        return prefix, prefix
    suffix = ""
    if t.base == "double":
        decimal = t.tidb_decimal
        if decimal not in (-1, 0):
            flen = t.flen if t.flen != -1 else 22
            suffix = f"({flen},{decimal})"
    elif t.base == "vector" and t.flen != -1:
        suffix = f"({t.flen})"
    unsigned = " UNSIGNED ZEROFILL" if t.zerofill else " UNSIGNED" if t.unsigned else ""
    return prefix + suffix + unsigned, prefix + unsigned


def _parse_bit_text(value: int, width: int) -> str:
    """tiflow `parseBit` over the bytes TiDB keeps for a BIT default (ceil(width/8) bytes)."""
    raw = value.to_bytes(max((width + 7) // 8, 1), "big")
    head = width % 8
    text = format(raw[0], "b").rjust(head, "0") if head else format(raw[0], "b")
    return text + "".join(format(b, "08b") for b in raw[1:])


def _ddl_column(column: Column, position: int) -> str:
    t = column.type
    expression, name = _ddl_expression_and_name(t)
    default = column.default
    if default is None:
        default_text = "null"
    elif default.upper() == "CURRENT_TIMESTAMP":
        default_text = '"1970-01-01 00:00:00"'
    elif t.base == "bit":
        try:
            default_text = jsoniter_quote(_parse_bit_text(int(default), max(t.flen, 1)))
        except ValueError:
            default_text = jsoniter_quote(default)
    else:
        default_text = jsoniter_quote(default)
    if t.elements:
        enum_values = "[" + ",".join(jsoniter_quote(f"'{e}'") for e in t.elements) + "]"
    else:
        enum_values = "null"
    charset = charset_of(t)
    if charset == "binary" or t.base not in _CHARSET_TYPES:
        charset_text = "null"
    else:
        charset_text = jsoniter_quote(charset)
    length = _ddl_length(t)
    if t.base in ("decimal", "float", "double") and t.tidb_decimal != -1:
        scale_text = jsoniter_float(float(t.tidb_decimal))
    else:
        scale_text = "null"
    return (
        '{"name":'
        + jsoniter_quote(column.name)
        + ',"jdbcType":'
        + str(jdbc_type(t))
        + ',"nativeType":null,"comment":null,"defaultValueExpression":'
        + default_text
        + ',"enumValues":'
        + enum_values
        + ',"typeName":'
        + jsoniter_quote(name)
        + ',"typeExpression":'
        + jsoniter_quote(expression)
        + ',"charsetName":'
        + charset_text
        + ',"length":'
        + ("null" if length == -1 else str(length))
        + ',"scale":'
        + scale_text
        + ',"position":'
        + str(position)
        + ',"optional":'
        + ("true" if column.nullable else "false")
        + ',"autoIncremented":false,"generated":false}'
    )


def _table_charset(table: TableSchema) -> str:
    """The table's default charset: TableSchema keeps none, so the charset of its first
    string column, else TiDB's default (utf8mb4)."""
    for column in table.columns:
        if column.type.base in _CHARSET_TYPES:
            charset = charset_of(column.type)
            if charset != "binary":
                return charset
    return DEFAULT_CHARSET


def _f(field: str, optional: bool, kind: str) -> str:
    return (
        '{"field":"'
        + field
        + '","optional":'
        + ("true" if optional else "false")
        + ',"type":"'
        + kind
        + '"}'
    )


_STRING_ITEMS = '"items":{"type":"string","optional":false}'
_DDL_COLUMN_FIELDS = ",".join(
    [
        _f("name", False, "string"),
        _f("jdbcType", False, "int32"),
        _f("nativeType", True, "int32"),
        _f("typeName", False, "string"),
        _f("typeExpression", True, "string"),
        _f("charsetName", True, "string"),
        _f("length", True, "int32"),
        _f("scale", True, "int32"),
        _f("position", False, "int32"),
        _f("optional", True, "boolean"),
        _f("autoIncremented", True, "boolean"),
        _f("generated", True, "boolean"),
        _f("comment", True, "string"),
        _f("defaultValueExpression", True, "string"),
        _f("enumValues", True, "array")[:-1] + "," + _STRING_ITEMS + "}",
    ]
)
#: The DDL value schema around the field schema of `source`.
_DDL_VALUE_SCHEMA_HEAD = (
    '{"optional":false,"type":"struct","version":1,'
    '"name":"io.debezium.connector.mysql.SchemaChangeValue","fields":['
)
_DDL_VALUE_SCHEMA_TAIL = (
    ","
    + _f("ts_ms", False, "int64")
    + ","
    + _f("databaseName", True, "string")
    + ","
    + _f("schemaName", True, "string")
    + ","
    + _f("ddl", True, "string")
    + ',{"field":"tableChanges","optional":false,"type":"array","items":{'
    '"name":"io.debezium.connector.schema.Change","optional":false,"type":"struct",'
    '"version":1,"fields":['
    + _f("type", False, "string")
    + ","
    + _f("id", False, "string")
    + ',{"field":"table","optional":true,"type":"struct",'
    '"name":"io.debezium.connector.schema.Table","version":1,"fields":['
    + _f("defaultCharsetName", True, "string")
    + ',{"field":"primaryKeyColumnNames","optional":true,"type":"array",'
    + _STRING_ITEMS
    + '},{"field":"columns","optional":false,"type":"array","items":{'
    '"name":"io.debezium.connector.schema.Column","optional":false,"type":"struct",'
    '"version":1,"fields":['
    + _DDL_COLUMN_FIELDS
    + "]}},"
    + _f("comment", True, "string")
    + "]}]}}]}"
)

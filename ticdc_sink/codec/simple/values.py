"""Simple protocol values shared by its row and column-wise JSON encoders: each MySQL
value as the text tiflow's `simple/message.go` `encodeValue` writes, the `tableSchema`
of BOOTSTRAP and DDL messages (`newTableSchema`, also the source of the Avro one), and
the error naming a value a column refuses.

Knows Simple's JSON conventions and MySQL values; no Kafka, no Spark.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import attrs

from ticdc_sink.codec.checksum import RowChecksum
from ticdc_sink.codec.common import short_repr
from ticdc_sink.codec.mysql import (
    VALUE_TEXT,
    ValueKind,
    bit_default_to_int,
    charset_of,
    collation_of,
    str_value,
    value_kind,
)
from ticdc_sink.errors import InputError, SchemaError
from ticdc_sink.gotext import go_string
from ticdc_sink.schema import Column, MySQLType, TableSchema

__all__ = [
    "DDL_TYPES",
    "SimpleDDL",
    "checksum_json",
    "data_type_head",
    "ddl_type_index",
    "PROTOCOL_VERSION",
    "Renderer",
    "renderer",
    "row_value_error",
    "table_schema_json",
]

PROTOCOL_VERSION = 1
#: The DDL message types, in the order of the Avro schema's DDLType enum (the enum index
#: is the position).
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")

Renderer = Callable[[Any], Any]


@attrs.frozen
class SimpleDDL:
    """What a Simple DDL message says (tiflow `newDDLMessage`): `ddl_type` one of
    `DDL_TYPES`, the statement, its commit ts, the build ts, and the table schema after
    (`table`) and before (`pre_table`) the change."""

    ddl_type: str
    sql: str
    commit_ts: int
    build_ts_ms: int
    table: TableSchema | None = None
    pre_table: TableSchema | None = None


def ddl_type_index(ddl_type: str) -> int:
    """The index of a Simple DDL type in `DDL_TYPES` (the Avro enum index).

    Raises:
        InputError: not a Simple DDL type.
    """
    if ddl_type not in DDL_TYPES:
        raise InputError(
            f"DDL type {ddl_type!r} is not a Simple DDL type; use one of {', '.join(DDL_TYPES)}",
            value=ddl_type,
        )
    return DDL_TYPES.index(ddl_type)


# --- value rendering (tiflow simple/message.go encodeValue) -----------------------------


def _text_value(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        # Go writes string([]byte): invalid UTF-8 becomes U+FFFD per byte.
        return go_string(bytes(value))
    raise TypeError(f"expected a str, got {type(value).__name__}")


def _binary_value(value: Any) -> str:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    return base64.b64encode(value).decode("ascii")


def _timestamp_renderer(location: str) -> Renderer:
    def render(value: Any) -> dict[str, str]:
        # A Go map[string]string: keys sorted, so location before value.
        return {"location": location, "value": str_value(value)}

    return render


_RENDERERS: dict[ValueKind, Renderer] = {
    **VALUE_TEXT,
    ValueKind.TEXT: _text_value,
    ValueKind.BINARY: _binary_value,
}


def renderer(column: Column, time_zone: str) -> Renderer:
    """The function giving a column's JSON value (a str, or a dict for TIMESTAMP).

    Raises:
        SchemaError: a column type the protocol cannot carry.
    """
    kind = value_kind(column)
    if kind is ValueKind.TIMESTAMP:
        return _timestamp_renderer(time_zone)
    return _RENDERERS[kind]


def checksum_json(checksum: RowChecksum) -> dict[str, Any]:
    """The `checksum` object of a DML message: tiflow `simple/message.go` `checksum`, Go
    struct order, no omitempty."""
    return {
        "version": checksum.version,
        "corrupted": checksum.corrupted,
        "current": checksum.current,
        "previous": checksum.previous,
    }


# --- table schema (tiflow simple/message.go newTableSchema) ----------------------------


def data_type_head(t: MySQLType) -> dict[str, Any]:
    """The first fields of a column's `dataType`, the same in JSON and Avro."""
    return {"mysqlType": t.base, "charset": charset_of(t), "collate": collation_of(t)}


def _data_type_json(column: Column) -> dict[str, Any]:
    t = column.type
    base = t.base
    result = data_type_head(t)
    # Fields below are `omitempty` in Go: 0, false and empty lists are dropped.
    if t.flen:
        result["length"] = t.flen
    # TiDB's Decimal: scale or fsp, 0 for most types; FLOAT/DOUBLE are never written.
    decimal = 0 if base in ("float", "double") else t.tidb_decimal
    if decimal:
        result["decimal"] = decimal
    if t.elements:
        result["elements"] = list(t.elements)
    # TiDB sets UNSIGNED and ZEROFILL on YEAR, UNSIGNED on BIT, and ZEROFILL implies
    # UNSIGNED for numbers.
    if t.unsigned or t.zerofill or base in ("year", "bit"):
        result["unsigned"] = True
    if t.zerofill or base == "year":
        result["zerofill"] = True
    return result


def _default_json(column: Column) -> Any:
    default = column.default
    if default is None or column.type.base != "bit":
        return default
    try:
        return bit_default_to_int(default)
    except ValueError as exc:
        raise SchemaError(
            f"column {column.name}: BIT default {default!r} is not a non-negative integer; "
            "write it as b'101', 0x05 or 5",
            column=column.name,
        ) from exc


def table_schema_json(table: TableSchema) -> dict[str, Any]:
    """The `tableSchema` object of BOOTSTRAP (and DDL) messages, reference §7.4.

    Columns are sorted by column ID (stable, so equal IDs keep definition order); indexes
    follow the table, except that an integer primary key used as the row handle is not a
    TiDB index and appears as a synthetic `primary` index appended last.

    Raises:
        SchemaError: an index names an unknown column, or a BIT default is not a number.
    """
    nullable = {c.name: c.nullable for c in table.columns}
    columns = [
        {
            "name": c.name,
            "dataType": _data_type_json(c),
            "nullable": c.nullable,
            "default": _default_json(c),
        }
        for c in sorted(table.columns, key=lambda c: c.column_id)
    ]
    indexes: list[dict[str, Any]] = []
    for index in table.tidb_indexes:  # the handle PK is not a TiDB index
        unknown = [name for name in index.columns if name not in nullable]
        if unknown:
            raise SchemaError(
                f"index {index.name} of {table.database}.{table.table} names unknown "
                f"columns {', '.join(unknown)}; use columns of the table",
                column=unknown[0],
            )
        indexes.append(
            {
                "name": index.name,
                "unique": index.unique or index.primary,
                "primary": index.primary,
                "nullable": any(nullable[name] for name in index.columns),
                "columns": list(index.columns),
            }
        )
    if not any(i["primary"] for i in indexes) and table.primary_key:
        indexes.append(
            {
                "name": "primary",
                "unique": True,
                "primary": True,
                "nullable": False,
                "columns": list(table.primary_key),
            }
        )
    return {
        "schema": table.database,
        "table": table.table,
        "tableID": table.table_id,
        "version": table.version,
        "columns": columns,
        "indexes": indexes,
    }


def row_value_error(table: TableSchema, column: Column, value: Any, exc: Exception) -> InputError:
    """The InputError for a row value its column's renderer refused (either encoding)."""
    return InputError(
        f"column {column.name} of {table.database}.{table.table} "
        f"({column.type.base}) cannot take {short_repr(value)}: {exc}",
        table=f"{table.database}.{table.table}",
        column=column.name,
        value=value,
    )

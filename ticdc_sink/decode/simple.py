"""Simple protocol decoder (JSON encoding), mirroring tiflow `simple/decoder.go`.

Table schemas arrive in BOOTSTRAP and DDL messages and are kept by (database, table,
schema version), the key TiCDC's consumer uses. A DML message whose schema is known gets
its values converted back to Python values:

    integer types, YEAR, ENUM (index), SET (bitmask), BIT   -> int
    FLOAT                     -> float (the float32 value, as TiCDC's float32)
    DOUBLE                    -> float
    DECIMAL                   -> decimal.Decimal (str() gives back the exact digits)
    DATE, DATETIME, TIME      -> str as written ("2020-01-02", "838:59:59"): MySQL's zero
                                 dates and TIME beyond 24 h have no datetime equivalent
    TIMESTAMP                 -> str, the "value" of {"location","value"} (as tiflow's
                                 adjustTimestampValue); the location is dropped
    JSON, VECTOR, text types  -> str
    binary types              -> bytes (from base64)
    NULL                      -> None

These are the mounter values of ticdc_sink.events, except DECIMAL (Decimal, not str).
A DML message whose schema is not known yet is not an error (TiCDC's consumer caches it
until a BOOTSTRAP arrives): it is returned with `typed=False` and its raw JSON values, and
`resolve` converts it once the schema is known.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import OrderedDict
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from ticdc_sink.codec._mysql import ValueKind, to_float32, value_kind
from ticdc_sink.codec.simple import PROTOCOL_VERSION
from ticdc_sink.decode import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedEvent,
    DecodedRow,
    DecodedWatermark,
)
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

__all__ = ["SimpleDecoder", "table_schema_from_json"]

_DDL_TYPES = frozenset(
    {"CREATE", "RENAME", "CINDEX", "DINDEX", "ERASE", "TRUNCATE", "ALTER", "QUERY"}
)
_INT = re.compile(r"-?[0-9]+\Z")

Parser = Callable[[Any], Any]


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a JSON string, got {type(value).__name__}")
    return value


def _integer(value: Any) -> int:
    if not _INT.match(_string(value)):
        raise ValueError(f"{value!r} is not an integer")
    return int(value)


def _float32(value: Any) -> float:
    return to_float32(float(_string(value)))


def _float64(value: Any) -> float:
    return float(_string(value))


def _decimal(value: Any) -> Decimal:
    try:
        return Decimal(_string(value))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal") from None


def _binary(value: Any) -> bytes:
    try:
        return base64.b64decode(_string(value), validate=True)
    except binascii.Error:
        raise ValueError(f"{value!r} is not base64") from None


def _timestamp(value: Any) -> str:
    if isinstance(value, dict):
        return _string(value.get("value"))
    return _string(value)


_PARSERS: dict[ValueKind, Parser] = {
    ValueKind.INT: _integer,
    ValueKind.UINT: _integer,
    ValueKind.ENUM: _integer,
    ValueKind.SET: _integer,
    ValueKind.BIT: _integer,
    ValueKind.FLOAT32: _float32,
    ValueKind.FLOAT64: _float64,
    ValueKind.DECIMAL: _decimal,
    ValueKind.DATE: _string,
    ValueKind.DATETIME: _string,
    ValueKind.TIME: _string,
    ValueKind.TIMESTAMP: _timestamp,
    ValueKind.JSON: _string,
    ValueKind.VECTOR: _string,
    ValueKind.TEXT: _string,
    ValueKind.BINARY: _binary,
}


def _require(obj: Any, name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise DecodeError(f"{where} is not a JSON object")
    value = obj.get(name)
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds(kind))
    if not ok:
        expected = " or ".join(k.__name__ for k in _kinds(kind))
        raise DecodeError(f"{where}: field {name!r} is {value!r}; expected {expected}")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _column_from_json(obj: Any, column_id: int, where: str) -> Column:
    name = _require(obj, "name", str, where)
    where = f"{where} column {name!r}"
    data_type = _require(obj, "dataType", dict, where)
    elements = data_type.get("elements") or []
    if not isinstance(elements, list) or not all(isinstance(e, str) for e in elements):
        raise DecodeError(f"{where}: dataType.elements is {elements!r}; expected strings")
    length = data_type.get("length")
    decimal = data_type.get("decimal")
    for label, number in (("length", length), ("decimal", decimal)):
        if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
            raise DecodeError(f"{where}: dataType.{label} is {number!r}; expected an integer")
    mysql_type = MySQLType(
        base=_require(data_type, "mysqlType", str, where),
        length=length,
        decimal=decimal,
        unsigned=data_type.get("unsigned") is True,
        zerofill=data_type.get("zerofill") is True,
        elements=tuple(elements),
        charset=data_type.get("charset"),
        collation=data_type.get("collate"),
    )
    default = obj.get("default")
    if isinstance(default, int) and not isinstance(default, bool):
        default = str(default)  # BIT defaults are JSON numbers; the model keeps "5"
    elif default is not None and not isinstance(default, str):
        raise DecodeError(f"{where}: default is {default!r}; expected a string, number or null")
    return Column(
        name=name,
        type=mysql_type,
        nullable=_require(obj, "nullable", bool, where),
        default=default,
        column_id=column_id,
    )


def table_schema_from_json(obj: Any) -> TableSchema:
    """The TableSchema of a `tableSchema` object (reference §7.4).

    Columns get ids 1, 2, ... in message order (already sorted by id); the synthetic
    `primary` index of an integer handle stays an index named `primary`, so encoding the
    result again gives the same JSON.

    Raises:
        DecodeError: a field is missing or has the wrong JSON type.
    """
    where = "tableSchema"
    columns_json = _require(obj, "columns", list, where)
    indexes_json = obj.get("indexes") or []
    if not isinstance(indexes_json, list):
        raise DecodeError(f"{where}: indexes is {indexes_json!r}; expected a list")
    columns = tuple(
        _column_from_json(c, column_id, where) for column_id, c in enumerate(columns_json, 1)
    )
    indexes = []
    for index in indexes_json:
        name = _require(index, "name", str, f"{where} index")
        names = _require(index, "columns", list, f"{where} index {name!r}")
        if not all(isinstance(n, str) for n in names):
            raise DecodeError(f"{where} index {name!r}: columns are {names!r}; expected names")
        indexes.append(
            Index(
                name=name,
                columns=tuple(names),
                unique=index.get("unique") is True,
                primary=index.get("primary") is True,
            )
        )
    return TableSchema(
        database=_require(obj, "schema", str, where),
        table=_require(obj, "table", str, where),
        columns=columns,
        indexes=tuple(indexes),
        table_id=_require(obj, "tableID", int, where),
        version=_require(obj, "version", int, where),
    )


class SimpleDecoder:
    """Decodes Simple JSON messages one by one, keeping the table schemas it has seen.

    Not thread-safe: use one decoder per consumer thread. At most `max_tables` schema
    versions are kept (least recently used dropped first).
    """

    def __init__(self, *, max_tables: int = 4096) -> None:
        self.max_tables = max_tables
        self._tables: OrderedDict[tuple[str, str, int], tuple[TableSchema, list]] = OrderedDict()

    def add_table(self, table: TableSchema) -> None:
        """Remember a table schema (as a BOOTSTRAP would); replaces the same version.

        Raises:
            DecodeError: a column type the Simple protocol does not carry.
        """
        try:
            parsers = [(c.name, _PARSERS[value_kind(c)]) for c in table.columns]
        except SchemaError as exc:
            raise DecodeError(
                f"table {table.database}.{table.table} version {table.version}: {exc.message}"
            ) from exc
        key = (table.database, table.table, table.version)
        self._tables[key] = (table, parsers)
        self._tables.move_to_end(key)
        while len(self._tables) > self.max_tables:
            self._tables.popitem(last=False)

    def table(self, database: str, table: str, version: int) -> TableSchema | None:
        """The schema with exactly this (database, table, version), if one was seen."""
        entry = self._tables.get((database, table, version))
        return entry[0] if entry else None

    def decode_message(self, key: bytes | None, value: bytes | None) -> DecodedEvent:
        """The event of one Kafka record (the key is not used: Simple keys are empty).

        Raises:
            DecodeError: the value is not a Simple JSON message.
        """
        if value is None:
            raise DecodeError("the record has no value; a Simple message always has one")
        try:
            message = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise DecodeError(
                f"the value is not JSON ({exc}); only the json encoding-format of the Simple "
                "protocol can be decoded"
            ) from exc
        if not isinstance(message, dict):
            raise DecodeError(f"the value is a JSON {type(message).__name__}; expected an object")
        version = message.get("version")
        if version != PROTOCOL_VERSION:
            raise DecodeError(
                f"Simple message version is {version!r}; only {PROTOCOL_VERSION} is known"
            )
        kind = _require(message, "type", str, "message")
        build_ts = message.get("buildTs", 0)
        if kind in ("INSERT", "UPDATE", "DELETE"):
            return self._row(message, Op(kind), build_ts)
        commit_ts = _require(message, "commitTs", int, "message")
        if kind == "WATERMARK":
            return DecodedWatermark(commit_ts=commit_ts, build_ts=build_ts)
        if kind == "BOOTSTRAP":
            table = table_schema_from_json(message.get("tableSchema"))
            self.add_table(table)
            return DecodedBootstrap(table=table, build_ts=build_ts)
        if kind in _DDL_TYPES:
            return self._ddl(message, kind, commit_ts, build_ts)
        raise DecodeError(
            f"Simple message type is {kind!r}; expected INSERT, UPDATE, DELETE, WATERMARK, "
            f"BOOTSTRAP or a DDL type ({', '.join(sorted(_DDL_TYPES))})"
        )

    def _ddl(self, message: dict[str, Any], kind: str, commit_ts: int, build_ts: int) -> DecodedDDL:
        schemas = []
        for name in ("tableSchema", "preTableSchema"):
            obj = message.get(name)
            schema = None if obj is None else table_schema_from_json(obj)
            if schema is not None:
                self.add_table(schema)
            schemas.append(schema)
        return DecodedDDL(
            type=kind,
            sql=message.get("sql") or "",
            commit_ts=commit_ts,
            table=schemas[0],
            pre_table=schemas[1],
            build_ts=build_ts,
        )

    def _row(self, message: dict[str, Any], op: Op, build_ts: int) -> DecodedRow:
        # Go's omitempty: database, table, tableID and schemaVersion may be absent.
        data = message.get("data")
        old = message.get("old")
        for name, image in (("data", data), ("old", old)):
            if image is not None and not isinstance(image, dict):
                raise DecodeError(f"{op.value} message: {name} is not a JSON object")
        row = DecodedRow(
            database=message.get("database", ""),
            table=message.get("table", ""),
            table_id=message.get("tableID", 0),
            op=op,
            commit_ts=_require(message, "commitTs", int, f"{op.value} message"),
            schema_version=message.get("schemaVersion", 0),
            data=data,
            old=old,
            handle_key_only=message.get("handleKeyOnly") is True,
            claim_check_location=message.get("claimCheckLocation"),
            build_ts=build_ts,
            typed=False,
        )
        return self.resolve(row)

    def resolve(self, row: DecodedRow) -> DecodedRow:
        """The row with typed values if its schema is known now; else the row as is.

        Raises:
            DecodeError: a value that does not parse as its column's type, or a column the
                schema does not have.
        """
        if row.typed:
            return row
        entry = self._tables.get((row.database, row.table, row.schema_version))
        if entry is None:
            return row
        self._tables.move_to_end((row.database, row.table, row.schema_version))
        table, parsers = entry
        where = f"{row.op.value} {row.database}.{row.table} commitTs {row.commit_ts}"
        return DecodedRow(
            database=row.database,
            table=row.table,
            table_id=row.table_id,
            op=row.op,
            commit_ts=row.commit_ts,
            schema_version=row.schema_version,
            data=_typed(row.data, parsers, where),
            old=_typed(row.old, parsers, where),
            handle_key_only=row.handle_key_only,
            claim_check_location=row.claim_check_location,
            build_ts=row.build_ts,
            typed=True,
        )


def _typed(
    raw: dict[str, Any] | None, parsers: list[tuple[str, Parser]], where: str
) -> dict[str, Any] | None:
    if raw is None:
        return None
    result: dict[str, Any] = {}
    for name, parse in parsers:
        # A missing column is a generated one (TiCDC does not replicate those) or, with
        # handleKeyOnly, a non-key column: skipped, as tiflow decodeColumns does.
        if name not in raw:
            continue
        value = raw[name]
        try:
            result[name] = None if value is None else parse(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise DecodeError(f"{where}: column {name}: {exc}") from exc
    if len(result) != len(raw):
        unknown = sorted(set(raw) - set(result))
        raise DecodeError(
            f"{where}: columns {', '.join(unknown)} are not in the table schema of this "
            "schema version"
        )
    return result

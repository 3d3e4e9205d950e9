"""TiCDC's Simple protocol (reference §7): DML, BOOTSTRAP and WATERMARK, JSON or Avro.

The encoder owns the size check and the large-message policy (tiflow
`pkg/sink/codec/simple/encoder.go`); a marshaller turns events into bytes (tiflow
`simple/marshaller.go`): `JsonMarshaller` here for `encoding-format=json` (the default),
`simple_avro.AvroMarshaller` for `encoding-format=avro`, both behind `_Marshaller`.

JSON is what Go's `json.Marshal` writes for tiflow's `message` struct (`simple/message.go`):
fields in struct order with `omitempty` honoured, `data`/`old` keys sorted, every value a
string except NULL and TIMESTAMP. `buildTs` is passed in, never read from the clock, so a
replay writes identical bytes. No DDL messages: the sink never sees DDL (for tests and
tools, `simple_avro.marshal_ddl` writes an Avro one).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Protocol

from ticdc_sink.codec import ClaimCheckStore, Message
from ticdc_sink.codec.batch import EncodedBatch
from ticdc_sink.codec.common import RECORD_OVERHEAD, short_repr
from ticdc_sink.codec.gojson import dumps
from ticdc_sink.codec.large_message import ROW_KEY, divert
from ticdc_sink.codec.mysql import (
    ValueKind,
    bit_default_to_int,
    bit_text,
    charset_of,
    collation_of,
    float_text,
    str_value,
    value_kind,
)
from ticdc_sink.config import CodecConfig, EncodingFormat
from ticdc_sink.errors import (
    ConfigError,
    InputError,
    MessageTooLargeError,
    SchemaError,
)
from ticdc_sink.events import ChangeBatch, Op, RowChange
from ticdc_sink.gotext import go_string
from ticdc_sink.schema import Column, TableSchema

__all__ = [
    "PROTOCOL_VERSION",
    "JsonMarshaller",
    "SimpleEncoder",
    "encode_ddl",
    "encode_watermark",
    "row_value_error",
    "table_schema_json",
]


PROTOCOL_VERSION = 1

Renderer = Callable[[Any], Any]


class _Marshaller(Protocol):
    """Bytes for one table's events in one encoding (tiflow simple/marshaller.go)."""

    def marshal_row(
        self, change: RowChange, *, handle_key_only: bool, claim_check_location: str
    ) -> bytes: ...

    def marshal_bootstrap(self) -> bytes: ...


# --- value rendering (tiflow simple/message.go encodeValue) -----------------------------


def _int_text(value: Any) -> str:
    # int.__repr__ refuses anything but an int and prints bools as 1/0.
    return int.__repr__(value)


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
    ValueKind.INT: _int_text,
    ValueKind.UINT: _int_text,
    ValueKind.ENUM: _int_text,
    ValueKind.SET: _int_text,
    ValueKind.BIT: bit_text,
    ValueKind.FLOAT32: float_text(32),
    ValueKind.FLOAT64: float_text(64),
    ValueKind.DECIMAL: str_value,
    ValueKind.DATE: str_value,
    ValueKind.DATETIME: str_value,
    ValueKind.TIME: str_value,
    ValueKind.JSON: str_value,
    ValueKind.VECTOR: str_value,
    ValueKind.TEXT: _text_value,
    ValueKind.BINARY: _binary_value,
}


def _renderer(column: Column, time_zone: str) -> Renderer:
    kind = value_kind(column)
    if kind is ValueKind.TIMESTAMP:
        return _timestamp_renderer(time_zone)
    return _RENDERERS[kind]


# --- table schema (tiflow simple/message.go newTableSchema) ----------------------------


def _data_type_json(column: Column) -> dict[str, Any]:
    t = column.type
    base = t.base
    result: dict[str, Any] = {
        "mysqlType": base,
        "charset": charset_of(t),
        "collate": collation_of(t),
    }
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


# --- the JSON marshaller -----------------------------------------------------------------


class JsonMarshaller:
    """Simple JSON for one table, compiled once: per column its renderer, and the columns
    in the sorted order Go's map marshalling writes them."""

    def __init__(self, table: TableSchema, *, time_zone: str, build_ts_ms: int) -> None:
        """Compile the table; `time_zone` names TIMESTAMP values' location (TiCDC writes
        Go's `Location.String()` of its server zone, e.g. UTC, Asia/Shanghai).

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self.table = table
        self.build_ts_ms = build_ts_ms
        order = sorted(range(len(table.columns)), key=lambda i: table.columns[i].name)
        renderers = [_renderer(c, time_zone) for c in table.columns]
        self._columns = [(table.columns[i].name, i, renderers[i]) for i in order]
        handle = set(table.handle_key)
        self._key_columns = [entry for entry in self._columns if entry[0] in handle]

    def marshal_row(
        self, change: RowChange, *, handle_key_only: bool = False, claim_check_location: str = ""
    ) -> bytes:
        """The DML message of a row change (tiflow newDMLMessage).

        INSERT carries `data`, DELETE `old`, UPDATE both; an UPDATE without a before
        image carries `data` only (Go's `old` map is then empty and `omitempty` drops it).

        Raises:
            InputError: a value that does not fit its column's MySQL type.
        """
        table = self.table
        message: dict[str, Any] = {"version": PROTOCOL_VERSION}
        if table.database:
            message["database"] = table.database
        if table.table:
            message["table"] = table.table
        if table.table_id:
            message["tableID"] = table.table_id
        message["type"] = change.op.value
        message["commitTs"] = change.commit_ts
        message["buildTs"] = self.build_ts_ms
        if table.version:
            message["schemaVersion"] = table.version
        if claim_check_location:
            message["claimCheckLocation"] = claim_check_location
        if handle_key_only:
            message["handleKeyOnly"] = True
        columns = self._key_columns if handle_key_only else self._columns
        if change.op is not Op.DELETE:
            data = self._values(change.row, columns)
            if data:
                message["data"] = data
        if change.op is not Op.INSERT:
            old = self._values(change.before, columns)
            if old:
                message["old"] = old
        return dumps(message)

    def _values(
        self, row: tuple[Any, ...] | None, columns: list[tuple[str, int, Renderer]]
    ) -> dict[str, Any] | None:
        if row is None:
            return None
        if len(row) != len(self.table.columns):
            raise InputError(
                f"a row of {self.table.database}.{self.table.table} has {len(row)} values; "
                f"the table has {len(self.table.columns)} columns",
                table=f"{self.table.database}.{self.table.table}",
            )
        try:
            return {name: None if row[i] is None else render(row[i]) for name, i, render in columns}
        except (TypeError, ValueError, OverflowError):
            pass
        for _, i, render in columns:  # find the culprit for the message
            value = row[i]
            try:
                if value is not None:
                    render(value)
            except (TypeError, ValueError, OverflowError) as exc:
                raise row_value_error(self.table, self.table.columns[i], value, exc) from exc
        raise AssertionError("unreachable: a renderer failed only once")  # pragma: no cover

    def marshal_bootstrap(self) -> bytes:
        """The BOOTSTRAP message: `commitTs` 0 (Go writes it, no omitempty) and the table
        schema (tiflow newBootstrapMessage)."""
        return dumps(
            {
                "version": PROTOCOL_VERSION,
                "type": "BOOTSTRAP",
                "commitTs": 0,
                "buildTs": self.build_ts_ms,
                "tableSchema": table_schema_json(self.table),
            }
        )


def row_value_error(table: TableSchema, column: Column, value: Any, exc: Exception) -> InputError:
    """The InputError for a row value its column's renderer refused (either encoding)."""
    return InputError(
        f"column {column.name} of {table.database}.{table.table} "
        f"({column.type.base}) cannot take {short_repr(value)}: {exc}",
        table=f"{table.database}.{table.table}",
        column=column.name,
        value=value,
    )


def _watermark_json(commit_ts: int, build_ts_ms: int) -> bytes:
    return dumps(
        {
            "version": PROTOCOL_VERSION,
            "type": "WATERMARK",
            "commitTs": commit_ts,
            "buildTs": build_ts_ms,
        }
    )


def _ddl_json(
    ddl_type: str,
    sql: str,
    commit_ts: int,
    build_ts_ms: int,
    table: TableSchema | None,
    pre_table: TableSchema | None,
) -> bytes:
    message: dict[str, Any] = {"version": PROTOCOL_VERSION, "type": ddl_type}
    if sql:
        message["sql"] = sql
    message["commitTs"] = commit_ts
    message["buildTs"] = build_ts_ms
    if table is not None:
        message["tableSchema"] = table_schema_json(table)
    if pre_table is not None:
        message["preTableSchema"] = table_schema_json(pre_table)
    return dumps(message)


def _is_avro(config: CodecConfig) -> bool:
    if config.encoding_format == EncodingFormat.AVRO:
        return True
    if config.encoding_format != EncodingFormat.JSON:  # pragma: no cover - config validates
        raise ConfigError(
            f"option 'encoding-format' is '{config.encoding_format}' for protocol simple; "
            "use json or avro",
            option="encoding-format",
            value=str(config.encoding_format),
            allowed=(EncodingFormat.JSON.value, EncodingFormat.AVRO.value),
        )
    return False


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message:
    """A WATERMARK message in the configured encoding: null key (it travels tiflow's sync
    producer path)."""
    if _is_avro(config):
        from ticdc_sink.codec.simple_avro import marshal_watermark

        value = marshal_watermark(commit_ts, build_ts_ms)
    else:
        value = _watermark_json(commit_ts, build_ts_ms)
    return Message(key=None, value=value, commit_ts=commit_ts)


def encode_ddl(
    config: CodecConfig,
    ddl_type: str,
    sql: str,
    commit_ts: int,
    *,
    build_ts_ms: int,
    table: TableSchema | None = None,
    pre_table: TableSchema | None = None,
) -> Message:
    """A DDL message in the configured encoding (tiflow newDDLMessage / newDDLMessageMap):
    `ddl_type` one of CREATE, ALTER, ERASE, RENAME, TRUNCATE, CINDEX, DINDEX, QUERY;
    `table`/`pre_table` the schema after/before. Null key. The sink sends no Simple DDL
    (TiCDC's DDL comes from TiDB); this feeds decoders in tests and tools. No size check.

    Raises:
        InputError: an unknown DDL type.
        SchemaError: see table_schema_json.
    """
    from ticdc_sink.codec.simple_avro import DDL_TYPES, marshal_ddl

    if ddl_type not in DDL_TYPES:
        raise InputError(
            f"DDL type {ddl_type!r} is not a Simple DDL type; use one of {', '.join(DDL_TYPES)}",
            value=ddl_type,
        )
    if _is_avro(config):
        value = marshal_ddl(
            ddl_type, sql, commit_ts, build_ts_ms=build_ts_ms, table=table, pre_table=pre_table
        )
    else:
        value = _ddl_json(ddl_type, sql, commit_ts, build_ts_ms, table, pre_table)
    return Message(key=None, value=value, commit_ts=commit_ts)


class SimpleEncoder:
    """The Simple protocol encoder of one table, built once and reused for every row.

    `encoding-format` picks the marshaller (json or avro). Messages above
    `max-message-bytes` (key + value + 36) follow `large-message-handle-option`: `none`
    raises MessageTooLargeError, `handle-key-only` re-encodes with the handle-key columns
    and `handleKeyOnly` true (and raises if that is still too large), in either encoding.
    `claim-check` first writes the full message to the injected store (see
    `codec.claim_check` for the file), then sends the handle-key-only form carrying
    `claimCheckLocation` as well as `handleKeyOnly` true (tiflow `simple/encoder.go`).
    """

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        build_ts_ms: int,
        claim_check: ClaimCheckStore | None = None,
    ) -> None:
        """Build the encoder; every message it makes carries `build_ts_ms` as buildTs.
        `claim_check` stores the messages `large-message-handle-option=claim-check` diverts.

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        avro = _is_avro(config)
        self._claim_check = claim_check
        self.config = config
        self.table = table
        self._marshaller: _Marshaller
        if avro:
            from ticdc_sink.codec.simple_avro import AvroMarshaller

            self._marshaller = AvroMarshaller(
                table, time_zone=config.time_zone, build_ts_ms=build_ts_ms
            )
        else:
            self._marshaller = JsonMarshaller(
                table, time_zone=config.time_zone, build_ts_ms=build_ts_ms
            )
        self._bootstrap: Message | None = None
        self._build_ts_ms = build_ts_ms
        self._batch_encoder: Any = None

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch | None:
        """The DML messages of a whole batch, column-wise (None: use `encode_row`).

        Raises:
            InputError: a value that does not fit its column (as `encode_row` words it).
        """
        if self._batch_encoder is None:
            self._batch_encoder = self._make_batch_encoder()
        if self._batch_encoder is False:
            return None
        return self._batch_encoder.encode_batch(batch, key_indexes)

    def _make_batch_encoder(self) -> Any:
        """The column-wise encoder of this table and encoding, or False where there is
        none (a table without columns, whose messages carry no `data`)."""
        from ticdc_sink.codec._simple_avro_batch import AvroBatchEncoder
        from ticdc_sink.codec._simple_json_batch import JsonBatchEncoder

        kind: Any = AvroBatchEncoder if _is_avro(self.config) else JsonBatchEncoder
        encoder = kind(self.table, time_zone=self.config.time_zone, build_ts_ms=self._build_ts_ms)
        return encoder if encoder.supported else False

    def encode_row(self, change: RowChange) -> Message:
        """The DML message of one row change; the Kafka key is empty.

        Raises:
            InputError: a value that does not fit its column.
            MessageTooLargeError: above max-message-bytes and the policy cannot help.
        """
        value = self._marshaller.marshal_row(change, handle_key_only=False, claim_check_location="")
        limit = self.config.max_message_bytes
        size = len(value) + RECORD_OVERHEAD
        if size <= limit:
            return Message(key=ROW_KEY, value=value, commit_ts=change.commit_ts, rows=1)
        return divert(
            self.config,
            self.table,
            change,
            value,
            lambda location: self._marshaller.marshal_row(
                change, handle_key_only=True, claim_check_location=location
            ),
            store=self._claim_check,
            protocol="simple",
        )

    def encode_bootstrap(self) -> Message:
        """The table's BOOTSTRAP message (built once: buildTs is fixed per encoder).

        Raises:
            MessageTooLargeError: above max-message-bytes (tiflow checks DDL-path messages
                and has no fallback for them).
        """
        if self._bootstrap is None:
            value = self._marshaller.marshal_bootstrap()
            size = len(value) + RECORD_OVERHEAD
            if size > self.config.max_message_bytes:
                raise MessageTooLargeError(
                    table=f"{self.table.database}.{self.table.table}",
                    key="(bootstrap)",
                    size=size,
                    limit=self.config.max_message_bytes,
                )
            self._bootstrap = Message(key=ROW_KEY, value=value, commit_ts=0, rows=0)
        return self._bootstrap

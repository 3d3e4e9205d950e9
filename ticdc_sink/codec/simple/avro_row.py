"""Simple Avro, the row path (tiflow `simple/marshaller.go` `avroMarshaller`, reference
§7.5): DML, BOOTSTRAP, WATERMARK and DDL messages of `encoding-format=avro`. The reference
the column-wise Avro marshaller (`avro_batch`) matches byte for byte.

Bytes are written here by hand, following the writer schema (`avro_values`) field by
field, rather than by fastavro's `schemaless_writer`: the per-table parts (database,
table, ids, map keys) are encoded once when the marshaller is built, and each column has
one function that writes its union branch and value, so a row costs a join of small byte
strings (about three times faster than building a dict for fastavro). The tests check
every kind of message against fastavro's writer and reader with the schema file.

Map entries (`data`, `old`) are written sorted by column name, in one block (count,
entries, 0). TiCDC writes them in Go map iteration order, which is random per run, so its
bytes for a multi-column row cannot be reproduced; ours are deterministic and decode to
the same values. `buildTs` is passed in, never read from the clock. In table schemas a
BIT default is its raw big-endian bytes (TiDB's `DefaultValueBit`, minimal length) written
as the Avro string, as TiCDC does.
"""

from __future__ import annotations

from typing import Any

from ticdc_sink.codec.checksum import TableChecksum
from ticdc_sink.codec.simple.avro_values import (
    NON_NULL,
    NULL,
    VALUE_ERRORS,
    VERSION,
    Writer,
    checksum_record,
    dml_heads,
    dml_times,
    encode_array,
    encode_boolean,
    encode_bytes,
    encode_long,
    encode_string,
    value_writer,
    wrap_uint64,
)
from ticdc_sink.codec.simple.values import (
    SimpleDDL,
    data_type_head,
    ddl_type_index,
    row_value_error,
    table_schema_json,
)
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import Column, TableSchema

__all__ = ["AvroMarshaller", "marshal_ddl", "marshal_watermark", "table_schema_avro"]

# Message: union branch 11, then MessageType enum index and payload branch.
_WATERMARK_HEAD = b"\x16\x00\x00"
_BOOTSTRAP_HEAD = b"\x16\x02\x02"
_DDL_HEAD = b"\x16\x04\x04"
# handleKeyOnly: true
_HANDLE_KEY_ONLY = NON_NULL + encode_boolean(True)


# --- table schema (tiflow simple/avro.go newTableSchemaMap) ------------------------------

_FLAGGED_TYPES = frozenset(
    {"tinyint", "smallint", "mediumint", "int", "bigint", "float", "double", "bit", "year"}
)


def _data_type_avro(column: Column) -> dict[str, Any]:
    t = column.type
    base = t.base
    result: dict[str, Any] = {
        **data_type_head(t),
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
        return NULL
    return NON_NULL + (encode_bytes(value) if isinstance(value, bytes) else encode_string(value))


def _write_table_schema(schema: dict[str, Any]) -> bytes:
    columns = []
    for column in schema["columns"]:
        t = column["dataType"]
        parts = [
            encode_string(column["name"]),
            encode_string(t["mysqlType"]),
            encode_string(t["charset"]),
            encode_string(t["collate"]),
            encode_long(t["length"]),
            NULL if t["decimal"] is None else NON_NULL + encode_long(t["decimal"]),
            NULL
            if t["elements"] is None
            else NON_NULL + encode_array([encode_string(e) for e in t["elements"]]),
            NULL if t["unsigned"] is None else NON_NULL + encode_boolean(t["unsigned"]),
            NULL if t["zerofill"] is None else NON_NULL + encode_boolean(t["zerofill"]),
            encode_boolean(column["nullable"]),
            _write_optional_string(column["default"]),
        ]
        columns.append(b"".join(parts))
    indexes = [
        b"".join(
            (
                encode_string(index["name"]),
                encode_boolean(index["unique"]),
                encode_boolean(index["primary"]),
                encode_boolean(index["nullable"]),
                encode_array([encode_string(name) for name in index["columns"]]),
            )
        )
        for index in schema["indexes"]
    ]
    return b"".join(
        (
            encode_string(schema["database"]),
            encode_string(schema["table"]),
            encode_long(schema["tableID"]),
            encode_long(wrap_uint64(schema["version"])),
            encode_array(columns),
            encode_array(indexes),
        )
    )


# --- messages -----------------------------------------------------------------------------


def marshal_watermark(commit_ts: int, build_ts_ms: int) -> bytes:
    """The Avro WATERMARK message (`Watermark{version, commitTs, buildTs}`)."""
    return b"".join(
        (
            _WATERMARK_HEAD,
            VERSION,
            encode_long(wrap_uint64(commit_ts)),
            encode_long(build_ts_ms),
        )
    )


def marshal_ddl(ddl: SimpleDDL) -> bytes:
    """An Avro DDL message (tiflow newDDLMessageMap): the sink writes no DDL, this serves
    tests and tools that feed decoders.

    Raises:
        InputError: an unknown DDL type.
        SchemaError: see table_schema_avro.
    """
    index = ddl_type_index(ddl.ddl_type)
    optional = [
        NULL if t is None else NON_NULL + _write_table_schema(table_schema_avro(t))
        for t in (ddl.table, ddl.pre_table)
    ]
    return b"".join(
        (
            _DDL_HEAD,
            VERSION,
            encode_long(index),
            encode_string(ddl.sql),
            encode_long(wrap_uint64(ddl.commit_ts)),
            encode_long(ddl.build_ts_ms),
            *optional,
        )
    )


class AvroMarshaller:
    """Simple Avro for one table, compiled once: the DML record's fixed fields as bytes,
    per column its map key and value writer, in column-name order."""

    def __init__(
        self,
        table: TableSchema,
        *,
        time_zone: str,
        build_ts_ms: int,
        checksum: TableChecksum | None = None,
    ) -> None:
        """Compile the table; `time_zone` names TIMESTAMP values' location. With
        `checksum`, DML messages carry the row checksum (`integrity-check-level`).

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self.table = table
        self.checksum = checksum
        self.build_ts_ms = build_ts_ms
        writers = [value_writer(c, time_zone) for c in table.columns]
        order = sorted(range(len(table.columns)), key=lambda i: table.columns[i].name)
        self._columns = [(encode_string(table.columns[i].name), i, writers[i]) for i in order]
        handle = set(table.handle_key)
        self._key_columns = [
            entry for entry in self._columns if table.columns[entry[1]].name in handle
        ]
        self._heads = dml_heads(table)
        self._times = dml_times(table, build_ts_ms)
        self._bootstrap: bytes | None = None

    def marshal_row(
        self, change: RowChange, *, handle_key_only: bool = False, claim_check_location: str = ""
    ) -> bytes:
        """The DML message of a row change (tiflow newDMLMessageMap).

        INSERT carries `data`, DELETE `old`, UPDATE both; an UPDATE without a before image
        has a null `old` (as the JSON encoding, which leaves it out). `handleKeyOnly` is
        written (true) only for the handle-key-only form, `claimCheckLocation` only when
        given; `checksum` with the row checksum (`TableChecksum.of_change`; null where it
        gives none).

        Raises:
            InputError: a value that does not fit its column's MySQL type (or the row
                checksum).
        """
        try:
            commit_ts = encode_long(wrap_uint64(change.commit_ts))
        except OverflowError as exc:
            raise InputError(
                f"commit ts {change.commit_ts} of a row of {self._where()} is not a uint64 TSO",
                table=self._where(),
                value=change.commit_ts,
            ) from exc
        columns = self._key_columns if handle_key_only else self._columns
        data = NULL
        if change.op is not Op.DELETE and change.row is not None:
            data = self._map(change.row, columns)
        old = NULL
        if change.op is not Op.INSERT and change.before is not None:
            old = self._map(change.before, columns)
        checksum = NULL
        if self.checksum is not None:
            checksum = checksum_record(self.checksum.of_change(change))
        return b"".join(
            (
                self._heads[change.op],
                commit_ts,
                self._times,
                NON_NULL + encode_string(claim_check_location) if claim_check_location else NULL,
                _HANDLE_KEY_ONLY if handle_key_only else NULL,
                checksum,
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
            return NON_NULL + b"\x00"
        try:
            entries = [
                key + (NULL if (value := row[i]) is None else write(value))
                for key, i, write in columns
            ]
        except VALUE_ERRORS:
            pass
        else:
            # [null, map] branch 1, one block: count, entries, 0
            return b"".join((NON_NULL, encode_long(len(entries)), *entries, b"\x00"))
        for _, i, write in columns:  # find the culprit for the message
            value = row[i]
            try:
                if value is not None:
                    write(value)
            except VALUE_ERRORS as exc:
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
                    VERSION,
                    encode_long(self.build_ts_ms),
                    _write_table_schema(table_schema_avro(self.table)),
                )
            )
        return self._bootstrap

"""Simple JSON, the row path (tiflow `simple/marshaller.go` `jsonMarshaller`): one dict and
one `gojson.dumps` call per message. The reference the column-wise JSON marshaller
(`json_batch`) matches byte for byte.

JSON is what Go's `json.Marshal` writes for tiflow's `message` struct (`simple/message.go`):
fields in struct order with `omitempty` honoured, `data`/`old` keys sorted, every value a
string except NULL and TIMESTAMP. `buildTs` is passed in, never read from the clock, so a
replay writes identical bytes.
"""

from __future__ import annotations

from typing import Any

from ticdc_sink.codec.checksum import TableChecksum
from ticdc_sink.codec.gojson import dumps
from ticdc_sink.codec.simple.values import (
    PROTOCOL_VERSION,
    Renderer,
    SimpleDDL,
    checksum_json,
    renderer,
    row_value_error,
    table_schema_json,
)
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import TableSchema

__all__ = ["JsonMarshaller", "marshal_ddl", "marshal_watermark"]


class JsonMarshaller:
    """Simple JSON for one table, compiled once: per column its renderer, and the columns
    in the sorted order Go's map marshalling writes them."""

    def __init__(
        self,
        table: TableSchema,
        *,
        time_zone: str,
        build_ts_ms: int,
        checksum: TableChecksum | None = None,
    ) -> None:
        """Compile the table; `time_zone` names TIMESTAMP values' location (TiCDC writes
        Go's `Location.String()` of its server zone, e.g. UTC, Asia/Shanghai); with
        `checksum`, DML messages carry the row checksum (`integrity-check-level`).

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self.table = table
        self.checksum = checksum
        self.build_ts_ms = build_ts_ms
        order = sorted(range(len(table.columns)), key=lambda i: table.columns[i].name)
        renderers = [renderer(c, time_zone) for c in table.columns]
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
        columns = self._key_columns if handle_key_only else self._columns
        # values first: a value its column refuses raises the renderer's error
        data = None if change.op is Op.DELETE else self._values(change.row, columns)
        old = None if change.op is Op.INSERT else self._values(change.before, columns)
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
        if self.checksum is not None:
            checksum = self.checksum.of_change(change)
            if checksum is not None:
                message["checksum"] = checksum_json(checksum)
        if data:
            message["data"] = data
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


def marshal_watermark(commit_ts: int, build_ts_ms: int) -> bytes:
    """The JSON WATERMARK message (tiflow newResolvedMessage)."""
    return dumps(
        {
            "version": PROTOCOL_VERSION,
            "type": "WATERMARK",
            "commitTs": commit_ts,
            "buildTs": build_ts_ms,
        }
    )


def marshal_ddl(ddl: SimpleDDL) -> bytes:
    """The JSON DDL message (tiflow newDDLMessage).

    Raises:
        SchemaError: see table_schema_json.
    """
    message: dict[str, Any] = {"version": PROTOCOL_VERSION, "type": ddl.ddl_type}
    if ddl.sql:
        message["sql"] = ddl.sql
    message["commitTs"] = ddl.commit_ts
    message["buildTs"] = ddl.build_ts_ms
    if ddl.table is not None:
        message["tableSchema"] = table_schema_json(ddl.table)
    if ddl.pre_table is not None:
        message["preTableSchema"] = table_schema_json(ddl.pre_table)
    return dumps(message)

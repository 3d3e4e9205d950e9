"""canal-json decoder, mirroring tiflow `pkg/sink/codec/canal/canal_json_decoder.go` and
`canal_json_message.go` (`canalJSONFormatColumn`).

A message is a DML row (`isDdl` false, `type` INSERT / UPDATE / DELETE), a DDL (`isDdl`
true) or, with the TiDB extension, a WATERMARK (`type` TIDB_WATERMARK). canal-json carries
no table schema; each value is typed back from its column's `mysqlType` entry (the base
name before `(` or a space, as tiflow's `ExtractBasicMySQLType`), or from its `sqlType`
code when `mysqlType` lacks the column:

    tinyint, smallint, mediumint, int, bigint, year   -> int  (sqlType -6, 5, 4, -5)
    enum (index), set (bitmask), bit                  -> int  (sqlType -7: set, bit)
    float                    -> float (the float32 value, as TiCDC's float32)  (sqlType 7)
    double                   -> float                                           (sqlType 8)
    decimal                  -> decimal.Decimal (str() gives back the digits)   (sqlType 3)
    binary, varbinary, *blob -> bytes: the ISO-8859-1 code of each character (by the
                                base name; tiflow's `IsBinaryMySQLType` searches the whole
                                text, so it also takes `enum('binary')` for binary)
                                                                             (sqlType 2004)
    date, datetime, timestamp, time, json, vector,
    char, varchar, *text and names not listed         -> str, as written
    null                                              -> None

These are the mounter values of `ticdc_sink.events` except DECIMAL (a Decimal, as the
Simple decoder returns) and a BIGINT UNSIGNED typed from sqlType 3 alone (a Decimal).
The parsers live in `parsers.py`, shared with the read's column-wise path: a read's task
takes runs of row messages from `record_run` (`read_columns.py`), which types a column at
a time and leaves anything unusual to `decode_message`.

Rows: `data` is the new image of INSERT and UPDATE and the deleted row of DELETE (which
the DecodedRow carries as `old`, with `data` None). An UPDATE written with
only-output-updated-columns (or content-compatible) lists only the changed old values;
as tiflow's decoder does, the other old values are taken from the new image, so `old` is
always a whole row. `commit_ts` is `_tidb.commitTs` (0 without the TiDB extension: canal
itself carries only `es`, the commit time in ms); `handle_key_only` is
`_tidb.onlyHandleKey`; `build_ts` is `ts`. canal-json has no table id or schema version:
both are 0.

A row sent with `large-message-handle-option=claim-check` carries only its handle-key
columns and `_tidb.claimCheckLocation`; given a `claim_check_loader`
(`ticdc_sink.claim_check.read_claim_check`, or any callable location -> file bytes), the
decoder reads the stored message and returns the full row instead (with
`claim_check_location` still set), as tiflow `assembleClaimCheckRowChangedEvent` does.
`claim_check_raw_value` must match the sink's `claim-check-raw-value`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson

from ticdc_sink.codec.canal_json.parsers import Parser, parser_for
from ticdc_sink.codec.canal_json.read_columns import CanalJsonRun
from ticdc_sink.codec.canal_json.values import WATERMARK_TYPE
from ticdc_sink.codec.compression import compression_named, decompress
from ticdc_sink.decode import (
    ClaimCheckLoader,
    DecodedDDL,
    DecodedEvent,
    DecodedRow,
    DecodedWatermark,
    DecoderSettings,
    claim_check_value,
    follow_claim_check,
)
from ticdc_sink.decode.peek import ROW_OPS, RowPeek
from ticdc_sink.decode.types import closest_type, implied_table, type_from_text
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.schema import MySQLType, TableSchema

__all__ = ["CanalJsonDecoder", "build_decoder", "canal_json_row", "parser_for"]

# java.sql.Types codes (tiflow `internal.MySQLType2JdbcType`) -> the closest type.
_TYPE_BY_CODE = {
    -6: "tinyint",
    5: "smallint",
    4: "int",
    -5: "bigint",
    -7: "bit",
    7: "float",
    6: "float",
    8: "double",
    3: "decimal",
    91: "date",
    92: "time",
    93: "datetime",
    2004: "longblob",
    -2: "binary",
    -3: "varbinary",
    1: "char",
}


class CanalJsonDecoder:
    """Decodes canal-json messages written by TiCDC or by this sink. Keeps a small cache
    of parsers by type text; otherwise stateless."""

    def __init__(
        self,
        *,
        claim_check_loader: ClaimCheckLoader | None = None,
        claim_check_raw_value: bool = False,
        compression: str = "none",
    ) -> None:
        """`claim_check_loader` reads claim-check locations (module docstring);
        `compression` is the sink's `large-message-handle-compression`."""
        self._parsers: dict[tuple[str | None, int | None], Parser] = {}
        self.claim_check_loader = claim_check_loader
        self.claim_check_raw_value = claim_check_raw_value
        self.compression = compression_named(compression)

    def decode_message(self, key: bytes | None, value: bytes | None) -> DecodedEvent:
        """The event of one Kafka record (the key is not used: canal-json keys are empty).

        Raises:
            DecodeError: the value is not a canal-json message.
        """
        if value is None:
            raise DecodeError("the record has no value; a canal-json message always has one")
        value = decompress(self.compression, value)
        try:
            message = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise DecodeError(
                f"the value is not JSON ({exc}); expected a canal-json object"
            ) from exc
        if not isinstance(message, dict):
            raise DecodeError(f"the value is a JSON {type(message).__name__}; expected an object")
        kind = message.get("type")
        if not isinstance(kind, str):
            raise DecodeError(f"canal-json field 'type' is {kind!r}; expected a string")
        extension = message.get("_tidb")
        if extension is not None and not isinstance(extension, dict):
            raise DecodeError(f"canal-json field '_tidb' is {extension!r}; expected an object")
        extension = extension or {}
        build_ts = message.get("ts", 0)
        if not isinstance(build_ts, int):
            raise DecodeError(f"canal-json field 'ts' is {build_ts!r}; expected an integer")
        commit_ts = _int_field(extension, "commitTs", "_tidb")
        if message.get("isDdl") is True:
            sql = message.get("sql") or ""
            if not isinstance(sql, str):
                raise DecodeError(f"canal-json DDL field 'sql' is {sql!r}; expected a string")
            return DecodedDDL(type=kind, sql=sql, commit_ts=commit_ts, build_ts=build_ts)
        if kind == WATERMARK_TYPE:
            watermark = _int_field(extension, "watermarkTs", "_tidb")
            return DecodedWatermark(commit_ts=watermark, build_ts=build_ts)
        if kind not in ("INSERT", "UPDATE", "DELETE"):
            raise DecodeError(
                f"canal-json type is {kind!r} in a non-DDL message; expected INSERT, UPDATE, "
                f"DELETE or {WATERMARK_TYPE}"
            )
        row = self._row(message, Op(kind), commit_ts, build_ts, extension)
        return follow_claim_check(
            self, row, self.claim_check_loader, raw_value=self.claim_check_raw_value
        )

    def record_run(
        self,
        output: TableSchema,
        *,
        selected: Callable[[str, str], bool],
        kafka_columns: bool,
        topic: str,
        headers: bool = False,
    ) -> CanalJsonRun:
        """A run that reads this decoder's row messages of `output`'s columns column-wise,
        for a read's task (`read_columns`: the column-wise twin of the read's row path);
        `selected(database, table)` says which tables the read takes."""
        return CanalJsonRun(
            output,
            compression=self.compression,
            selected=selected,
            kafka_columns=kafka_columns,
            topic=topic,
            headers=headers,
        )

    def peek_row(self, key: bytes | None, value: bytes | None) -> RowPeek | None:
        """What a stream's driver needs of a row message, its values not decoded
        (`decode.peek`); None for anything else, which `decode_message` decodes."""
        if value is None:
            return None
        try:
            return canal_json_row(decompress(self.compression, value))
        except DecodeError:
            return None

    def row_table(self, key: bytes | None, value: bytes | None) -> TableSchema | None:
        """The table a row message implies (None for other messages): its columns in
        the order of `data`, each typed from its `mysqlType` (a base name and flags by
        default, the whole type with content-compatible; `decode.types` fills in what a
        base name leaves out), else from its `sqlType` code; `pkNames` the primary key.

        Raises:
            DecodeError: not a canal-json message, or a column with no type.
        """
        event = self.decode_message(key, value)
        if not isinstance(event, DecodedRow):
            return None
        location = event.claim_check_location
        if location and self.claim_check_loader is not None:
            # The message holds the key columns only; the stored one holds them all (a
            # file decode_message has just read, so no error is left to handle here).
            stored = self.claim_check_loader(location)
            value = claim_check_value(location, stored, raw_value=self.claim_check_raw_value)
        message = orjson.loads(decompress(self.compression, value or b""))
        where = f"{event.op.value} {event.database}.{event.table}"
        mysql_types = _object_field(message, "mysqlType", where)
        sql_types = _object_field(message, "sqlType", where)
        # content-compatible writes whole types: then every type with a length or members
        # shows it, and a bare `time` is time(0).
        whole = any(isinstance(t, str) and "(" in t for t in mysql_types.values())
        columns = []
        for name in _image(message, "data", where) or {}:
            columns.append((name, _column_type(name, mysql_types, sql_types, where, whole)))
        keys = message.get("pkNames") or ()
        primary = tuple(k for k in keys if isinstance(k, str))
        return implied_table(event.database, event.table, columns, primary)

    def _row(
        self,
        message: dict[str, Any],
        op: Op,
        commit_ts: int,
        build_ts: int,
        extension: dict[str, Any],
    ) -> DecodedRow:
        database = message.get("database")
        table = message.get("table")
        if not isinstance(database, str) or not isinstance(table, str):
            raise DecodeError(
                f"{op.value} message: 'database' and 'table' must be strings, got "
                f"{database!r} and {table!r}"
            )
        where = f"{op.value} {database}.{table} commitTs {commit_ts}"
        mysql_types = _object_field(message, "mysqlType", where)
        sql_types = _object_field(message, "sqlType", where)
        data = self._typed(_image(message, "data", where), mysql_types, sql_types, where)
        if data is None:
            raise DecodeError(f"{where}: 'data' is null; a DML message carries its row there")
        location = extension.get("claimCheckLocation")
        row = functools.partial(
            DecodedRow,
            database=database,
            table=table,
            table_id=0,
            op=op,
            commit_ts=commit_ts,
            schema_version=0,
            handle_key_only=extension.get("onlyHandleKey") is True,
            claim_check_location=location if isinstance(location, str) else None,
            build_ts=build_ts,
        )
        if op is Op.DELETE:
            return row(data=None, old=data)
        if op is Op.INSERT:
            return row(data=data, old=None)
        old = self._typed(_image(message, "old", where), mysql_types, sql_types, where)
        if old is None:
            raise DecodeError(f"{where}: 'old' is null; an UPDATE carries its old values there")
        # tiflow canalJSONMessage2RowChange: columns missing from `old` (written with
        # only-output-updated-columns) kept their value; take it from the new image.
        if len(old) < len(data):
            old = {name: old.get(name, value) for name, value in data.items()} | old
        return row(data=data, old=old)

    def _typed(
        self,
        raw: dict[str, Any] | None,
        mysql_types: dict[str, Any],
        sql_types: dict[str, Any],
        where: str,
    ) -> dict[str, Any] | None:
        if raw is None:
            return None
        result: dict[str, Any] = {}
        for name, value in raw.items():
            if value is None:
                result[name] = None
                continue
            if not isinstance(value, str):
                raise DecodeError(
                    f"{where}: column {name} is {value!r}; canal-json values are strings or null"
                )
            key = (mysql_types.get(name), sql_types.get(name))
            parse = self._parsers.get(key)
            if parse is None:
                mysql_type, sql_type = key
                if mysql_type is not None and not isinstance(mysql_type, str):
                    raise DecodeError(f"{where}: mysqlType of column {name} is {mysql_type!r}")
                if sql_type is not None and not isinstance(sql_type, int):
                    raise DecodeError(f"{where}: sqlType of column {name} is {sql_type!r}")
                try:
                    parse = parser_for(mysql_type, sql_type)
                except ValueError:
                    raise DecodeError(
                        f"{where}: column {name} has no mysqlType or sqlType entry, so its "
                        "value cannot be typed"
                    ) from None
                if len(self._parsers) < 4096:
                    self._parsers[key] = parse
            try:
                result[name] = parse(value)
            except (ValueError, OverflowError) as exc:
                raise DecodeError(f"{where}: column {name} ({key[0]}): {exc}") from exc
        return result


def _column_type(
    name: str,
    mysql_types: dict[str, Any],
    sql_types: dict[str, Any],
    where: str,
    whole: bool = False,
) -> MySQLType:
    text = mysql_types.get(name)
    try:
        if isinstance(text, str):
            return type_from_text(text, whole=whole)
        code = sql_types.get(name)
        if isinstance(code, int):
            return closest_type(_TYPE_BY_CODE.get(code, "longtext"))
    except SchemaError as exc:
        raise DecodeError(f"{where}: column {name}: {exc.message}") from exc
    raise DecodeError(f"{where}: column {name} has no mysqlType or sqlType entry")


def _int_field(obj: dict[str, Any], name: str, where: str) -> int:
    value = obj.get(name, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise DecodeError(f"canal-json field {where}.{name} is {value!r}; expected a TSO")
    return value


def _object_field(message: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    value = message.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"{where}: {name!r} is {value!r}; expected an object or null")
    return value


def _image(message: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    value = message.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], dict):
        raise DecodeError(f"{where}: {name!r} is not a list of one JSON object")
    return value[0]


def build_decoder(settings: DecoderSettings) -> CanalJsonDecoder:
    """The decoder `decoder_for` gives for protocol canal-json."""
    return CanalJsonDecoder(
        claim_check_loader=settings.claim_check_loader,
        claim_check_raw_value=settings.claim_check_raw_value,
        compression=settings.compression,
    )


# --- the peek (decode.peek) -----------------------------------------------------------------


def canal_json_row(value: bytes) -> RowPeek | None:
    """A canal-json row message without claim check: `data` (and an UPDATE's `old`) a
    list of one object, the commit ts from the TiDB extension (0 without it, as the
    decoder reads it); None for anything else. Parsed as Simple's peek parses."""
    try:
        message = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if type(message) is not dict:
        return None
    get = message.get
    kind = get("type")
    op = ROW_OPS.get(kind) if type(kind) is str else None
    extension = get("_tidb") or {}
    if op is None or get("isDdl") is True or type(extension) is not dict:
        return None
    commit_ts, build_ts = extension.get("commitTs", 0), get("ts", 0)
    database, table = get("database"), get("table")
    if not (
        type(commit_ts) is int
        and commit_ts >= 0
        and type(build_ts) is int
        and type(database) is str
        and type(table) is str
        and _one_object(get("data"))
        and (op is not Op.UPDATE or _one_object(get("old")))
        and type(get("mysqlType") or {}) is dict
        and type(get("sqlType") or {}) is dict
        and extension.get("claimCheckLocation") is None
    ):
        return None
    return RowPeek(op, commit_ts, database, table)


def _one_object(image: Any) -> bool:
    return type(image) is list and len(image) == 1 and type(image[0]) is dict

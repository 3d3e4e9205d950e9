"""Avro protocol decoder (`protocol=avro`), mirroring tiflow `pkg/sink/codec/avro/decoder.go`.

A record is Confluent-framed (`0x00`, big-endian int32 schema id, Avro binary); the writer
schema comes from the `schema_for_id` callable (a registry client's lookup, or a dict in
tests) and is parsed once per id. Values are typed back from each field's Avro type and its
`connect.parameters` `tidb_type` to the mounter values of ticdc_sink.events:

    INT, INT UNSIGNED, BIGINT, YEAR  -> int
    BIGINT UNSIGNED   -> int: string mode exact; long mode the signed long as written
                         (TiCDC wraps values >= 2^63 to negative; this decoder, like
                         TiCDC's, does not undo it: add 2**64 to a negative value)
    FLOAT, DOUBLE     -> float (FLOAT: the float32 value)
    BIT               -> int (from the big-endian bytes)
    DECIMAL           -> decimal.Decimal (precise: from the logical type; string: parsed)
    ENUM              -> int, the 1-based index of the name in `allowed`
    SET               -> int, the bitmask of the names in `allowed`
    TEXT, JSON, DATE, DATETIME, TIMESTAMP, TIME, TiDBVECTORFloat32 -> str
    BLOB              -> bytes
    NULL              -> None

Fields without a `tidb_type` (a schema TiCDC did not write) keep fastavro's value.

What the wire cannot give back: the database and table are the record namespace's second
part and the record name (of a key record `<namespace>.<table>.Key`, written under the
record subject strategies, the namespace's last part), i.e. TiCDC's *sanitised* names
(`my-db` arrives as `my_db`), and column names are the sanitised field names; there is no
table id or schema version (both 0); without `enable-tidb-extension` there is no commit
ts (0) and no op, so every non-tombstone is an INSERT; UPDATEs carry no old values. A
tombstone (empty value) is a DELETE whose `old` holds only the handle-key columns from
the key.

Written with `avro-include-before-value` (pingcap/ticdc master, `decoder.go`
`assembleEvent`), a value record has `_ticdc_before` and `_tidb_op` (`c`, `u`, `d`) even
without the extension: an UPDATE's `old` is the before record, and a DELETE has a value,
decoded with the whole deleted row (from `_ticdc_before`) as `old`.

Row checksums (`integrity-check-level=correctness`): a value record's non-empty
`_tidb_row_level_checksum` (with `_tidb_corrupted` and `_tidb_checksum_version`) becomes
`DecodedRow.checksum` (`current`; a DELETE value's, the deleted row's, `previous`) and is
checked as tiflow's consumer checks it (`avro/decoder.go`, `common.VerifyChecksum`): the
value's columns in field order, which TiCDC sorts by column ID, each typed back to its
mounter value, TIMESTAMPs converted from the decoder's `time_zone` (codec/checksum.py). A
mismatch, `_tidb_corrupted` true, or a checksum that is not a CRC32 is a DecodeError naming
the table, the key, and the checksum expected and got. Tombstones carry no checksum.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import attrs
import fastavro
import orjson

from ticdc_sink.codec.avro.confluent import WriterSchemas, read_body
from ticdc_sink.codec.avro.schema import (
    KEY_RECORD,
    TICDC_BEFORE,
    TIDB_CHECKSUM_VERSION,
    TIDB_COMMIT_TS,
    TIDB_CORRUPTED,
    TIDB_OP,
    TIDB_ROW_LEVEL_CHECKSUM,
    as_fastavro_reads_it,
    timestamp_default_local,
)
from ticdc_sink.codec.avro.writer_schema import Converter, WriterSchema
from ticdc_sink.codec.checksum import RowChecksum, TableChecksum
from ticdc_sink.decode import DecodedRow, DecoderSettings
from ticdc_sink.decode.types import closest_type, implied_table
from ticdc_sink.errors import DecodeError, InputError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.gotext import format_float
from ticdc_sink.schema import MySQLType, TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.avro.read_columns import AvroRun

__all__ = ["AvroDecoder", "build_decoder", "split_allowed"]

_OPS = {"c": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE}
_ALLOWED_SPLIT = re.compile(r"(?<!\\),")


def split_allowed(allowed: str) -> list[str]:
    """The ENUM/SET elements of an `allowed` parameter: split at commas not escaped as
    `\\,`, then unescape them. (TiCDC's own decoder splits at every comma; the element
    quoting that TiCDC's escaping folds, `''` and `\\'` to `'`, cannot be undone.)"""
    return [part.replace("\\,", ",") for part in _ALLOWED_SPLIT.split(allowed)]


def _identity(value: Any) -> Any:
    return value


def _bit(value: Any) -> int:
    return int.from_bytes(value, "big")


def _decimal_text(value: Any) -> Decimal:
    try:
        return Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal") from None


def _enum(elements: list[str]) -> Converter:
    index: dict[str, int] = {}
    for i, name in enumerate(elements, 1):
        index.setdefault(name, i)
    folded: dict[str, int] = {}
    for name, i in index.items():
        folded.setdefault(name.casefold(), i)

    def convert(value: Any) -> int:
        found = index.get(value) or folded.get(value.casefold())
        if found is None:
            raise ValueError(f"{value!r} is not one of the ENUM elements {elements}")
        return found

    return convert


def _set(elements: list[str]) -> Converter:
    bits: dict[str, int] = {}
    for i, name in enumerate(elements):
        bits.setdefault(name, 1 << i)

    def convert(value: Any) -> int:
        if value == "":
            return 0
        mask = 0
        for name in value.split(","):
            bit = bits.get(name)
            if bit is None:
                raise ValueError(f"{name!r} is not one of the SET elements {elements}")
            mask |= bit
        return mask

    return convert


def _converter(tidb_type: str, avro_type: Any, params: dict[str, Any]) -> Converter:
    match tidb_type:
        case "INT" | "INT UNSIGNED" | "BIGINT" | "YEAR" | "FLOAT" | "DOUBLE":
            return _identity
        case "BIGINT UNSIGNED":
            return int if avro_type == "string" else _identity
        case "BIT":
            return _bit
        case "DECIMAL":
            return _decimal_text if avro_type == "string" else _identity
        case "ENUM":
            return _enum(split_allowed(str(params.get("allowed", ""))))
        case "SET":
            return _set(split_allowed(str(params.get("allowed", ""))))
        case (
            "TEXT"
            | "BLOB"
            | "JSON"
            | "DATE"
            | "DATETIME"
            | "TIMESTAMP"
            | "TIME"
            | "TiDBVECTORFloat32"
        ):
            return _identity
    raise DecodeError(
        f"avro field has tidb_type {tidb_type!r}, which TiCDC does not write; the message "
        "was not written by TiCDC's avro protocol (or a newer version)"
    )


# tidb_type -> the closest MySQL type's base name (`decode.types`): INT stands for every
# signed integer type up to INT (INT UNSIGNED of an Avro int for the unsigned ones up to
# MEDIUMINT), TEXT for every text type and CHAR/VARCHAR, BLOB for every binary.
_BASES = {
    "INT": "int",
    "BIGINT": "bigint",
    "YEAR": "year",
    "FLOAT": "float",
    "DOUBLE": "double",
    "TEXT": "longtext",
    "BLOB": "longblob",
    "JSON": "json",
    "DATE": "date",
    "DATETIME": "datetime",
    "TIMESTAMP": "timestamp",
    "TIME": "time",
    "TiDBVECTORFloat32": "vector",
}


def _mysql_type(tidb_type: str, kind: dict[str, Any] | str, params: dict[str, Any]) -> MySQLType:
    """The closest MySQL type of a field with `tidb_type` (module `decode.types`)."""
    base, _, flag = tidb_type.partition(" ")
    unsigned = flag == "UNSIGNED"
    if base == "BIT":
        return closest_type("bit", length=int(params.get("length", 64)))
    if base == "DECIMAL":
        if isinstance(kind, dict) and kind.get("logicalType") == "decimal":
            return closest_type("decimal", length=kind["precision"], scale=kind.get("scale", 0))
        return closest_type("decimal")
    if base in ("ENUM", "SET"):
        allowed = split_allowed(str(params.get("allowed", "")))
        return closest_type(base.lower(), elements=allowed)
    avro_type = kind.get("type") if isinstance(kind, dict) else kind
    if base == "INT" and unsigned and avro_type == "int":
        # INT UNSIGNED travels as a long; the smaller unsigned types as an int.
        return closest_type("mediumint", unsigned=True)
    return closest_type(_BASES[base], unsigned=unsigned)


def _default_text(raw: Any, t: MySQLType, time_zone: str) -> str | None:
    """A field's `default` as TiDB's default string (`schema.Column`), undoing what the
    encoder's `codec.avro.schema` conversion did: BIGINT UNSIGNED wrapped to a negative
    long, FLOAT widened to a double, BIT and binary strings in base64, a TIMESTAMP literal
    in UTC (read back in the writer's `time_zone`). None: no default (a DECIMAL of a
    logical type never has one in TiCDC's schemas)."""
    if raw is None:
        return None
    base = t.base
    if t.is_integer or base == "year":
        value = int(raw)
        if value < 0 and t.unsigned and base == "bigint":
            value += 1 << 64
        return str(value)
    if base == "float":
        return format_float(float(raw), 32)
    if base == "double":
        return format_float(float(raw), 64)
    if base == "bit":
        return str(int.from_bytes(base64.b64decode(raw), "big"))
    if t.is_binary:
        return base64.b64decode(raw).decode("utf-8", "surrogateescape")
    if base == "timestamp":
        return timestamp_default_local(str(raw), time_zone)
    return str(raw)


def _field_type(field: dict[str, Any]) -> dict[str, Any] | str:
    kind = field.get("type")
    if isinstance(kind, list):  # a nullable column: ["null", T] or [T, "null"]
        members = [m for m in kind if m != "null"]
        return members[0] if len(members) == 1 else {}
    return kind if isinstance(kind, dict | str) else {}


@attrs.frozen
class _Reader:
    """One writer schema, parsed: the fastavro schema, names and per-field converters."""

    parsed: Any
    database: str
    table: str
    columns: tuple[tuple[str, Converter], ...]
    #: The closest MySQL type of each column (None: a field without tidb_type).
    types: tuple[MySQLType | None, ...] = ()
    schema_id: int = 0
    #: Whether each column's field is a union with null (a nullable column).
    nullable: tuple[bool, ...] = ()
    #: Each field's `default` as the schema holds it (None: none, or null).
    defaults: tuple[Any, ...] = ()
    #: The schema's JSON, as parsed.
    schema: Any = None

    @classmethod
    def from_text(cls, schema_id: int, text: str) -> _Reader:
        try:
            schema = orjson.loads(text)
            parsed = fastavro.parse_schema(as_fastavro_reads_it(schema))
        except Exception as exc:  # orjson and fastavro raise several types
            raise DecodeError(f"schema id {schema_id} is not a valid Avro schema: {exc}") from exc
        if not isinstance(schema, dict) or schema.get("type") != "record":
            raise DecodeError(f"schema id {schema_id} is not an Avro record schema")
        columns = []
        types: list[MySQLType | None] = []
        nullable: list[bool] = []
        defaults: list[Any] = []
        for field in schema.get("fields", []):
            name = field["name"]
            if name in (TIDB_OP, TICDC_BEFORE):
                break  # the extension fields follow the columns (tiflow decoder)
            kind = _field_type(field)
            params = kind.get("connect.parameters", {}) if isinstance(kind, dict) else {}
            tidb = params.get("tidb_type") if isinstance(params, dict) else None
            avro_type = kind.get("type") if isinstance(kind, dict) else kind
            convert = _identity if tidb is None else _converter(tidb, avro_type, params)
            columns.append((name, convert))
            types.append(None if tidb is None else _mysql_type(tidb, kind, params))
            union = field.get("type")
            nullable.append(isinstance(union, list) and "null" in union)
            defaults.append(field.get("default"))
        namespace = str(schema.get("namespace", ""))
        name = str(schema.get("name", ""))
        if name == KEY_RECORD and namespace.count(".") >= 2:
            # A key record under the record subject strategies: <value full name>.Key.
            namespace, _, name = namespace.rpartition(".")
        _, _, database = namespace.partition(".")
        return cls(
            parsed,
            database,
            name,
            tuple(columns),
            tuple(types),
            schema_id,
            tuple(nullable),
            tuple(defaults),
            schema,
        )

    def read(self, body: bytes, what: str) -> dict[str, Any]:
        record = read_body(self.parsed, body, what)
        assert isinstance(record, dict)
        return record

    def columns_of(self, record: dict[str, Any], what: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, convert in self.columns:
            value = record.get(name)
            try:
                out[name] = None if value is None else convert(value)
            except (ValueError, TypeError, AttributeError) as exc:
                raise DecodeError(
                    f"field {name} of the {what} of {self.database}.{self.table} cannot be "
                    f"read back: {exc}"
                ) from exc
        return out


class AvroDecoder:
    """Decoder of TiCDC avro protocol records (key and value as read from Kafka).

    `schema_for_id(id)` returns a schema's JSON text (e.g. `ConfluentSchemaRegistry.
    schema_text`); it is called once per id, and the parsed schemas are kept (at most
    `max_schemas`, least recently used dropped).
    """

    def __init__(
        self,
        schema_for_id: Callable[[int], str],
        *,
        max_schemas: int = 1024,
        time_zone: str = "UTC",
    ) -> None:
        """`time_zone` is the producer's `time-zone`, the zone its TIMESTAMP values are
        written in, for checking row checksums (module docstring)."""
        self._time_zone = time_zone
        self._checksums: dict[int, TableChecksum] = {}
        self._schemas = WriterSchemas(
            schema_for_id,
            _Reader.from_text,
            protocol="avro",
            max_schemas=max_schemas,
            dropped=lambda schema_id: self._checksums.pop(schema_id, None),
        )

    def writer_schema(self, schema_id: int) -> WriterSchema:
        """The writer schema of `schema_id` (module docstring), from the decoder's cache.

        Raises:
            DecodeError: an id the registry does not know, or not an Avro record schema.
        """
        reader = self._schemas.get(schema_id)
        return WriterSchema(
            schema_id, reader.schema, reader.database, reader.table, reader.columns, reader.types
        )

    def record_run(
        self,
        output: TableSchema,
        *,
        selected: Callable[[str, str], bool],
        kafka_columns: bool,
        topic: str,
        headers: bool = False,
    ) -> AvroRun:
        """A run that reads this decoder's records whose writer schemas fit `output`
        column-wise, for a read's task (`read_columns`: the column-wise twin of the read's
        row path); `selected(database, table)` says which tables the read takes."""
        # Imported here: the column-wise read loads Arrow and the read side's rows, which
        # decoding alone does not need.
        from ticdc_sink.codec.avro.read_columns import AvroRun

        return AvroRun(
            self.writer_schema,
            output,
            selected=selected,
            kafka_columns=kafka_columns,
            topic=topic,
            headers=headers,
        )

    def row_table(self, key: bytes | None, value: bytes | None) -> TableSchema | None:
        """The table a record implies: the value schema's fields, each of the closest
        MySQL type to its `tidb_type` (`_mysql_type`), NOT NULL unless a union with null,
        with its default (`_default_text`), and the key schema's fields as the primary
        key. None for a tombstone (its key holds the key columns only) and a value schema
        that is not TiCDC's (fields without `tidb_type`).

        Raises:
            DecodeError: as `decode_message`.
        """
        self.decode_message(key, value)
        if not value:
            return None
        key_reader = self._schemas.unframe(key, "key")[0] if key else None
        reader = self._schemas.unframe(value, "value")[0]
        columns = [
            (name, t)
            for (name, _), t in zip(reader.columns, reader.types, strict=True)
            if t is not None
        ]
        if len(columns) < len(reader.columns):
            return None
        primary = tuple(name for name, _ in key_reader.columns) if key_reader else ()
        defaults = [
            _default_text(raw, t, self._time_zone)
            for raw, (_, t) in zip(reader.defaults, columns, strict=True)
        ]
        return implied_table(
            reader.database,
            reader.table,
            columns,
            primary,
            nullable=reader.nullable,
            defaults=defaults,
        )

    def decode_message(self, key: bytes | None, value: bytes | None) -> DecodedRow:
        """The row change of one Kafka record.

        Raises:
            DecodeError: not a Confluent-framed record, an unknown schema id, a body that
                does not match its schema, or a value not among the ENUM/SET elements.
        """
        if not value:
            if not key:
                raise DecodeError(
                    "the record has neither key nor value; an avro DELETE (tombstone) keeps its key"
                )
            reader, body = self._schemas.unframe(key, "key")
            key_row = reader.columns_of(reader.read(body, "key"), "key")
            return DecodedRow(
                database=reader.database,
                table=reader.table,
                table_id=0,
                op=Op.DELETE,
                commit_ts=0,
                schema_version=0,
                data=None,
                old=key_row,
            )
        key_columns: tuple[tuple[str, Converter], ...] = ()
        if key:
            key_reader, key_body = self._schemas.unframe(key, "key")
            key_reader.read(key_body, "key")
            key_columns = key_reader.columns
        reader, body = self._schemas.unframe(value, "value")
        record = reader.read(body, "value")
        data: dict[str, Any] | None = reader.columns_of(record, "value")
        op = Op.INSERT
        if TIDB_OP in record:
            found = _OPS.get(record[TIDB_OP])
            if found is None:
                raise DecodeError(
                    f"field _tidb_op of {reader.database}.{reader.table} is "
                    f"{record[TIDB_OP]!r}; TiCDC writes 'c', 'u' or 'd'"
                )
            op = found
        # avro-include-before-value (pingcap/ticdc decoder.go assembleEvent): the old row
        # of an UPDATE, the deleted row of a DELETE, which then has a value.
        before = record.get(TICDC_BEFORE)
        old: dict[str, Any] | None = (
            None if before is None else reader.columns_of(before, "before value")
        )
        if op is Op.DELETE:
            if old is None:
                raise DecodeError(
                    f"a DELETE value of {reader.database}.{reader.table} has no "
                    f"{TICDC_BEFORE}; TiCDC writes the deleted row there"
                )
            data = None
        elif op is Op.INSERT:
            old = None
        commit_ts = int(record.get(TIDB_COMMIT_TS, 0) or 0)
        if commit_ts < 0:  # int64(CommitTs) of a TSO above 2^63
            commit_ts += 1 << 64
        row = DecodedRow(
            database=reader.database,
            table=reader.table,
            table_id=0,
            op=op,
            commit_ts=commit_ts,
            schema_version=0,
            data=data,
            old=old,
            checksum=_checksum_of(record, reader, delete=op is Op.DELETE),
        )
        if row.checksum is not None:
            self._verify(reader, row, key_columns)
        return row

    def _verify(
        self, reader: _Reader, row: DecodedRow, key_columns: tuple[tuple[str, Converter], ...]
    ) -> None:
        """Check a row against its checksum (module docstring).

        Raises:
            DecodeError: a mismatch, or TiCDC marked the row corrupted.
        """
        checksum = row.checksum
        # A DELETE's checksum is the deleted row's (`previous`), the others' the new one's.
        deleted = row.op is Op.DELETE
        data = row.old if deleted else row.data
        assert checksum is not None and data is not None
        expected = checksum.previous if deleted else checksum.current
        key = ", ".join(f"{name}={data.get(name)!r}" for name, _ in key_columns)
        where = f"{row.op.value} {row.database}.{row.table} key {key} commitTs {row.commit_ts}"
        if checksum.corrupted:
            raise DecodeError(
                f"{where}: the record's _tidb_corrupted is true (TiCDC found the upstream "
                "row failing its checksum); the row cannot be trusted"
            )
        if not expected:  # 0: not computed (tiflow VerifyChecksum)
            return
        calculator = self._checksums.get(reader.schema_id)
        if calculator is None:
            columns = [
                (name, t)
                for (name, _), t in zip(reader.columns, reader.types, strict=True)
                if t is not None
            ]
            if len(columns) < len(reader.columns):
                raise DecodeError(
                    f"{where}: cannot check the row checksum: the value schema has fields "
                    "without a tidb_type, so their MySQL types are unknown"
                )
            table = implied_table(reader.database, reader.table, columns)
            try:
                calculator = TableChecksum(table, time_zone=self._time_zone)
            except SchemaError as exc:
                raise DecodeError(f"{where}: cannot check the row checksum: {exc}") from exc
            self._checksums[reader.schema_id] = calculator
        mounter = tuple(_mounter_value(data.get(name)) for name, _ in reader.columns)
        try:
            got = calculator.of_row(mounter)
        except InputError as exc:
            raise DecodeError(f"{where}: cannot check the row checksum: {exc}") from exc
        if got != expected:
            raise DecodeError(
                f"{where}: row checksum mismatch: the record says {expected}, its "
                f"values give {got}; the message was altered, or the producer ordered the "
                "columns differently (column IDs)"
            )


def _checksum_of(
    record: dict[str, Any], reader: _Reader, *, delete: bool = False
) -> RowChecksum | None:
    """The row checksum fields of a value record (tiflow decoder.go
    `extractExpectedChecksum`: absent or "" is no checksum): `current`, or `previous`
    for a DELETE (pingcap/ticdc's, with avro-include-before-value)."""
    text = record.get(TIDB_ROW_LEVEL_CHECKSUM)
    if not text:
        return None
    where = f"field {TIDB_ROW_LEVEL_CHECKSUM} of {reader.database}.{reader.table}"
    if not isinstance(text, str) or not (text.isascii() and text.isdigit()) or int(text) >= 1 << 32:
        raise DecodeError(f"{where} is {text!r}; TiCDC writes a CRC32, 0..4294967295")
    return RowChecksum(
        0 if delete else int(text),
        int(text) if delete else 0,
        version=int(record.get(TIDB_CHECKSUM_VERSION, 0) or 0),
        corrupted=bool(record.get(TIDB_CORRUPTED, False)),
    )


def _mounter_value(value: Any) -> Any:
    # the typed values are the mounter values (events.py) but DECIMAL's, a Decimal
    return format(value, "f") if isinstance(value, Decimal) else value


def build_decoder(settings: DecoderSettings) -> AvroDecoder:
    """The decoder `decoder_for` gives for protocol avro; `compression` is not used, as
    TiCDC never compresses avro values.

    Raises:
        DecodeError: no `schema_for_id`.
    """
    if settings.schema_for_id is None:
        raise DecodeError(
            "protocol avro needs a schema registry to decode: give schema_for_id, a lookup "
            "of writer schemas by id (ticdc-sink decode --schema-registry URL)"
        )
    return AvroDecoder(settings.schema_for_id, time_zone=settings.time_zone)

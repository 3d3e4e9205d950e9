"""Simple protocol decoder (JSON and Avro encodings), mirroring tiflow `simple/decoder.go`.

The encoding is chosen when the decoder is made, as TiCDC's consumer takes it from its
`encoding-format` option: `SimpleDecoder(encoding_format="json")` (the default) or
`"avro"`. It is not guessed from the bytes: a JSON decoder given an Avro message (first
byte 0x16) says so in its error, and an Avro decoder given JSON likewise. Avro messages
are read with fastavro and the schema bundled with the encoder (`codec/simple/avro_values.py`);
a read's `plain_row` reads a DML message by a reader written for the DML record
(`avro_dml.py`: the values fastavro reads, its envelope checked as it is read); a message
that reader does not vouch for is no plain row, and `decode_message` reads it.

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
Avro gives the same values: its longs (BIGINT UNSIGNED's `UnsignedBigint`, BIT, SET and
unsigned integers taken back to uint64), floats and doubles, strings and raw bytes are
converted to exactly what the JSON text gives. Avro strings that are not valid UTF-8
(TiCDC writes a text value's bytes as they are) become str with U+FFFD for each invalid
byte, as Go's JSON writer would have written them; a BIT column's default, raw bytes in
Avro, becomes the decimal string of its value, as from JSON. Avro table schemas carry no
fraction digits for DATETIME/TIMESTAMP/TIME: they are read back from the length.
A DML message whose schema is not known yet is not an error (TiCDC's consumer caches it
until a BOOTSTRAP arrives): it is returned with `typed=False` and its raw JSON values, and
`resolve` converts it once the schema is known.

A reader typing many rows at once asks `plain_row` instead: a row message that needs
nothing but its values typed comes back with its raw values (a `PlainRow`, no checks of
the values), to be typed a column at a time by the rules above (`parser`);
everything else, and any run with a value those rules refuse, goes through
`decode_message` (`column_run`, `read_columns.py`).

Row checksums (`integrity-check-level=correctness`): a DML message's `checksum` object is
kept as `DecodedRow.checksum` and, once the row is typed, checked as tiflow's consumer
checks it (`pkg/sink/codec/common/verify_checksum.go`): a non-zero `current` against the
new image, a non-zero `previous` against the old one, TIMESTAMPs converted from the
message's location (codec/checksum.py). A mismatch, or `corrupted` true, is a DecodeError
naming the table, the key, and the checksum expected and got. Handle-key-only rows carry
too few columns to check.

Large messages: a row sent with `large-message-handle-option=handle-key-only` has
`handle_key_only` True and only its handle-key columns (TiCDC's consumer queries the
upstream TiDB for the rest; this decoder cannot). One sent with `claim-check` names the
file holding the full message in `claim_check_location`; given a `claim_check_loader`
(`ticdc_sink.claim_check.read_claim_check`, or any callable location -> file bytes), the
decoder reads that file and returns the full row instead (with `claim_check_location`
still set), as tiflow `assembleClaimCheckRowChangedEvent` does. `claim_check_raw_value`
must match the sink's `claim-check-raw-value`.
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import io
import re
import zoneinfo
from collections import OrderedDict
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, cast

import attrs
import orjson

from ticdc_sink.codec.checksum import RowChecksum, TableChecksum
from ticdc_sink.codec.compression import Compression, compression_named, decompress
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.codec.simple.avro_dml import DML_PREFIX, read_plain
from ticdc_sink.codec.simple.avro_values import parsed_message_record, parsed_message_schema
from ticdc_sink.codec.simple.values import PROTOCOL_VERSION
from ticdc_sink.decode import (
    ClaimCheckLoader,
    DecodedBootstrap,
    DecodedDDL,
    DecodedEvent,
    DecodedRow,
    DecodedWatermark,
    DecoderSettings,
    PlainRow,
    follow_claim_check,
)
from ticdc_sink.decode.peek import ROW_OPS, RowPeek
from ticdc_sink.errors import DecodeError, InputError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.gotext import go_string, to_float32
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema, canonical_type

if TYPE_CHECKING:
    from ticdc_sink.codec.simple.read_columns import SimpleRun

__all__ = [
    "ENCODING_FORMATS",
    "SimpleDecoder",
    "SimpleRowFields",
    "build_decoder",
    "simple_row_fields",
    "table_schema_from_avro",
    "table_schema_from_json",
]

ENCODING_FORMATS = ("json", "avro")

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


_MASK64 = (1 << 64) - 1


def _avro_long(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"expected an Avro long, got {type(value).__name__}")
    return value


def _avro_unsigned(value: Any) -> int:
    # Go's uint64(int64): BIGINT UNSIGNED arrives as UnsignedBigint{value}, the others as
    # a plain long; both wrap from 2^63.
    if isinstance(value, dict) and "location" not in value:
        value = value.get("value")
    return _avro_long(value) & _MASK64


def _avro_float(value: Any) -> float:
    if type(value) is not float:
        raise ValueError(f"expected an Avro float or double, got {type(value).__name__}")
    return value


def _avro_string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected an Avro string, got {type(value).__name__}")
    return value


def _avro_decimal(value: Any) -> Decimal:
    try:
        return Decimal(_avro_string(value))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal") from None


def _avro_bytes(value: Any) -> bytes:
    if not isinstance(value, bytes):
        raise ValueError(f"expected Avro bytes, got {type(value).__name__}")
    return value


def _avro_timestamp(value: Any) -> str:
    if isinstance(value, dict):
        return _avro_string(value.get("value"))
    return _avro_string(value)


_AVRO_PARSERS: dict[ValueKind, Parser] = {
    ValueKind.INT: _avro_long,
    ValueKind.UINT: _avro_unsigned,
    ValueKind.ENUM: _avro_unsigned,
    ValueKind.SET: _avro_unsigned,
    ValueKind.BIT: _avro_unsigned,
    ValueKind.FLOAT32: _avro_float,
    ValueKind.FLOAT64: _avro_float,
    ValueKind.DECIMAL: _avro_decimal,
    ValueKind.DATE: _avro_string,
    ValueKind.DATETIME: _avro_string,
    ValueKind.TIME: _avro_string,
    ValueKind.TIMESTAMP: _avro_timestamp,
    ValueKind.JSON: _avro_string,
    ValueKind.VECTOR: _avro_string,
    ValueKind.TEXT: _avro_string,
    ValueKind.BINARY: _avro_bytes,
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


# Types whose length JSON leaves out when it is 0 (`char(0)`); every other type has one.
_ZERO_LENGTH_TYPES = frozenset({"char", "binary", "varchar", "varbinary"})


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
    for label in ("charset", "collate"):
        text = data_type.get(label)
        if text is not None and not isinstance(text, str):
            raise DecodeError(f"{where}: dataType.{label} is {text!r}; expected a string")
    base = _require(data_type, "mysqlType", str, where)
    if length is None and base in _ZERO_LENGTH_TYPES:
        length = 0  # `omitempty` left out a length of 0
    # `length` is TiDB's flen (`text` arrives with 65535, `int` with 11): the type is spelt
    # as the writer spells it, which leaves out what TiDB implies (schema.canonical_type).
    mysql_type = canonical_type(
        MySQLType(
            base=base,
            length=length,
            decimal=decimal,
            unsigned=data_type.get("unsigned") is True,
            zerofill=data_type.get("zerofill") is True,
            elements=tuple(elements),
            charset=data_type.get("charset"),
            collation=data_type.get("collate"),
        )
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

    Columns get ids 1, 2, ... in message order (already sorted by id); types and keys
    are spelt as the writer spells them (`canonical_type`, `_table_schema`), so encoding the
    result again gives the same JSON, and a write of the table read gives the same
    schema and version.

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
    return _table_schema(
        database=_require(obj, "schema", str, where),
        table=_require(obj, "table", str, where),
        columns=columns,
        indexes=indexes,
        table_id=_require(obj, "tableID", int, where),
        version=_require(obj, "version", int, where),
    )


def _table_schema(
    *,
    database: str,
    table: str,
    columns: tuple[Column, ...],
    indexes: list[Index],
    table_id: int,
    version: int,
) -> TableSchema:
    """The table a tableSchema describes, as the writer models it: the primary key of an
    integer handle, which TiCDC leaves out of TiDB's indexes and appends as a synthetic
    `primary` index, is the writer's `PRIMARY` key again, first among the keys (where it
    stood among them is not carried); an integer primary key kept among TiDB's indexes
    is one that is not the handle (`NONCLUSTERED`)."""
    integers = {c.name for c in columns if c.type.is_integer}
    keys: list[Index] = []
    clustered: bool | None = None
    for index in indexes:
        integer_key = index.primary and len(index.columns) == 1 and index.columns[0] in integers
        if integer_key and index.name == "primary":
            keys.insert(0, Index("PRIMARY", index.columns, unique=True, primary=True))
        else:
            if integer_key:
                clustered = False
            keys.append(index)
    return TableSchema(
        database=database,
        table=table,
        columns=columns,
        indexes=tuple(keys),
        table_id=table_id,
        version=version,
        pk_clustered=clustered,
    )


# Avro table schemas have no `decimal` for temporal types: fsp = length - width - 1.
_TEMPORAL_WIDTH = {"datetime": 19, "timestamp": 19, "time": 10}


def _go_text(text: str) -> str:
    """A str read with surrogateescape, as Go's JSON writer would have shown its bytes."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return go_string(text.encode("utf-8", "surrogateescape"))
    return text


def _column_from_avro(obj: dict[str, Any], column_id: int) -> Column:
    data_type = obj["dataType"]
    base = data_type["mysqlType"]
    length = data_type["length"]
    decimal = data_type["decimal"]
    if base in _TEMPORAL_WIDTH:
        width = _TEMPORAL_WIDTH[base]
        decimal = length - width - 1 if length > width + 1 else None
    elif not decimal:
        decimal = None  # as JSON, which leaves a 0 out
    default = obj["default"]
    if default is not None:
        if base == "bit":
            raw = default.encode("utf-8", "surrogateescape")
            default = str(int.from_bytes(raw, "big"))
        else:
            default = _go_text(default)
    mysql_type = canonical_type(  # as in _column_from_json
        MySQLType(
            base=base,
            length=length,
            decimal=decimal,
            unsigned=data_type["unsigned"] is True,
            zerofill=data_type["zerofill"] is True,
            elements=tuple(data_type["elements"] or ()),
            charset=data_type["charset"],
            collation=data_type["collate"],
        )
    )
    return Column(
        name=obj["name"],
        type=mysql_type,
        nullable=obj["nullable"],
        default=default,
        column_id=column_id,
    )


def table_schema_from_avro(obj: dict[str, Any]) -> TableSchema:
    """The TableSchema of an Avro `TableSchema` record as fastavro reads it (strings read
    with surrogateescape or strict); the same TableSchema the JSON form gives.

    Raises:
        DecodeError: the record does not describe a table the decoder can model.
    """
    try:
        columns = tuple(
            _column_from_avro(c, column_id) for column_id, c in enumerate(obj["columns"], 1)
        )
        indexes = [
            Index(
                name=index["name"],
                columns=tuple(index["columns"]),
                unique=index["unique"],
                primary=index["primary"],
            )
            for index in obj["indexes"]
        ]
        table = _table_schema(
            database=obj["database"],
            table=obj["table"],
            columns=columns,
            indexes=indexes,
            table_id=obj["tableID"],
            version=obj["version"] & _MASK64,
        )
        # Strings were read with surrogateescape (values may hold any bytes); names and
        # types must be text, as the JSON form's are (a reader's schema carries them).
        names = [table.database, table.table, *(i.name for i in indexes)]
        names += [text for c in columns for text in (c.name, c.type.to_sql())]
        "\0".join(names).encode("utf-8")
        return table
    except UnicodeEncodeError:
        raise DecodeError("Avro tableSchema: a name or type is not valid UTF-8") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise DecodeError(f"Avro tableSchema: {exc}") from exc


def _schema_message_table(obj: Any, *, avro: bool) -> TableSchema:
    """The TableSchema of a BOOTSTRAP's or DDL's `tableSchema` (`table_schema_from_json`,
    `_from_avro`), parsed once per schema: TiCDC sends a table's BOOTSTRAP to every
    partition, and a task of many partitions' ranges meets it in each.

    Raises:
        DecodeError: as the two functions.
    """
    try:
        text = orjson.dumps(obj)
    except TypeError:  # what JSON does not hold (Avro text read with surrogateescape)
        return table_schema_from_avro(obj) if avro else table_schema_from_json(obj)
    return _table_schema_of_text(text, avro)


@functools.lru_cache(maxsize=64)
def _table_schema_of_text(text: bytes, avro: bool) -> TableSchema:
    obj = orjson.loads(text)
    return table_schema_from_avro(obj) if avro else table_schema_from_json(obj)


class SimpleDecoder:
    """Decodes Simple messages one by one, keeping the table schemas it has seen.

    `encoding_format` is the producer's `encoding-format`: "json" (default) or "avro".
    Not thread-safe: use one decoder per consumer thread. At most `max_tables` schema
    versions are kept (least recently used dropped first).
    """

    def __init__(
        self,
        *,
        max_tables: int = 4096,
        encoding_format: str = "json",
        claim_check_loader: ClaimCheckLoader | None = None,
        claim_check_raw_value: bool = False,
        compression: str = "none",
    ) -> None:
        """`claim_check_loader` reads claim-check locations (module docstring);
        `compression` is the sink's `large-message-handle-compression`.

        Raises:
            DecodeError: an encoding format other than json or avro.
        """
        self.claim_check_loader = claim_check_loader
        self.claim_check_raw_value = claim_check_raw_value
        self.compression = compression_named(compression)
        encoding = str(encoding_format).lower()
        if encoding not in ENCODING_FORMATS:
            raise DecodeError(
                f"encoding format {encoding_format!r} is not one of the Simple protocol's; "
                "use json or avro"
            )
        self.max_tables = max_tables
        self.encoding_format = encoding
        self._parsers = _AVRO_PARSERS if encoding == "avro" else _PARSERS
        self._tables: OrderedDict[
            tuple[str, str, int], tuple[TableSchema, list[tuple[str, Parser]]]
        ] = OrderedDict()
        self._checksums: dict[tuple[str, str, int, str], TableChecksum] = {}

    def add_table(self, table: TableSchema) -> None:
        """Remember a table schema (as a BOOTSTRAP would); replaces the same version.

        Raises:
            DecodeError: a column type the Simple protocol does not carry.
        """
        try:
            parsers = [(c.name, self._parsers[value_kind(c)]) for c in table.columns]
        except SchemaError as exc:
            raise DecodeError(
                f"table {table.database}.{table.table} version {table.version}: {exc.message}"
            ) from exc
        key = (table.database, table.table, table.version)
        self._tables[key] = (table, parsers)
        self._tables.move_to_end(key)
        while len(self._tables) > self.max_tables:
            self._tables.popitem(last=False)

    def copy(self) -> SimpleDecoder:
        """A decoder of the same settings knowing the tables this one knows, which learns
        on its own from then on: a read prepares one decoder with the driver's schemas
        and gives each partition's range a copy (`read.decoding.range_decoder`), cheaper
        than adding every table anew."""
        copied = copy.copy(self)
        copied._tables = OrderedDict(self._tables)  # the entries are never changed in place
        copied._checksums = {}
        return copied

    def plain_row(self, value: bytes | None) -> PlainRow | None:
        """`value` as a PlainRow when it is an INSERT, UPDATE or DELETE of a known schema
        version that `decode_message` would give as a typed row and nothing more: no
        checksum to verify, no handle-key-only or claim-check row, the images an INSERT
        (data), UPDATE (data, maybe old) or DELETE (old) carries, every field of the
        expected type (and, in Avro, every string valid UTF-8, every byte in the form
        `avro_dml.read_plain` reads). None for anything else, which `decode_message`
        decodes (or refuses) as usual. Nothing is checked about the values: a reader
        that types them a run at a time (`parser`) and meets a value it does not take
        decodes those messages with `decode_message`, whose errors are the reference.
        """
        fields = self._row_fields(value)
        if fields is None:
            return None
        op, commit_ts, database, table, version, data, old = fields
        key = (database, table, version)
        if key not in self._tables:
            return None
        self._tables.move_to_end(key)
        return PlainRow(op, commit_ts, database, table, version, data, old)

    def peek_row(self, key: bytes | None, value: bytes | None) -> RowPeek | None:
        """What a stream's driver needs of a row message, its values not decoded
        (`decode.peek`): typed when this decoder knows the row's schema version. None for
        anything else, which `decode_message` decodes. `images` are the images as the
        message holds them; `typed` is whether this decoder knows the schema version."""
        fields = self._row_fields(value)
        if fields is None:
            return None
        kind, commit_ts, database, table, schema_version, data, old = fields
        peek = RowPeek(
            ROW_OPS[kind], commit_ts, database, table, schema_version, images=(data, old)
        )
        version = (peek.database, peek.table, peek.schema_version)
        if version not in self._tables:
            return attrs.evolve(peek, typed=False)
        self._tables.move_to_end(version)  # used, as a decode uses it
        return peek

    def is_row(self, value: bytes | None) -> bool:
        """Whether `value` is certainly a row (DML) message, which holds no watermark and
        no table schema: what a pass after those skips unread
        (`read.decoding.row_message_test`). In Avro a message that starts as every DML
        message does (`avro_dml.DML_PREFIX`); in JSON one whose envelope is a plain
        row's. Whether its values decode is for the read of its rows to find."""
        if self.encoding_format != "avro":
            return self._row_fields(value) is not None
        raw = self._decompressed(value)
        return raw is not None and raw.startswith(DML_PREFIX)

    def _decompressed(self, value: bytes | None) -> bytes | None:
        """A message's bytes: None when there are none or they do not decompress
        (`decode_message` then says why)."""
        if value is None or self.compression is Compression.NONE:
            return value
        try:
            return decompress(self.compression, value)
        except DecodeError:
            return None

    def _row_fields(self, value: bytes | None) -> SimpleRowFields | None:
        """The envelope of a plain row message (`simple_row_fields`; in Avro as
        `avro_dml.read_plain` reads it), nothing typed; None for anything else. Shared by
        `plain_row`, `peek_row` and `is_row`."""
        raw = self._decompressed(value)
        if raw is None:
            return None
        if self.encoding_format == "avro":
            return read_plain(raw)  # None: decode_message reads it
        try:
            return simple_row_fields(orjson.loads(raw))
        except orjson.JSONDecodeError:
            return None

    def parser(self, column: Column) -> Parser:
        """How a raw value of `column` in this decoder's encoding becomes its typed value
        (module docstring); the parser raises ValueError, TypeError or OverflowError for
        a value it does not take.

        Raises:
            SchemaError: a column type the Simple protocol does not carry.
        """
        return self._parsers[value_kind(column)]

    def table(self, database: str, table: str, version: int) -> TableSchema | None:
        """The schema with exactly this (database, table, version), if one was seen."""
        entry = self._tables.get((database, table, version))
        return entry[0] if entry else None

    def column_run(
        self, output: TableSchema, *, kafka_columns: bool, topic: str, headers: bool = False
    ) -> SimpleRun:
        """A run that builds this decoder's plain rows (`plain_row`) of tables with
        `output`'s columns into record batches column-wise, for a read's task
        (`read_columns`: the column-wise twin of the read's row path)."""
        # Imported here: the column-wise read loads Arrow and the read side's rows, which
        # decoding alone does not need.
        from ticdc_sink.codec.simple.read_columns import SimpleRun

        return SimpleRun(self, output, kafka_columns=kafka_columns, topic=topic, headers=headers)

    def decode_message(self, key: bytes | None, value: bytes | None) -> DecodedEvent:
        """The event of one Kafka record (the key is not used: Simple keys are empty).

        Raises:
            DecodeError: the value is not a Simple message in this decoder's encoding.
        """
        if value is None:
            raise DecodeError("the record has no value; a Simple message always has one")
        value = decompress(self.compression, value)
        if self.encoding_format == "avro":
            return self._decode_avro(value)
        try:
            message = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            # What it looks like instead is `decode.sniff`'s to say, for every protocol.
            raise DecodeError(f"the value is not JSON ({exc})") from exc
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
            table = _schema_message_table(message.get("tableSchema"), avro=False)
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
            schema = None if obj is None else _schema_message_table(obj, avro=False)
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
            checksum=_checksum_from_json(message.get("checksum"), op),
        )
        return self._full(row)

    def _decode_avro(self, value: bytes) -> DecodedEvent:
        if value[:1] != b"\x16":
            raise DecodeError(
                f"the value starts with {bytes(value[:1]).hex() or 'nothing'}, not with 0x16 "
                "(a Simple Avro Message)"
            )
        message, repaired = _read_avro(value)
        payload = message["payload"]
        kind = message["type"]
        version = payload["version"]
        if version != PROTOCOL_VERSION:
            raise DecodeError(
                f"Simple message version is {version!r}; only {PROTOCOL_VERSION} is known"
            )
        build_ts = payload["buildTs"]
        if kind == "WATERMARK":
            return DecodedWatermark(commit_ts=payload["commitTs"] & _MASK64, build_ts=build_ts)
        if kind == "BOOTSTRAP":
            table = _schema_message_table(payload["tableSchema"], avro=True)
            self.add_table(table)
            return DecodedBootstrap(table=table, build_ts=build_ts)
        if kind == "DDL":
            schemas = []
            for name in ("tableSchema", "preTableSchema"):
                obj = payload[name]
                schema = None if obj is None else _schema_message_table(obj, avro=True)
                if schema is not None:
                    self.add_table(schema)
                schemas.append(schema)
            sql = payload["sql"]
            return DecodedDDL(
                type=payload["type"],
                sql=_go_text(sql) if repaired else sql,
                commit_ts=payload["commitTs"] & _MASK64,
                table=schemas[0],
                pre_table=schemas[1],
                build_ts=build_ts,
            )
        data, old = payload["data"], payload["old"]
        if repaired:
            data, old = (_repaired_image(image) for image in (data, old))
        row = DecodedRow(
            database=payload["database"],
            table=payload["table"],
            table_id=payload["tableID"],
            op=Op(payload["type"]),
            commit_ts=payload["commitTs"] & _MASK64,
            schema_version=payload["schemaVersion"] & _MASK64,
            data=data,
            old=old,
            handle_key_only=payload["handleKeyOnly"] is True,
            claim_check_location=payload["claimCheckLocation"],
            build_ts=build_ts,
            typed=False,
            checksum=_checksum_from_json(payload["checksum"], Op(payload["type"])),
        )
        return self._full(row)

    def _full(self, row: DecodedRow) -> DecodedRow:
        if row.claim_check_location and self.claim_check_loader is not None:
            # Typed as the stored row will be, so that the two compare.
            return follow_claim_check(
                self,
                self.resolve(row),
                self.claim_check_loader,
                raw_value=self.claim_check_raw_value,
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
        typed = DecodedRow(
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
            checksum=row.checksum,
            raw=(row.data, row.old),
        )
        if row.checksum is not None and not row.handle_key_only:
            self._verify(table, typed, _location(row.data, row.old))
        return typed

    def _verify(self, table: TableSchema, row: DecodedRow, location: str) -> None:
        """Check a typed row against its checksum (module docstring).

        Raises:
            DecodeError: a mismatch, or TiCDC marked the row corrupted.
        """
        checksum = row.checksum
        assert checksum is not None
        image = row.data if row.data is not None else row.old or {}
        key = ", ".join(f"{name}={image.get(name)!r}" for name in table.handle_key)
        where = f"{row.op.value} {row.database}.{row.table} key {key} commitTs {row.commit_ts}"
        if checksum.corrupted:
            raise DecodeError(
                f"{where}: the message's checksum says corrupted=true (TiCDC found the "
                "upstream row failing its checksum); the row cannot be trusted"
            )
        cache_key = (row.database, row.table, row.schema_version, location)
        calculator = self._checksums.get(cache_key)
        if calculator is None:
            try:
                calculator = TableChecksum(table, time_zone=location)
            except (SchemaError, zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
                raise DecodeError(f"{where}: cannot check the row checksum: {exc}") from exc
            if len(self._checksums) >= self.max_tables:
                self._checksums.clear()
            self._checksums[cache_key] = calculator
        for name, values, expected in (
            ("current", row.data, checksum.current),
            ("previous", row.old, checksum.previous),
        ):
            if not expected or values is None:  # 0: not computed (tiflow VerifyChecksum)
                continue
            mounter = tuple(_mounter_value(values.get(c.name)) for c in table.columns)
            try:
                got = calculator.of_row(mounter)
            except InputError as exc:
                raise DecodeError(f"{where}: cannot check the row checksum: {exc}") from exc
            if got != expected:
                raise DecodeError(
                    f"{where}: {name} row checksum mismatch: the message says {expected}, "
                    f"its values give {got}; the message was altered, or the producer "
                    "ordered the columns differently (column IDs)"
                )


def _checksum_from_json(obj: Any, op: Op) -> RowChecksum | None:
    """The `checksum` object of a JSON DML message (tiflow simple/message.go `checksum`),
    or the `Checksum` record of an Avro one (simple/avro.go: the same fields)."""
    if obj is None:
        return None
    where = f"{op.value} message: checksum"
    if not isinstance(obj, dict):
        raise DecodeError(f"{where} is not a JSON object")
    version = _require(obj, "version", int, where)
    corrupted = _require(obj, "corrupted", bool, where)
    current = _require(obj, "current", int, where)
    previous = _require(obj, "previous", int, where)
    for name, value in (("current", current), ("previous", previous)):
        if not 0 <= value < 2**32:
            raise DecodeError(f"{where}: {name} is {value}; a CRC32 is 0..4294967295")
    return RowChecksum(current, previous, version=version, corrupted=corrupted)


def _location(*images: dict[str, Any] | None) -> str:
    """The time zone the raw images' TIMESTAMP values were written in (JSON's
    {"location", "value"}); UTC when there is none."""
    for image in images:
        for value in (image or {}).values():
            if isinstance(value, dict) and isinstance(value.get("location"), str):
                return value["location"]
    return "UTC"


def _mounter_value(value: Any) -> Any:
    # typed values are the mounter values (events.py) but DECIMAL's, a Decimal
    return format(value, "f") if isinstance(value, Decimal) else value


def _read_avro(value: bytes) -> tuple[dict[str, Any], bool]:
    """The Message record and whether invalid UTF-8 was read (with surrogateescape)."""
    import fastavro

    branch, record = parsed_message_record()
    # The Message branch, TiCDC's every message, read as the record alone (no union to
    # parse again per message); anything else through the whole union.
    schema, start = (
        (record, len(branch)) if value.startswith(branch) else (parsed_message_schema(), 0)
    )
    repaired = False
    stream = io.BytesIO(value)
    stream.seek(start)
    try:
        try:
            message = fastavro.schemaless_reader(stream, schema)
        except UnicodeDecodeError:
            repaired = True
            stream.seek(start)
            message = fastavro.schemaless_reader(
                stream, schema, handle_unicode_errors="surrogateescape"
            )
    except Exception as exc:  # fastavro raises EOFError, IndexError, ValueError, ...
        raise DecodeError(
            f"the value is not a Simple Avro message ({type(exc).__name__}: {exc})"
        ) from exc
    if stream.tell() != len(value):
        raise DecodeError(
            f"the value has {len(value) - stream.tell()} bytes after the Simple Avro message"
        )
    return cast(dict[str, Any], message), repaired  # the schema is a record


def _repaired_image(image: dict[str, Any] | None) -> dict[str, Any] | None:
    if image is None:
        return None
    return {
        _go_text(name): _go_text(value) if isinstance(value, str) else value
        for name, value in image.items()
    }


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


def build_decoder(settings: DecoderSettings) -> SimpleDecoder:
    """The decoder `decoder_for` gives for protocol simple."""
    return SimpleDecoder(
        encoding_format=settings.encoding_format,
        claim_check_loader=settings.claim_check_loader,
        claim_check_raw_value=settings.claim_check_raw_value,
        compression=settings.compression,
    )


# --- a row message's envelope (plain_row, peek_row, is_row) ---------------------------

#: A Simple row message's envelope (`simple_row_fields`): its type (INSERT, UPDATE or
#: DELETE), commit ts, database, table, schema version, and `data` and `old` as it holds
#: them.
SimpleRowFields = tuple[str, int, str, str, int, dict[str, Any] | None, dict[str, Any] | None]


def simple_row_fields(message: Any) -> SimpleRowFields | None:
    """The envelope of a parsed Simple message (JSON's object, Avro's DML payload) that
    `SimpleDecoder.decode_message` gives as a row and nothing more: no checksum to
    verify, no handle-key-only or claim-check row, the images an INSERT (data), UPDATE
    (data, maybe old) or DELETE (old) carries, every field of the expected type. None for
    anything else. Shared by the decoder's `plain_row`, `peek_row` and `is_row`."""
    if type(message) is not dict:
        return None
    get = message.get
    kind, data, old = get("type"), get("data"), get("old")
    if kind == "INSERT":
        images_fit = type(data) is dict and old is None
    elif kind == "UPDATE":
        images_fit = type(data) is dict and (old is None or type(old) is dict)
    elif kind == "DELETE":
        images_fit = data is None and type(old) is dict
    else:
        return None
    database, table = get("database", ""), get("table", "")
    commit_ts, version = get("commitTs"), get("schemaVersion", 0)
    if not (
        images_fit
        and get("version") == PROTOCOL_VERSION
        and type(commit_ts) is int
        and type(version) is int
        and type(database) is str
        and type(table) is str
        and get("checksum") is None
        and get("handleKeyOnly") is not True
        and get("claimCheckLocation") is None
    ):
        return None
    return kind, commit_ts, database, table, version, data, old

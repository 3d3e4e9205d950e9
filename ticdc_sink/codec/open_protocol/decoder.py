"""open-protocol decoder, mirroring tiflow `pkg/sink/codec/open/open_protocol_decoder.go`
and `internal/column.go` (`FormatColumn`, `ToRowChangeColumn`).

One Kafka message holds one or more events (`codec.open_protocol.message` draws the
framing): `decode_messages` returns them all, in order; `decode_message` is for a message
known to hold one (DDL and resolved events always do) and refuses a batch.

Each event's key says what it is: a row (`t` 1), a DDL (2, `DecodedDDL` whose `type` is
TiDB's ActionType name, e.g. `create table`, or its number) or the resolved event (3, a
`DecodedWatermark`). A row's value is typed back from each column's type code and flags:

    integer types, year, enum (index), set (bitmask), bit  -> int
    float (the float32 value), double                      -> float
    decimal                                                -> decimal.Decimal
    char, varchar                                          -> str
    binary, varbinary (binary flag: Go strconv.Quote text) -> bytes
    tinyblob .. longblob (base64)                          -> bytes
    tinytext .. longtext (base64, no binary flag)          -> str (UTF-8)
    date, datetime, timestamp, time, json, vector          -> str, as written
    null                                                   -> None

`u` is the new image, `p` the old one, `d` the deleted row; a row with `d` is a DELETE, one
with `u` and `p` an UPDATE, one with `u` alone an INSERT, as tiflow's decoder reads them.
An UPDATE written with `open-output-old-value=false`, or with `only-output-updated-columns`
and no changed column, has no `p`: its message is byte for byte an INSERT's, so it reads
as one (tiflow's decoder reads it so; nothing on the wire tells them apart). With
`only-output-updated-columns`, `p` holds the changed columns only; the others did not
change, so `old` takes them from `u` (tiflow leaves them out; the canal-json decoder
fills them the same way). Columns come in the message's order (by name); open-protocol
carries no table id or schema version (both 0).
Values written with `large-message-handle-compression` are decompressed first
(`compression`). `handle_key_only` is the key's `ohk`; a row sent with claim-check names its file in
`ccl`, and given a `claim_check_loader` the decoder reads the full row from it.
"""

from __future__ import annotations

import base64
import binascii
import struct
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from ticdc_sink.codec.compression import compression_named, decompress
from ticdc_sink.codec.open_protocol.message import (
    BATCH_VERSION,
    TYPE_DDL,
    TYPE_RESOLVED,
    TYPE_ROW,
)
from ticdc_sink.codec.open_protocol.values import (
    BINARY_FLAG,
    HANDLE_KEY_FLAG,
    MULTIPLE_KEY_FLAG,
    NULLABLE_FLAG,
    PRIMARY_KEY_FLAG,
    UNIQUE_KEY_FLAG,
    UNSIGNED_FLAG,
)
from ticdc_sink.decode import (
    ClaimCheckLoader,
    DecodedDDL,
    DecodedEvent,
    DecodedRow,
    DecodedWatermark,
    DecoderSettings,
    check_claim_check,
    claim_check_key,
    claim_check_value,
)
from ticdc_sink.decode.types import closest_type, implied_table
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.gotext import go_unquote, to_float32
from ticdc_sink.schema import Index, MySQLType, TableSchema

__all__ = ["OpenProtocolDecoder", "build_decoder"]

_LENGTH = struct.Struct(">Q")
# TiDB's ActionType names (model.ActionType.String) of the DDL types TiCDC sends most.
_ACTIONS = {
    3: "create table",
    4: "drop table",
    5: "add column",
    6: "drop column",
    7: "add index",
    8: "drop index",
    11: "truncate table",
    12: "modify column",
    14: "rename table",
    32: "add primary key",
    33: "drop primary key",
    61: "alter table multi-schema change",
}


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"{value!r} is not an integer")
    return value


def _float(value: Any) -> float:
    if type(value) not in (int, float):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _decimal(value: Any) -> Decimal:
    if type(value) is not str:
        raise ValueError(f"{value!r} is not a decimal string")
    try:
        return Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal") from None


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError(f"{value!r} is not a string")
    return value


def _base64(value: Any) -> bytes:
    try:
        return base64.b64decode(_text(value), validate=True)
    except binascii.Error:
        raise ValueError(f"{value!r} is not base64") from None


# Type codes -> (the type, the type with the binary flag); tiflow writes one code for
# varchar and varbinary, char and binary, text and blob of each size.
_TYPES = {
    1: ("tinyint", "tinyint"),
    2: ("smallint", "smallint"),
    3: ("int", "int"),
    4: ("float", "float"),
    5: ("double", "double"),
    7: ("timestamp", "timestamp"),
    8: ("bigint", "bigint"),
    9: ("mediumint", "mediumint"),
    10: ("date", "date"),
    11: ("time", "time"),
    12: ("datetime", "datetime"),
    13: ("year", "year"),
    15: ("varchar", "varbinary"),
    253: ("varchar", "varbinary"),
    16: ("bit", "bit"),
    225: ("vector", "vector"),
    245: ("json", "json"),
    246: ("decimal", "decimal"),
    247: ("enum", "enum"),
    248: ("set", "set"),
    249: ("tinytext", "tinyblob"),
    250: ("mediumtext", "mediumblob"),
    251: ("longtext", "longblob"),
    252: ("text", "blob"),
    254: ("char", "binary"),
}


def _column_type(column: Any) -> MySQLType:
    """The closest MySQL type of a column object (`decode.types`): the code and the binary
    and unsigned flags are all open-protocol carries."""
    if not isinstance(column, dict) or column.get("t") not in _TYPES:
        raise SchemaError(f"{column!r} has no known type code")
    flags = column.get("f", 0)
    text, binary = _TYPES[column["t"]]
    return closest_type(
        binary if flags & BINARY_FLAG else text, unsigned=bool(flags & UNSIGNED_FLAG)
    )


def _keys_of(flags: dict[str, int], primary: tuple[str, ...]) -> list[Index]:
    """Keys other than the primary key that give the columns the flags they carry
    (`codec.open_protocol.values.column_flags`): without a primary key, a unique key of
    the handle-key columns; a unique key of each other column flagged unique; a plain
    key of each column flagged multiple-key (named as TiDB names unnamed keys). Which
    columns share a key, and its name, are not carried."""
    keys: list[Index] = []
    names: set[str] = set()

    def add(columns: tuple[str, ...], unique: bool) -> None:
        name, n = columns[0], 2
        while name.lower() in names:
            name, n = f"{columns[0]}_{n}", n + 1
        names.add(name.lower())
        keys.append(Index(name, columns, unique=unique))

    handle = tuple(name for name, f in flags.items() if f & HANDLE_KEY_FLAG)
    if handle and not primary:
        add(handle, True)
    for name, f in flags.items():
        if f & UNIQUE_KEY_FLAG and (primary or name not in handle):
            add((name,), True)
    for name, f in flags.items():
        if f & MULTIPLE_KEY_FLAG and not (len(handle) > 1 and name in handle):
            add((name,), False)
    return keys


_INTEGER_CODES = frozenset({1, 2, 3, 8, 9, 13, 16, 247, 248})
_BLOB_CODES = frozenset({249, 250, 251, 252})
_STRING_CODES = frozenset({15, 253, 254})


def _value(column: Any) -> Any:
    """A column object's value, typed from its type code and flags."""
    if not isinstance(column, dict) or type(column.get("t")) is not int:
        raise ValueError(f"{column!r} is not a column object with a type code")
    value = column.get("v")
    if value is None:
        return None
    code = column["t"]
    flags = column.get("f", 0)
    if code in _INTEGER_CODES:
        return _int(value)
    if code == 4:  # FLOAT: the float32 value, as TiCDC's decoder makes it
        return to_float32(_float(value))
    if code == 5:
        return _float(value)
    if code == 246:
        return _decimal(value)
    if code in _BLOB_CODES:
        data = _base64(value)
        return data if flags & BINARY_FLAG else data.decode("utf-8", "surrogateescape")
    if code in _STRING_CODES and flags & BINARY_FLAG:
        return go_unquote(_text(value))
    return _text(value)


def _image(columns: Any, what: str) -> dict[str, Any] | None:
    if columns is None:
        return None
    if not isinstance(columns, dict):
        raise DecodeError(f"open-protocol row value: `{what}` is not an object of columns")
    try:
        return {name: _value(column) for name, column in columns.items()}
    except ValueError as exc:
        raise DecodeError(f"open-protocol row value: a column of `{what}`: {exc}") from None


def _split(data: bytes, what: str) -> list[bytes]:
    """The length-prefixed parts of a key (after the version) or a value."""
    parts = []
    at = 0
    while at < len(data):
        if at + 8 > len(data):
            raise DecodeError(f"open-protocol {what} ends inside a length at byte {at}")
        (length,) = _LENGTH.unpack_from(data, at)
        at += 8
        if at + length > len(data):
            raise DecodeError(
                f"open-protocol {what} says {length} bytes at byte {at}, but only "
                f"{len(data) - at} follow"
            )
        parts.append(data[at : at + length])
        at += length
    return parts


def _json(data: bytes, what: str) -> dict[str, Any]:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(f"open-protocol {what} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise DecodeError(f"open-protocol {what} is not a JSON object")
    return document


class OpenProtocolDecoder:
    """Decodes open-protocol Kafka messages (one or more events each)."""

    def __init__(
        self,
        *,
        claim_check_loader: ClaimCheckLoader | None = None,
        claim_check_raw_value: bool = False,
        compression: str = "none",
    ) -> None:
        """`compression` is the sink's `large-message-handle-compression`, which row and
        DDL values were compressed with.

        Raises:
            DecodeError: an unknown compression.
        """
        self._loader = claim_check_loader
        self._raw_value = claim_check_raw_value
        self.compression = compression_named(compression)

    def decode_message(self, key: bytes | None, value: bytes | None) -> DecodedEvent:
        """The one event of a message.

        Raises:
            DecodeError: not an open-protocol message, or one holding several events
                (use `decode_messages`).
        """
        events = self.decode_messages(key, value)
        if len(events) != 1:
            raise DecodeError(
                f"open-protocol message holds {len(events)} events; read it with decode_messages"
            )
        return events[0]

    def decode_messages(self, key: bytes | None, value: bytes | None) -> list[DecodedEvent]:
        """Every event of a message, in order (tiflow `BatchDecoder.HasNext` and `Next*`).

        Raises:
            DecodeError: not an open-protocol message.
        """
        if key is None or len(key) < 8:
            raise DecodeError("open-protocol message key is shorter than its 8-byte version")
        (version,) = _LENGTH.unpack_from(key)
        if version != BATCH_VERSION:
            raise DecodeError(
                f"open-protocol message key has version {version}; only {BATCH_VERSION} exists"
            )
        keys = _split(key[8:], "key")
        values = _split(value or b"", "value")
        if len(keys) != len(values):
            raise DecodeError(
                f"open-protocol message holds {len(keys)} keys but {len(values)} values"
            )
        return [self._event(k, v) for k, v in zip(keys, values, strict=True)]

    def _event(self, key_json: bytes, value_json: bytes) -> DecodedEvent:
        key = _json(key_json, "event key")
        ts = key.get("ts")
        kind = key.get("t")
        if type(ts) is not int or ts < 0:
            raise DecodeError(f"open-protocol event key has no commit ts `ts`: {key_json!r}")
        if kind == TYPE_RESOLVED:
            return DecodedWatermark(commit_ts=ts)
        if kind == TYPE_DDL:
            ddl = _json(decompress(self.compression, value_json), "DDL value")
            query, action = ddl.get("q"), ddl.get("t")
            if type(query) is not str or type(action) is not int:
                raise DecodeError("open-protocol DDL value lacks its query `q` or type `t`")
            return DecodedDDL(type=_ACTIONS.get(action, str(action)), sql=query, commit_ts=ts)
        if kind != TYPE_ROW:
            raise DecodeError(f"open-protocol event key has type {kind!r}; known: 1, 2, 3")
        location = key.get("ccl") or None
        row = self._row(key, value_json, location)
        if location is None or self._loader is None:
            return row
        stored_key, stored_value = self._stored(location)
        full = self._row(key if stored_key is None else stored_key, stored_value, location)
        check_claim_check(location, row, full)
        return full

    def _row(self, key: dict[str, Any], value_json: bytes, location: str | None) -> DecodedRow:
        """The row event of an event key and its value JSON (the message's, or a
        claim-check file's)."""
        row = _json(decompress(self.compression, value_json), "row value")
        deleted = _image(row.get("d"), "d")
        data = _image(row.get("u"), "u")
        old = _image(row.get("p"), "p")
        if deleted is not None:
            op, data, old = Op.DELETE, None, deleted
        elif data is None:
            raise DecodeError("open-protocol row value has neither `u` nor `d`")
        elif old is None:
            op = Op.INSERT
        else:
            op = Op.UPDATE
            if not old.keys() >= data.keys():
                # only-output-updated-columns keeps in `p` the columns whose value
                # changed (tiflow `messageRow.dropNotUpdatedColumns`): the others are
                # as in `u`.
                old = {name: old.get(name, value) for name, value in data.items()} | old
        ts = key.get("ts")
        if type(ts) is not int or ts < 0:
            raise DecodeError(f"open-protocol event key has no commit ts `ts`: {key!r}")
        database, table = key.get("scm", ""), key.get("tbl", "")
        if type(database) is not str or type(table) is not str:
            raise DecodeError(f"open-protocol event key's `scm` and `tbl` are not text: {key!r}")
        return DecodedRow(
            database=database,
            table=table,
            table_id=0,
            op=op,
            commit_ts=ts,
            schema_version=0,
            data=data,
            old=old,
            handle_key_only=bool(key.get("ohk")),
            claim_check_location=location,
        )

    def row_table(self, key: bytes | None, value: bytes | None) -> TableSchema | None:
        """The table the message's first row event implies (None when it holds none):
        its columns in the message's order, each typed by `_column_type`, and the columns
        flagged primary key.

        Raises:
            DecodeError: not an open-protocol message, or a column of an unknown type.
        """
        for event in self.decode_messages(key, value):
            if isinstance(event, DecodedRow):
                break
        else:
            return None
        parts = zip(_split((key or b"")[8:], "key"), _split(value or b"", "value"), strict=True)
        for key_json, value_json in parts:
            if _json(key_json, "event key").get("t") != TYPE_ROW:
                continue
            if event.claim_check_location is not None and self._loader is not None:
                value_json = self._stored(event.claim_check_location)[1]
            row = _json(decompress(self.compression, value_json), "row value")
            columns = row.get("u") or row.get("d") or {}
            try:
                typed = [(name, _column_type(c)) for name, c in columns.items()]
            except SchemaError as exc:
                raise DecodeError(
                    f"open-protocol row of {event.database}.{event.table}: {exc.message}"
                ) from exc
            flags = {name: c.get("f", 0) for name, c in columns.items()}
            primary = tuple(name for name, f in flags.items() if f & PRIMARY_KEY_FLAG)
            return implied_table(
                event.database,
                event.table,
                typed,
                primary,
                nullable=[bool(f & NULLABLE_FLAG) for f in flags.values()],
                indexes=_keys_of(flags, primary),
            )
        return None

    def _stored(self, location: str) -> tuple[dict[str, Any] | None, bytes]:
        """The event key (None when the file holds the value alone,
        claim-check-raw-value) and the row value JSON a claim-check file holds: TiCDC
        stores the message's framed key and value (tiflow
        `assembleEventFromClaimCheckStorage` reads its event from them)."""
        assert self._loader is not None
        try:
            data = self._loader(location)
        except OSError as exc:
            raise DecodeError(f"claim-check file {location} cannot be read: {exc}") from exc
        parts = _split(claim_check_value(location, data, raw_value=self._raw_value), "value")
        if len(parts) != 1:
            raise DecodeError(f"claim-check file {location} does not hold one row value")
        key = None
        if not self._raw_value:
            framed = claim_check_key(location, data)
            keys = _split(framed[8:], "key") if framed is not None else []
            if len(keys) != 1:
                raise DecodeError(f"claim-check file {location} does not hold one event key")
            key = _json(keys[0], "event key")
        return key, parts[0]


def build_decoder(settings: DecoderSettings) -> OpenProtocolDecoder:
    """The decoder `decoder_for` gives for protocol open-protocol."""
    return OpenProtocolDecoder(
        claim_check_loader=settings.claim_check_loader,
        claim_check_raw_value=settings.claim_check_raw_value,
        compression=settings.compression,
    )

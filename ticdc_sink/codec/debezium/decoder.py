"""Debezium protocol decoder: TiCDC's (and this sink's) Debezium JSON messages back into
events (tiflow `pkg/sink/codec/debezium/decoder.go` reads the same fields).

`payload.op` tells the event: `c`/`r` INSERT, `u` UPDATE, `d` DELETE, `m` watermark; a
payload with `ddl` is a DDL event. Database and table come from `payload.source`,
`commit_ts` from `source.commit_ts` (a TiCDC field, always written), `build_ts` from the
top-level `payload.ts_ms` (the encoding time).

Values. With the `schema` part (the default) values are typed from the field schemas back to
the mounter forms of `ticdc_sink.events`, as far as the schema tells:

    int16/int32/int64, io.debezium.time.Year    -> int (a BIGINT UNSIGNED written wrapped,
                             e.g. -1, is unwrapped to 2^64-1 only when `tidb_type` says
                             `bigint unsigned`, i.e. with enable-tidb-extension)
    float (FLOAT)                               -> float, the float32 value
    double                                      -> float; DECIMAL (`tidb_type` decimal)
                                                   -> decimal.Decimal of the shortest text
    boolean (BIT(1)), io.debezium.data.Bits     -> int (little-endian bytes read back)
    io.debezium.data.Enum / EnumSet             -> int: 1-based index / bitmask from the
                                                   `allowed` parameter ("" -> 0)
    io.debezium.time.Date                       -> str "YYYY-MM-DD"
    io.debezium.time.Timestamp / MicroTimestamp -> str "YYYY-MM-DD HH:MM:SS[.fraction]"
    io.debezium.time.ZonedTimestamp             -> str in `time_zone` (constructor), the
                                                   fraction digits as written (= fsp)
    io.debezium.time.MicroTime                  -> str "[-]HH:MM:SS[.fraction]"
    string with tidb_type of a binary type      -> bytes (from base64)
    other strings (text, JSON, vector)          -> str
    NULL                                        -> None

The schema does not carry a DATETIME/TIME column's fsp, so their fraction is written with
as many digits as needed (none for whole seconds, trailing zeros dropped). What TiCDC
changed irreversibly stays changed: years 0..99 of DATE/DATETIME come back moved (0018 ->
2018), a zero DATE/DATETIME comes back as None (or the epoch when NOT NULL), a NULL with a
column DEFAULT comes back as that default (a binary column's default, written twice, is
read from its last, raw copy). Without the `schema` part (`debezium-disable-schema`) the
values are the raw JSON values and `typed` is False.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import functools
import re
import zoneinfo
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson

from ticdc_sink.codec.compression import compression_named, decompress
from ticdc_sink.decode import (
    DecodedDDL,
    DecodedRow,
    DecodedWatermark,
    DecoderSettings,
)
from ticdc_sink.decode.peek import RowPeek
from ticdc_sink.decode.types import closest_type, implied_table
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.gotext import format_float, to_float32
from ticdc_sink.schema import MySQLType, TableSchema

__all__ = ["DebeziumDecoder", "build_decoder", "debezium_row"]

_OPS = {"c": Op.INSERT, "r": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE}
_BINARY_TIDB_TYPES = frozenset(
    {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
)
_EPOCH = dt.date(1970, 1, 1)

Convert = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _fraction(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""


def _date_text(days: int) -> str:
    day = _EPOCH + dt.timedelta(days=days)
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"


def _datetime_text(micros: int) -> str:
    seconds, fraction = divmod(micros, 1_000_000)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{_date_text(days)} {hours:02d}:{minutes:02d}:{secs:02d}{_fraction(fraction)}"


def _time_text(micros: int) -> str:
    sign = "-" if micros < 0 else ""
    seconds, fraction = divmod(abs(micros), 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}:{secs:02d}{_fraction(fraction)}"


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise DecodeError(f"value {value!r} is not an integer")
    return int(value)


def _unsigned_bigint(value: Any) -> int:
    number = _int(value)
    return number + 2**64 if number < 0 else number


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DecodeError(f"value {value!r} is not a number")
    return float(value)


def _float32(value: Any) -> float:
    # jsoniter wrote the shortest float32 digits: reading them as float64 and rounding to
    # float32 gives back the float32 TiCDC held.
    return to_float32(_float(value))


def _decimal(value: Any) -> Decimal:
    if isinstance(value, Decimal):  # debezium-avro, precise
        return value
    if isinstance(value, str):  # debezium-avro, string
        return Decimal(value)
    return Decimal(format_float(_float(value)))


def _bytes(value: Any) -> bytes:
    if not isinstance(value, str):
        raise DecodeError(f"value {value!r} is not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        # NULL replaced by a binary column's default: the raw default text (see docstring).
        return value.encode("utf-8", "surrogateescape")


def _bits(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    return int.from_bytes(_bytes(value), "little")


def _enum(allowed: list[str]) -> Convert:
    index = {name: i for i, name in enumerate(allowed, start=1)}

    def convert(value: Any) -> int:
        if value == "":
            return 0
        try:
            return index[value]
        except KeyError:
            raise DecodeError(f"value {value!r} is not one of {','.join(allowed)}") from None

    return convert


def _set(allowed: list[str]) -> Convert:
    bit = {name: 1 << i for i, name in enumerate(allowed)}

    def convert(value: Any) -> int:
        if value == "":
            return 0
        try:
            return sum(bit[name] for name in set(value.split(",")))
        except (KeyError, AttributeError):
            raise DecodeError(f"value {value!r} is not a set of {','.join(allowed)}") from None

    return convert


def _split_enum_allowed(text: str) -> list[str]:
    """Enum `allowed` elements: joined by `,`, a `,` inside an element written `\\,`
    (tiflow common.EscapeEnumAndSetOptions)."""
    out, current, i = [], [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] == ",":
            current.append(",")
            i += 2
            continue
        if text[i] == ",":
            out.append("".join(current))
            current = []
        else:
            current.append(text[i])
        i += 1
    out.append("".join(current))
    return out


def _zoned(zone: dt.tzinfo | None) -> Convert:
    def convert(value: Any) -> str:
        if not isinstance(value, str) or not value.endswith("Z"):
            raise DecodeError(f"value {value!r} is not a ZonedTimestamp")
        body = value[:-1]
        main, _, fraction = body.partition(".")
        try:
            utc = dt.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S")
        except ValueError:
            raise DecodeError(f"value {value!r} is not a ZonedTimestamp") from None
        local = utc if zone is None else utc.replace(tzinfo=dt.UTC).astimezone(zone)
        text = local.strftime("%Y-%m-%d %H:%M:%S")
        if len(text) < 19:  # years below 1000 (strftime does not pad them everywhere)
            text = f"{local.year:04d}" + local.strftime("-%m-%d %H:%M:%S")
        return text + ("." + fraction if fraction else "")

    return convert


def _converter(field: dict[str, Any], zone: dt.tzinfo | None) -> Convert:
    kind = field.get("type")
    name = field.get("name")
    tidb = str(field.get("tidb_type", ""))
    parameters = field.get("parameters") or {}
    match name:
        case "io.debezium.time.Date":
            return lambda v: _date_text(_int(v))
        case "io.debezium.time.Timestamp":
            return lambda v: _datetime_text(_int(v) * 1000)
        case "io.debezium.time.MicroTimestamp":
            return lambda v: _datetime_text(_int(v))
        case "io.debezium.time.ZonedTimestamp":
            return _zoned(zone)
        case "io.debezium.time.MicroTime":
            return lambda v: _time_text(_int(v))
        case "io.debezium.time.Year":
            return _int
        case "io.debezium.data.Bits":
            return _bits
        case "io.debezium.data.Enum":
            return _enum(_split_enum_allowed(str(parameters.get("allowed", ""))))
        case "io.debezium.data.EnumSet":
            allowed = str(parameters.get("allowed", ""))
            return _set(allowed.split(",") if allowed else [])
        case "org.apache.kafka.connect.data.Decimal":
            return _decimal
    match kind:
        case "int8" | "int16" | "int32":
            return _int
        case "int64":
            return _unsigned_bigint if tidb == "bigint unsigned" else _int
        case "float":
            return _float32
        case "double" if tidb.startswith("decimal"):
            return _decimal
        case "double" if tidb.startswith("float"):  # FLOAT(M,D): a float32 value
            return _float32
        case "double":
            return _float
        case "boolean":
            return _bits
        case "bytes":
            return _bytes
        case "string" if tidb in _BINARY_TIDB_TYPES:
            return _bytes
        case "string" if tidb.startswith("decimal"):  # debezium-avro, string mode
            return _decimal
        case "string" if tidb == "bigint unsigned":  # debezium-avro, string mode
            return _int
    return _identity


# Connect field names -> (type, fsp): the type is the name's alone (tidb_type says less).
_NAMED_TYPES = {
    "io.debezium.time.Date": ("date", None),
    "io.debezium.time.Timestamp": ("datetime", 3),
    "io.debezium.time.MicroTimestamp": ("datetime", 6),
    "io.debezium.time.ZonedTimestamp": ("timestamp", 6),
    "io.debezium.time.MicroTime": ("time", 6),
    "io.debezium.time.Year": ("year", None),
    "io.debezium.data.Json": ("json", None),
    "io.debezium.data.TiDBVectorFloat32": ("vector", None),
}
# Connect types -> the widest MySQL type written as them (without tidb_type).
_CONNECT_TYPES = {
    "int8": "tinyint",
    "int16": "smallint",
    "int32": "int",
    "int64": "bigint",
    "float": "float",
    "double": "double",
    "boolean": "bit",
    "bytes": "longblob",
    "string": "longtext",
}


def _field_type(field: dict[str, Any]) -> MySQLType:
    """The closest MySQL type of a field schema (`decode.types`): the connect name decides
    temporal, ENUM, SET and BIT types; else `tidb_type` (enable-tidb-extension) names the
    type; else the connect type's widest MySQL type."""
    name = field.get("name")
    parameters = field.get("parameters") or {}
    if name in _NAMED_TYPES:
        base, fsp = _NAMED_TYPES[name]
        return closest_type(base, scale=fsp)
    if name == "io.debezium.data.Enum":
        return closest_type("enum", elements=_split_enum_allowed(str(parameters["allowed"])))
    if name == "io.debezium.data.EnumSet":
        allowed = str(parameters.get("allowed", ""))
        return closest_type("set", elements=allowed.split(",") if allowed else None)
    if name == "io.debezium.data.Bits":
        return closest_type("bit", length=int(parameters.get("length", 64)))
    if name == "org.apache.kafka.connect.data.Decimal":
        return closest_type(
            "decimal", length=int(parameters["precision"]), scale=int(parameters["scale"])
        )
    if field.get("type") == "boolean":
        return closest_type("bit", length=1)
    words = str(field.get("tidb_type", "")).split()
    if words[:1] == ["float"] and field.get("type") == "double":
        # A FLOAT with a scale travels as a double (FLOAT(M,D): neither M nor D is carried).
        return closest_type("float", unsigned="unsigned" in words[1:], length=12, scale=0)
    if words:
        return closest_type(words[0], unsigned="unsigned" in words[1:])
    return closest_type(_CONNECT_TYPES.get(str(field.get("type")), "longtext"))


def _default_text(field: dict[str, Any], t: MySQLType, zone: dt.tzinfo | None) -> str | None:
    """A field schema's `default` as TiDB's default string (`schema.Column`): text,
    binary, ENUM and SET defaults are their text; the others the value the field's
    converter reads (a date from its days, a BIT from its bytes, ...) as TiDB writes it.
    None: no default."""
    raw = field.get("default")
    if raw is None:
        return None
    if isinstance(raw, str) and (t.is_text or t.is_binary or t.base in ("enum", "set", "json")):
        return raw
    value = _converter(field, zone)(raw)
    if isinstance(value, float):
        return format_float(value, 32 if t.base == "float" else 64)
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


class DebeziumDecoder:
    """Decodes Debezium messages (JSON key and value) into DecodedRow, DecodedWatermark and
    DecodedDDL. `time_zone` is the zone TIMESTAMP values are rendered in (the sink's
    `time-zone`; UTC by default), so that they read back as the rows held them.

    Field converters are cached by the schema's text, so a stream of one table builds them
    once.

    Raises:
        DecodeError: from `decode_message`, for a message that is not Debezium JSON.
    """

    def __init__(self, time_zone: str = "UTC", *, compression: str = "none") -> None:
        """`compression` is the sink's `large-message-handle-compression`.

        Raises:
            DecodeError: an unknown time zone or compression.
        """
        self.compression = compression_named(compression)
        if time_zone.upper() in ("UTC", "ETC/UTC", "Z"):
            self._zone: dt.tzinfo | None = None
        else:
            try:
                self._zone = zoneinfo.ZoneInfo(time_zone)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
                raise DecodeError(
                    f"time zone {time_zone!r} is not known; use an IANA name such as UTC"
                ) from exc
        self._converters: dict[bytes, dict[str, Convert]] = {}

    def decode_message(
        self, key: bytes | None, value: bytes | None
    ) -> DecodedRow | DecodedWatermark | DecodedDDL:
        """The event of one Kafka record.

        Raises:
            DecodeError: no value, not JSON, or not a Debezium envelope.
        """
        return self.decode_envelope(self._message(value))

    def peek_row(self, key: bytes | None, value: bytes | None) -> RowPeek | None:
        """What a stream's driver needs of a row message, its values not decoded
        (`decode.peek`); None for anything else, which `decode_message` decodes."""
        if not value:
            return None
        try:
            return debezium_row(decompress(self.compression, value))
        except DecodeError:
            return None

    def _message(self, value: bytes | None) -> Any:
        if not value:
            raise DecodeError("a Debezium message has no value; TiCDC writes no tombstones")
        value = decompress(self.compression, value)
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise DecodeError(f"the value is not JSON: {exc}") from exc

    def decode_envelope(self, message: Any) -> DecodedRow | DecodedWatermark | DecodedDDL:
        """The event of one parsed message, `{"payload":…,"schema":…}` (debezium-avro
        gives its records in this form: `codec.debezium_avro.decoder`).

        Raises:
            DecodeError: not a Debezium envelope.
        """
        payload = message.get("payload") if isinstance(message, dict) else None
        if not isinstance(payload, dict) or not isinstance(payload.get("source"), dict):
            raise DecodeError("the value is not a Debezium envelope (no payload.source)")
        source = payload["source"]
        commit_ts = _int(source.get("commit_ts", 0))
        build_ts = payload.get("ts_ms") or 0
        if "ddl" in payload:
            return self._ddl(payload, commit_ts, build_ts)
        op = payload.get("op")
        if op == "m":
            return DecodedWatermark(commit_ts=commit_ts, build_ts=build_ts)
        if op not in _OPS:
            raise DecodeError(f"payload.op is {op!r}; Debezium rows have c, r, u, d or m")
        schema = message.get("schema")
        converters = self._fields(schema) if isinstance(schema, dict) else None
        before = self._image(payload.get("before"), converters)
        after = self._image(payload.get("after"), converters)
        kind = _OPS[op]
        if kind is Op.DELETE:
            data, old = None, before
        else:
            data, old = after, before
        return DecodedRow(
            database=str(source.get("db", "")),
            table=str(source.get("table", "")),
            table_id=0,
            op=kind,
            commit_ts=commit_ts,
            schema_version=0,
            data=data,
            old=old,
            build_ts=build_ts,
            typed=converters is not None,
        )

    def row_table(self, key: bytes | None, value: bytes | None) -> TableSchema | None:
        """The table a row message implies (None for other messages): its columns in the
        order of the `after` (or `before`) field schemas, typed by `_field_type`, and the
        key's fields as the primary key.

        Raises:
            DecodeError: not a Debezium message, a row without the `schema` part, or a
                field schema of no MySQL type.
        """
        message = self._message(value)
        primary: tuple[str, ...] = ()
        if key:
            try:
                key_payload = orjson.loads(key).get("payload")
            except (orjson.JSONDecodeError, AttributeError):
                key_payload = None
            if isinstance(key_payload, dict):
                primary = tuple(key_payload)
        return self.envelope_table(message, primary)

    def envelope_table(self, message: Any, primary: tuple[str, ...]) -> TableSchema | None:
        """The table a parsed row message implies (`row_table`), `primary` its key's
        columns.

        Raises:
            DecodeError: as `row_table`.
        """
        event = self.decode_envelope(message)
        if not isinstance(event, DecodedRow):
            return None
        if not event.typed:
            raise DecodeError(
                f"{event.op.value} {event.database}.{event.table} carries no field schemas "
                "(written with debezium-disable-schema=true), so its column types are "
                "unknown; read a topic written with the schema part"
            )
        parts = {p.get("field"): p for p in message["schema"].get("fields") or ()}
        image = parts.get("after") or parts.get("before") or {}
        fields = image.get("fields") or ()
        try:
            columns = [(f["field"], _field_type(f)) for f in fields]
            defaults = [
                _default_text(f, t, self._zone) for f, (_, t) in zip(fields, columns, strict=True)
            ]
        except (SchemaError, KeyError, ValueError) as exc:
            raise DecodeError(
                f"a field schema of {event.database}.{event.table} names no MySQL type: {exc}"
            ) from exc
        return implied_table(
            event.database,
            event.table,
            columns,
            primary,
            nullable=[f.get("optional") is not False for f in fields],
            defaults=defaults,
        )

    def _fields(self, schema: dict[str, Any]) -> dict[str, Convert]:
        cache_key = orjson.dumps(schema.get("fields"))
        found = self._converters.get(cache_key)
        if found is not None:
            return found
        converters: dict[str, Convert] = {}
        for part in schema.get("fields") or ():
            if isinstance(part, dict) and part.get("field") in ("before", "after"):
                for field in part.get("fields") or ():
                    converters[field["field"]] = _converter(field, self._zone)
                break
        if len(self._converters) >= 256:
            self._converters.clear()
        self._converters[cache_key] = converters
        return converters

    def _image(self, image: Any, converters: dict[str, Convert] | None) -> dict[str, Any] | None:
        if image is None:
            return None
        if not isinstance(image, dict):
            raise DecodeError(f"a row image is {type(image).__name__}, not an object")
        if converters is None:
            return dict(image)
        out: dict[str, Any] = {}
        for name, raw in image.items():
            if raw is None:
                out[name] = None
                continue
            convert = converters.get(name, _identity)
            try:
                out[name] = convert(raw)
            except DecodeError as exc:
                raise DecodeError(f"column {name!r}: {exc.message}") from exc
            except (ValueError, TypeError, OverflowError) as exc:
                raise DecodeError(f"column {name!r}: value {raw!r} cannot be read: {exc}") from exc
        return out

    def _ddl(self, payload: dict[str, Any], commit_ts: int, build_ts: int) -> DecodedDDL:
        changes = payload.get("tableChanges") or []
        change_type = ""
        if changes and isinstance(changes[0], dict):
            change_type = str(changes[0].get("type", ""))
        return DecodedDDL(
            type=change_type,
            sql=str(payload.get("ddl", "")),
            commit_ts=commit_ts,
            build_ts=build_ts,
        )


def build_decoder(settings: DecoderSettings) -> DebeziumDecoder:
    """The decoder `decoder_for` gives for protocol debezium."""
    return DebeziumDecoder(time_zone=settings.time_zone, compression=settings.compression)


# --- the peek (decode.peek): JSON tokens, as TiCDC's encoders write them --------------------

#: A JSON string token: no raw control character, only JSON's escapes.
_STR = rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
#: JSON numbers: integers as Go writes them, and any number.
_INT = rb"-?(?:0|[1-9][0-9]*)"
_UINT = rb"(?:0|[1-9][0-9]*)"
_NUM = _INT + rb"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"


def _text(token: bytes) -> str | None:
    """The str of a JSON string token (None: not UTF-8, which a decode refuses too)."""
    try:
        if b"\\" not in token:
            return token[1:-1].decode()
        text = orjson.loads(token)
    except (UnicodeDecodeError, orjson.JSONDecodeError):
        return None
    return text if isinstance(text, str) else None


# tiflow debezium/codec.go `EncodeValue`: the payload's source in its fixed order, ts_ms,
# transaction, op, the images (INSERT: before null, after; UPDATE: before, after, or
# after alone without output-old-value; DELETE: after null, before), then the schema unless
# debezium-disable-schema. Image values are scalars. The schema, the larger part, is the
# same text for every row of a table: it is parsed once per text (`_is_object`).
_DEBEZIUM_VALUE = b"(?:" + _STR + b"|" + _NUM + rb"|true|false|null)"
_DEBEZIUM_IMAGE = rb"\{(?:" + _STR + b":" + _DEBEZIUM_VALUE + rb"(?:," + _STR + b":"
_DEBEZIUM_IMAGE += _DEBEZIUM_VALUE + rb")*)?\}"
_DEBEZIUM_ROW = re.compile(
    rb'\{"payload":\{"source":\{"version":' + _STR + rb',"connector":' + _STR + b""
    rb',"name":' + _STR + rb',"ts_ms":' + _INT + rb',"snapshot":' + _STR + b""
    rb',"db":(?P<database>' + _STR + rb'),"table":(?P<table>' + _STR + rb")"
    rb',"server_id":' + _INT + rb',"gtid":null,"file":' + _STR + rb',"pos":' + _INT + b""
    rb',"row":' + _INT + rb',"thread":' + _INT + rb',"query":null'
    rb',"commit_ts":(?P<commit_ts>' + _UINT + rb'),"cluster_id":' + _STR + rb"\}"
    rb',"ts_ms":' + _INT + rb',"transaction":null,"op":"(?P<op>[cud])",'
    rb'(?:"before":(?:null|'
    + _DEBEZIUM_IMAGE
    + rb'),"after":(?P<after>null|'
    + _DEBEZIUM_IMAGE
    + rb")"
    rb'|"after":null,"before":(?P<deleted>' + _DEBEZIUM_IMAGE + rb")"
    rb'|"after":' + _DEBEZIUM_IMAGE + rb")\}"
    rb'(?:\}\Z|,"schema":(?P<schema>\{))'
)
_DEBEZIUM_OPS = {b"c": Op.INSERT, b"u": Op.UPDATE, b"d": Op.DELETE}


def debezium_row(value: bytes) -> RowPeek | None:
    """A debezium JSON row message (`typed`: it has its schema part); None for anything
    else (watermarks, DDL events, an INSERT or UPDATE without `after`)."""
    found = _DEBEZIUM_ROW.match(value)
    if found is None:
        return None
    op = _DEBEZIUM_OPS[found["op"]]
    if op is Op.DELETE:
        if found["deleted"] is None:
            return None
    elif found["deleted"] is not None or found["after"] == b"null":
        return None
    schema = found.start("schema")
    if schema >= 0 and not (value.endswith(b"}") and _is_object(value[schema:-1])):
        return None
    database, table = _text(found["database"]), _text(found["table"])
    if database is None or table is None:
        return None
    return RowPeek(op, int(found["commit_ts"]), database, table, typed=schema >= 0)


@functools.lru_cache(maxsize=256)
def _is_object(text: bytes) -> bool:
    """Whether `text` is one JSON object (a debezium envelope's schema)."""
    try:
        return type(orjson.loads(text)) is dict
    except orjson.JSONDecodeError:
        return False

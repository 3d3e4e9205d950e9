"""TiCDC's Debezium protocol (`protocol=debezium`, reference §8): row, DDL and watermark
messages as tiflow `pkg/sink/codec/debezium/codec.go` writes them.

Every message has a JSON key and a JSON value, each `{"payload":…,"schema":…}` (the
`schema` part is left out with `debezium-disable-schema`). The JSON is what tiflow's
`util.JSONWriter` (json-iterator with `EscapeHTML:false`, reference §1.8) writes, byte for
byte: keys in the order the Go code writes them, strings escaped by jsoniter's rules (only
`"`, `\\`, `\\n`, `\\r`, `\\t` short, other C0 controls as `\\u00xx`, nothing else escaped,
non-ASCII written raw), floats by jsoniter's `WriteFloat64` / `WriteFloat32` (Go 'f' form,
'e' form below 1e-6 and from 1e21 with Go's two-digit exponent: `1e-07`).

Speed: the encoder is built once per table. Everything that does not depend on the row is
rendered to text in the constructor: the key and value `schema` parts, the `source` object
around the commit ts, the top-level `ts_ms`, each column's `"name":` prefix, its value
renderer (chosen once by MySQL type) and the text written for NULL (TiCDC writes the
column DEFAULT instead, see below). A row is then a join of short strings.

`build_ts_ms` stands in for Go's `time.Now()` in the top-level `payload.ts_ms` of rows,
DDLs and watermarks, so that replaying a batch writes identical bytes.

TiCDC quirks copied on purpose (each names the tiflow function it follows):

* NULL replaced by DEFAULT (`writeDebeziumFieldValue`): a NULL in a column with a DEFAULT is
  written as the default pushed through the value rules (YEAR then is a JSON string, a
  binary string column writes its key twice: base64, then raw).
* BIGINT UNSIGNED is written as `int64(v)` (2^64-1 -> -1); DECIMAL as a double; BIT(1) as a
  boolean and BIT(n) as little-endian base64; DATE/DATETIME years below 100 are moved into
  1970..2069 (`0018` -> 2018).
* TIMESTAMP: the row holds the value rendered in `time-zone` (TiCDC's server zone); it is
  converted back to UTC and written `YYYY-MM-DDTHH:MM:SS[.fsp digits]Z`.
* Watermark payload order is `source, ts_ms, transaction, op` (the code; the docs show
  `op` first).

The sink sees no DDL statements; `encode_ddl` writes the DDL event for a schema change the
caller detected (see `ticdc_sink.schema_change`).
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ticdc_sink.codec import Message
from ticdc_sink.codec.common import escape_enum_option, sanitize_name, sanitize_topic_name
from ticdc_sink.codec.mysql import ValueKind, charset_of, value_kind
from ticdc_sink.config import CodecConfig
from ticdc_sink.errors import InputError, SchemaError
from ticdc_sink.events import Op, RowChange, zone_info
from ticdc_sink.gotext import jsoniter_float, jsoniter_quote
from ticdc_sink.schema import DEFAULT_CHARSET, Column, MySQLType, TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec import EncodedBatch
    from ticdc_sink.codec._debezium_batch import DebeziumBatchEncoder
    from ticdc_sink.events import ChangeBatch

__all__ = [
    "DebeziumEncoder",
    "encode_watermark",
    "jdbc_type",
    "schema_topic_name",
    "tidb_type",
]

DEBEZIUM_VERSION = "2.4.0.Final"
_MIN_TIMESTAMP = (1970, 1, 1, 0, 0, 1, 0)  # TiDB types.MinTimestamp, compared as a wall clock
_EPOCH_ZERO_Z = '"1970-01-01T00:00:00Z"'


def _b64(value: bytes) -> str:
    return '"' + base64.b64encode(value).decode("ascii") + '"'


# --- names (tiflow pkg/sink/codec/common/helper.go) ----------------------------------------


def schema_topic_name(cluster: str, database: str, table: str) -> str:
    """tiflow `getSchemaTopicName`: `<cluster>.<db>.<table>` sanitised (reference §8.1)."""
    return f"{sanitize_name(cluster)}.{sanitize_name(database)}.{sanitize_topic_name(table)}"


# --- MySQL type facts ------------------------------------------------------------------------

_INT_RANGE = {
    "tinyint": (-(2**7), 2**7 - 1, 2**8 - 1),
    "smallint": (-(2**15), 2**15 - 1, 2**16 - 1),
    "mediumint": (-(2**23), 2**23 - 1, 2**24 - 1),
    "int": (-(2**31), 2**31 - 1, 2**32 - 1),
    "bigint": (-(2**63), 2**63 - 1, 2**64 - 1),
}
_NO_UNSIGNED_SUFFIX = frozenset(
    {"year", "bit", "varchar", "varbinary", "char", "binary", "decimal"}
)  # TypeYear, TypeBit, TypeVarchar, TypeString, TypeNewDecimal


def tidb_type(mysql_type: MySQLType) -> str:
    """The `tidb_type` of a field schema (tiflow `getTiDBType`): TiDB's `TypeToStr` name,
    plus ` unsigned` except for YEAR, BIT, VARCHAR, CHAR and DECIMAL."""
    base = mysql_type.base
    if mysql_type.unsigned and base not in _NO_UNSIGNED_SUFFIX:
        return base + " unsigned"
    return base


_JDBC = {
    "tinyint": 5,
    "smallint": 5,
    "mediumint": 4,
    "int": 4,
    "year": 4,
    "float": 6,
    "double": 8,
    "decimal": 3,
    "timestamp": 2014,
    "datetime": 93,
    "bigint": -5,
    "date": 91,
    "time": 92,
    "enum": 1,
    "set": 1,
    "tinytext": 12,
    "text": 12,
    "mediumtext": 12,
    "longtext": 12,
    "tinyblob": 2004,
    "blob": 2004,
    "mediumblob": 2004,
    "longblob": 2004,
    "varchar": 12,
    "varbinary": -3,
    "char": 1,
    "binary": -2,
    "bit": -7,
    "json": 1111,
}


def jdbc_type(mysql_type: MySQLType) -> int:
    """tiflow `internal.MySQLType2JdbcType` (java.sql.Types constant); VARCHAR otherwise."""
    return _JDBC.get(mysql_type.base, 12)


# --- temporal parsing -----------------------------------------------------------------------

_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME_RE = re.compile(
    r"(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?)?"
)
_TIME_RE = re.compile(r"(-)?(\d+):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _valid_date(year: int, month: int, day: int) -> bool:
    if not 1 <= month <= 12 or day < 1:
        return False
    limit = 29 if month == 2 and _is_leap(year) else _DAYS[month - 1]
    return day <= limit


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, 0 included)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _two_digit_year(year: int) -> int:
    # tiflow codec.go: "treats 0018 as 2018", "0099 as 1999" (AddDate keeps month/day).
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    return year


def _parse_go_date(text: str) -> tuple[int, int, int] | None:
    """Go `time.Parse("2006-01-02", v)`: None when it fails (bad format or day/month)."""
    match = _DATE_RE.fullmatch(text)
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    if not _valid_date(year, month, day):
        return None
    return year, month, day


def _date_days(text: str) -> int | None:
    parsed = _parse_go_date(text)
    if parsed is None:
        return None
    year, month, day = parsed
    return _days_from_civil(_two_digit_year(year), month, day)


def _parse_datetime(text: str) -> tuple[int, int, int, int, int, int, int]:
    """A DATETIME/TIMESTAMP string as (y, mo, d, h, mi, s, µs); fraction truncated to µs.

    Raises:
        ValueError: not a MySQL datetime (TiDB `StrToDateTime` fails).
    """
    match = _DATETIME_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a datetime")
    y, mo, d, h, mi, s, frac = match.groups()
    micro = int((frac or "").ljust(6, "0")[:6]) if frac else 0
    parts = (int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), micro)
    if parts[3] > 23 or parts[4] > 59 or parts[5] > 59 or parts[1] > 12 or parts[2] > 31:
        raise ValueError(f"{text!r} is not a datetime")
    return parts


def _epoch_micros(parts: tuple[int, int, int, int, int, int, int]) -> int | None:
    """Microseconds since the epoch of a wall clock read as UTC, after the two-digit-year
    rule; None when Go's time conversion fails (zero or invalid date: TiDB `GoTime`)."""
    y, mo, d, h, mi, s, us = parts
    if not _valid_date(y, mo, d):
        return None
    days = _days_from_civil(_two_digit_year(y), mo, d)
    return (days * 86400 + h * 3600 + mi * 60 + s) * 1_000_000 + us


def _time_micros(text: str) -> int:
    """TIME `[-]HH:MM:SS[.f]` as signed microseconds (TiDB `StrToDuration`).

    Raises:
        ValueError: not a TIME value.
    """
    match = _TIME_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a time")
    sign, h, m, s, frac = match.groups()
    micro = int((frac or "").ljust(6, "0")[:6]) if frac else 0
    total = (int(h) * 3600 + int(m) * 60 + int(s)) * 1_000_000 + micro
    return -total if sign else total


def _to_utc(parts: tuple[int, int, int, int, int, int, int], zone: dt.tzinfo | None) -> dt.datetime:
    """A wall clock in `zone` (None: UTC) as a UTC datetime (fold=0 in gaps and overlaps)."""
    y, mo, d, h, mi, s, us = parts
    if zone is None:
        return dt.datetime(y, mo, d, h, mi, s, us)
    local = dt.datetime(y, mo, d, h, mi, s, us, tzinfo=zone)
    return local.astimezone(dt.UTC).replace(tzinfo=None)


def _zoned_text(utc: dt.datetime, fsp: int) -> str:
    """`2006-01-02T15:04:05` + the first fsp digits of `.%06d` microseconds + `Z`."""
    text = (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T"
        f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    )
    if fsp > 0:
        text += f".{utc.microsecond:06d}"[: 1 + fsp]
    return '"' + text + 'Z"'


# --- per-column rendering ---------------------------------------------------------------------

Render = Callable[[Any], str]


class _RenderError(ValueError):
    """A value TiCDC could not encode (`ErrDebeziumEncodeFailed`)."""


class _Column:
    """One column's pre-rendered pieces: `"name":`, the value renderer and the text written
    when the value is NULL (the whole `"name":…` member, or None if that fails)."""

    __slots__ = ("column", "kind", "null_error", "null_text", "prefix", "render")

    def __init__(self, column: Column, kind: ValueKind, render: Render, zone: dt.tzinfo | None):
        self.column = column
        self.kind = kind
        self.prefix = jsoniter_quote(column.name) + ":"
        self.render = render
        self.null_error: str | None = None
        try:
            self.null_text: str | None = self.prefix + "null"
            if column.default is not None:
                self.null_text = _null_member(column, kind, render, self.prefix, zone)
        except (ValueError, OverflowError) as exc:
            self.null_text = None
            self.null_error = str(exc)


def _int_renderer(mysql_type: MySQLType, unsigned: bool) -> Render:
    # tiflow writeDebeziumFieldValue: out-of-range values (and BIGINT UNSIGNED max) -> -1,
    # other unsigned values as int64(v).
    low, high, uhigh = _INT_RANGE[mysql_type.base]
    if not unsigned:

        def render_signed(value: Any) -> str:
            if low <= value <= high:
                return int.__repr__(value)
            return "-1"

        return render_signed
    if mysql_type.base == "bigint":

        def render_ubigint(value: Any) -> str:
            if value >= uhigh or value < 0:
                return "-1"
            return int.__repr__(value - 2**64 if value > high else value)

        return render_ubigint

    def render_unsigned(value: Any) -> str:
        if 0 <= value <= uhigh:
            return int.__repr__(value)
        return "-1"

    return render_unsigned


def _bit_renderer(width: int) -> Render:
    size = (width + 7) // 8
    if width == 1:

        def render_bool(value: Any) -> str:
            return "true" if value else "false"

        return render_bool

    def render_bits(value: Any) -> str:
        value = int(value)
        if not 0 <= value < 2**64:
            raise _RenderError(f"BIT value {value} is out of range")
        return _b64(value.to_bytes(8, "little")[:size])

    return render_bits


def _enum_renderer(elements: tuple[str, ...]) -> Render:
    texts = [jsoniter_quote(e) for e in elements]

    def render_enum(value: Any) -> str:
        if isinstance(value, str):
            return jsoniter_quote(value)
        if 1 <= value <= len(texts):
            return texts[value - 1]
        return '""'  # invalid enum value (index 0): TiCDC writes ""

    return render_enum


def _set_renderer(elements: tuple[str, ...]) -> Render:
    limit = 1 << len(elements)

    def render_set(value: Any) -> str:
        if isinstance(value, str):
            return jsoniter_quote(value)
        if not 0 <= value < limit:
            return '""'  # TiDB ParseSetValue fails: TiCDC writes ""
        names = [e for i, e in enumerate(elements) if value >> i & 1]
        return jsoniter_quote(",".join(names))

    return render_set


_DATE_FROM_ISO = dt.date.fromisoformat
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


def _date_renderer(nullable: bool) -> Render:
    invalid = "null" if nullable else "0"

    def render_date(value: Any) -> str:
        if len(value) == 10 and value[7:8] == "-":  # the canonical form (not 2020-W01-1)
            try:
                day = _DATE_FROM_ISO(value)
            except ValueError:
                pass
            else:
                if day.year >= 100:
                    return int.__repr__(day.toordinal() - _EPOCH_ORDINAL)
        days = _date_days(value)
        return invalid if days is None else int.__repr__(days)

    return render_date


_FROM_ISO = dt.datetime.fromisoformat
_EPOCH_DT = dt.datetime(1970, 1, 1)
_MIN_TIMESTAMP_DT = dt.datetime(*_MIN_TIMESTAMP)
_MICROSECOND = dt.timedelta(microseconds=1)


def _fast_datetime(value: Any) -> dt.datetime | None:
    """The canonical mounter form through the C parser; None sends the value to the exact
    slow path (zero dates, years below 100, other spellings)."""
    try:
        parsed = _FROM_ISO(value)
    except (ValueError, TypeError):
        return None
    if parsed.year < 100 or parsed.tzinfo is not None or value[10:11] != " ":
        return None
    return parsed


def _datetime_renderer(fsp: int, nullable: bool) -> Render:
    invalid = "null" if nullable else "0"
    millis = fsp <= 3

    def render_datetime(value: Any) -> str:
        parsed = _fast_datetime(value)
        if parsed is not None:
            micros = (parsed - _EPOCH_DT) // _MICROSECOND
            return int.__repr__(micros // 1000 if millis else micros)
        if value == "CURRENT_TIMESTAMP":
            return "0"
        try:
            parts = _parse_datetime(value)
        except ValueError as exc:
            raise _RenderError(str(exc)) from None
        epoch = _epoch_micros(parts)
        if epoch is None:
            return invalid
        return int.__repr__(epoch // 1000 if millis else epoch)

    return render_datetime


def _timestamp_renderer(fsp: int, zone: dt.tzinfo | None) -> Render:
    width = 1 + fsp if fsp else 0

    def render_timestamp(value: Any) -> str:
        parsed = _fast_datetime(value)
        if parsed is not None:
            if parsed < _MIN_TIMESTAMP_DT:
                return _EPOCH_ZERO_Z
            if zone is None:
                if len(value) == 19 + width:  # exactly fsp digits, as the mounter writes
                    return '"' + value[:10] + "T" + value[11:] + 'Z"'
            else:
                parsed = parsed.replace(tzinfo=zone).astimezone(dt.UTC)
            text = parsed.isoformat(" ", "microseconds")
            return '"' + text[:10] + "T" + text[11:19] + text[19 : 19 + width] + 'Z"'
        try:
            parts = _parse_datetime(value)
        except ValueError as exc:
            raise _RenderError(str(exc)) from None
        if parts < _MIN_TIMESTAMP:
            return _EPOCH_ZERO_Z
        try:
            return _zoned_text(_to_utc(parts, zone), fsp)
        except (ValueError, OverflowError) as exc:
            raise _RenderError(f"{value!r} is not a valid timestamp") from exc

    return render_timestamp


def _time_renderer(value: Any) -> str:
    try:
        return int.__repr__(_time_micros(value))
    except ValueError as exc:
        raise _RenderError(str(exc)) from None


def _float32_renderer(value: Any) -> str:
    return jsoniter_float(value, 32)


def _decimal_renderer(value: Any) -> str:
    return jsoniter_float(float(value))


def _text_renderer(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", "surrogateescape")
    return jsoniter_quote(value)


def _binary_renderer(value: Any) -> str:
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    return _b64(bytes(value))


def _value_renderer(column: Column, kind: ValueKind, zone: dt.tzinfo | None) -> Render:
    t = column.type
    match kind:
        case ValueKind.INT | ValueKind.UINT if t.base == "year":
            return int.__repr__
        case ValueKind.INT | ValueKind.UINT:
            return _int_renderer(t, kind is ValueKind.UINT)
        case ValueKind.FLOAT32:
            return _float32_renderer
        case ValueKind.FLOAT64:
            return jsoniter_float
        case ValueKind.DECIMAL:
            return _decimal_renderer
        case ValueKind.DATE:
            return _date_renderer(column.nullable)
        case ValueKind.DATETIME:
            return _datetime_renderer(t.fsp, column.nullable)
        case ValueKind.TIMESTAMP:
            return _timestamp_renderer(t.fsp, zone)
        case ValueKind.TIME:
            return _time_renderer
        case ValueKind.ENUM:
            return _enum_renderer(t.elements)
        case ValueKind.SET:
            return _set_renderer(t.elements)
        case ValueKind.BIT:
            return _bit_renderer(max(t.flen, 1))
        case ValueKind.BINARY:
            return _binary_renderer
        case _:  # TEXT, JSON, VECTOR: the string
            return _text_renderer


def _null_member(
    column: Column, kind: ValueKind, render: Render, prefix: str, zone: dt.tzinfo | None
) -> str:
    """The `"name":value` text TiCDC writes for NULL in a column with a DEFAULT: the default
    string through the value rules (tiflow writeDebeziumFieldValue, `value = default`).

    Raises:
        ValueError: TiCDC would fail to encode the default (`ErrDebeziumEncodeFailed`).
    """
    default = column.default
    assert default is not None
    t = column.type
    nullable_text = "null" if column.nullable else None
    match kind:
        case ValueKind.BIT:
            return prefix + render(int(default))
        case ValueKind.BINARY:
            # `case string:` writes the base64 field and then the raw string field again.
            return prefix + _binary_renderer(default) + "," + prefix + jsoniter_quote(default)
        case ValueKind.INT | ValueKind.UINT if t.base == "year":
            return prefix + jsoniter_quote(default)  # WriteAnyField(string)
        case ValueKind.INT | ValueKind.UINT:
            if not re.fullmatch(r"[+-]?\d+", default.strip()):
                raise ValueError(f"default {default!r} is not an integer")
            return prefix + render(int(default))
        case ValueKind.FLOAT32 | ValueKind.FLOAT64 | ValueKind.DECIMAL:
            return prefix + jsoniter_float(_go_parse_float(default))
        case ValueKind.TIMESTAMP:
            if default.upper() == "CURRENT_TIMESTAMP":
                return prefix + (nullable_text or _EPOCH_ZERO_Z)
            stored = _stored_timestamp_default(default, zone)
            if stored < _MIN_TIMESTAMP:
                return prefix + "null"  # col.Value == nil
            # QUIRK: the UTC default TiDB stores is read as a wall clock in the server zone.
            return prefix + _zoned_text(_to_utc(stored, zone), t.fsp)
        case ValueKind.VECTOR:
            raise ValueError(f"default {default!r} of a vector column cannot be encoded")
        case _:
            return prefix + render(default)


def _go_parse_float(text: str) -> float:
    """Go `strconv.ParseFloat(text, 64)` for the decimal forms TiDB stores.

    Raises:
        ValueError: not a finite number.
    """
    if "_" in text:
        raise ValueError(f"{text!r} is not a number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _stored_timestamp_default(
    default: str, zone: dt.tzinfo | None
) -> tuple[int, int, int, int, int, int, int]:
    """The UTC wall clock TiDB stores for a TIMESTAMP default written in `zone`.

    Raises:
        ValueError: not a datetime.
    """
    parts = _parse_datetime(default)
    if zone is None or parts < _MIN_TIMESTAMP or not _valid_date(*parts[:3]):
        return parts
    utc = _to_utc(parts, zone)
    return (utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond)


# --- field schemas (tiflow writeDebeziumFieldSchema) ---------------------------------------


def _schema_default(column: Column, kind: ValueKind, zone: dt.tzinfo | None) -> str | None:
    """The JSON text of the field schema's `default`, or None for no `default` key."""
    default = column.default
    if default is None:
        return None
    t = column.type
    not_null = not column.nullable
    match kind:
        case ValueKind.BIT:
            width = max(t.flen, 1)
            try:
                value = int(default)
            except ValueError:
                return None
            if width == 1:
                return "true" if value != 0 else "false"
            return _bit_renderer(width)(value)
        case ValueKind.TEXT | ValueKind.BINARY | ValueKind.ENUM | ValueKind.SET:
            return jsoniter_quote(default)
        case ValueKind.JSON | ValueKind.VECTOR:
            return jsoniter_quote(default)
        case ValueKind.DATE:
            days = _date_days(default)
            if days is None:
                return "0" if not_null else None
            return int.__repr__(days)
        case ValueKind.DATETIME:
            if default == "CURRENT_TIMESTAMP":
                return "0"
            try:
                parts = _parse_datetime(default)
            except ValueError:
                return "0"
            micros = _epoch_micros(parts)
            if micros is None:
                return "0" if not_null else None
            return int.__repr__(micros // 1000 if t.fsp <= 3 else micros)
        case ValueKind.TIMESTAMP:
            if default == "CURRENT_TIMESTAMP":
                return _EPOCH_ZERO_Z if not_null else None
            try:
                stored = _stored_timestamp_default(default, zone)
            except (ValueError, OverflowError):
                return "0"
            if stored < _MIN_TIMESTAMP:
                return _EPOCH_ZERO_Z if not_null else None
            if not _valid_date(*stored[:3]):
                return "0"
            return _zoned_text(_to_utc(stored, None), t.fsp)
        case ValueKind.TIME:
            try:
                return int.__repr__(_time_micros(default))
            except ValueError:
                return None
        case _:  # integers, YEAR, FLOAT, DOUBLE, DECIMAL: ParseFloat(default, 64)
            try:
                number = _go_parse_float(default)
            except ValueError:
                return None
            if t.base == "year":
                if number < 70:
                    number += 2000
                elif number < 100:
                    number += 1900
            return jsoniter_float(number)


_INT_SCHEMA_TYPE = {
    ("tinyint", False): "int16",
    ("tinyint", True): "int16",
    ("smallint", False): "int16",
    ("smallint", True): "int32",
    ("mediumint", False): "int32",
    ("mediumint", True): "int32",
    ("int", False): "int32",
    ("int", True): "int64",
    ("bigint", False): "int64",
    ("bigint", True): "int64",
}


def _type_and_name(column: Column, kind: ValueKind) -> tuple[str, str | None, str | None]:
    """(`type`, `name`, `parameters` text) of a column's field schema."""
    t = column.type
    match kind:
        case ValueKind.BIT:
            width = max(t.flen, 1)
            if width == 1:
                return "boolean", None, None
            return "bytes", "io.debezium.data.Bits", '{"length":' + jsoniter_quote(str(width)) + "}"
        case ValueKind.ENUM:
            allowed = ",".join(escape_enum_option(e) for e in t.elements)
            return "string", "io.debezium.data.Enum", '{"allowed":' + jsoniter_quote(allowed) + "}"
        case ValueKind.SET:
            allowed = ",".join(t.elements)
            return (
                "string",
                "io.debezium.data.EnumSet",
                '{"allowed":' + jsoniter_quote(allowed) + "}",
            )
        case ValueKind.DATE:
            return "int32", "io.debezium.time.Date", None
        case ValueKind.DATETIME:
            name = "io.debezium.time.Timestamp" if t.fsp <= 3 else "io.debezium.time.MicroTimestamp"
            return "int64", name, None
        case ValueKind.TIMESTAMP:
            return "string", "io.debezium.time.ZonedTimestamp", None
        case ValueKind.TIME:
            return "int64", "io.debezium.time.MicroTime", None
        case ValueKind.JSON:
            return "string", "io.debezium.data.Json", None
        case ValueKind.VECTOR:
            return "string", "io.debezium.data.TiDBVectorFloat32", None
        case ValueKind.FLOAT32:
            return ("double" if t.tidb_decimal != -1 else "float"), None, None
        case ValueKind.FLOAT64 | ValueKind.DECIMAL:
            return "double", None, None
        case ValueKind.INT | ValueKind.UINT if t.base == "year":
            return "int32", "io.debezium.time.Year", None
        case ValueKind.INT | ValueKind.UINT:
            return _INT_SCHEMA_TYPE[(t.base, t.unsigned)], None, None
        case _:
            return "string", None, None


def _field_schema(column: Column, kind: ValueKind, extension: bool, zone: dt.tzinfo | None) -> str:
    kind_name, name, parameters = _type_and_name(column, kind)
    parts = []
    if extension:
        parts.append('"tidb_type":' + jsoniter_quote(tidb_type(column.type)))
    parts.append('"type":"' + kind_name + '"')
    parts.append('"optional":' + ("true" if column.nullable else "false"))
    if name is not None:
        parts.append('"name":"' + name + '"')
        if kind is not ValueKind.VECTOR:
            parts.append('"version":1')
    if parameters is not None:
        parts.append('"parameters":' + parameters)
    parts.append('"field":' + jsoniter_quote(column.name))
    default = _schema_default(column, kind, zone)
    if default is not None:
        parts.append('"default":' + default)
    return "{" + ",".join(parts) + "}"


# --- constant envelope pieces --------------------------------------------------------------

_SOURCE_SCHEMA = (
    '{"type":"struct","fields":['
    '{"type":"string","optional":false,"field":"version"},'
    '{"type":"string","optional":false,"field":"connector"},'
    '{"type":"string","optional":false,"field":"name"},'
    '{"type":"int64","optional":false,"field":"ts_ms"},'
    '{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,'
    '"parameters":{"allowed":"true,last,false,incremental"},"default":"false",'
    '"field":"snapshot"},'
    '{"type":"string","optional":false,"field":"db"},'
    '{"type":"string","optional":true,"field":"sequence"},'
    '{"type":"string","optional":true,"field":"table"},'
    '{"type":"int64","optional":false,"field":"server_id"},'
    '{"type":"string","optional":true,"field":"gtid"},'
    '{"type":"string","optional":false,"field":"file"},'
    '{"type":"int64","optional":false,"field":"pos"},'
    '{"type":"int32","optional":false,"field":"row"},'
    '{"type":"int64","optional":true,"field":"thread"},'
    '{"type":"string","optional":true,"field":"query"}'
    '],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"}'
)
_TAIL_SCHEMA = (
    '{"type":"string","optional":false,"field":"op"},'
    '{"type":"int64","optional":true,"field":"ts_ms"},'
    '{"type":"struct","fields":['
    '{"type":"string","optional":false,"field":"id"},'
    '{"type":"int64","optional":false,"field":"total_order"},'
    '{"type":"int64","optional":false,"field":"data_collection_order"}'
    '],"optional":true,"name":"event.block","version":1,"field":"transaction"}'
)


def _source_parts(cluster: str, database: str, table: str) -> tuple[str, str, str]:
    """The `source` object around its two variable numbers: (head, middle, tail) with
    head + ts_ms + middle + commit_ts + tail."""
    name = jsoniter_quote(cluster)
    head = '{"version":"' + DEBEZIUM_VERSION + '","connector":"TiCDC","name":' + name + ',"ts_ms":'
    middle = (
        ',"snapshot":"false","db":'
        + jsoniter_quote(database)
        + ',"table":'
        + jsoniter_quote(table)
        + ',"server_id":0,"gtid":null,"file":"","pos":0,"row":0,"thread":0,"query":null,'
        '"commit_ts":'
    )
    tail = ',"cluster_id":' + name + "}"
    return head, middle, tail


def _source(parts: tuple[str, str, str], commit_ts: int) -> str:
    head, middle, tail = parts
    return head + str(commit_ts >> 18) + middle + str(commit_ts) + tail


def _check_ts(value: int, what: str) -> None:
    if not 0 <= value < 2**64:
        raise InputError(f"{what} {value} is not a TiDB TSO (0..2^64-1)", value=value)


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The watermark (checkpoint) message, only with `enable-tidb-extension` (else None):
    tiflow `EncodeCheckpointEvent`, reference §8.6. The caller broadcasts it."""
    if not config.enable_tidb_extension:
        return None
    _check_ts(commit_ts, "commit ts")
    cluster = config.debezium_cluster_name
    with_schema = not config.debezium_disable_schema
    key = '{"payload":{}'
    if with_schema:
        key += (
            ',"schema":{"type":"struct","name":'
            + jsoniter_quote(sanitize_name(cluster) + ".watermark.Key")
            + ',"optional":false,"fields":[]}'
        )
    key += "}"
    source = _source(_source_parts(cluster, "", ""), commit_ts)
    value = (
        '{"payload":{"source":'
        + source
        + ',"ts_ms":'
        + str(int(build_ts_ms))
        + ',"transaction":null,"op":"m"}'
    )
    if with_schema:
        value += (
            ',"schema":{"type":"struct","optional":false,"name":'
            + jsoniter_quote(sanitize_name(cluster) + ".watermark.Envelope")
            + ',"version":1,"fields":['
            + _SOURCE_SCHEMA
            + ","
            + _TAIL_SCHEMA
            + "]}"
        )
    value += "}"
    return Message(key=key.encode(), value=value.encode(), commit_ts=commit_ts, rows=0)


class DebeziumEncoder:
    """One table's Debezium encoder (tiflow `dbzCodec`), built once, reused for every row.

    Options: `debezium-disable-schema` (no `schema` parts), `debezium-output-old-value`
    (UPDATEs carry `before`), `debezium-cluster-name` (`source.name`, schema names),
    `enable-tidb-extension` (`tidb_type` in field schemas), `time-zone` (the zone TIMESTAMP
    values of the rows are rendered in). No size check: TiCDC has none for Debezium.

    Raises:
        SchemaError: a column type Debezium cannot carry.
        ConfigError: an unknown `time-zone`.
    """

    def __init__(self, config: CodecConfig, table: TableSchema, *, build_ts_ms: int) -> None:
        self._config = config
        self._table = table
        self._name = f"{table.database}.{table.table}"
        zone_name = config.time_zone
        zone = None if zone_name.upper() in ("UTC", "ETC/UTC", "Z") else zone_info(zone_name)
        self._zone = zone
        extension = config.enable_tidb_extension
        cluster = config.debezium_cluster_name
        self._with_schema = not config.debezium_disable_schema
        self._old_value = config.debezium_output_old_value

        columns = []
        fields = []
        for column in table.columns:
            try:
                kind = value_kind(column)
            except SchemaError as exc:
                raise SchemaError(
                    f"table {self._name}: {exc.message}", column=column.name
                ) from None
            render = _value_renderer(column, kind, zone)
            columns.append(_Column(column, kind, render, zone))
            fields.append(_field_schema(column, kind, extension, zone))
        self._columns = tuple(columns)
        self._parts = tuple((c.prefix, c.render, c.null_text) for c in columns)
        self._key_positions = table.handle_key_indexes
        self._key_columns = tuple(columns[i] for i in self._key_positions)

        topic = schema_topic_name(cluster, table.database, table.table)
        self._source_parts = _source_parts(cluster, table.database, table.table)
        self._ts_ms = ',"ts_ms":' + str(int(build_ts_ms)) + ',"transaction":null,'
        self._key_schema = ""
        self._value_schema = ""
        if self._with_schema:
            key_fields = ",".join(fields[i] for i in self._key_positions)
            self._key_schema = (
                ',"schema":{"type":"struct","name":'
                + jsoniter_quote(topic + ".Key")
                + ',"optional":false,"fields":['
                + key_fields
                + "]}"
            )
            value_fields = ",".join(fields)
            struct_name = jsoniter_quote(topic + ".Value")
            image = (
                '{"type":"struct","optional":true,"name":' + struct_name + ',"field":"%s",'
                '"fields":[' + value_fields.replace("%", "%%") + "]}"
            )
            self._value_schema = (
                ',"schema":{"type":"struct","optional":false,"name":'
                + jsoniter_quote(topic + ".Envelope")
                + ',"version":1,"fields":['
                + image % "before"
                + ","
                + image % "after"
                + ","
                + _SOURCE_SCHEMA
                + ","
                + _TAIL_SCHEMA
                + "]}"
            )
        self._build_ts_ms = int(build_ts_ms)
        self._batch_encoder: DebeziumBatchEncoder | None = None

    # -- rows ---------------------------------------------------------------------------

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change (tiflow `EncodeKey` / `EncodeValue`).

        Raises:
            InputError: an UPDATE without its old row while `debezium-output-old-value` is
                on, a row of another shape than the table, or a value TiCDC cannot encode
                (names table, column and value).
        """
        op = change.op
        commit_ts = change.commit_ts
        _check_ts(commit_ts, f"table {self._name}: commit ts")
        if op is Op.INSERT:
            row = self._image(change.row, "row")
            key_row = row
            body = '"op":"c","before":null,"after":' + self._render(row)
        elif op is Op.DELETE:
            before = self._image(change.before, "before")
            key_row = before
            body = '"op":"d","after":null,"before":' + self._render(before)
        else:
            row = self._image(change.row, "row")
            key_row = row
            if self._old_value:
                if change.before is None:
                    raise InputError(
                        f"table {self._name}: an UPDATE has no old row (`_before`), which "
                        "option 'debezium-output-old-value' (true) writes as `before`; supply "
                        "the `_before` column or set 'debezium-output-old-value' to false",
                        table=self._name,
                    )
                before = self._image(change.before, "before")
                body = '"op":"u","before":' + self._render(before) + ',"after":' + self._render(row)
            else:
                body = '"op":"u","after":' + self._render(row)
        value = (
            '{"payload":{"source":'
            + _source(self._source_parts, commit_ts)
            + self._ts_ms
            + body
            + "}"
            + self._value_schema
            + "}"
        )
        key = '{"payload":' + self._render_key(key_row) + self._key_schema + "}"
        return Message(key=self._bytes(key), value=self._bytes(value), commit_ts=commit_ts, rows=1)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch | None:
        """The messages of a whole batch of this table, column-wise: exactly what
        `encode_row` gives for each event (see `_debezium_batch`); None: use `encode_row`.

        Raises:
            InputError: what `encode_row` raises for the first event it refuses.
        """
        if self._batch_encoder is None:
            from ticdc_sink.codec._debezium_batch import DebeziumBatchEncoder

            self._batch_encoder = DebeziumBatchEncoder(self)
        return self._batch_encoder.encode_batch(batch, key_indexes)

    def encode_bootstrap(self) -> None:
        """Debezium has no bootstrap message."""
        return None

    def _image(self, values: tuple[Any, ...] | None, what: str) -> tuple[Any, ...]:
        if values is None or len(values) != len(self._columns):
            got = "none" if values is None else f"{len(values)} values"
            raise InputError(
                f"table {self._name}: the {what} image has {got}; the table has "
                f"{len(self._columns)} columns",
                table=self._name,
            )
        return values

    def _render(self, values: tuple[Any, ...]) -> str:
        try:
            members = [
                prefix + render(v) if v is not None else null
                for (prefix, render, null), v in zip(self._parts, values, strict=True)
            ]
            return "{" + ",".join(members) + "}"  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise self._value_error(self._columns, values, exc) from exc

    def _render_key(self, values: tuple[Any, ...]) -> str:
        key = [(self._key_columns[i], values[p]) for i, p in enumerate(self._key_positions)]
        try:
            members = [(c.prefix + c.render(v) if v is not None else c.null_text) for c, v in key]
            return "{" + ",".join(members) + "}"  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise self._value_error(
                tuple(c for c, _ in key), tuple(v for _, v in key), exc
            ) from exc

    def _value_error(
        self, columns: tuple[_Column, ...], values: tuple[Any, ...], exc: Exception
    ) -> InputError:
        for c, v in zip(columns, values, strict=True):
            if v is None:
                if c.null_text is None:
                    return InputError(
                        f"table {self._name}, column {c.column.name}: NULL would be written as "
                        f"the column default {c.column.default!r}, which TiCDC cannot encode "
                        f"({c.null_error}); give a value or fix the default in table-ddl",
                        table=self._name,
                        column=c.column.name,
                    )
                continue
            try:
                c.render(v)
            except (TypeError, ValueError, OverflowError, AttributeError) as inner:
                shown = repr(v) if len(repr(v)) <= 60 else repr(v)[:57] + "..."
                return InputError(
                    f"table {self._name}, column {c.column.name}: value {shown} cannot be "
                    f"written as MySQL {c.column.type.to_sql()} ({inner})",
                    table=self._name,
                    column=c.column.name,
                    value=v,
                )
        return InputError(f"table {self._name}: a row cannot be encoded ({exc})", table=self._name)

    def _bytes(self, text: str) -> bytes:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:
            raise InputError(
                f"table {self._name}: a string value holds a lone surrogate, which is not "
                "UTF-8; clean the input strings",
                table=self._name,
            ) from exc

    # -- DDL ----------------------------------------------------------------------------

    def encode_ddl(self, previous: TableSchema | None, query: str, commit_ts: int) -> Message:
        """The DDL event of this encoder's table (tiflow `EncodeDDLEvent`, reference §8.5):
        `CREATE` when `previous` is None, else `ALTER` (the table-change `id` names both
        tables when `previous` has another name, as for RENAME TABLE).

        Raises:
            InputError: a commit ts that is no TSO.
        """
        _check_ts(commit_ts, f"table {self._name}: commit ts")
        table = self._table
        change_type = "CREATE" if previous is None else "ALTER"
        database = table.database
        key = '{"payload":{"databaseName":' + jsoniter_quote(database) + "}"
        if self._with_schema:
            key += (
                ',"schema":{"type":"struct","name":"io.debezium.connector.mysql.SchemaChangeKey",'
                '"optional":false,"version":1,"fields":[{"field":"databaseName",'
                '"optional":false,"type":"string"}]}'
            )
        key += "}"
        table_id = jsoniter_quote(f'"{database}"."{table.table}"')
        if previous is not None and (previous.database, previous.table) != (
            database,
            table.table,
        ):
            table_id = jsoniter_quote(
                f'"{previous.database}"."{previous.table}","{database}"."{table.table}"'
            )
        columns = ",".join(
            _ddl_column(c, position) for position, c in enumerate(table.columns, start=1)
        )
        primary = ",".join(jsoniter_quote(name) for name in table.primary_key)
        change = (
            '{"type":"'
            + change_type
            + '","id":'
            + table_id
            + ',"table":{"defaultCharsetName":'
            + jsoniter_quote(_table_charset(table))
            + ',"primaryKeyColumnNames":['
            + primary
            + '],"columns":['
            + columns
            + '],"comment":null}}'
        )
        value = (
            '{"payload":{"source":'
            + _source(self._source_parts, commit_ts)
            + ',"ts_ms":'
            + str(self._build_ts_ms)
            + ',"databaseName":'
            + jsoniter_quote(database)
            + ',"schemaName":null,"ddl":'
            + jsoniter_quote(query)
            + ',"tableChanges":['
            + change
            + "]}"
        )
        if self._with_schema:
            value += ',"schema":' + _DDL_VALUE_SCHEMA
        value += "}"
        return Message(key=self._bytes(key), value=self._bytes(value), commit_ts=commit_ts, rows=0)


# --- DDL table changes (tiflow EncodeDDLEvent, helper.go) ------------------------------------

# TiDB mysql.defaultLengthAndDecimal (flen, decimal) by TypeToStr name.
_DEFAULT_LEN_DEC = {
    "bit": (1, 0),
    "tinyint": (4, 0),
    "smallint": (6, 0),
    "mediumint": (9, 0),
    "int": (11, 0),
    "bigint": (20, 0),
    "double": (22, -1),
    "float": (12, -1),
    "decimal": (10, 0),
    "time": (10, 0),
    "date": (10, 0),
    "timestamp": (19, 0),
    "datetime": (19, 0),
    "year": (4, 0),
    "char": (1, 0),
    "binary": (1, 0),
    "varchar": (5, 0),
    "varbinary": (5, 0),
    "tinytext": (255, 0),
    "tinyblob": (255, 0),
    "text": (65535, 0),
    "blob": (65535, 0),
    "mediumtext": (16777215, 0),
    "mediumblob": (16777215, 0),
    "longtext": (4294967295, 0),
    "longblob": (4294967295, 0),
    "json": (4294967295, 0),
    "set": (-1, 0),
    "enum": (-1, 0),
}
_CHARSET_TYPES = frozenset(
    {"timestamp", "time", "decimal", "char", "varchar", "binary", "varbinary", "enum", "set"}
    | {"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob"}
)


def _ddl_length(t: MySQLType) -> int:
    """tiflow `getLen`; -1 means null."""
    base = t.base
    default_flen = _DEFAULT_LEN_DEC.get(base, (-1, -1))[0]
    flen = t.flen
    if base in ("timestamp", "time", "datetime"):
        return t.fsp
    if base in ("bit", "varchar", "varbinary", "char", "binary", "vector", "bigint", "float"):
        return flen if flen != default_flen else -1
    if base == "double":
        return flen if flen != default_flen else -1
    if base in ("tinyint", "smallint", "mediumint", "int"):
        if t.unsigned:
            default_flen -= 1
        if base == "tinyint" and t.zerofill:
            default_flen += 1
        return flen if flen != default_flen else -1
    if base in ("year", "decimal"):
        return flen
    if base == "set":
        return 2 * len(t.elements) - 1
    if base == "enum":
        return 1
    return -1


def _ddl_expression_and_name(t: MySQLType) -> tuple[str, str]:
    """tiflow `getExpressionAndName`: (typeExpression, typeName)."""
    prefix = t.base.upper()
    if t.base in ("year", "bit", "varchar", "varbinary", "char", "binary", "decimal"):
        return prefix, prefix
    suffix = ""
    if t.base == "double":
        decimal = t.tidb_decimal
        if decimal not in (-1, 0):
            flen = t.flen if t.flen != -1 else 22
            suffix = f"({flen},{decimal})"
    elif t.base == "vector" and t.flen != -1:
        suffix = f"({t.flen})"
    unsigned = " UNSIGNED ZEROFILL" if t.zerofill else " UNSIGNED" if t.unsigned else ""
    return prefix + suffix + unsigned, prefix + unsigned


def _parse_bit_text(value: int, width: int) -> str:
    """tiflow `parseBit` over the bytes TiDB keeps for a BIT default (ceil(width/8) bytes)."""
    raw = value.to_bytes(max((width + 7) // 8, 1), "big")
    head = width % 8
    text = format(raw[0], "b").rjust(head, "0") if head else format(raw[0], "b")
    return text + "".join(format(b, "08b") for b in raw[1:])


def _ddl_column(column: Column, position: int) -> str:
    t = column.type
    expression, name = _ddl_expression_and_name(t)
    default = column.default
    if default is None:
        default_text = "null"
    elif default.upper() == "CURRENT_TIMESTAMP":
        default_text = '"1970-01-01 00:00:00"'
    elif t.base == "bit":
        try:
            default_text = jsoniter_quote(_parse_bit_text(int(default), max(t.flen, 1)))
        except ValueError:
            default_text = jsoniter_quote(default)
    else:
        default_text = jsoniter_quote(default)
    if t.elements:
        enum_values = "[" + ",".join(jsoniter_quote(f"'{e}'") for e in t.elements) + "]"
    else:
        enum_values = "null"
    charset = charset_of(t)
    if charset == "binary" or t.base not in _CHARSET_TYPES:
        charset_text = "null"
    else:
        charset_text = jsoniter_quote(charset)
    length = _ddl_length(t)
    if t.base in ("decimal", "float", "double") and t.tidb_decimal != -1:
        scale_text = jsoniter_float(float(t.tidb_decimal))
    else:
        scale_text = "null"
    return (
        '{"name":'
        + jsoniter_quote(column.name)
        + ',"jdbcType":'
        + str(jdbc_type(t))
        + ',"nativeType":null,"comment":null,"defaultValueExpression":'
        + default_text
        + ',"enumValues":'
        + enum_values
        + ',"typeName":'
        + jsoniter_quote(name)
        + ',"typeExpression":'
        + jsoniter_quote(expression)
        + ',"charsetName":'
        + charset_text
        + ',"length":'
        + ("null" if length == -1 else str(length))
        + ',"scale":'
        + scale_text
        + ',"position":'
        + str(position)
        + ',"optional":'
        + ("true" if column.nullable else "false")
        + ',"autoIncremented":false,"generated":false}'
    )


def _table_charset(table: TableSchema) -> str:
    """The table's default charset: TableSchema keeps none, so the charset of its first
    string column, else TiDB's default (utf8mb4)."""
    for column in table.columns:
        if column.type.base in _CHARSET_TYPES:
            charset = charset_of(column.type)
            if charset != "binary":
                return charset
    return DEFAULT_CHARSET


def _f(field: str, optional: bool, kind: str) -> str:
    return (
        '{"field":"'
        + field
        + '","optional":'
        + ("true" if optional else "false")
        + ',"type":"'
        + kind
        + '"}'
    )


_STRING_ITEMS = '"items":{"type":"string","optional":false}'
_DDL_COLUMN_FIELDS = ",".join(
    [
        _f("name", False, "string"),
        _f("jdbcType", False, "int32"),
        _f("nativeType", True, "int32"),
        _f("typeName", False, "string"),
        _f("typeExpression", True, "string"),
        _f("charsetName", True, "string"),
        _f("length", True, "int32"),
        _f("scale", True, "int32"),
        _f("position", False, "int32"),
        _f("optional", True, "boolean"),
        _f("autoIncremented", True, "boolean"),
        _f("generated", True, "boolean"),
        _f("comment", True, "string"),
        _f("defaultValueExpression", True, "string"),
        _f("enumValues", True, "array")[:-1] + "," + _STRING_ITEMS + "}",
    ]
)
_DDL_VALUE_SCHEMA = (
    '{"optional":false,"type":"struct","version":1,'
    '"name":"io.debezium.connector.mysql.SchemaChangeValue","fields":['
    + _SOURCE_SCHEMA
    + ","
    + _f("ts_ms", False, "int64")
    + ","
    + _f("databaseName", True, "string")
    + ","
    + _f("schemaName", True, "string")
    + ","
    + _f("ddl", True, "string")
    + ',{"field":"tableChanges","optional":false,"type":"array","items":{'
    '"name":"io.debezium.connector.schema.Change","optional":false,"type":"struct",'
    '"version":1,"fields":['
    + _f("type", False, "string")
    + ","
    + _f("id", False, "string")
    + ',{"field":"table","optional":true,"type":"struct",'
    '"name":"io.debezium.connector.schema.Table","version":1,"fields":['
    + _f("defaultCharsetName", True, "string")
    + ',{"field":"primaryKeyColumnNames","optional":true,"type":"array",'
    + _STRING_ITEMS
    + '},{"field":"columns","optional":false,"type":"array","items":{'
    '"name":"io.debezium.connector.schema.Column","optional":false,"type":"struct",'
    '"version":1,"fields":['
    + _DDL_COLUMN_FIELDS
    + "]}},"
    + _f("comment", True, "string")
    + "]}]}}]}"
)

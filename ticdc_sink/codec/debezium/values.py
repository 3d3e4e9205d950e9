"""Debezium values (tiflow `debezium/codec.go` `writeDebeziumFieldValue`): each column's
value renderer, chosen once by MySQL type, the text written for NULL (TiCDC writes the
column DEFAULT instead) and the `"name":` prefix, shared by the row path (`row`) and the
column-wise path (`batch`, which calls a renderer where Arrow cannot give its text).

Quirks copied on purpose (each names the tiflow function it follows):

* NULL replaced by DEFAULT (`writeDebeziumFieldValue`): a NULL in a column with a DEFAULT is
  written as the default pushed through the value rules (YEAR then is a JSON string, a
  binary string column writes its key twice: base64, then raw).
* BIGINT UNSIGNED is written as `int64(v)` (2^64-1 -> -1); DECIMAL as a double; BIT(1) as a
  boolean and BIT(n) as little-endian base64; DATE/DATETIME years below 100 are moved into
  1970..2069 (`0018` -> 2018, `0001` -> 2001), TiCDC's two-digit-year rule: the bytes are
  TiCDC's, and a warning is logged once per table and process when it happens.
* TIMESTAMP: the row holds the value rendered in `time-zone` (TiCDC's server zone); it is
  converted back to UTC and written `YYYY-MM-DDTHH:MM:SS[.fsp digits]Z`.

Strings are escaped and floats written as jsoniter does (`gotext.jsoniter_quote`,
`gotext.jsoniter_float`).
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import logging
import math
import re
import threading
from collections.abc import Callable
from typing import Any

from ticdc_sink.codec.debezium.temporal import (
    EPOCH_ZERO_Z,
    MIN_TIMESTAMP,
    date_days,
    epoch_micros,
    parse_datetime,
    stored_timestamp_default,
    time_micros,
    to_utc,
    zoned_text,
)
from ticdc_sink.codec.mysql import ValueKind
from ticdc_sink.errors import InputError
from ticdc_sink.gotext import jsoniter_float, jsoniter_quote
from ticdc_sink.schema import Column, MySQLType

__all__ = [
    "INT_RANGE",
    "DebeziumColumn",
    "Render",
    "b64",
    "bit_renderer",
    "go_parse_float",
    "utf8_bytes",
    "value_renderer",
]

logger = logging.getLogger(__name__)

# Tables warned about a two-digit year in this process (Spark reuses Python workers across
# tasks, so once per table and worker); shared by the encoders of every task thread.
_TWO_DIGIT_YEAR_WARNED: set[str] = set()
_TWO_DIGIT_YEAR_LOCK = threading.Lock()
_TWO_DIGIT_YEAR_TABLES = 10_000  # bound: past it, no more warnings


def _warn_two_digit_year(table: str, column: str, year: int) -> None:
    """Say once per table that TiCDC's two-digit-year rule moved a year: the value on the
    wire is not the one in the DataFrame, on purpose."""
    with _TWO_DIGIT_YEAR_LOCK:
        if table in _TWO_DIGIT_YEAR_WARNED or len(_TWO_DIGIT_YEAR_WARNED) >= _TWO_DIGIT_YEAR_TABLES:
            return
        _TWO_DIGIT_YEAR_WARNED.add(table)
    shifted = year + 2000 if year < 70 else year + 1900
    logger.warning(
        "ticdc: table %s column %s: year %d is written as %d, as TiCDC's Debezium encoder "
        "writes DATE and DATETIME years below 100 (0-69 plus 2000, 70-99 plus 1900); "
        "said once per table (docs/reference/protocols.md)",
        table,
        column,
        year,
        shifted,
    )


def b64(value: bytes) -> str:
    """Bytes as a JSON string of their standard base64."""
    return '"' + base64.b64encode(value).decode("ascii") + '"'


#: (min, max, unsigned max) of each integer type.
INT_RANGE = {
    "tinyint": (-(2**7), 2**7 - 1, 2**8 - 1),
    "smallint": (-(2**15), 2**15 - 1, 2**16 - 1),
    "mediumint": (-(2**23), 2**23 - 1, 2**24 - 1),
    "int": (-(2**31), 2**31 - 1, 2**32 - 1),
    "bigint": (-(2**63), 2**63 - 1, 2**64 - 1),
}
Render = Callable[[Any], str]


class _RenderError(ValueError):
    """A value TiCDC could not encode (`ErrDebeziumEncodeFailed`)."""


class DebeziumColumn:
    """One column's pre-rendered pieces: `"name":`, the value renderer and the text written
    when the value is NULL (the whole `"name":…` member, or None if that fails, with
    `null_error` saying why)."""

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
    low, high, uhigh = INT_RANGE[mysql_type.base]
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


def bit_renderer(width: int) -> Render:
    size = (width + 7) // 8
    if width == 1:

        def render_bool(value: Any) -> str:
            return "true" if value else "false"

        return render_bool

    def render_bits(value: Any) -> str:
        value = int(value)
        if not 0 <= value < 2**64:
            raise _RenderError(f"BIT value {value} is out of range")
        return b64(value.to_bytes(8, "little")[:size])

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


def _date_renderer(nullable: bool, shifted: Callable[[int], None]) -> Render:
    """`shifted(year)`: a year below 100 was moved by the two-digit-year rule."""
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
        days = date_days(value)
        if days is None:
            return invalid
        year = int(value.split("-", 1)[0])  # date_days parsed it: digits before a dash
        if year < 100:
            shifted(year)
        return int.__repr__(days)

    return render_date


_FROM_ISO = dt.datetime.fromisoformat
_EPOCH_DT = dt.datetime(1970, 1, 1)
_MIN_TIMESTAMP_DT = dt.datetime(*MIN_TIMESTAMP)
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


def _datetime_renderer(fsp: int, nullable: bool, shifted: Callable[[int], None]) -> Render:
    """`shifted(year)`: a year below 100 was moved by the two-digit-year rule."""
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
            parts = parse_datetime(value)
        except ValueError as exc:
            raise _RenderError(str(exc)) from None
        epoch = epoch_micros(parts)
        if epoch is None:
            return invalid
        if parts[0] < 100:
            shifted(parts[0])
        return int.__repr__(epoch // 1000 if millis else epoch)

    return render_datetime


def _timestamp_renderer(fsp: int, zone: dt.tzinfo | None) -> Render:
    width = 1 + fsp if fsp else 0

    def render_timestamp(value: Any) -> str:
        parsed = _fast_datetime(value)
        if parsed is not None:
            if parsed < _MIN_TIMESTAMP_DT:
                return EPOCH_ZERO_Z
            if zone is None:
                if len(value) == 19 + width:  # exactly fsp digits, as the mounter writes
                    return '"' + value[:10] + "T" + value[11:] + 'Z"'
            else:
                parsed = parsed.replace(tzinfo=zone).astimezone(dt.UTC)
            text = parsed.isoformat(" ", "microseconds")
            return '"' + text[:10] + "T" + text[11:19] + text[19 : 19 + width] + 'Z"'
        try:
            parts = parse_datetime(value)
        except ValueError as exc:
            raise _RenderError(str(exc)) from None
        if parts < MIN_TIMESTAMP:
            return EPOCH_ZERO_Z
        try:
            return zoned_text(to_utc(parts, zone), fsp)
        except (ValueError, OverflowError) as exc:
            raise _RenderError(f"{value!r} is not a valid timestamp") from exc

    return render_timestamp


def _time_renderer(value: Any) -> str:
    try:
        return int.__repr__(time_micros(value))
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
    return b64(bytes(value))


def value_renderer(column: Column, kind: ValueKind, zone: dt.tzinfo | None, table: str) -> Render:
    """The renderer of one column's values; `table` names it in the two-digit-year warning."""
    t = column.type
    shifted = functools.partial(_warn_two_digit_year, table, column.name)
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
            return _date_renderer(column.nullable, shifted)
        case ValueKind.DATETIME:
            return _datetime_renderer(t.fsp, column.nullable, shifted)
        case ValueKind.TIMESTAMP:
            return _timestamp_renderer(t.fsp, zone)
        case ValueKind.TIME:
            return _time_renderer
        case ValueKind.ENUM:
            return _enum_renderer(t.elements)
        case ValueKind.SET:
            return _set_renderer(t.elements)
        case ValueKind.BIT:
            return bit_renderer(max(t.flen, 1))
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
            return prefix + jsoniter_float(go_parse_float(default))
        case ValueKind.TIMESTAMP:
            if default.upper() == "CURRENT_TIMESTAMP":
                return prefix + (nullable_text or EPOCH_ZERO_Z)
            stored = stored_timestamp_default(default, zone)
            if stored < MIN_TIMESTAMP:
                return prefix + "null"  # col.Value == nil
            # QUIRK: the UTC default TiDB stores is read as a wall clock in the server zone.
            return prefix + zoned_text(to_utc(stored, zone), t.fsp)
        case ValueKind.VECTOR:
            raise ValueError(f"default {default!r} of a vector column cannot be encoded")
        case _:
            return prefix + render(default)


def go_parse_float(text: str) -> float:
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


def utf8_bytes(text: str, table: str) -> bytes:
    """A message's text as bytes: lone surrogates from text bytes read with
    "surrogateescape" become those bytes again (invalid UTF-8, as TiCDC writes it).

    Raises:
        InputError: another lone surrogate, which no byte stands for.
    """
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"table {table}: a string value holds a lone surrogate, which is not "
            "UTF-8; clean the input strings",
            table=table,
        ) from exc

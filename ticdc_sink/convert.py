"""Per-type conversion: one Arrow column of the input as mounter values (`ticdc_sink.events`)
for its MySQL type, checked against the type's range.

Each column is converted once per record batch with `pyarrow.compute` (casts, vectorised
range checks), so no per-value `datetime` or `Decimal` objects are made on the common paths.
The DataFrame value is taken as the value TiDB stored; rules where a conversion has to choose:

* DATETIME / TIMESTAMP / TIME: fraction digits beyond the column's fsp are truncated, not
  rounded (rounding could carry into the next second, day or year, and the value TiDB
  stored already has at most fsp digits). Spark `TimestampType` (an instant) is rendered
  as the wall clock in `time_zone`; `TimestampNTZType` is rendered as is (and, for a
  TIMESTAMP column, read as a wall clock in `time_zone` for the range check).
* DECIMAL: input with more fraction digits than the column's scale is rounded half away
  from zero, as MySQL and TiDB round on insert; input beyond the precision is an error.
* FLOAT / DOUBLE: NaN and infinity are errors (MySQL stores neither).
* CHAR: trailing spaces are stripped and BINARY(n) is padded with 0x00 to n bytes, as
  TiDB hands them to TiCDC.
* ENUM / SET: members match exactly, else case-insensitively ignoring trailing spaces;
  the empty string is ENUM index 0 (MySQL's error value) unless it is a member.
* JSON: rendered as `BinaryJSON.MarshalJSON` (`pkg/types/json_binary.go`) of the TiDB module
  TiCDC v8.5.0/v8.5.1 link (go.mod: tidb 82376c7732c1 / 793e77ce3706, Nov 2024): keys sorted
  bytewise, `", "` and `": "`, floats as Go JSON formats them (no `.0`: 1.0 -> `1`; `1e+21`).
  TiDB master changed this in 2025 (issues #58888/#58894: `1.0`, `1e21`, cut-offs 1e-15/1e15,
  short escapes for backspace and form feed); that format is not followed here.

The helpers at the end (`plain_array`, `is_string`, `min_max`, `shown_value`, ...) are the
input contract's too (`input_batch`). This module knows Arrow and MySQL values; it knows
nothing of which columns a DataFrame has, Spark sessions, Kafka or any wire format.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Callable
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.errors import ConfigError, InputError, SchemaError
from ticdc_sink.events import ConvertedColumn, zone_info
from ticdc_sink.gotext import json_float, tidb_json_quote
from ticdc_sink.schema import Column, MySQLType

__all__ = [
    "ColumnTarget",
    "convert_column",
    "first_text",
    "is_string",
    "max_value",
    "min_max",
    "plain_array",
    "shown_value",
]


@attrs.frozen
class ColumnTarget:
    """What one Arrow column is converted for, and what errors name."""

    table: str
    label: str
    column: Column
    key: bool
    time_zone: str

    @property
    def type(self) -> MySQLType:
        return self.column.type

    def value_error(self, value: object, problem: str) -> InputError:
        return InputError(
            f"{self.label} of {self.table}: value {shown_value(value)} {problem}",
            table=self.table,
            column=self.column.name,
            value=value,
        )

    def type_error(self, arrow_type: pa.DataType, accepted: str) -> SchemaError:
        return SchemaError(
            f"{self.label} of {self.table} has Arrow type {arrow_type}, which cannot be "
            f"written as MySQL {_type_name(self.type)}; give it {accepted}",
            column=self.column.name,
        )


def convert_column(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    """One Arrow column as a list of mounter values for its MySQL type."""
    arr = plain_array(arr)
    if arr.null_count:
        if target.key or not target.column.nullable:
            what = "a primary or handle key column" if target.key else "a NOT NULL column"
            raise target.value_error(None, f"is not allowed: {target.column.name!r} is {what}")
        if arr.null_count == len(arr):
            return [None] * len(arr)
    base = _base(target.type)
    converter = _CONVERTERS.get(base)
    if converter is None:
        raise SchemaError(
            f"{target.label} of {target.table} has MySQL type {_type_name(target.type)}, "
            "which the sink cannot write",
            column=target.column.name,
        )
    return converter(arr, target)


# Integers ----------------------------------------------------------------------------


_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}


def _integers(arr: pa.Array, target: ColumnTarget, low: int, high: int, what: str) -> pa.Array:
    """`arr` as an Arrow integer array whose values all lie in low..high."""
    kind = arr.type
    if pa.types.is_boolean(kind):
        arr = pc.cast(arr, pa.int8())
    elif not pa.types.is_integer(kind):
        if not (pa.types.is_decimal(kind) or pa.types.is_floating(kind) or is_string(kind)):
            raise target.type_error(kind, "an integer, boolean, decimal or string column")
        problem = f"is not an integer in the range of {what} ({low}..{high})"
        arr = _cast(arr, pa.int64() if low < 0 else pa.uint64(), target, problem)
    minimum, maximum = min_max(arr)
    if minimum is not None and (minimum < low or maximum > high):
        bad = minimum if minimum < low else maximum
        raise target.value_error(bad, f"is out of range for {what} ({low}..{high})")
    return arr


def _convert_int(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = target.type
    bits = _INT_BITS[_base(kind)]
    if kind.unsigned:
        low, high = 0, (1 << bits) - 1
    else:
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return _integers(arr, target, low, high, _type_name(kind))


def _convert_year(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    values = _integers(arr, target, 0, 2155, "year (1901..2155, or 0)")
    gap = pc.and_(pc.greater(values, 0), pc.less(values, 1901))
    if pc.any(gap).as_py():
        raise target.value_error(
            _first_where(values, gap), "is out of range for year (1901..2155, or 0)"
        )
    return values


def _convert_bit(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    width = target.type.length or 1
    if not 1 <= width <= 64:
        raise SchemaError(
            f"{target.label} of {target.table} is bit({width}); bit takes 1..64 bits",
            column=target.column.name,
        )
    high = (1 << width) - 1
    what = f"bit({width}) (0..{high})"
    if _is_binary(arr.type):
        out: list[int | None] = []
        for value in arr.to_pylist():
            if value is None:
                out.append(None)
                continue
            number = int.from_bytes(value, "big")
            if number > high:
                raise target.value_error(value, f"is out of range for {what}")
            out.append(number)
        return out
    return _integers(arr, target, 0, high, what).to_pylist()


# Floating point -------------------------------------------------------------------------


def _convert_float(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = arr.type
    single = _base(target.type) == "float"
    if pa.types.is_boolean(kind):
        arr = pc.cast(arr, pa.int8())
        kind = arr.type
    if not (pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_decimal(kind)):
        raise target.type_error(kind, "a float, double, integer or decimal column")
    wanted = pa.float32() if single else pa.float64()
    values = arr if kind == wanted else pc.cast(arr, wanted, safe=False)
    if pa.types.is_floating(kind) or single:
        finite = pc.is_finite(values)
        if not pc.all(finite).as_py():
            limit = "3.4028234663852886e+38" if single else "1.7976931348623157e+308"
            raise target.value_error(
                _first_where(arr, pc.invert(finite)),
                f"is not a number MySQL {_base(target.type)} can store (finite, |v| <= {limit})",
            )
    if target.type.unsigned:
        minimum, _ = min_max(values)
        if minimum is not None and minimum < 0:
            raise target.value_error(minimum, f"is negative; {_type_name(target.type)} is unsigned")
    return values


# Decimal ---------------------------------------------------------------------------------


def _decimal_type(precision: int, scale: int) -> pa.DataType:
    if precision <= 38:
        return pa.decimal128(max(precision, 1), scale)
    return pa.decimal256(min(precision, 76), scale)


def _convert_decimal(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = target.type
    precision = kind.length or 10
    scale = kind.decimal or 0
    if not (1 <= precision <= 65 and 0 <= scale <= 30 and scale <= precision):
        raise SchemaError(
            f"{target.label} of {target.table} is {_type_name(kind)}; MySQL allows "
            "decimal(M,D) with M 1..65 and D 0..30, D <= M",
            column=target.column.name,
        )
    what = f"{_type_name(kind)}"
    source = arr.type
    if pa.types.is_boolean(source):
        arr = pc.cast(arr, pa.int8())
        source = arr.type
    if pa.types.is_integer(source):
        values = pc.cast(arr, _decimal_type(20 + scale, scale))
    elif pa.types.is_decimal(source):
        values = arr
        if source.scale > scale:
            # MySQL rounds extra fraction digits half away from zero on insert.
            values = pc.round(values, ndigits=scale, round_mode="half_towards_infinity")
            digits = source.precision - source.scale + scale + 1
            values = pc.cast(values, _decimal_type(digits, scale))
        elif source.scale < scale:
            values = pc.cast(values, _decimal_type(source.precision + scale - source.scale, scale))
    elif pa.types.is_floating(source) or is_string(source):
        values = _decimals_from_python(arr, target, precision, scale)
    else:
        raise target.type_error(source, "a decimal, integer, float or string column")
    bound = decimal.Decimal(10) ** (precision - scale)
    minimum, maximum = min_max(values)
    if minimum is not None:
        if maximum >= bound or minimum <= -bound:
            bad = maximum if maximum >= bound else minimum
            raise target.value_error(
                bad, f"does not fit {what}: at most {precision - scale} integer digits"
            )
        if kind.unsigned and minimum < 0:
            raise target.value_error(minimum, f"is negative; {what} is unsigned")
    return _decimal_strings(values, scale)


def _decimals_from_python(
    arr: pa.Array, target: ColumnTarget, precision: int, scale: int
) -> pa.Array:
    """Floats and strings through Python `Decimal`: exact, MySQL rounding (not the main path)."""
    quantum = decimal.Decimal(1).scaleb(-scale)
    context = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
    out: list[decimal.Decimal | None] = []
    for value in arr.to_pylist():
        if value is None:
            out.append(None)
            continue
        try:
            number = decimal.Decimal(repr(value) if isinstance(value, float) else value.strip())
        except decimal.InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            raise target.value_error(value, f"is not a number for {_type_name(target.type)}")
        rounded = number.quantize(quantum, context=context)
        if abs(rounded) >= decimal.Decimal(10) ** (precision - scale):
            raise target.value_error(
                value,
                f"does not fit {_type_name(target.type)}: at most {precision - scale} "
                "integer digits",
            )
        out.append(rounded)
    return pa.array(out, _decimal_type(precision, scale))


def _decimal_strings(values: pa.Array, scale: int) -> pa.Array:
    """Decimal strings with exactly `scale` fraction digits, as TiDB `MyDecimal.String()`.

    Arrow switches to exponent form ("1E-7", "0E-8") when scale > 6 and the value is small,
    so for those scales the unscaled integer is formatted and the point inserted.
    """
    if scale <= 6:
        return pc.cast(values, pa.string())
    kind = values.type
    width = pa.decimal128 if isinstance(kind, pa.Decimal128Type) else pa.decimal256
    unscaled = pc.cast(values.view(width(kind.precision, 0)), pa.string())
    negative = pc.starts_with(unscaled, "-")
    digits = pc.utf8_lpad(pc.utf8_ltrim(unscaled, "-"), width=scale + 1, padding="0")
    body = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(digits, 0, -scale), pc.utf8_slice_codeunits(digits, -scale), "."
    )
    signed = pc.binary_join_element_wise("-", body, "")
    return pc.if_else(negative, signed, body)


# Dates and times -------------------------------------------------------------------------

_DAY_MIN, _DAY_MAX = -719162, 2932896  # 0001-01-01, 9999-12-31 as days since the epoch
_US = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 1}
_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}
_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_TIME_RE = re.compile(r"(-)?(\d{1,3}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_TIMESTAMP_MIN_S, _TIMESTAMP_MAX_S = 1, 2147483647  # TIMESTAMP '1970-01-01 00:00:01' .. 2038 UTC
_TIME_MAX_US = (838 * 3600 + 59 * 60 + 59) * 1_000_000


def _fsp(target: ColumnTarget) -> int:
    fsp = target.type.decimal or 0
    if not 0 <= fsp <= 6:
        raise SchemaError(
            f"{target.label} of {target.table} is {_type_name(target.type)}; fractional "
            "seconds precision is 0..6",
            column=target.column.name,
        )
    return fsp


def _convert_date(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = arr.type
    if is_string(kind):
        out = []
        for value in arr.to_pylist():
            if value is not None and not _valid_date_text(value):
                raise target.value_error(value, "is not a date 'YYYY-MM-DD' (or '0000-00-00')")
            out.append(value)
        return out
    if pa.types.is_date64(kind):
        arr = pc.cast(arr, pa.date32())
    elif not pa.types.is_date32(kind):
        raise target.type_error(kind, "a date or string column")
    days = pc.cast(arr, pa.int32())
    minimum, maximum = min_max(days)
    if minimum is not None and (minimum < _DAY_MIN or maximum > _DAY_MAX):
        bad = first_text(arr, pc.or_(pc.less(days, _DAY_MIN), pc.greater(days, _DAY_MAX)))
        raise target.value_error(bad, "is out of range for date (0001-01-01..9999-12-31)")
    return pc.cast(arr, pa.string())


def _valid_date_text(text: str) -> bool:
    match = _DATE_RE.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(g) for g in match.groups())
    if (year, month, day) == (0, 0, 0):
        return True
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _convert_datetime(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    fsp = _fsp(target)
    is_timestamp = _base(target.type) == "timestamp"
    kind = arr.type
    if is_string(kind):
        return _datetimes_from_text(arr, target, fsp)
    if pa.types.is_date32(kind) or pa.types.is_date64(kind):
        arr = pc.cast(pc.cast(arr, pa.date32()), pa.timestamp("s"))
        kind = arr.type
    if not pa.types.is_timestamp(kind):
        raise target.type_error(kind, "a timestamp, timestamp_ntz, date or string column")
    if kind.unit in ("s", "ms"):
        arr = pc.cast(arr, pa.timestamp("us", tz=kind.tz))
        kind = arr.type
    zone = target.time_zone
    try:
        if kind.tz is not None:
            instants = arr
            local = pc.local_timestamp(arr.cast(pa.timestamp(kind.unit, tz=zone)))
        else:
            local = arr
            instants = None
            if is_timestamp:
                instants = pc.assume_timezone(
                    arr, zone, ambiguous="earliest", nonexistent="earliest"
                )
    except pa.ArrowInvalid as exc:
        raise ConfigError(
            f"option 'time-zone' is {zone!r}, which is not a known time zone; use an IANA "
            "name such as UTC or Asia/Shanghai",
            option="time-zone",
            value=zone,
        ) from exc
    per_second = _PER_SECOND[kind.unit]
    if is_timestamp:
        raw = pc.cast(instants, pa.int64())
        low, high = _TIMESTAMP_MIN_S * per_second, (_TIMESTAMP_MAX_S + 1) * per_second - 1
        allowed = "timestamp ('1970-01-01 00:00:01'..'2038-01-19 03:14:07.999999' UTC)"
    else:
        raw = pc.cast(local, pa.int64())
        low, high = (_DAY_MIN * 86400) * per_second, ((_DAY_MAX + 1) * 86400) * per_second - 1
        allowed = "datetime ('0001-01-01 00:00:00'..'9999-12-31 23:59:59.999999')"
    minimum, maximum = min_max(raw)
    if minimum is not None and (minimum < low or maximum > high):
        bad = first_text(local, pc.or_(pc.less(raw, low), pc.greater(raw, high)))
        raise target.value_error(bad, f"is out of range for {allowed}")
    text = pc.cast(local, pa.string())
    length = 19 + (fsp + 1 if fsp else 0)
    return pc.utf8_slice_codeunits(text, 0, length)


def _fraction(digits: str | None, fsp: int) -> str:
    """The fraction part for `fsp` digits, truncated or zero-padded; '' for fsp 0."""
    if not fsp:
        return ""
    return "." + (digits or "")[:fsp].ljust(fsp, "0")


def _is_datetime(match: re.Match[str]) -> bool:
    # a real date and time, or the zero date with a zero time
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    if (year, month, day) == (0, 0, 0):
        return (hour, minute, second) == (0, 0, 0)
    try:
        dt.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


def _datetimes_from_text(arr: pa.Array, target: ColumnTarget, fsp: int) -> list[str | None]:
    out: list[str | None] = []
    for value in arr.to_pylist():
        if value is None:
            out.append(None)
            continue
        match = _DATETIME_RE.fullmatch(value)
        if match is None or not _is_datetime(match):
            raise target.value_error(value, "is not a datetime 'YYYY-MM-DD HH:MM:SS[.fraction]'")
        out.append(value[:10] + " " + value[11:19] + _fraction(match.group(7), fsp))
    return out


def _convert_time(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    fsp = _fsp(target)
    kind = arr.type
    allowed = "time ('-838:59:59'..'838:59:59')"
    if is_string(kind):
        out: list[str | None] = []
        for value in arr.to_pylist():
            if value is None:
                out.append(None)
                continue
            match = _TIME_RE.fullmatch(value)
            if match is None or int(match.group(3)) > 59 or int(match.group(4)) > 59:
                raise target.value_error(value, "is not a time '[-]HH:MM:SS[.fraction]'")
            sign, hours, minutes, seconds, fraction = match.groups()
            micros = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000
            micros += int((fraction or "")[:6].ljust(6, "0"))
            if micros > _TIME_MAX_US:
                raise target.value_error(value, f"is out of range for {allowed}")
            out.append(_format_time(-micros if sign else micros, fsp))
        return out
    if pa.types.is_time(kind):
        text = pc.cast(pc.cast(arr, pa.time64("us"), safe=False), pa.string())
        return pc.utf8_slice_codeunits(text, 0, 8 + (fsp + 1 if fsp else 0))
    if pa.types.is_duration(kind):
        raw = pc.cast(arr, pa.int64())
        scale = _US[kind.unit]
        out = []
        for value in raw.to_pylist():
            if value is None:
                out.append(None)
                continue
            micros = value * scale if kind.unit != "ns" else int(value / 1000)
            if abs(micros) > _TIME_MAX_US:
                raise target.value_error(
                    dt.timedelta(microseconds=micros), f"is out of range for {allowed}"
                )
            out.append(_format_time(micros, fsp))
        return out
    raise target.type_error(kind, "a string, time or duration (day-time interval) column")


def _format_time(micros: int, fsp: int) -> str:
    """TiDB `Duration.String()`: [-]HH:MM:SS[.f], fraction truncated to fsp digits."""
    magnitude = abs(micros)
    magnitude -= magnitude % 10 ** (6 - fsp)
    sign = "-" if micros < 0 and magnitude else ""
    seconds, fraction = divmod(magnitude, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    text = f"{sign}{hours:02d}:{minute:02d}:{second:02d}"
    return text + (f".{fraction:06d}"[: fsp + 1] if fsp else "")


# Strings ---------------------------------------------------------------------------------

# Byte limits of the text and blob types (MySQL "String Type Storage Requirements").
_BYTE_LIMITS = {
    "tinytext": 255,
    "text": 65535,
    "mediumtext": 16777215,
    "longtext": 4294967295,
    "tinyblob": 255,
    "blob": 65535,
    "mediumblob": 16777215,
    "longblob": 4294967295,
}


def _convert_text(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = arr.type
    base = _base(target.type)
    if _is_binary(kind):
        try:
            arr = pc.cast(arr, pa.large_string() if _is_large(kind) else pa.string())
        except pa.ArrowInvalid as exc:
            bad = next((v for v in arr.to_pylist() if v is not None and not _is_utf8(v)), None)
            raise target.value_error(bad, "is not valid UTF-8 text") from exc
    elif pa.types.is_integer(kind):
        arr = pc.cast(arr, pa.string())
    elif not is_string(kind):
        raise target.type_error(kind, "a string, binary or integer column")
    if base == "char":
        # TiDB strips a CHAR's trailing spaces (PAD SPACE) before TiCDC sees the value.
        arr = pc.utf8_rtrim(arr, characters=" ")
    declared = target.type.length
    if base in ("char", "varchar") and declared is not None:
        lengths = pc.utf8_length(arr)
        if (max_value(lengths) or 0) > declared:
            bad = _first_where(arr, pc.greater(lengths, declared))
            raise target.value_error(
                bad,
                f"is {len(bad)} characters long; {_type_name(target.type)} allows at most "
                f"{declared}",
            )
    limit = _BYTE_LIMITS.get(base)
    if limit is not None:
        sizes = pc.binary_length(arr)
        if (max_value(sizes) or 0) > limit:
            bad = _first_where(arr, pc.greater(sizes, limit))
            raise target.value_error(
                bad, f"is {len(bad.encode())} bytes long; {base} allows at most {limit}"
            )
    return arr


def _convert_binary(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = arr.type
    base = _base(target.type)
    if is_string(kind):
        arr = pc.cast(arr, pa.large_binary() if _is_large(kind) else pa.binary())
    elif not _is_binary(kind):
        raise target.type_error(kind, "a binary or string column")
    declared = target.type.length
    limit = _BYTE_LIMITS.get(base)
    if base in ("binary", "varbinary"):
        limit = declared if declared is not None else (1 if base == "binary" else None)
    if limit is not None:
        sizes = pc.binary_length(arr)
        if (max_value(sizes) or 0) > limit:
            bad = _first_where(arr, pc.greater(sizes, limit))
            raise target.value_error(
                bad, f"is {len(bad)} bytes long; {_type_name(target.type)} allows at most {limit}"
            )
    values = arr.to_pylist()
    if base == "binary" and limit:
        # TiDB right-pads BINARY(n) with 0x00 to n bytes.
        values = [v if v is None or len(v) == limit else v.ljust(limit, b"\x00") for v in values]
    return values


# ENUM and SET ----------------------------------------------------------------------------


def _member_lookup(elements: tuple[str, ...]) -> Callable[[str], int | None]:
    exact = {e: i for i, e in enumerate(elements)}
    folded: dict[str, int] = {}
    for i, element in enumerate(elements):
        folded.setdefault(element.rstrip(" ").lower(), i)

    def lookup(value: str) -> int | None:
        found = exact.get(value)
        if found is None:
            found = folded.get(value.rstrip(" ").lower())
        return found

    return lookup


def _convert_enum(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    elements = target.type.elements
    what = _type_name(target.type)
    if not is_string(arr.type):
        return _integers(
            arr, target, 0, len(elements), f"{what} (index 0..{len(elements)})"
        ).to_pylist()
    lookup = _member_lookup(elements)
    encoded = arr.dictionary_encode()
    indexes = []
    for value in encoded.dictionary.to_pylist():
        found = lookup(value)
        if found is None:
            if value == "":
                indexes.append(0)
                continue
            raise target.value_error(value, f"is not a member of {what}")
        indexes.append(found + 1)
    return [None if i is None else indexes[i] for i in encoded.indices.to_pylist()]


def _convert_set(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    elements = target.type.elements
    what = _type_name(target.type)
    high = (1 << len(elements)) - 1
    kind = arr.type
    lookup = _member_lookup(elements)

    def mask(members: list[str], shown: object) -> int:
        bits = 0
        for member in members:
            found = lookup(member)
            if found is None:
                raise target.value_error(shown, f"has {member!r}, which is not a member of {what}")
            bits |= 1 << found
        return bits

    if is_string(kind):
        encoded = arr.dictionary_encode()
        masks = [mask(v.split(",") if v else [], v) for v in encoded.dictionary.to_pylist()]
        return [None if i is None else masks[i] for i in encoded.indices.to_pylist()]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        if not is_string(kind.value_type):
            raise target.type_error(kind, "a string, list of strings or integer column")
        return [
            None if v is None else mask([m for m in v if m is not None], v) for v in arr.to_pylist()
        ]
    return _integers(arr, target, 0, high, f"{what} (bitmask 0..{high})").to_pylist()


# JSON ------------------------------------------------------------------------------------


def _convert_json(arr: pa.Array, target: ColumnTarget) -> ConvertedColumn:
    kind = arr.type
    zone = zone_info(target.time_zone)
    out: list[str | None] = []
    if is_string(kind) or _is_binary(kind):
        for value in arr.to_pylist():
            if value is None:
                out.append(None)
                continue
            try:
                text = value.decode() if isinstance(value, bytes) else value
                parsed = json.loads(text, parse_constant=_reject_constant)
            except (ValueError, UnicodeDecodeError):
                raise target.value_error(value, "is not valid JSON text") from None
            out.append(_json_text(parsed, zone, target))
        return out
    for value in arr.to_pylist(maps_as_pydicts="lossy"):
        out.append(None if value is None else _json_text(value, zone, target))
    return out


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _json_text(value: object, zone: dt.tzinfo, target: ColumnTarget) -> str:
    """TiDB canonical JSON text of a parsed value or an Arrow struct/map/list value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 64):
            return str(value)
        value = float(value)  # TiDB keeps numbers beyond int64/uint64 as float64
    if isinstance(value, decimal.Decimal):
        value = float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise target.value_error(value, "cannot be stored in JSON (NaN or infinity)")
        return json_float(value)
    if isinstance(value, str):
        return tidb_json_quote(value)
    if isinstance(value, dict):
        items = sorted((_json_key(k), v) for k, v in value.items())
        return (
            "{"
            + ", ".join(f"{tidb_json_quote(k)}: {_json_text(v, zone, target)}" for k, v in items)
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_json_text(v, zone, target) for v in value) + "]"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(zone).replace(tzinfo=None)
        return tidb_json_quote(value.strftime("%Y-%m-%d %H:%M:%S.%f"))
    if isinstance(value, dt.date):
        return tidb_json_quote(value.isoformat())
    if isinstance(value, dt.time):
        return tidb_json_quote(value.strftime("%H:%M:%S.%f"))
    if isinstance(value, dt.timedelta):
        micros = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
        return tidb_json_quote(_format_time(micros, 6))
    if isinstance(value, bytes | bytearray):
        # TiDB's opaque JSON value for a VARBINARY (type 253), as CAST(binary AS JSON).
        return f'"base64:type253:{base64.b64encode(bytes(value)).decode()}"'
    raise target.value_error(value, "cannot be rendered as JSON")


def _json_key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


# --- helpers -----------------------------------------------------------------------------

_ALIASES = {
    "integer": "int",
    "int1": "tinyint",
    "int2": "smallint",
    "int3": "mediumint",
    "middleint": "mediumint",
    "int4": "int",
    "int8": "bigint",
    "bool": "tinyint",
    "boolean": "tinyint",
    "numeric": "decimal",
    "dec": "decimal",
    "fixed": "decimal",
    "real": "double",
    "double precision": "double",
    "float4": "float",
    "float8": "double",
    "character": "char",
    "character varying": "varchar",
}

_CONVERTERS: dict[str, Callable[[pa.Array, ColumnTarget], ConvertedColumn]] = {
    **dict.fromkeys(_INT_BITS, _convert_int),
    "year": _convert_year,
    "bit": _convert_bit,
    "float": _convert_float,
    "double": _convert_float,
    "decimal": _convert_decimal,
    "date": _convert_date,
    "datetime": _convert_datetime,
    "timestamp": _convert_datetime,
    "time": _convert_time,
    **dict.fromkeys(
        ("char", "varchar", "tinytext", "text", "mediumtext", "longtext"), _convert_text
    ),
    **dict.fromkeys(
        ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"), _convert_binary
    ),
    "enum": _convert_enum,
    "set": _convert_set,
    "json": _convert_json,
}

_TEMPORAL = frozenset({"datetime", "timestamp", "time"})


def _base(kind: MySQLType) -> str:
    base = kind.base.lower()
    return _ALIASES.get(base, base)


def _type_name(kind: MySQLType) -> str:
    """The type as errors show it: `tinyint unsigned`, `decimal(10,2)`, `varchar(20)`."""
    base = _base(kind)
    if kind.elements:
        text = base + "(" + ",".join("'" + e.replace("'", "''") + "'" for e in kind.elements) + ")"
        if len(text) > 60:
            text = text[:56] + "...)"
    elif base in _INT_BITS:
        text = base
    elif base in _TEMPORAL:
        text = f"{base}({kind.decimal})" if kind.decimal else base
    elif kind.length is not None and kind.decimal is not None:
        text = f"{base}({kind.length},{kind.decimal})"
    elif kind.length is not None:
        text = f"{base}({kind.length})"
    else:
        text = base
    return text + " unsigned" if kind.unsigned else text


def shown_value(value: object) -> str:
    """A value as errors show it: short, never a whole row."""
    if value is None:
        return "NULL"
    if isinstance(value, str | bytes):
        text = repr(value[:40])
        return text + f"... ({len(value)} long)" if len(value) > 40 else text
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def plain_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A single, non-dictionary Arrow array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def is_string(kind: pa.DataType) -> bool:
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or (pa.types.is_string_view(kind))
    )


def _is_binary(kind: pa.DataType) -> bool:
    return (
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
        or pa.types.is_binary_view(kind)
    )


def _is_large(kind: pa.DataType) -> bool:
    return pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode()
    except UnicodeDecodeError:
        return False
    return True


def min_max(arr: pa.Array) -> tuple[Any, Any]:
    result = pc.min_max(arr)
    return result["min"].as_py(), result["max"].as_py()


def max_value(arr: pa.Array) -> Any:
    return pc.max(arr).as_py()


def _first_where(arr: pa.Array, mask: pa.Array) -> Any:
    """The first value of `arr` where `mask` is true."""
    position = pc.index(pc.fill_null(mask, False), True).as_py()
    return arr[position].as_py()


def first_text(arr: pa.Array, mask: pa.Array) -> str:
    """The first value of `arr` where `mask` is true, as Arrow prints it (for values that
    Python's date types cannot hold)."""
    position = pc.index(pc.fill_null(mask, False), True).as_py()
    return pc.cast(arr.slice(position, 1), pa.string())[0].as_py()


def _cast(arr: pa.Array, to: pa.DataType, target: ColumnTarget, problem: str) -> pa.Array:
    """A checked cast; a value that does not convert becomes an InputError naming it."""
    try:
        return pc.cast(arr, to)
    except pa.ArrowInvalid as exc:
        for position in range(len(arr)):
            try:
                pc.cast(arr.slice(position, 1), to)
            except pa.ArrowInvalid:
                raise target.value_error(arr[position].as_py(), problem) from exc
        raise target.value_error("?", problem) from exc

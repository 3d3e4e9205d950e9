"""MySQL value rendering shared by every protocol: Go `strconv` float formatting, the value
kind of each MySQL type, BIT values and TiDB's default charsets.

Encoders dispatch on `ValueKind` (one lookup per column when an encoder is built, never per
value). This module knows MySQL/TiDB and Go formatting rules; it knows no wire format.
"""

from __future__ import annotations

import enum
import math
import struct
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import (
    BINARY_TYPES,
    INTEGER_TYPES,
    TEXT_TYPES,
    Column,
    MySQLType,
    default_collation,
)

__all__ = [
    "ValueKind",
    "bit_default_to_int",
    "bit_text",
    "bit_to_int",
    "charset_of",
    "collation_of",
    "format_float",
    "float_text",
    "format_float_exp",
    "shortest_digits",
    "str_value",
    "to_float32",
    "value_kind",
]


class ValueKind(enum.Enum):
    """How a column's mounter value (events.py) is represented, by MySQL type."""

    INT = "int"  # signed integer types and YEAR
    UINT = "uint"  # unsigned integer types
    FLOAT32 = "float32"  # FLOAT
    FLOAT64 = "float64"  # DOUBLE
    DECIMAL = "decimal"  # DECIMAL: str with exactly `scale` fraction digits
    DATE = "date"
    DATETIME = "datetime"
    TIMESTAMP = "timestamp"
    TIME = "time"
    ENUM = "enum"  # 1-based index
    SET = "set"  # bitmask
    BIT = "bit"  # unsigned integer
    JSON = "json"  # TiDB canonical JSON text
    TEXT = "text"  # char/varchar/text types: str
    BINARY = "binary"  # binary/varbinary/blob types: bytes
    VECTOR = "vector"  # text form "[1,2,3]"


_KINDS: dict[str, ValueKind] = {
    **{name: ValueKind.INT for name in INTEGER_TYPES},
    "year": ValueKind.INT,
    "float": ValueKind.FLOAT32,
    "double": ValueKind.FLOAT64,
    "decimal": ValueKind.DECIMAL,
    "date": ValueKind.DATE,
    "datetime": ValueKind.DATETIME,
    "timestamp": ValueKind.TIMESTAMP,
    "time": ValueKind.TIME,
    "enum": ValueKind.ENUM,
    "set": ValueKind.SET,
    "bit": ValueKind.BIT,
    "json": ValueKind.JSON,
    "vector": ValueKind.VECTOR,
    **{name: ValueKind.TEXT for name in TEXT_TYPES},
    **{name: ValueKind.BINARY for name in BINARY_TYPES},
}


def value_kind(column: Column) -> ValueKind:
    """The value kind of a column from its MySQL type.

    Raises:
        SchemaError: the type is not one TiCDC replicates as a value.
    """
    kind = _KINDS.get(column.type.base)
    if kind is None:
        allowed = ", ".join(sorted(_KINDS))
        raise SchemaError(
            f"column {column.name} has MySQL type {column.type.base!r}, which the codec cannot "
            f"encode; use one of {allowed}",
            column=column.name,
        )
    if kind is ValueKind.INT and column.type.unsigned and column.type.base != "year":
        return ValueKind.UINT
    return kind


# TiDB's defaults: numeric, temporal, JSON and BIT columns have charset and collation
# `binary`; string columns default to utf8mb4 / utf8mb4_bin (TiDB's default collation for
# utf8mb4, unlike MySQL 8's utf8mb4_0900_ai_ci).
# build_table_schema fills these in; the fallbacks serve hand-built schemas.
_STRING_BASES = TEXT_TYPES | {"enum", "set"}


def charset_of(mysql_type: MySQLType) -> str:
    """The column charset TiDB records (`ColumnInfo.GetCharset()`)."""
    if mysql_type.charset:
        return mysql_type.charset
    if mysql_type.collation:
        return mysql_type.collation.split("_", 1)[0]
    return "utf8mb4" if mysql_type.base in _STRING_BASES else "binary"


def collation_of(mysql_type: MySQLType) -> str:
    """The column collation TiDB records (`ColumnInfo.GetCollate()`)."""
    if mysql_type.collation:
        return mysql_type.collation
    charset = charset_of(mysql_type)
    return default_collation(charset)


def bit_to_int(value: int | bytes | bytearray | memoryview) -> int:
    """A BIT value as the unsigned integer TiCDC carries (big-endian bit string)."""
    if isinstance(value, int):
        return int(value)
    return int.from_bytes(bytes(value), "big")


def bit_default_to_int(default: str) -> int:
    """A BIT column's default as Simple's tableSchema writes it: a JSON number (tiflow
    simple/message.go newColumnSchema, common.MustBinaryLiteralToInt). The schema model
    keeps BIT defaults as the decimal string of their value (b'101' -> "5").

    Raises:
        ValueError: the default is not a non-negative decimal integer.
    """
    value = int(default)
    if value < 0:
        raise ValueError(f"negative BIT default {default!r}")
    return value


# --- Go strconv float formatting ----------------------------------------------------------

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")


def to_float32(value: float) -> float:
    """Round a float to the nearest float32, as Go's float32(v) conversion.

    Raises:
        OverflowError: the value is beyond the float32 range.
    """
    return _F32.unpack(_F32.pack(value))[0]


def shortest_digits(value: float, bits: int = 64) -> tuple[str, int]:
    """Go's shortest round-trip decimal digits of a finite float: (digits, exponent) with
    value = 0.digits x 10**exponent (as strconv's decimal), digits without trailing zeros.

    `bits=32` treats the value as a float32 (it must be one) and finds the shortest
    string that reads back as the same float32, closest to the value among equally short
    ones: what Go's Ryu-based `FormatFloat(v, fmt, -1, 32)` prints. Zero is ("0", 1).
    """
    value = abs(value)
    if value == 0.0:
        return "0", 1
    text = repr(value) if bits == 64 else _shortest32(value)
    _, digits, exponent = Decimal(text).normalize().as_tuple()
    numerals = "".join(map(str, digits))
    return numerals, len(numerals) + int(exponent)


@lru_cache(maxsize=4096)
def _shortest32(value: float) -> str:
    """The shortest text of a positive float32 that reads back as it, closest first.

    Python's repr does this for float64 (David Gay's dtoa mode 0, like Go's Ryu). For
    float32, where the float32 neighbours are equally far (mantissa bits not all zero),
    the correctly rounded p-digit string is the closest p-digit string, and if it reads
    back so does the (p+1)-digit one (it is at least as close), so a binary search over
    p = 1..9 finds the shortest (9 digits always read back). Reading back goes through
    float64, which is exact unless the float64 lands exactly on a float32 rounding
    boundary (double rounding); that case, and powers of two, take the exact path.
    """
    if not _U32.unpack(_F32.pack(value))[0] & 0x7FFFFF:
        return _shortest32_exact(value)
    low, high = 1, 9
    found = f"{value:.9g}"
    while low <= high:
        precision = (low + high) // 2
        text = f"{value:.{precision}g}"
        wide = float(text)
        try:
            narrow = _F32.unpack(_F32.pack(wide))[0]
        except OverflowError:  # rounded up past the largest float32: does not read back
            low = precision + 1
            continue
        if _on_float32_boundary(wide, narrow):
            return _shortest32_exact(value)
        if narrow == value:
            found, high = text, precision - 1
        else:
            low = precision + 1
    return found


_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_FLOAT32_MIN_NORMAL = 2.0**-126


def _on_float32_boundary(wide: float, narrow: float) -> bool:
    # Whether a positive float64 is exactly halfway between two float32s; `narrow` is
    # its float32 rounding. In the normal range a float32 keeps 24 of float64's 53
    # mantissa bits, so a halfway value has exactly bit 28 set among the low 29 bits.
    if wide >= _FLOAT32_MIN_NORMAL:
        return _U64.unpack(_F64.pack(wide))[0] & 0x1FFFFFFF == 0x10000000
    if narrow == wide:
        return False
    step = 1 if wide > narrow else -1
    neighbour = _F32.unpack(_U32.pack(_U32.unpack(_F32.pack(narrow))[0] + step))[0]
    return wide - narrow == neighbour - wide  # exact: close values, short mantissas


@lru_cache(maxsize=1024)
def _shortest32_exact(value: float) -> str:
    # At a power of two the gap below is half the gap above, so a p-digit string on the
    # far side of the value may read back where the nearest one does not: try both
    # neighbours of the rounding and compare exactly.
    bits = _U32.unpack(_F32.pack(value))[0]
    exact = Fraction(value)
    below = Fraction(_F32.unpack(_U32.pack(bits - 1))[0])
    if bits + 1 >= 0x7F800000:
        above = Fraction(2**128)
    else:
        above = Fraction(_F32.unpack(_U32.pack(bits + 1))[0])
    low, high = (exact + below) / 2, (exact + above) / 2
    inclusive = bits % 2 == 0  # round-half-even parsing keeps an even mantissa's bounds

    def reads_back(candidate: Fraction) -> bool:
        if inclusive:
            return low <= candidate <= high
        return low < candidate < high

    for precision in range(1, 10):
        rounded = Decimal(f"{value:.{precision - 1}e}")
        step = Decimal(1).scaleb(rounded.adjusted() - precision + 1)
        best: Decimal | None = None
        best_distance: Fraction | None = None
        for candidate in (rounded, rounded - step, rounded + step):
            if candidate <= 0:
                continue
            fraction = Fraction(candidate)
            if not reads_back(fraction):
                continue
            distance = abs(fraction - exact)
            if best_distance is None or distance < best_distance:
                best, best_distance = candidate, distance
        if best is not None:
            return str(best)
    raise AssertionError(f"no float32 representation found for {value!r}")  # unreachable


def format_float(value: float, bits: int = 64) -> str:
    """Go `strconv.FormatFloat(v, 'f', -1, bits)`: shortest round-trip digits in plain
    notation, no exponent, no trailing ".0" (3.14, 95, 0.0000001, 1000000000000000000000;
    negative zero is "-0"). With bits=32 the value is first rounded to float32.

    Raises:
        ValueError: NaN or infinity (callers replace them as TiCDC's mounter does).
        OverflowError: bits=32 and the value is beyond the float32 range.
    """
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"cannot format {value!r} as a MySQL float")
    value = float(value)
    if bits == 32:
        value = to_float32(value)
        text = "0" if value == 0 else _shortest32(abs(value))
        if value < 0 or (value == 0 and math.copysign(1.0, value) < 0):
            text = "-" + text
    else:
        text = repr(value)
    if "e" not in text and "E" not in text:
        # repr and %g already print the shortest digits in plain form here.
        return text[:-2] if text.endswith(".0") else text
    digits, exponent = shortest_digits(value, bits)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if exponent <= 0:
        return f"{sign}0.{'0' * -exponent}{digits}"
    if exponent >= len(digits):
        return f"{sign}{digits}{'0' * (exponent - len(digits))}"
    return f"{sign}{digits[:exponent]}.{digits[exponent:]}"


def format_float_exp(value: float, bits: int = 64) -> str:
    """Go `strconv.FormatFloat(v, 'e', -1, bits)`: "d.ddde±XX" with at least two exponent
    digits (1e-07, 1.5e+21, 0e+00).

    Raises:
        ValueError: NaN or infinity.
    """
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"cannot format {value!r} as a Go float")
    if bits == 32:
        value = to_float32(value)
    digits, exponent = shortest_digits(value, bits)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    power = 0 if digits == "0" else exponent - 1
    return f"{sign}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"


# --- mounter values as TiCDC's text (tiflow simple encodeValue, canal formatValue) -------


def bit_text(value: Any) -> str:
    """A BIT value as the decimal text of its unsigned integer."""
    return int.__repr__(bit_to_int(value))


def float_text(bits: int) -> Callable[[Any], str]:
    """FLOAT (32) / DOUBLE (64) text as Go's `FormatFloat(v, 'f', -1, bits)`."""

    def render(value: Any) -> str:
        if type(value) not in (float, int):
            raise TypeError(f"expected a float, got {type(value).__name__}")
        if math.isnan(value) or math.isinf(value):
            return "0"  # tiflow cdc/entry/mounter.go formatColVal: NaN and ±Inf become 0
        return format_float(value, bits)

    return render


def str_value(value: Any) -> str:
    """A value that is already its text (decimal, temporal, JSON, vector): checked only."""
    if type(value) is not str:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    return value

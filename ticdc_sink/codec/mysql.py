"""MySQL value facts shared by every protocol: the value kind of each MySQL type, BIT
values, TiDB's default charsets, and mounter values as TiCDC's text.

Encoders dispatch on `ValueKind` (one lookup per column when an encoder is built, never per
value). This module knows MySQL/TiDB; Go's text rules are `ticdc_sink.gotext`'s, and it
knows no wire format.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import Any

from ticdc_sink.errors import SchemaError
from ticdc_sink.gotext import format_float
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
    "float_text",
    "VALUE_TEXT",
    "str_value",
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


#: Each kind's mounter value as TiCDC's text where Simple JSON and canal-json agree (tiflow
#: simple `encodeValue`, canal `formatValue`): integers (int.__repr__ refuses anything but
#: an int; bools print as 1/0, as Go's mounter has them), BIT, FLOAT, DOUBLE and the kinds
#: already held as text. Each protocol adds TEXT and BINARY, which they write differently
#: (and TIMESTAMP, which Simple writes with its location).
VALUE_TEXT: dict[ValueKind, Callable[[Any], str]] = {
    ValueKind.INT: int.__repr__,
    ValueKind.UINT: int.__repr__,
    ValueKind.ENUM: int.__repr__,
    ValueKind.SET: int.__repr__,
    ValueKind.BIT: bit_text,
    ValueKind.FLOAT32: float_text(32),
    ValueKind.FLOAT64: float_text(64),
    ValueKind.DECIMAL: str_value,
    ValueKind.DATE: str_value,
    ValueKind.DATETIME: str_value,
    ValueKind.TIME: str_value,
    ValueKind.JSON: str_value,
    ValueKind.VECTOR: str_value,
}

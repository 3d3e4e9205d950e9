"""Columns of value text, as Go prints it, into Arrow arrays holding exactly what the
decoders' parsers give one value at a time (`int`, `float`, Go's float32 rounding,
`Decimal`): the column-wise reads of the text protocols (Simple JSON, canal-json) share
them.

Arrow's casts take more forms than Go writes ("0x10", " 1", "1e2" for an integer, ...), so
a cast is vouched for only when every value has the form Go writes (`matches` with one of
the patterns below); otherwise the caller types the values one by one, as the row path.

Knows Arrow; nothing of a protocol.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "DECIMAL",
    "INTEGER",
    "NUMBER",
    "UNSIGNED",
    "decimal_texts",
    "decimals",
    "enum_members",
    "float32s",
    "matches",
]

# Integers in decimal, floats by strconv.FormatFloat, DECIMALs as MySQL prints them.
INTEGER = r"^-?[0-9]+$"
UNSIGNED = r"^[0-9]+$"
NUMBER = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"
DECIMAL = r"^-?[0-9]+(\.[0-9]+)?$"
# A DECIMAL text that `str(Decimal(text))` gives back unchanged: no leading zeros, and not
# below 1e-6, which Decimal prints in exponent form ("0.0000001" -> "1E-7").
_PLAIN_DECIMAL = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$"
_TINY = r"^-?0\.000000"


def matches(strings: pa.Array, pattern: str) -> bool:
    """Whether every non-null string matches `pattern` (an all-null array does)."""
    return pc.all(pc.match_substring_regex(strings, pattern)).as_py() is not False


def float32s(strings: pa.Array) -> pa.Array:
    """FLOAT values from text that `matches` NUMBER: Go's float32(float64(text)), as the
    parsers (`gotext.to_float32`), rounded twice, never directly.

    Raises:
        OverflowError: a value beyond the float32 range (the parser's error).
    """
    doubles = strings.cast(pa.float64())
    floats = doubles.cast(pa.float32())
    overflow = pc.and_(pc.is_inf(floats), pc.invert(pc.is_inf(doubles)))
    if pc.any(overflow).as_py():
        raise OverflowError("a FLOAT value beyond the float32 range")
    return floats


def enum_members(strings: pa.Array, members: pa.Array) -> pa.Array:
    """ENUM members from index text that `matches` INTEGER; `members` is "" then the
    elements, so an index outside them gives MySQL's "" (`read.rows.value_converter`).

    Raises:
        pyarrow.ArrowInvalid: an index beyond 64 bits.
    """
    indexes = strings.cast(pa.int64())
    inside = pc.and_(pc.greater(indexes, 0), pc.less(indexes, len(members)))
    return members.take(pc.if_else(inside, indexes, 0))


def decimals(strings: pa.Array, kind: pa.Decimal128Type) -> pa.Array | None:
    """DECIMAL(p, s) values from text that `matches` DECIMAL: Arrow's cast where every
    value has at most p - s integer digits (leading zeros aside) and at most s fraction
    digits, so that it is exact (beyond them Arrow's rescaling can overflow silently:
    pyarrow 26 casts "3018027152167.0" to decimal(35, 35) as 0.4974...); None otherwise,
    for the caller to type one by one."""
    whole, scale = kind.precision - kind.scale, kind.scale
    integer = f"0*[0-9]{{1,{whole}}}" if whole else "0+"
    fraction = f"(\\.[0-9]{{1,{scale}}})?" if scale else ""
    if matches(strings, f"^-?{integer}{fraction}$"):
        return strings.cast(kind)
    return None


def decimal_texts(strings: pa.Array) -> pa.Array | None:
    """A DECIMAL column read as text (beyond 38 digits): `str(Decimal(text))` of each
    value, which is the text itself where it is plain (`matches` DECIMAL, no leading
    zeros, not below 1e-6); None where a value is not, for the caller to type one by one."""
    if (
        matches(strings, _PLAIN_DECIMAL)
        and not pc.any(pc.match_substring_regex(strings, _TINY)).as_py()
    ):
        return strings
    return None

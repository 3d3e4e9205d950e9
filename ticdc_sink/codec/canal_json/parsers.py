"""canal-json values typed back from their text, by the column's `mysqlType` entry (its
base name) or its `sqlType` code (the table in `decoder.py`'s docstring): what the
decoder's rows and the read's column-wise runs (`read_columns.py`) both type with, so
both give the same values. The column-wise run tells the parsers apart by identity
(`parse_integer`, ...) to type a column at a time where Arrow gives the same value."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import BINARY_TYPES

__all__ = [
    "Parser",
    "parse_binary",
    "parse_decimal",
    "parse_float32",
    "parse_integer",
    "parse_text",
    "parser_for",
]

#: A column's value text -> its value; raises ValueError or OverflowError for a text it
#: does not take.
Parser = Callable[[str], Any]


def parse_integer(text: str) -> int:
    # Go's strconv.ParseInt/ParseUint: an optional minus and ASCII digits only.
    if not text.isascii() or not text.removeprefix("-").isdigit():
        raise ValueError(f"{text!r} is not an integer")
    return int(text)


def parse_float32(text: str) -> float:
    return to_float32(float(text))


def parse_decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a decimal") from None


def parse_binary(text: str) -> bytes:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(
            "a binary value holds a character above U+00FF, so it is not ISO-8859-1 text"
        ) from None


def parse_text(text: str) -> str:
    return text


_BY_NAME: dict[str, Parser] = {
    **dict.fromkeys(
        ("tinyint", "smallint", "mediumint", "int", "bigint", "year", "enum", "set", "bit"),
        parse_integer,
    ),
    "float": parse_float32,
    "double": float,
    "decimal": parse_decimal,
}
_BY_CODE: dict[int, Parser] = {
    -6: parse_integer,
    5: parse_integer,
    4: parse_integer,
    -5: parse_integer,
    -7: parse_integer,
    7: parse_float32,
    8: float,
    3: parse_decimal,
    2004: parse_binary,
}


def parser_for(mysql_type: str | None, sql_type: int | None = None) -> Parser:
    """The parser of a column's values from its `mysqlType` entry (e.g. `int unsigned`,
    `varchar(16)`), else from its `sqlType` code; text is kept as is by default.

    Raises:
        ValueError: neither is given.
    """
    if mysql_type is not None:
        base = mysql_type
        for i, char in enumerate(mysql_type):
            if char in "( ":
                base = mysql_type[:i]
                break
        base = base.lower()
        # tiflow's IsBinaryMySQLType looks for "blob"/"binary" anywhere in the text, which
        # also matches content-compatible `enum('binary')`; the base name cannot mislead.
        if base in BINARY_TYPES:
            return parse_binary
        return _BY_NAME.get(base, parse_text)
    if sql_type is not None:
        return _BY_CODE.get(sql_type, parse_text)
    raise ValueError("the column has neither a mysqlType nor a sqlType entry")

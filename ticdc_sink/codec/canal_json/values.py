"""canal-json values (tiflow `canal/canal_entry.go` `formatValue`, `getJavaSQLType`;
`utils/mysql_types.go` `GetMySQLType`; `internal/java.go`), shared by the row path (`row`)
and the column-wise path (`batch`): each MySQL value's text, the `mysqlType` and `sqlType`
entries of a column, the constant text of a column selection (`CanalJsonLayout`), and
easyjson's escaping over orjson's output.

Every value is a JSON string (NULL is `null`): integers, ENUM index, SET bitmask and BIT
as decimal text, FLOAT/DOUBLE in Go's shortest `'f'` form (NaN/±Inf as `0`, as TiCDC's
mounter replaces them), DECIMAL/temporal/JSON/VECTOR/text as is, binary bytes as
ISO-8859-1 characters (byte b -> U+00bb). Strings are escaped as easyjson's
`Writer.String` does (`gotext.easyjson_quote`; goccy/go-json agrees for the WATERMARK and
DDL messages).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from ticdc_sink.codec.mysql import VALUE_TEXT, ValueKind, str_value
from ticdc_sink.gotext import easyjson_quote
from ticdc_sink.schema import INTEGER_TYPES, Column, MySQLType, TableSchema

__all__ = [
    "RENDERERS",
    "WATERMARK_TYPE",
    "CanalJsonLayout",
    "Entry",
    "Renderer",
    "full_mysql_type",
    "image_json",
    "java_sql_type",
    "mysql_type",
    "unsigned_promotion",
]

#: The `type` of the watermark message.
WATERMARK_TYPE = "TIDB_WATERMARK"

Renderer = Callable[[Any], str]


# --- mysqlType and sqlType (tiflow utils/mysql_types.go, canal/canal_entry.go) ------------


def _unsigned_flag(t: MySQLType) -> bool:
    # TiDB sets UNSIGNED with ZEROFILL on numeric types.
    return t.unsigned or t.zerofill


def _with_flags(text: str, t: MySQLType) -> str:
    # tiflow utils/field_types.go withUnsigned4MySQLType / withZerofill4MySQLType, and
    # TiDB ColumnInfo.GetTypeDesc: no " unsigned" for bit and year, no " zerofill" for year.
    if _unsigned_flag(t) and t.base not in ("bit", "year"):
        text += " unsigned"
    if t.zerofill and t.base != "year":
        text += " zerofill"
    return text


def mysql_type(column: Column) -> str:
    """The `mysqlType` entry TiCDC writes by default: TiDB's `TypeToStr` name plus
    ` unsigned` / ` zerofill` (tiflow `utils.GetMySQLType(col, false)`)."""
    return _with_flags(column.type.base, column.type)


_OUTPUT_FORMAT = str.maketrans({"\0": "\\0", "'": "''", "\n": "\\n", "\r": "\\r"})
_LENGTH_SHOWN = INTEGER_TYPES | {"bit", "char", "varchar", "binary", "varbinary", "year"}
_DEFAULT_FLOAT_FLEN = {"float": 12, "double": 22}


def full_mysql_type(column: Column) -> str:
    """The `mysqlType` entry with `content-compatible=true`: TiDB's
    `ColumnInfo.GetTypeDesc()` (`FieldType.CompactStr` plus the flags), e.g. `int(11)`,
    `int(10) unsigned`, `decimal(10,4)`, `varchar(16)`, `enum('a','b')`, `datetime(3)`,
    `float(10,3)`, `year(4)`; text, blob, json, date and fsp-0 temporal types carry no
    parameters. Integer display widths are shown (TiDB's default
    `TiDBStrictIntegerDisplayWidth=false`)."""
    t = column.type
    base = t.base
    if base in ("enum", "set"):
        elements = "','".join(e.translate(_OUTPUT_FORMAT) for e in t.elements)
        text = f"{base}('{elements}')"
    elif base in ("datetime", "timestamp", "time"):
        text = f"{base}({t.fsp})" if t.fsp else base
    elif base in _DEFAULT_FLOAT_FLEN:
        # Shown only when the scale is given: float(10,3); float and float(10) are "float".
        if t.decimal:
            flen = t.length if t.length is not None else _DEFAULT_FLOAT_FLEN[base]
            text = f"{base}({flen},{t.decimal})"
        else:
            text = base
    elif base == "decimal":
        text = f"decimal({t.length if t.length is not None else 10},{t.scale})"
    elif base in _LENGTH_SHOWN:
        text = f"{base}({t.flen})"
    elif base == "vector" and t.length is not None:
        text = f"vector({t.length})"
    else:
        text = base
    return _with_flags(text, t)


# java.sql.Types codes (tiflow internal/java.go MySQLType2JavaType).
_JAVA_TYPES: dict[str, int] = {
    "tinyint": -6,  # TINYINT
    "smallint": 5,  # SMALLINT
    "mediumint": 4,  # INTEGER
    "int": 4,
    "bigint": -5,  # BIGINT
    "float": 7,  # REAL
    "double": 8,  # DOUBLE
    "decimal": 3,  # DECIMAL
    "date": 91,
    "time": 92,
    "datetime": 93,  # TIMESTAMP
    "timestamp": 93,
    "year": 12,  # VARCHAR
    "enum": 4,
    "set": -7,  # BIT
    "bit": -7,
    "json": 12,
    "vector": 12,
    "char": 1,  # CHAR
    "varchar": 12,
    "tinytext": 2005,  # CLOB
    "text": 2005,
    "mediumtext": 2005,
    "longtext": 2005,
    "binary": 2004,  # BLOB: every string type with the binary charset
    "varbinary": 2004,
    "tinyblob": 2004,
    "blob": 2004,
    "mediumblob": 2004,
    "longblob": 2004,
}
# Unsigned integers whose value does not fit the signed Java type move one type up
# (tiflow canal_entry.go getJavaSQLType); MEDIUMINT UNSIGNED always fits INTEGER.
_PROMOTIONS: dict[str, tuple[int, int]] = {
    "tinyint": (127, 5),
    "smallint": (32767, 4),
    "int": (2147483647, -5),
    "bigint": (9223372036854775807, 3),
}


def unsigned_promotion(column: Column) -> tuple[int, int] | None:
    """(threshold, promoted code) of an unsigned integer column whose value may not fit its
    signed Java type; None for other columns."""
    t = column.type
    if not _unsigned_flag(t):
        return None
    return _PROMOTIONS.get(t.base)


def java_sql_type(column: Column, value: Any = None) -> int:
    """The `sqlType` code of a column holding `value` (None: the column's base code)."""
    code = _JAVA_TYPES[column.type.base]
    promotion = unsigned_promotion(column)
    if promotion is not None and value is not None and value > promotion[0]:
        return promotion[1]
    return code


# --- value rendering (tiflow canal_entry.go formatValue) --------------------------------
# Renderers return the value's text; orjson writes an image's texts as JSON strings in one
# call and `_easyjson` fixes the few places where orjson's escaping differs from easyjson's.


def _text_value(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        # Go's string([]byte): easyjson writes each invalid UTF-8 byte as \ufffd; the
        # surrogates "surrogateescape" leaves for them make orjson refuse the image, and
        # the slow path (`easyjson_quote`) writes them.
        return bytes(value).decode("utf-8", "surrogateescape")
    raise TypeError(f"expected a str, got {type(value).__name__}")


def _binary_value(value: Any) -> str:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    # tiflow decodes binary bytes as ISO-8859-1 (charmap.ISO8859_1): byte b -> U+00bb.
    return bytes(value).decode("latin-1")


#: The text renderer of each kind.
RENDERERS: dict[ValueKind, Renderer] = {
    **VALUE_TEXT,
    ValueKind.TIMESTAMP: str_value,
    ValueKind.TEXT: _text_value,
    ValueKind.BINARY: _binary_value,
}

# orjson and easyjson agree on `"` `\\` `\n` `\r` `\t`, lowercase `\u00xx` for the other
# C0 controls, raw DEL and raw non-ASCII. orjson writes `\b` `\f` short and `<` `>` `&`
# U+2028 U+2029 raw; easyjson escapes them. Escape pairs are matched first, so `\\b` (an
# escaped backslash, then "b") is left alone; `<` `>` `&` and U+2028/9 only occur inside
# strings, so the byte replacement is exact.
_ORJSON_DIFFERENCES = re.compile(rb"\\.|[<>&]|\xe2\x80[\xa8\xa9]", re.DOTALL)
_EASYJSON = {
    b"\\b": b"\\u0008",
    b"\\f": b"\\u000c",
    b"<": b"\\u003c",
    b">": b"\\u003e",
    b"&": b"\\u0026",
    b"\xe2\x80\xa8": b"\\u2028",
    b"\xe2\x80\xa9": b"\\u2029",
}


def _easyjson_match(match: re.Match[bytes]) -> bytes:
    text = match.group()
    return _EASYJSON.get(text, text)


# Bytes that may start a difference, all mapped to `<`: one translate and one memchr decide
# (measured ~3x cheaper than seven substring tests) whether the exact checks run at all.
_SUSPECTS = bytes.maketrans(b"<>&\\\xe2", b"<<<<<")


def _easyjson(out: bytes) -> bytes:
    """orjson output with easyjson's escaping."""
    if b"<" not in out.translate(_SUSPECTS):
        return out
    if (
        b"<" in out
        or b">" in out
        or b"&" in out
        or b"\\b" in out
        or b"\\f" in out
        or b"\xe2\x80\xa8" in out
        or b"\xe2\x80\xa9" in out
    ):
        return _ORJSON_DIFFERENCES.sub(_easyjson_match, out)
    return out


def image_json(values: dict[str, str | None]) -> bytes:
    """`[{"name":"text",…}]` as easyjson writes it."""
    try:
        return _easyjson(orjson.dumps([values]))
    except orjson.JSONEncodeError:  # lone surrogates: invalid UTF-8 in text bytes
        body = ",".join(
            easyjson_quote(name) + ":" + ("null" if text is None else easyjson_quote(text))
            for name, text in values.items()
        )
        return ("[{" + body + "}]").encode()


#: (column name, position in the row, renderer)
Entry = tuple[str, int, Renderer]


class CanalJsonLayout:
    """The constant text of one column selection (all columns, or the handle key only)."""

    def __init__(self, table: TableSchema, positions: list[int], entries: list[Entry]) -> None:
        columns = [table.columns[i] for i in positions]
        self.entries = [entries[i] for i in positions]
        # (position, quoted key + ":", threshold, promoted code, base code)
        self.promotions: list[tuple[int, str, int, int, int]] = []
        codes: list[tuple[str, int]] = []
        for i, column in zip(positions, columns, strict=True):
            key = easyjson_quote(column.name) + ":"
            code = java_sql_type(column)
            codes.append((key, code))
            promotion = unsigned_promotion(column)
            if promotion is not None:
                self.promotions.append((i, key, promotion[0], promotion[1], code))
        self.codes = codes
        # tiflow writes `null` for an empty sqlType; mysqlType is a non-nil map: `{}`.
        self.sql_type = (
            "{" + ",".join(f"{key}{code}" for key, code in codes) + "}" if codes else "null"
        ).encode()

    def sql_type_for(self, image: tuple[Any, ...]) -> bytes:
        """`sqlType` for an image: the constant text unless an unsigned value is promoted."""
        if not self.promotions:
            return self.sql_type
        promoted: dict[str, int] = {}
        for i, key, threshold, code, _ in self.promotions:
            value = image[i]
            if value is not None and value > threshold:
                promoted[key] = code
        if not promoted:
            return self.sql_type
        text = ",".join(f"{key}{promoted.get(key, code)}" for key, code in self.codes)
        return ("{" + text + "}").encode()

"""open-protocol columns (tiflow `pkg/sink/codec/internal/column.go`, `Column`, and
`cdc/model/schema_storage.go`, `initColumnsFlag`), shared by the row path (`row`) and the
column-wise path (`batch`): each column's MySQL type code and TiCDC column flags, and each
mounter value as the Go JSON `encoding/json` writes for `Column.Value`.

A column is `{"t":<type code>,"h":true,"f":<flags>,"v":<value>}` (`h` only on handle-key
columns, a deprecated twin of flag bit 2). Values: integers, ENUM index, SET bitmask and
BIT as JSON numbers; FLOAT and DOUBLE as Go writes a float32 / float64 (NaN and ±Inf as
0, as TiCDC's mounter replaces them); DECIMAL, temporal, JSON and VECTOR text as JSON
strings; CHAR and VARCHAR as strings, BINARY and VARBINARY as the inside of Go's
`strconv.Quote` (`gotext.go_quote`); TEXT and BLOB types, which TiDB hands over as
`[]byte` and the codec leaves so, as Go writes `[]byte`: standard base64.
"""

from __future__ import annotations

import base64
import enum
import math
from collections.abc import Callable
from typing import Any

import attrs

from ticdc_sink.codec.mysql import ValueKind, bit_text, charset_of, str_value, value_kind
from ticdc_sink.gotext import go_quote, json_float, json_quote
from ticdc_sink.schema import Column, TableSchema

__all__ = [
    "BINARY_FLAG",
    "HANDLE_KEY_FLAG",
    "MULTIPLE_KEY_FLAG",
    "NULLABLE_FLAG",
    "PRIMARY_KEY_FLAG",
    "UNIQUE_KEY_FLAG",
    "UNSIGNED_FLAG",
    "ColumnEntry",
    "FastText",
    "Renderer",
    "column_flags",
    "column_type_code",
    "same_text",
    "table_entries",
]

# tiflow cdc/model/sink.go ColumnFlagType, bit by bit (GeneratedColumnFlag, 4, is never set
# here: generated columns are not modelled).
BINARY_FLAG = 1
HANDLE_KEY_FLAG = 2
PRIMARY_KEY_FLAG = 8
UNIQUE_KEY_FLAG = 16
MULTIPLE_KEY_FLAG = 32
NULLABLE_FLAG = 64
UNSIGNED_FLAG = 128

# TiDB parser/mysql type codes (`mysql.TypeTiny` ...) of each `TypeToStr` name.
_TYPE_CODES = {
    "tinyint": 1,
    "smallint": 2,
    "int": 3,
    "float": 4,
    "double": 5,
    "timestamp": 7,
    "bigint": 8,
    "mediumint": 9,
    "date": 10,
    "time": 11,
    "datetime": 12,
    "year": 13,
    "varchar": 15,
    "varbinary": 15,
    "bit": 16,
    "vector": 225,
    "json": 245,
    "decimal": 246,
    "enum": 247,
    "set": 248,
    "tinytext": 249,
    "tinyblob": 249,
    "mediumtext": 250,
    "mediumblob": 250,
    "longtext": 251,
    "longblob": 251,
    "text": 252,
    "blob": 252,
    "char": 254,
    "binary": 254,
}
# Types internal.Column.FromRowChangeColumn turns from []byte into a Go string.
_STRING_TYPES = frozenset({"char", "varchar", "binary", "varbinary"})

#: A mounter value (not None) -> its JSON text.
Renderer = Callable[[Any], str]


class FastText(enum.Enum):
    """What the column-wise path may render without calling `render` per value: Arrow's
    text of an integer or double column is Go's (a double's only without an exponent),
    and a JSON string of text that needs no escaping is the text quoted."""

    NONE = "none"
    INTEGER = "integer"
    DOUBLE = "double"
    STRING = "string"


def column_type_code(column: Column) -> int:
    """The MySQL type code TiCDC writes as `t`."""
    code = _TYPE_CODES.get(column.type.base)
    if code is None:
        value_kind(column)  # raises the SchemaError naming the type
        raise AssertionError(column.type.base)  # every kind has a code
    return code


def column_flags(table: TableSchema, column: Column) -> int:
    """TiCDC's `ColumnFlagType` of a column (tiflow `initColumnsFlag`): binary charset,
    handle key, primary key, unique key, multiple key (a column of a several-column index,
    or the first of a plain index, as TiDB marks it), nullable, unsigned (TiDB sets it on
    YEAR and BIT, and ZEROFILL implies it)."""
    t = column.type
    name = column.name
    flags = 0
    if charset_of(t) == "binary":
        flags |= BINARY_FLAG
    if name in table.handle_key:
        flags |= HANDLE_KEY_FLAG
    for index in table.tidb_indexes:
        if name not in index.columns:
            continue
        if not (index.primary or index.unique) and index.columns[0] == name:
            flags |= MULTIPLE_KEY_FLAG
        if len(index.columns) > 1:
            flags |= MULTIPLE_KEY_FLAG
        if index.unique and not index.primary:
            flags |= UNIQUE_KEY_FLAG
    if name in table.primary_key:
        flags |= PRIMARY_KEY_FLAG
    if column.nullable:
        flags |= NULLABLE_FLAG
    if t.unsigned or t.zerofill or t.base in ("year", "bit"):
        flags |= UNSIGNED_FLAG
    return flags


def _float(bits: int) -> Renderer:
    def render(value: Any) -> str:
        if type(value) not in (float, int):
            raise TypeError(f"expected a float, got {type(value).__name__}")
        if math.isnan(value) or math.isinf(value):
            return "0"  # tiflow cdc/entry/mounter.go formatColVal: NaN and ±Inf become 0
        return json_float(value, bits)

    return render


def _text(value: Any) -> str:
    return json_quote(str_value(value))


def _utf8(value: Any) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a str, got {type(value).__name__}")
    return value.encode("utf-8", "surrogatepass")


def _bytes(value: Any) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    return bytes(value)


def _base64_text(value: Any) -> str:
    return '"' + base64.b64encode(_utf8(value)).decode("ascii") + '"'


def _base64_bytes(value: Any) -> str:
    return '"' + base64.b64encode(_bytes(value)).decode("ascii") + '"'


def _quoted_bytes(value: Any) -> str:
    return json_quote(go_quote(_bytes(value)))


_RENDERERS: dict[ValueKind, Renderer] = {
    # int.__repr__ refuses anything but an int (bools print as 1/0, as the mounter has them).
    ValueKind.INT: int.__repr__,
    ValueKind.UINT: int.__repr__,
    ValueKind.ENUM: int.__repr__,
    ValueKind.SET: int.__repr__,
    ValueKind.BIT: bit_text,
    ValueKind.FLOAT32: _float(32),
    ValueKind.FLOAT64: _float(64),
    ValueKind.DECIMAL: _text,
    ValueKind.DATE: _text,
    ValueKind.DATETIME: _text,
    ValueKind.TIMESTAMP: _text,
    ValueKind.TIME: _text,
    ValueKind.JSON: _text,
    ValueKind.VECTOR: _text,
}


_FAST = {
    ValueKind.INT: FastText.INTEGER,
    ValueKind.UINT: FastText.INTEGER,
    ValueKind.ENUM: FastText.INTEGER,
    ValueKind.SET: FastText.INTEGER,
    ValueKind.FLOAT64: FastText.DOUBLE,
    ValueKind.DECIMAL: FastText.STRING,
    ValueKind.DATE: FastText.STRING,
    ValueKind.DATETIME: FastText.STRING,
    ValueKind.TIMESTAMP: FastText.STRING,
    ValueKind.TIME: FastText.STRING,
    ValueKind.JSON: FastText.STRING,
    ValueKind.VECTOR: FastText.STRING,
}


def _fast(column: Column) -> FastText:
    kind = value_kind(column)
    if kind is ValueKind.TEXT:
        return FastText.STRING if column.type.base in _STRING_TYPES else FastText.NONE
    return _FAST.get(kind, FastText.NONE)


def _renderer(column: Column) -> Renderer:
    kind = value_kind(column)
    if kind is ValueKind.TEXT:
        return _text if column.type.base in _STRING_TYPES else _base64_text
    if kind is ValueKind.BINARY:
        return _quoted_bytes if column.type.base in _STRING_TYPES else _base64_bytes
    return _RENDERERS[kind]


@attrs.frozen
class ColumnEntry:
    """One column as open-protocol writes it: `head` is its map entry up to the value
    (`"name":{"t":…,"h":true,"f":…,"v":`, then the value's JSON text from `render` and
    `}`)."""

    name: str
    position: int
    head: str
    flags: int
    render: Renderer
    is_float: bool = False
    fast: FastText = FastText.NONE

    @property
    def is_handle_key(self) -> bool:
        return bool(self.flags & HANDLE_KEY_FLAG)


def table_entries(table: TableSchema) -> list[ColumnEntry]:
    """The table's columns in the order Go writes a map: by name, bytewise.

    Raises:
        SchemaError: a column type TiCDC does not replicate.
    """
    entries = []
    for position, column in enumerate(table.columns):
        flags = column_flags(table, column)
        handle = ',"h":true' if flags & HANDLE_KEY_FLAG else ""
        head = (
            f'{json_quote(column.name)}:{{"t":{column_type_code(column)}{handle},"f":{flags},"v":'
        )
        is_float = column.type.base in ("float", "double")
        render, fast = _renderer(column), _fast(column)
        entries.append(ColumnEntry(column.name, position, head, flags, render, is_float, fast))
    entries.sort(key=lambda e: e.name.encode("utf-8", "surrogatepass"))
    return entries


def same_text(entry: ColumnEntry, old: str | None, new: str | None) -> bool:
    """Whether an old and a new value are equal as Go compares them
    (`codec.IsColumnValueEqual`), given their texts (NULL: None in the row path, "null"
    in the column-wise one; no value renders as "null"): texts are equal exactly when the
    values are, but for a float's -0, which Go finds equal to 0."""
    if old == new:
        return True
    return entry.is_float and {old, new} == {"0", "-0"}

"""The table model every protocol encodes from: MySQL column types, columns, indexes and the
handle key, as TiDB's `TableInfo` holds them; and how that model is built from a Spark schema,
the `column-types` option and a `CREATE TABLE` statement (`table-ddl`).

This module knows MySQL and TiDB rules (default lengths, charsets, defaults, handle-key
selection); it knows nothing of Kafka or of any wire format. `pyspark.sql.types` is used only
for the Spark -> MySQL type mapping, which needs no SparkSession.

Precedence when building a table (later wins): the default Spark mapping < StructField
metadata `mysql_type` < option `column-types` < option `table-ddl`.
"""

from __future__ import annotations

import decimal
import functools
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import attrs
import pyspark.sql.types as T
import sqlglot
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from ticdc_sink import tso
from ticdc_sink.errors import SchemaError
from ticdc_sink.gotext import format_float

__all__ = [
    "BINARY_TYPES",
    "Column",
    "ColumnDefinition",
    "DEFAULT_CHARSET",
    "DEFAULT_COLLATION",
    "INTEGER_TYPES",
    "MYSQL_TYPE_METADATA",
    "Index",
    "MySQLType",
    "ParsedDDL",
    "TABLE_METADATA",
    "TEXT_TYPES",
    "TableSchema",
    "build_table_schema",
    "canonical_type",
    "column_definition_sql",
    "declared_table",
    "default_collation",
    "normalize_default",
    "parse_column_definition",
    "parse_mysql_type",
    "parse_table_ddl",
    "resolve_type",
    "spark_to_mysql",
    "stable_table_id",
    "stable_version",
    "table_schema_from_json",
    "table_schema_to_json",
]

INTEGER_TYPES = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})
# Names as TiDB's `TypeToStr` prints them: with charset binary the text names become these.
TEXT_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})
BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})

_TEMPORAL_FSP_TYPES = frozenset({"datetime", "timestamp", "time"})
_FLOAT_TYPES = frozenset({"float", "double"})
_ELEMENT_TYPES = frozenset({"enum", "set"})
# Types whose charset is the column's (TiDB `typesNeedCharset`); every other type is `binary`.
_CHARSET_TYPES = TEXT_TYPES | _ELEMENT_TYPES
_TEXT_TO_BINARY = {
    "char": "binary",
    "varchar": "varbinary",
    "tinytext": "tinyblob",
    "text": "blob",
    "mediumtext": "mediumblob",
    "longtext": "longblob",
}
_LOB_MAX = {
    "tinytext": 255,
    "tinyblob": 255,
    "text": 65535,
    "blob": 65535,
    "mediumtext": 16777215,
    "mediumblob": 16777215,
    "longtext": 4294967295,
    "longblob": 4294967295,
}
# TiDB `mysql.defaultLengthAndDecimal` (flen when the length is unspecified).
_DEFAULT_FLEN = {
    "bit": 1,
    "tinyint": 4,
    "smallint": 6,
    "mediumint": 9,
    "int": 11,
    "bigint": 20,
    "double": 22,
    "float": 12,
    "decimal": 10,
    "time": 10,
    "date": 10,
    "timestamp": 19,
    "datetime": 19,
    "year": 4,
    "char": 1,
    "binary": 1,
    "json": 4294967295,
    **_LOB_MAX,
}

DEFAULT_CHARSET = "utf8mb4"
DEFAULT_COLLATION = "utf8mb4_bin"
_BINARY_CHARSET = "binary"
# TiDB `charset.GetDefaultCollation` and the bytes per character (`Maxlen`) of the charsets
# TiDB supports.
_CHARSETS = {
    "utf8mb4": ("utf8mb4_bin", 4),
    "utf8": ("utf8_bin", 3),
    "utf8mb3": ("utf8_bin", 3),
    "latin1": ("latin1_bin", 1),
    "ascii": ("ascii_bin", 1),
    "binary": ("binary", 1),
    "gbk": ("gbk_chinese_ci", 2),
    "gb18030": ("gb18030_chinese_ci", 4),
}

_MAX_VARCHAR = 65535

# The Spark field metadata the writer reads and a read writes: a column's definition
# (`parse_column_definition`); the table a read returned, on its `_table` column
# (`declared_table`).
MYSQL_TYPE_METADATA = "mysql_type"
TABLE_METADATA = "ticdc_table"


def default_collation(charset: str) -> str:
    """TiDB's default collation of a charset (`<charset>_bin` for one TiDB does not list)."""
    known = _CHARSETS.get(charset)
    return known[0] if known else f"{charset}_bin"


@attrs.frozen
class MySQLType:
    """A column type as `SHOW CREATE TABLE` states it.

    `base` is TiDB's `TypeToStr` name (`int`, `varchar`, `varbinary`, `decimal`, ...);
    `length` is the declared length (`varchar(255)`, `decimal(10,2)`, `bit(5)`) or None
    when unspecified; `decimal` is the decimal scale or, for datetime/timestamp/time, the
    fractional seconds precision (fsp), or None when unspecified. `charset`/`collation`
    are None when unspecified; `build_table_schema` fills them in as TiDB does (the
    table's for char/text/enum/set types, `binary` for every other type).
    """

    base: str
    length: int | None = None
    decimal: int | None = None
    unsigned: bool = False
    zerofill: bool = False
    elements: tuple[str, ...] = ()
    charset: str | None = None
    collation: str | None = None

    @property
    def is_integer(self) -> bool:
        return self.base in INTEGER_TYPES

    @property
    def is_binary(self) -> bool:
        """A string type whose charset is `binary` (TiCDC renders these as bytes)."""
        return self.base in BINARY_TYPES

    @property
    def is_text(self) -> bool:
        return self.base in TEXT_TYPES

    @property
    def flen(self) -> int:
        """TiDB's `FieldType.Flen`: the declared length, else TiDB's default for the type.

        Unsigned integers but bigint are one shorter (TiDB issue #4684); datetime,
        timestamp and time add `fsp + 1` when fsp > 0; enum is its longest element and set
        the length of its elements joined by commas (bytes); -1 where TiDB has no length
        (a vector without dimension, an enum without elements).
        """
        base = self.base
        if base in _TEMPORAL_FSP_TYPES:
            width = _DEFAULT_FLEN[base]
            return width + self.fsp + 1 if self.fsp > 0 else width
        if base in _ELEMENT_TYPES:
            sizes = [len(e.encode()) for e in self.elements]
            if not sizes:
                return -1
            return max(sizes) if base == "enum" else sum(sizes) + len(sizes) - 1
        if self.length is not None:
            return self.length
        if base in _DEFAULT_FLEN:
            flen = _DEFAULT_FLEN[base]
            if self.unsigned and base in INTEGER_TYPES and base != "bigint":
                flen -= 1
            return flen
        return -1

    @property
    def scale(self) -> int:
        """The decimal scale of a DECIMAL (0 when unspecified); 0 for other types."""
        if self.base == "decimal":
            return self.decimal or 0
        return 0

    @property
    def fsp(self) -> int:
        """Fractional seconds precision of DATETIME, TIMESTAMP and TIME (0 by default)."""
        if self.base in _TEMPORAL_FSP_TYPES:
            return self.decimal or 0
        return 0

    @property
    def tidb_decimal(self) -> int:
        """TiDB's `FieldType.Decimal`: scale or fsp; -1 for FLOAT/DOUBLE without one."""
        if self.base in _FLOAT_TYPES:
            return -1 if self.decimal is None else self.decimal
        if self.base == "decimal":
            return self.scale
        return self.fsp

    def to_sql(self) -> str:
        """The type as `SHOW CREATE TABLE` prints it; `parse_mysql_type` reads it back."""
        text = self.base
        if self.base in _ELEMENT_TYPES:
            text += "(" + ",".join(_quote(e) for e in self.elements) + ")"
        elif self.base in _TEMPORAL_FSP_TYPES:
            if self.decimal is not None:
                text += f"({self.decimal})"
        elif self.length is not None:
            if self.decimal is not None and self.base in (_FLOAT_TYPES | {"decimal"}):
                text += f"({self.length},{self.decimal})"
            else:
                text += f"({self.length})"
        if self.unsigned:
            text += " unsigned"
        if self.zerofill:
            text += " zerofill"
        if self.charset is not None and self.charset != _BINARY_CHARSET:
            text += f" CHARACTER SET {self.charset}"
        if self.collation is not None and self.collation != _BINARY_CHARSET:
            text += f" COLLATE {self.collation}"
        return text


@attrs.frozen
class Column:
    """One table column. `default` is TiDB's `DefaultValue` string (None: no default).

    Default forms: numbers in canonical decimal form (`"5"`, `"-1.50"` with exactly the
    DECIMAL scale, floats Go-`'f'`-style `"1.5"`), strings/enum/set/temporal literals as
    written (`SHOW CREATE TABLE` prints them canonical), `"CURRENT_TIMESTAMP"` for
    CURRENT_TIMESTAMP/NOW() with any fsp, BIT as the decimal string of its integer value
    (`b'101'` -> `"5"`; TiDB keeps the raw bytes: Simple JSON writes the number, Avro the
    minimal big-endian bytes), other expressions as their SQL text.
    """

    name: str
    type: MySQLType
    nullable: bool = True
    default: str | None = None
    column_id: int = 0


@attrs.frozen
class Index:
    """A TiDB index. The primary key is named `PRIMARY`; unnamed keys take their first
    column's name, as TiDB names them."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False
    primary: bool = False


@attrs.frozen
class TableSchema:
    """A table as the protocols need it: columns in definition order, indexes, ids.

    `table_id` is the physical table id and `version` the schema version (TiDB's
    `UpdateTS`, a TSO) that the protocols put on the wire. `indexes` holds every index in
    definition order, the primary key (named `PRIMARY`) included even when it is the row
    handle; `tidb_indexes` is the list TiDB keeps. `pk_clustered` is the
    `/*T![clustered_index] CLUSTERED|NONCLUSTERED */` marker of the DDL (None: not stated,
    so an integer primary key is the row handle, TiDB's default).
    """

    database: str
    table: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...] = ()
    table_id: int = 0
    version: int = 0
    pk_clustered: bool | None = None

    @functools.cached_property
    def _positions(self) -> dict[str, int]:
        return {c.name: i for i, c in enumerate(self.columns)}

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        """The column named `name`.

        Raises:
            SchemaError: the table has no such column.
        """
        try:
            return self.columns[self._positions[name]]
        except KeyError:
            raise SchemaError(
                f"table {self.database}.{self.table} has no column {name!r}; columns are "
                f"{', '.join(self.column_names)}",
                column=name,
            ) from None

    def column_position(self, name: str) -> int:
        """The 0-based position of a column in `columns` (row tuples use this order)."""
        self.column(name)
        return self._positions[name]

    @property
    def primary_key(self) -> tuple[str, ...]:
        """The primary key columns in index order; empty without a primary key."""
        return _primary_key(self.indexes)

    @property
    def pk_is_handle(self) -> bool:
        """TiDB `PKIsHandle`: a one-column integer primary key that is the row handle.

        TiDB then keeps no index for it; Simple appends a synthetic `primary` index last.
        """
        pk = self.primary_key
        return (
            len(pk) == 1 and self.column(pk[0]).type.is_integer and self.pk_clustered is not False
        )

    @property
    def tidb_indexes(self) -> tuple[Index, ...]:
        """The indexes TiDB's `TableInfo.Indices` holds: the primary index is left out
        when it is the row handle."""
        if self.pk_is_handle:
            return tuple(i for i in self.indexes if not i.primary)
        return self.indexes

    @functools.cached_property
    def handle_key(self) -> tuple[str, ...]:
        """The handle key columns in column (definition) order; empty if there is none.

        As TiCDC (`cdc/model/schema_storage.go`, `findHandleIndex`): the primary key; else
        among unique indexes whose columns are all NOT NULL the one with the fewest
        columns, the first defined on a tie. An index naming a column the table does
        not show (a column selection, `column_selector.select_columns`) is passed over.
        """
        chosen: tuple[str, ...] = self.primary_key
        if not chosen:
            candidates = [
                i.columns
                for i in self.indexes
                if i.unique
                and all(c in self._positions and not self.column(c).nullable for c in i.columns)
            ]
            if candidates:
                chosen = min(candidates, key=len)  # min keeps the first of equals
        keys = set(chosen)
        return tuple(c.name for c in self.columns if c.name in keys)

    @property
    def handle_key_indexes(self) -> tuple[int, ...]:
        """Positions in `columns` of the handle key columns, ascending."""
        return tuple(self._positions[name] for name in self.handle_key)

    def is_unique_key(self, name: str) -> bool:
        """Whether the column `name` is part of the primary key or of a unique index
        (TiCDC's PK/UK flags: every column of a multi-column key has the flag)."""
        return any(name in i.columns for i in self.indexes if i.unique or i.primary)


@attrs.frozen
class ParsedDDL:
    """What `parse_table_ddl` reads from a `CREATE TABLE` statement.

    Columns carry resolved charset/collation (column, else table, else utf8mb4 /
    utf8mb4_bin; `binary` for non-string types), primary key columns are NOT NULL, and
    `indexes` are in TiDB's order (table-level keys, then column-level ones).
    """

    database: str | None
    table: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...]
    charset: str
    collation: str
    pk_clustered: bool | None = None

    @property
    def primary_key(self) -> tuple[str, ...]:
        """The primary key columns in index order; empty without a primary key."""
        return _primary_key(self.indexes)


def _primary_key(indexes: tuple[Index, ...]) -> tuple[str, ...]:
    for index in indexes:
        if index.primary:
            return index.columns
    return ()


# --------------------------------------------------------------------------- sqlglot dialect


@functools.cache
def _dialect() -> type[MySQL]:
    """MySQL as sqlglot reads it, with two TiDB/MySQL rules sqlglot lacks: REAL is DOUBLE,
    and `FLOAT UNSIGNED` is legal (deprecated). sqlglot has no unsigned float type, so the
    parser maps it to SMALLMONEY, a type MySQL DDL never yields, and `_BASES` reads it back.
    Built on first use so importing this module registers nothing with sqlglot.
    """

    class _TiDBMySQL(MySQL):
        class Tokenizer(MySQL.Tokenizer):
            KEYWORDS = {**MySQL.Tokenizer.KEYWORDS, "REAL": TokenType.DOUBLE}

        # sqlglot (30) declares a dialect's Parser as a class attribute holding the
        # parser class, which a type checker does not take for a base class.
        class Parser(MySQL.Parser):  # type: ignore[misc,valid-type]
            SIGNED_TO_UNSIGNED_TYPE_TOKEN = {
                **MySQL.Parser.SIGNED_TO_UNSIGNED_TYPE_TOKEN,
                TokenType.FLOAT: TokenType.SMALLMONEY,
            }

    return _TiDBMySQL


_D = exp.DataType.Type
# sqlglot type -> (TiDB base name, unsigned)
_BASES: dict[Any, tuple[str, bool]] = {
    _D.TINYINT: ("tinyint", False),
    _D.UTINYINT: ("tinyint", True),
    _D.SMALLINT: ("smallint", False),
    _D.USMALLINT: ("smallint", True),
    _D.MEDIUMINT: ("mediumint", False),
    _D.UMEDIUMINT: ("mediumint", True),
    _D.INT: ("int", False),
    _D.UINT: ("int", True),
    _D.BIGINT: ("bigint", False),
    _D.UBIGINT: ("bigint", True),
    _D.BOOLEAN: ("tinyint", False),
    _D.FLOAT: ("float", False),
    _D.SMALLMONEY: ("float", True),
    _D.DOUBLE: ("double", False),
    _D.UDOUBLE: ("double", True),
    _D.DECIMAL: ("decimal", False),
    _D.UDECIMAL: ("decimal", True),
    _D.DATE: ("date", False),
    _D.DATETIME: ("datetime", False),
    _D.TIMESTAMP: ("timestamp", False),
    _D.TIMESTAMPTZ: ("timestamp", False),
    _D.TIMESTAMPLTZ: ("timestamp", False),
    _D.TIME: ("time", False),
    _D.YEAR: ("year", False),
    _D.BIT: ("bit", False),
    _D.JSON: ("json", False),
    _D.ENUM: ("enum", False),
    _D.SET: ("set", False),
    _D.CHAR: ("char", False),
    _D.NCHAR: ("char", False),
    _D.VARCHAR: ("varchar", False),
    _D.NVARCHAR: ("varchar", False),
    _D.TINYTEXT: ("tinytext", False),
    _D.TEXT: ("text", False),
    _D.MEDIUMTEXT: ("mediumtext", False),
    _D.LONGTEXT: ("longtext", False),
    _D.BINARY: ("binary", False),
    _D.VARBINARY: ("varbinary", False),
    _D.TINYBLOB: ("tinyblob", False),
    _D.BLOB: ("blob", False),
    _D.MEDIUMBLOB: ("mediumblob", False),
    _D.LONGBLOB: ("longblob", False),
    _D.VECTOR: ("vector", False),
}
_SUPPORTED = (
    "tinyint, smallint, mediumint, int, bigint (unsigned, zerofill), bool, float, double, "
    "decimal(p,s), date, datetime(fsp), timestamp(fsp), time(fsp), year, bit(n), json, "
    "enum(...), set(...), char(n), varchar(n), tinytext..longtext, binary(n), varbinary(n), "
    "tinyblob..longblob, vector(n)"
)


def _parse(sql: str, what: str) -> list[exp.Expr | None]:
    try:
        return sqlglot.parse(_mark_clustered(sql), dialect=_dialect())
    except SqlglotError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchemaError(f"cannot parse {what}: {first}") from exc


def _mark_clustered(sql: str) -> str:
    """Turn bare `CLUSTERED` / `NONCLUSTERED` keywords (TiDB accepts them after a primary
    key; sqlglot does not) into the `/*T![clustered_index] ... */` comments that
    `SHOW CREATE TABLE` prints, which sqlglot keeps as comments."""
    try:
        tokens = _dialect()().tokenize(sql)
    except SqlglotError:
        return sql  # the parser reports the error with its position
    out, last = [], 0
    for previous, token in zip(tokens, tokens[1:], strict=False):
        if (
            previous.token_type == TokenType.R_PAREN
            and token.token_type == TokenType.VAR
            and token.text.upper() in ("CLUSTERED", "NONCLUSTERED")
        ):
            out.append(sql[last : token.start])
            out.append(f"/*T![clustered_index] {token.text.upper()} */")
            last = token.end + 1
    out.append(sql[last:])
    return "".join(out)


def _int_param(node: exp.Expression, text: str) -> int:
    value = node.this if isinstance(node, exp.DataTypeParam) else node
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            return int(value.this)
        except ValueError:
            pass
    raise SchemaError(f"MySQL type {text!r}: {value.sql()!r} is not a whole number")


def _check(ok: bool, text: str, problem: str) -> None:
    if not ok:
        _fail(text, problem)


def _fail(text: str, problem: str) -> NoReturn:
    raise SchemaError(f"MySQL type {text!r}: {problem}")


def _type_from_def(coldef: exp.ColumnDef, text: str) -> tuple[MySQLType, list[exp.Expression]]:
    """The MySQLType of a sqlglot column definition, and the constraints that are not part
    of the type (NOT NULL, DEFAULT, keys, ...)."""
    kind = coldef.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise SchemaError(f"MySQL type {text!r} is missing; supported types: {_SUPPORTED}")
    found = _BASES.get(kind.this)
    if found is None:
        raise SchemaError(
            f"MySQL type {text!r} ({kind.sql(dialect='mysql')}) is not supported; "
            f"supported types: {_SUPPORTED}"
        )
    base, unsigned = found
    zerofill = False
    charset: str | None = None
    collation: str | None = None
    rest: list[exp.Expression] = []
    for constraint in coldef.constraints:
        ckind = constraint.args.get("kind")
        if isinstance(ckind, exp.ZeroFillColumnConstraint):
            zerofill = True
        elif isinstance(ckind, exp.CharacterSetColumnConstraint):
            charset = ckind.this.name.lower()
        elif isinstance(ckind, exp.CollateColumnConstraint):
            collation = ckind.this.name.lower()
        elif isinstance(ckind, exp.BinaryColumnConstraint):
            # `varchar(10) BINARY`: the charset's binary collation (SHOW CREATE TABLE prints
            # an explicit COLLATE instead).
            if collation is None:
                collation = f"{charset or DEFAULT_CHARSET}_bin"
        else:
            rest.append(constraint)
    if zerofill and (base in INTEGER_TYPES or base in _FLOAT_TYPES or base == "decimal"):
        unsigned = True  # MySQL: ZEROFILL implies UNSIGNED
    elif zerofill:
        raise SchemaError(f"MySQL type {text!r}: zerofill applies to numeric types only")

    params = list(kind.expressions)
    length: int | None = None
    dec: int | None = None
    elements: tuple[str, ...] = ()
    if base in _ELEMENT_TYPES:
        values = []
        for p in params:
            _check(
                isinstance(p, exp.Literal) and p.is_string,
                text,
                f"{base} members must be quoted strings",
            )
            values.append(p.this.rstrip(" "))  # TiDB trims trailing spaces of members
        _check(bool(values), text, f"{base} needs at least one member")
        _check(len(set(values)) == len(values), text, f"{base} members must be distinct")
        if base == "set":
            _check(len(values) <= 64, text, "set has at most 64 members")
            _check(all("," not in v for v in values), text, "set members cannot contain ','")
        elements = tuple(values)
    else:
        ints = [_int_param(p, text) for p in params]
        if kind.this == _D.BOOLEAN:
            _check(not ints, text, "bool takes no length")
            ints = [1]
        if len(ints) > 2 or (len(ints) == 2 and base not in (_FLOAT_TYPES | {"decimal"})):
            raise SchemaError(f"MySQL type {text!r}: too many length arguments for {base}")
        if base == "float" and len(ints) == 1:
            # FLOAT(p): p <= 24 is FLOAT, up to 53 DOUBLE; either way the length is unset
            # (TiDB parser, FloatOpt).
            _check(0 <= ints[0] <= 53, text, "float precision must be 0..53")
            base = "float" if ints[0] <= 24 else "double"
            ints = []
        if base in _TEMPORAL_FSP_TYPES:
            if ints:
                _check(0 <= ints[0] <= 6, text, "fractional seconds precision must be 0..6")
                dec = ints[0]
        elif ints:
            length = ints[0]
            if len(ints) == 2:
                dec = ints[1]
    _check_lengths(base, length, dec, text)
    if base == "year":
        length = None if length in (None, 4) else length
        _check(length is None, text, "only year(4) is supported")
    if charset == _BINARY_CHARSET and base in _TEXT_TO_BINARY:
        base = _TEXT_TO_BINARY[base]
    if kind.this in (_D.NCHAR, _D.NVARCHAR) and charset is None:
        charset = "utf8"
    if charset is not None and charset not in _CHARSETS:
        raise SchemaError(
            f"MySQL type {text!r}: unknown character set {charset!r}; use one of "
            f"{', '.join(_CHARSETS)}"
        )
    if charset is None and collation is not None:
        charset = collation.split("_", 1)[0]
        if charset not in _CHARSETS:
            raise SchemaError(f"MySQL type {text!r}: unknown collation {collation!r}")
    elif charset is not None and collation is not None:
        _check(
            collation.split("_", 1)[0] == charset.replace("utf8mb3", "utf8")
            or charset == collation,
            text,
            f"collation {collation} does not belong to character set {charset}",
        )
    mysql_type = MySQLType(
        base=base,
        length=length,
        decimal=dec,
        unsigned=unsigned,
        zerofill=zerofill,
        elements=elements,
        charset=charset,
        collation=collation,
    )
    return mysql_type, rest


def _check_lengths(base: str, length: int | None, dec: int | None, text: str) -> None:
    if base in INTEGER_TYPES and length is not None:
        _check(1 <= length <= 255, text, "display width must be 1..255")
    elif base == "decimal":
        if length is not None:
            _check(1 <= length <= 65, text, "decimal precision must be 1..65")
        if dec is not None:
            _check(0 <= dec <= 30, text, "decimal scale must be 0..30")
            _check(dec <= (length or 10), text, "decimal scale cannot exceed the precision")
    elif base in _FLOAT_TYPES and length is not None:
        _check(1 <= length <= 255, text, f"{base} length must be 1..255")
        if dec is None or not 0 <= dec <= 30:
            _fail(text, f"{base} scale must be 0..30")
        _check(dec <= length, text, f"{base} scale cannot exceed the length")
    elif base == "bit" and length is not None:
        _check(1 <= length <= 64, text, "bit length must be 1..64")
    elif base in ("char", "binary") and length is not None:
        _check(0 <= length <= 255, text, f"{base} length must be 0..255")
    elif base in ("varchar", "varbinary"):
        if length is None:
            _fail(text, f"{base} needs a length, e.g. {base}(255)")
        _check(0 <= length <= _MAX_VARCHAR, text, f"{base} length must be 0..65535")
    elif base == "vector" and length is not None:
        _check(1 <= length <= 16383, text, "vector dimension must be 1..16383")


def parse_mysql_type(text: str) -> MySQLType:
    """Read a MySQL column type as a user or `SHOW CREATE TABLE` writes it.

    Accepts `int unsigned`, `int(11) unsigned zerofill`, `decimal(10,2)`, `varchar(20)`,
    `varchar(20) CHARACTER SET latin1 COLLATE latin1_bin`, `enum('a','b')`, `set('a','b')`,
    `datetime(3)`, `bit(5)`, `tinyint(1)`, `bool`, `binary(4)`, `json`, ...; synonyms
    (integer, numeric, real, ...) become TiDB's names, `char(n) CHARACTER SET binary`
    becomes `binary(n)`.

    Raises:
        SchemaError: the text is not one MySQL column type (names the text).
    """
    if not isinstance(text, str) or not text.strip():
        raise SchemaError(f"MySQL type {text!r} is empty; supported types: {_SUPPORTED}")
    statements = _parse(f"CREATE TABLE _t (_c {text})", f"MySQL type {text!r}")
    stmt = statements[0] if len(statements) == 1 else None
    schema = stmt.this if isinstance(stmt, exp.Create) else None
    defs = schema.expressions if isinstance(schema, exp.Schema) else []
    if len(defs) != 1 or not isinstance(defs[0], exp.ColumnDef):
        raise SchemaError(f"MySQL type {text!r} is not a single column type")
    mysql_type, rest = _type_from_def(defs[0], text)
    if rest:
        extra = " ".join(c.sql(dialect="mysql") for c in rest)
        raise SchemaError(
            f"MySQL type {text!r} has {extra!r}, which is not part of a type; give only "
            "the type (nullability, defaults and keys go in table-ddl or primary-key)"
        )
    return mysql_type


@attrs.frozen
class ColumnDefinition:
    """A column as `mysql_type` metadata and `column-types` state it: the type, NOT NULL,
    and the default (TiDB's `DefaultValue` string, see `Column`; None: no default)."""

    type: MySQLType
    nullable: bool = True
    default: str | None = None


def parse_column_definition(text: str) -> ColumnDefinition:
    """Read a column definition without its name, as `SHOW CREATE TABLE` prints one:
    a type (`parse_mysql_type`), then optionally `NOT NULL` (or `NULL`) and `DEFAULT
    <literal>`: `varchar(20) NOT NULL DEFAULT 'x'`, `int unsigned`,
    `datetime(3) DEFAULT CURRENT_TIMESTAMP(3)`. `column_definition_sql` writes it.

    Raises:
        SchemaError: the text is not such a definition (names the text); keys and other
            clauses are refused (they go in primary-key or table-ddl).
    """
    if not isinstance(text, str) or not text.strip():
        raise SchemaError(f"MySQL type {text!r} is empty; supported types: {_SUPPORTED}")
    statements = _parse(f"CREATE TABLE _t (_c {text})", f"MySQL type {text!r}")
    stmt = statements[0] if len(statements) == 1 else None
    schema = stmt.this if isinstance(stmt, exp.Create) else None
    defs = schema.expressions if isinstance(schema, exp.Schema) else []
    if len(defs) != 1 or not isinstance(defs[0], exp.ColumnDef):
        raise SchemaError(f"MySQL type {text!r} is not a single column type")
    mysql_type, rest = _type_from_def(defs[0], text)
    nullable, default, extra = True, None, []
    for constraint in rest:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        elif isinstance(kind, exp.DefaultColumnConstraint):
            default = _default_value(kind.this, mysql_type, "_c")
        else:
            extra.append(constraint)
    if extra:
        clauses = " ".join(c.sql(dialect="mysql") for c in extra)
        raise SchemaError(
            f"MySQL type {text!r} has {clauses!r}, which is not part of a column type; give "
            "the type, NOT NULL and DEFAULT only (keys go in primary-key or table-ddl)"
        )
    return ColumnDefinition(mysql_type, nullable, default)


def column_definition_sql(column: Column) -> str:
    """The column's definition without its name, as `parse_column_definition` reads it
    back into the same column (type, NOT NULL, default): the type as `SHOW CREATE TABLE`
    prints it, its charset and collation left out where they are the ones a table
    without `table-ddl` gets (utf8mb4, utf8mb4_bin; a charset's default collation)."""
    t = column.type
    if t.charset in (None, _BINARY_CHARSET) or (
        t.charset == DEFAULT_CHARSET and t.collation in (None, DEFAULT_COLLATION)
    ):
        t = attrs.evolve(t, charset=None, collation=None)
    elif t.collation in (None, default_collation(t.charset)):
        t = attrs.evolve(t, collation=None)
    text = t.to_sql()
    if not column.nullable:
        text += " NOT NULL"
    if column.default is not None:
        text += " DEFAULT " + _default_sql(column.default, t)
    return text


def normalize_default(default: str | None, t: MySQLType) -> str | None:
    """A default as a column of type `t` holds it when written `DEFAULT '<default>'`
    (`parse_column_definition`): numbers in their canonical form (a DECIMAL with exactly
    its scale), other text as it is. Decoders of protocols that carry a default in
    another form use it, so that the column they state is the one a write derives."""
    if default is None:
        return None
    try:
        return _default_value(exp.Literal.string(default), t, "_c")
    except SchemaError:
        return default  # not a number: an expression default, kept as its text


def _default_sql(default: str, t: MySQLType) -> str:
    """A default (`Column.default`) as the literal `_default_value` reads back: quoted, as
    `SHOW CREATE TABLE` prints even numbers (`DEFAULT '5'`), but CURRENT_TIMESTAMP, a BIT
    value (`b'101'`) and an expression default of a numeric column."""
    if default == "CURRENT_TIMESTAMP" and t.base in ("datetime", "timestamp"):
        return f"CURRENT_TIMESTAMP({t.fsp})" if t.fsp else default
    if t.base == "bit" and default.isdigit():
        return f"b'{int(default):b}'"
    if t.is_integer or t.base in _FLOAT_TYPES or t.base in ("decimal", "year", "bit"):
        try:
            decimal.Decimal(default)
        except decimal.InvalidOperation:
            return default  # an expression default, kept as its SQL text
    return _quote(default)


# --------------------------------------------------------------------------- CREATE TABLE


def resolve_type(
    t: MySQLType,
    table_charset: str = DEFAULT_CHARSET,
    table_collation: str = DEFAULT_COLLATION,
) -> MySQLType:
    """The type as a table holds it: charset and collation filled in as TiDB does
    (`setCharsetCollationFlenDecimal`; the table's for char/text/enum/set types, `binary`
    for every other), `text(n)` / `blob(n)` turned into the smallest type holding n
    characters (`adjustBlobTypesFlen`), and one spelling for each type TiDB cannot tell
    apart (`canonical_type`), so that equal types compare (and version) equal.

    Decoders resolve the types they read with it too: a read followed by a write then
    gives the very type that was written.
    """
    if t.base not in _CHARSET_TYPES:
        resolved = attrs.evolve(t, charset=_BINARY_CHARSET, collation=_BINARY_CHARSET)
    else:
        charset = t.charset or table_charset
        if t.collation is not None:
            collation = t.collation
        elif t.charset is None:
            collation = table_collation
        else:
            collation = default_collation(charset)
        resolved = attrs.evolve(t, charset=charset, collation=collation)
    if t.base in ("text", "blob") and t.length is not None:
        family = ("tinytext", "text", "mediumtext", "longtext")
        per_char = _CHARSETS[resolved.charset][1] if resolved.charset in _CHARSETS else 4
        size = t.length * per_char
        if t.base == "blob":
            family = ("tinyblob", "blob", "mediumblob", "longblob")
            size = t.length
        base = next((b for b in family if size <= _LOB_MAX[b]), family[-1])
        resolved = attrs.evolve(resolved, base=base, length=None)
    return canonical_type(resolved)


def canonical_type(t: MySQLType) -> MySQLType:
    """One spelling of each type that TiDB's `FieldType` cannot tell apart (its flen and
    decimal are the same), as MySQL 8's `SHOW CREATE TABLE` prints it: integer display
    widths only where they differ from TiDB's default (`int`, `int(5)`, `tinyint(1)`);
    `decimal(p,s)`, `char(n)`, `binary(n)` and `bit(n)` with their lengths (`decimal`
    is `decimal(10,0)`, `char` is `char(1)`); no fsp 0 (`datetime(0)` is `datetime`); no
    length where the type implies it (text and blob types, enum, set, date, year, json);
    FLOAT/DOUBLE with a length but no scale (as a message carries them) as `(M,0)`, or
    without either at TiDB's default length; UNSIGNED and ZEROFILL on numeric types only
    (TiDB's own flags on YEAR and BIT are implied). Charsets are left as they are."""
    base = t.base
    length = t.length if t.length is not None and t.length >= 0 else None
    dec = t.decimal
    unsigned, zerofill = t.unsigned, t.zerofill
    if not (base in INTEGER_TYPES or base in _FLOAT_TYPES or base == "decimal"):
        unsigned = zerofill = False
    if base in INTEGER_TYPES:
        dec = None
        if length == _DEFAULT_FLEN[base] - (1 if unsigned and base != "bigint" else 0):
            length = None
    elif base in _FLOAT_TYPES:
        if dec is None and length is not None:
            length, dec = (None, None) if length == _DEFAULT_FLEN[base] else (length, 0)
    elif base == "decimal":
        length = _DEFAULT_FLEN["decimal"] if length is None else length
        dec = 0 if dec is None else dec
    elif base in _TEMPORAL_FSP_TYPES:
        length, dec = None, dec or None
    elif base in ("char", "binary", "bit"):
        length, dec = (1 if length is None else length), None
    elif base in ("varchar", "varbinary", "vector"):
        dec = None
    else:
        length = dec = None
    return attrs.evolve(t, length=length, decimal=dec, unsigned=unsigned, zerofill=zerofill)


def _go_float(value: float, single: bool) -> str:
    """The DEFAULT text of a FLOAT (`single`) or DOUBLE: Go `strconv.FormatFloat(v, 'f',
    -1, 32|64)`, with negative zero written "0"."""
    if math.isinf(value):  # a literal beyond DOUBLE (TiDB refuses it): Python's text
        return "Infinity" if value > 0 else "-Infinity"
    text = format_float(value, 32 if single else 64)
    return "0" if text == "-0" else text


def _literal_text(node: exp.Expression) -> tuple[str, bool] | None:
    """(text, is_string) of a literal default, `-5` included; None for other nodes."""
    if isinstance(node, exp.Paren):
        return _literal_text(node.this)
    if isinstance(node, exp.Literal):
        return str(node.this), bool(node.is_string)
    if isinstance(node, exp.Neg):
        inner = _literal_text(node.this)
        if inner is not None and not inner[1]:
            return "-" + inner[0], False
    if isinstance(node, exp.Boolean):
        return ("1" if node.this else "0"), False
    return None


_NOW_FUNCTIONS = frozenset({"NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP"})


def _default_value(node: exp.Expression, t: MySQLType, column: str) -> str | None:
    """TiDB's `DefaultValue` string for a DEFAULT clause (see `Column`)."""
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.CurrentTimestamp | exp.Localtimestamp) or (
        isinstance(node, exp.Anonymous) and str(node.this).upper() in _NOW_FUNCTIONS
    ):
        return "CURRENT_TIMESTAMP"
    if t.base == "bit":
        if isinstance(node, exp.BitString):
            return str(int(str(node.this) or "0", 2))
        if isinstance(node, exp.HexString):
            return str(int(str(node.this) or "0", 16))
    literal = _literal_text(node)
    if literal is None:
        return node.sql(dialect="mysql")  # an expression default, e.g. (rand())
    text, _ = literal
    if t.is_integer or t.base in ("decimal", "bit", "year") or t.base in _FLOAT_TYPES:
        try:
            number = decimal.Decimal(text.strip())
        except decimal.InvalidOperation:
            raise SchemaError(
                f"column {column}: DEFAULT {text!r} is not a number for type {t.to_sql()}",
                column=column,
            ) from None
        if t.base == "decimal":
            quantum = decimal.Decimal(1).scaleb(-t.scale)
            # DECIMAL(65,30) needs more digits than the default context's 28.
            context = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
            return format(number.quantize(quantum, context=context), "f")
        if t.base in _FLOAT_TYPES:
            return _go_float(float(number), single=t.base == "float")
        return str(int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP)))
    return text


def _index_columns(node: exp.Expression) -> list[str] | None:
    """Column names of a key part list; None if a part is an expression."""
    names = []
    for part in node.expressions:
        if isinstance(part, exp.Ordered):
            part = part.this
        if isinstance(part, exp.ColumnPrefix):
            part = part.this
        if isinstance(part, exp.Identifier | exp.Column):
            names.append(part.name)
        else:
            return None
    return names


class _IndexBuilder:
    """Collects indexes in TiDB order and names unnamed ones after their first column
    (`name`, `name_2`, ...) as TiDB does."""

    def __init__(self, columns: list[str]) -> None:
        # Key parts name columns in any case; the index keeps the column's own spelling,
        # as TiDB's buildIndexColumns takes the name from the column it found.
        self.columns = {name.lower(): name for name in columns}
        self.indexes: list[Index] = []

    def add(self, name: str | None, cols: list[str], *, unique: bool, primary: bool) -> None:
        missing = [c for c in cols if c.lower() not in self.columns]
        if missing:
            raise SchemaError(
                f"table-ddl: key {name or cols[0]!r} names unknown column(s) {', '.join(missing)}",
                column=missing[0],
            )
        cols = [self.columns[c.lower()] for c in cols]
        if len(set(cols)) != len(cols):
            raise SchemaError(f"table-ddl: key {name or cols[0]!r} repeats a column")
        if primary:
            if any(i.primary for i in self.indexes):
                raise SchemaError("table-ddl: more than one PRIMARY KEY")
            self.indexes.append(Index("PRIMARY", tuple(cols), unique=True, primary=True))
            return
        taken = {i.name.lower() for i in self.indexes}
        if name is None:
            name, n = cols[0], 2
            while name.lower() in taken:
                name, n = f"{cols[0]}_{n}", n + 1
        elif name.lower() in taken:
            raise SchemaError(f"table-ddl: duplicate key name {name!r}")
        self.indexes.append(Index(name, tuple(cols), unique=unique, primary=False))


def _clustered_marker(stmt: exp.Expression) -> bool | None:
    for node in stmt.walk():
        for comment in node.comments or ():
            text = comment.upper()
            if "CLUSTERED_INDEX" in text or text.strip() in ("CLUSTERED", "NONCLUSTERED"):
                if "NONCLUSTERED" in text:
                    return False
                if "CLUSTERED" in text.replace("CLUSTERED_INDEX", ""):
                    return True
    return None


def parse_table_ddl(ddl: str) -> ParsedDDL:
    """Read a `CREATE TABLE` statement as `SHOW CREATE TABLE` prints it (MySQL or TiDB).

    Reads columns with types, NOT NULL, DEFAULT, charset/collation (column, then table
    options `DEFAULT CHARSET=` / `COLLATE=`, then utf8mb4/utf8mb4_bin), PRIMARY KEY (inline
    or table-level, with TiDB's `/*T![clustered_index] ... */`), UNIQUE KEYs and KEYs with
    their names, and the database/table names. Ignored: AUTO_INCREMENT, ON UPDATE,
    COMMENT, foreign keys, checks, FULLTEXT keys, non-unique expression indexes, table
    options and partitioning.

    Raises:
        SchemaError: not one CREATE TABLE with columns, an unsupported type, a virtual
            generated column, a unique expression index, a key naming an unknown column.
    """
    if not isinstance(ddl, str) or not ddl.strip():
        raise SchemaError("table-ddl is empty; give a CREATE TABLE statement")
    statements = [s for s in _parse(ddl, "table-ddl") if s is not None]
    if len(statements) != 1:
        raise SchemaError(
            f"table-ddl holds {len(statements)} statements; give exactly one CREATE TABLE"
        )
    stmt = statements[0]
    if not isinstance(stmt, exp.Create) or str(stmt.args.get("kind", "")).upper() != "TABLE":
        raise SchemaError(
            f"table-ddl is a {stmt.key.upper()} statement; give a CREATE TABLE statement as "
            "SHOW CREATE TABLE prints it"
        )
    schema = stmt.this
    if not isinstance(schema, exp.Schema) or not isinstance(schema.this, exp.Table):
        raise SchemaError(
            "table-ddl has no column list (CREATE TABLE ... LIKE / AS SELECT); give the "
            "statement SHOW CREATE TABLE prints"
        )
    table = schema.this.name
    database = schema.this.db or None

    table_charset: str | None = None
    table_collation: str | None = None
    properties = stmt.args.get("properties")
    for prop in properties.expressions if properties else ():
        if isinstance(prop, exp.CharacterSetProperty):
            table_charset = prop.this.name.lower()
        elif isinstance(prop, exp.CollateProperty):
            table_collation = prop.this.name.lower()
    if table_charset is None and table_collation is not None:
        table_charset = table_collation.split("_", 1)[0]
    table_charset = table_charset or DEFAULT_CHARSET
    if table_charset not in _CHARSETS:
        raise SchemaError(
            f"table-ddl: unknown table character set {table_charset!r}; use one of "
            f"{', '.join(_CHARSETS)}"
        )
    table_collation = table_collation or _CHARSETS[table_charset][0]

    defs = [e for e in schema.expressions if isinstance(e, exp.ColumnDef)]
    if not defs:
        raise SchemaError(f"table-ddl: table {table} has no columns")
    names = [d.name for d in defs]
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise SchemaError(f"table-ddl: column {name!r} is defined twice", column=name)
        seen.add(name.lower())
    keys = _IndexBuilder(names)

    # Table-level keys come first, then column-level ones (TiDB
    # `buildColumnsAndConstraints` appends column constraints after the table's).
    for node in schema.expressions:
        if isinstance(node, exp.ColumnDef):
            continue
        if isinstance(node, exp.PrimaryKey):
            keys.add(None, _index_columns(node) or [], unique=True, primary=True)
        elif isinstance(node, exp.UniqueColumnConstraint):
            target = node.this
            cols = _index_columns(target) if isinstance(target, exp.Schema) else None
            key_name = target.this.name if isinstance(target, exp.Schema) and target.this else None
            if cols is None:
                raise SchemaError(
                    f"table-ddl: unique key {key_name or ''} on an expression is not "
                    "supported; drop it from table-ddl or use a column key"
                )
            keys.add(key_name, cols, unique=True, primary=False)
        elif isinstance(node, exp.IndexColumnConstraint):
            if str(node.args.get("kind") or "").upper() in ("FULLTEXT", "SPATIAL"):
                continue
            cols = _index_columns(node)
            if cols is None:
                continue  # expression index: a hidden virtual column in TiDB; no key
            key_name = node.this.name if node.this else None
            keys.add(key_name, cols, unique=False, primary=False)
        # foreign keys, checks and other constraints do not matter to the protocols

    columns: list[Column] = []
    not_null: set[str] = set()
    for position, coldef in enumerate(defs):
        name = coldef.name
        kind = coldef.args.get("kind")
        if not isinstance(kind, exp.DataType):
            raise SchemaError(f"table-ddl: column {name} has no type", column=name)
        try:
            # sqlglot prints a VARCHAR without length as TEXT; name it as written
            shown = kind.this.value.lower() if not kind.expressions else kind.sql("mysql")
            col_type, rest = _type_from_def(coldef, shown.lower())
        except SchemaError as exc:
            raise SchemaError(f"table-ddl: column {name}: {exc.message}", column=name) from exc
        col_type = resolve_type(col_type, table_charset, table_collation)
        nullable = True
        default: str | None = None
        for constraint in rest:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.NotNullColumnConstraint):
                nullable = bool(kind.args.get("allow_null"))
            elif isinstance(kind, exp.DefaultColumnConstraint):
                default = _default_value(kind.this, col_type, name)
            elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                keys.add(None, [name], unique=True, primary=True)
            elif isinstance(kind, exp.UniqueColumnConstraint):
                keys.add(None, [name], unique=True, primary=False)
            elif isinstance(kind, exp.ComputedColumnConstraint) and not kind.args.get("persisted"):
                raise SchemaError(
                    f"table-ddl: column {name} is a VIRTUAL generated column, which is not "
                    "supported; make it STORED or drop it from table-ddl",
                    column=name,
                )
        if not nullable:
            not_null.add(name)
        columns.append(
            Column(name, col_type, nullable=nullable, default=default, column_id=position + 1)
        )
    pk = next((i.columns for i in keys.indexes if i.primary), ())
    columns = [attrs.evolve(c, nullable=False) if c.name in pk else c for c in columns]
    return ParsedDDL(
        database=database,
        table=table,
        columns=tuple(columns),
        indexes=tuple(keys.indexes),
        charset=table_charset,
        collation=table_collation,
        pk_clustered=_clustered_marker(stmt) if pk else None,
    )


# --------------------------------------------------------------------------- Spark mapping


def spark_to_mysql(
    data_type: T.DataType, metadata: Mapping[str, Any] | None = None, *, column: str = "?"
) -> ColumnDefinition:
    """The MySQL column definition of a Spark column (design §2): metadata `mysql_type`
    if given (a type, optionally with NOT NULL and DEFAULT: `parse_column_definition`),
    else a nullable column of the type

    LongType bigint, IntegerType int, ShortType smallint, ByteType tinyint, FloatType
    float, DoubleType double, DecimalType(p,s) decimal(p,s), StringType text (no length
    to check), VarcharType(n) varchar(n), CharType(n) char(n), BinaryType blob, DateType
    date, TimestampType timestamp(6), TimestampNTZType datetime(6), TimeType(p) time(p),
    BooleanType tinyint(1), MapType/StructType/ArrayType json.

    Spark's own nullable flag is not used: Spark infers it (a literal is not nullable, a
    file source is), so one query's micro-batches would flip the table's NOT NULL.
    Charset and collation stay unset (`build_table_schema` resolves them).

    Raises:
        SchemaError: an unsupported Spark type or a bad `mysql_type` (names the column).
    """
    if metadata and metadata.get(MYSQL_TYPE_METADATA) is not None:
        declared = metadata[MYSQL_TYPE_METADATA]
        if not isinstance(declared, str):
            raise SchemaError(
                f"column {column}: metadata mysql_type must be a string such as "
                f"'int unsigned', got {declared!r}",
                column=column,
            )
        return _for_column(column, "metadata mysql_type", declared)
    mapped = _spark_default(data_type)
    if mapped is None:
        raise SchemaError(
            f"column {column} has Spark type {data_type.simpleString()}, which has no MySQL "
            "mapping; cast it, or set StructField metadata mysql_type / option column-types "
            "(supported: numeric, decimal, string, binary, boolean, date, timestamp, "
            "timestamp_ntz, time, map, struct, array)",
            column=column,
        )
    return ColumnDefinition(mapped)


def _spark_default(dt: T.DataType) -> MySQLType | None:
    simple = {
        T.LongType: MySQLType("bigint"),
        T.IntegerType: MySQLType("int"),
        T.ShortType: MySQLType("smallint"),
        T.ByteType: MySQLType("tinyint"),
        T.FloatType: MySQLType("float"),
        T.DoubleType: MySQLType("double"),
        T.StringType: MySQLType("text"),
        T.BinaryType: MySQLType("blob"),
        T.DateType: MySQLType("date"),
        T.TimestampType: MySQLType("timestamp", decimal=6),
        T.TimestampNTZType: MySQLType("datetime", decimal=6),
        T.BooleanType: MySQLType("tinyint", length=1),
    }
    for spark_type, mysql_type in simple.items():
        if type(dt) is spark_type:
            return mysql_type
    if isinstance(dt, T.DecimalType):
        return MySQLType("decimal", length=dt.precision, decimal=dt.scale)
    if isinstance(dt, T.VarcharType):
        return MySQLType("varchar", length=dt.length)
    if isinstance(dt, T.CharType):
        return MySQLType("char", length=dt.length)
    time_type = getattr(T, "TimeType", None)  # pyspark 4.1+
    if time_type is not None and isinstance(dt, time_type):
        return MySQLType("time", decimal=dt.precision)
    if isinstance(dt, T.MapType | T.StructType | T.ArrayType):
        return MySQLType("json")
    return None


def _for_column(column: str, source: str, text: str) -> ColumnDefinition:
    try:
        return parse_column_definition(text)
    except SchemaError as exc:
        raise SchemaError(f"column {column}: {source}: {exc.message}", column=column) from exc


# --------------------------------------------------------------------------- building


def stable_table_id(database: str, table: str) -> int:
    """A table id derived from the names alone: the same names give the same id, in
    1..2^31-1 so that every consumer's integer type holds it."""
    digest = hashlib.sha256(f"{database}\x00{table}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % ((1 << 31) - 1) + 1


_VERSION_EPOCH_MS = 1577836800000  # 2020-01-01T00:00:00Z
_VERSION_SPAN_MS = 366 * 86_400_000


def stable_version(
    columns: Iterable[Column], indexes: Iterable[Index], pk_clustered: bool | None = None
) -> int:
    """A schema version derived from the schema alone (names of database and table are
    left out, as RENAME TABLE keeps TiDB's version): a TSO whose physical time lies in
    2020, so it reads as a plausible `UpdateTS` and precedes present-day commit ts."""
    canonical = repr(
        (
            [(c.name, c.type.to_sql(), c.nullable, c.default) for c in columns],
            [(i.name, i.columns, i.unique, i.primary) for i in indexes],
            pk_clustered,
        )
    )
    h = int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:8], "big")
    return tso.compose(
        _VERSION_EPOCH_MS + h % _VERSION_SPAN_MS, (h >> 40) % (1 << tso.LOGICAL_BITS)
    )


def _same_name(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def build_table_schema(
    database: str | None,
    table: str | None,
    spark_schema: T.StructType,
    *,
    reserved: Iterable[str] = (),
    column_types: Mapping[str, str] | None = None,
    table_ddl: str | None = None,
    primary_key: tuple[str, ...] = (),
    table_id: int | None = None,
    version: int | None = None,
    declared: TableSchema | None = None,
) -> TableSchema:
    """The TableSchema of a DataFrame's table columns (every field not in `reserved`).

    Types: Spark mapping < metadata `mysql_type` < `column-types` < `table-ddl`. Without
    a DDL, columns keep the DataFrame's order; NOT NULL and defaults come from
    `mysql_type` / `column-types` (`varchar(20) NOT NULL DEFAULT 'x'`), never from Spark's
    nullable flag (see `spark_to_mysql`). With a DDL, the DDL's order, types, NOT NULL,
    defaults, keys and charsets are used, and the DDL and the DataFrame must have the
    same columns. `primary_key` (option `primary-key`) sets the primary key (its columns
    become NOT NULL); it must agree with a DDL primary key. `database`/`table` default to
    the DDL's names. `table_id` defaults to `stable_table_id`, `version` to
    `stable_version`.

    `declared` is the table a read returned (`declared_table`). Without a DDL its keys
    whose columns the DataFrame still has are the table's keys (`primary_key` replaces
    its primary key); its version is kept when the table comes out with its columns and
    keys, and its table id when the names are its names, so a read followed by a write
    sends the schema and version that were read. Its zero id or version (a protocol that
    carries none) is not kept.

    Raises:
        SchemaError: names the column, option and what is allowed.
    """
    reserved_set = set(reserved)
    reserved_folded = {name.lower() for name in reserved_set}
    fields = [f for f in spark_schema.fields if f.name not in reserved_set]
    _check_unique_names([f.name for f in fields], "the DataFrame")
    field_names = [f.name for f in fields]
    # Column names are matched in any case, as MySQL and Spark match them; the options
    # that name columns (column-types, primary-key) and table-ddl's columns included.
    by_folded = {name.lower(): name for name in field_names}
    types: dict[str, ColumnDefinition] = {
        f.name: spark_to_mysql(f.dataType, f.metadata, column=f.name) for f in fields
    }
    typed: dict[str, str] = {}
    for name, text in (column_types or {}).items():
        column = by_folded.get(name.lower())
        if column is None:
            # A metadata column (_op, _commit_ts, ... or what the *-column options name)
            # is in the DataFrame but is no table column: say so rather than "missing".
            why = (
                "which is a metadata column (see the op-column, commit-ts-column, before-column, "
                "database-column and table-column options), not a table column"
                if name.lower() in reserved_folded
                else "which the DataFrame does not have"
            )
            raise SchemaError(
                f"option column-types names column {name!r}, {why}; table columns are "
                f"{', '.join(field_names) or '(none)'}",
                column=name,
            )
        if column in typed:
            raise SchemaError(
                f"option column-types names column {column!r} twice, as {typed[column]!r} and "
                f"{name!r} (column names match in any case); keep one",
                column=column,
            )
        typed[column] = name
        if not isinstance(text, str):
            raise SchemaError(
                f"option column-types: column {name} needs a MySQL type string, got {text!r}",
                column=name,
            )
        types[column] = _for_column(column, "option column-types", text)

    indexes: tuple[Index, ...] = ()
    pk_clustered: bool | None = None
    if table_ddl is not None:
        parsed = parse_table_ddl(table_ddl)
        database, table = _names_from_ddl(database, table, parsed)
        ddl_names = [c.name for c in parsed.columns]
        ddl_folded = {n.lower() for n in ddl_names}
        missing = [n for n in ddl_names if n.lower() not in by_folded]
        extra = [n for n in field_names if n.lower() not in ddl_folded]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"columns {', '.join(missing)} of table-ddl are not in the DataFrame")
            if extra:
                parts.append(f"DataFrame columns {', '.join(extra)} are not in table-ddl")
            raise SchemaError(
                "; ".join(parts) + "; the DataFrame must hold exactly the table's columns "
                "(names match in any case; the table-ddl spelling goes on the wire)",
                column=(missing or extra)[0],
            )
        columns = list(parsed.columns)
        indexes = parsed.indexes
        pk_clustered = parsed.pk_clustered
        if (
            primary_key
            and parsed.primary_key
            and _folded(primary_key) != _folded(parsed.primary_key)
        ):
            raise SchemaError(
                f"option primary-key is {','.join(primary_key)} but table-ddl's primary key "
                f"is {','.join(parsed.primary_key)}; drop one of them or make them agree"
            )
    else:
        columns = [
            Column(
                f.name,
                resolve_type(types[f.name].type),
                nullable=types[f.name].nullable,
                default=types[f.name].default,
                column_id=i + 1,
            )
            for i, f in enumerate(fields)
        ]
        if declared is not None:
            indexes, pk_clustered = _declared_keys(declared, columns, primary_key)
    if database is None or database == "" or table is None or table == "":
        missing = [n for n, v in (("database", database), ("table", table)) if not v]
        what = " and ".join(missing)
        raise SchemaError(
            f"the table has no {what} name; set option {' and '.join(map(repr, missing))}, "
            f"or add a {' and a '.join(repr('_' + n) for n in missing)} column naming each "
            "row's table (options database-column, table-column rename them), or name them "
            "in table-ddl (CREATE TABLE `db`.`t`)"
        )
    if not columns:
        raise SchemaError(f"table {database}.{table} has no columns besides metadata columns")

    if primary_key and not any(i.primary for i in indexes):
        own_names = {col.name.lower(): col.name for col in columns}
        unknown = [c for c in primary_key if c.lower() not in own_names]
        if unknown:
            raise SchemaError(
                f"option primary-key names {', '.join(unknown)}, not a column of "
                f"{database}.{table}; columns are {', '.join(c.name for c in columns)}",
                column=unknown[0],
            )
        if len(set(_folded(primary_key))) != len(primary_key):
            raise SchemaError(
                f"option primary-key repeats a column: {','.join(primary_key)} (column names "
                "match in any case)"
            )
        # The key names the columns as the table spells them (TiDB builds index columns
        # from the column definitions, found in any case).
        key = tuple(own_names[c.lower()] for c in primary_key)
        indexes = (Index("PRIMARY", key, unique=True, primary=True), *indexes)
    primary = set(_primary_key(indexes))
    final_columns = tuple(
        attrs.evolve(c, nullable=False) if c.name in primary else c for c in columns
    )

    if declared is not None and table_ddl is None:
        as_declared = (final_columns, indexes, pk_clustered) == (
            declared.columns,
            declared.indexes,
            declared.pk_clustered,
        )
        if version is None and as_declared and declared.version:
            version = declared.version
        if table_id is None and (database, table) == (declared.database, declared.table):
            table_id = declared.table_id or None
    return TableSchema(
        database=database,
        table=table,
        columns=final_columns,
        indexes=indexes,
        table_id=stable_table_id(database, table) if table_id is None else table_id,
        version=(
            stable_version(final_columns, indexes, pk_clustered) if version is None else version
        ),
        pk_clustered=pk_clustered,
    )


def _declared_keys(
    declared: TableSchema, columns: list[Column], primary_key: tuple[str, ...]
) -> tuple[tuple[Index, ...], bool | None]:
    """The keys of `declared` over `columns` (names in any case, spelt as the columns
    spell them), less its primary key when `primary_key` gives one; and its clustered
    marker while its primary key stays."""
    own = {c.name.lower(): c.name for c in columns}
    kept = [
        attrs.evolve(i, columns=tuple(own[c.lower()] for c in i.columns))
        for i in declared.indexes
        if all(c.lower() in own for c in i.columns) and not (primary_key and i.primary)
    ]
    has_primary = any(i.primary for i in kept)
    return tuple(kept), declared.pk_clustered if has_primary else None


def declared_table(spark_schema: T.StructType, table_column: str) -> TableSchema | None:
    """The table a read returned, from the `ticdc_table` metadata of its `_table` column
    (`table_column`, as the DataFrame spells it), or None without one.

    Raises:
        SchemaError: the metadata is not such a table (names the column).
    """
    field = next((f for f in spark_schema.fields if f.name == table_column), None)
    text = field.metadata.get(TABLE_METADATA) if field is not None else None
    if text is None:
        return None
    if not isinstance(text, str):
        raise SchemaError(
            f"column {table_column}: metadata {TABLE_METADATA} is {text!r}, not the JSON text "
            "a read writes there; drop the metadata",
            column=table_column,
        )
    try:
        return table_schema_from_json(text)
    except SchemaError as exc:
        raise SchemaError(
            f"column {table_column}: metadata {TABLE_METADATA}: {exc.message}; drop the metadata",
            column=table_column,
        ) from None


def _names_from_ddl(
    database: str | None, table: str | None, parsed: ParsedDDL
) -> tuple[str | None, str | None]:
    if table and not _same_name(table, parsed.table):
        raise SchemaError(
            f"table-ddl creates table {parsed.table!r} but the table is {table!r} (option "
            "table or column _table); make them agree"
        )
    if database and parsed.database and not _same_name(database, parsed.database):
        raise SchemaError(
            f"table-ddl creates the table in database {parsed.database!r} but the database "
            f"is {database!r} (option database or column _database); make them agree"
        )
    return database or parsed.database, table or parsed.table


def _folded(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(name.lower() for name in names)


def _check_unique_names(names: list[str], where: str) -> None:
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            raise SchemaError(
                f"{where} has columns {seen[name.lower()]!r} and {name!r}; MySQL column "
                "names are case-insensitive, rename one",
                column=name,
            )
        seen[name.lower()] = name


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def table_schema_to_json(table: TableSchema) -> str:
    """The table as JSON text, to remember it between batches (see `table_schema_from_json`)."""
    return json.dumps(attrs.asdict(table), sort_keys=True, separators=(",", ":"))


def table_schema_from_json(text: str) -> TableSchema:
    """The table `table_schema_to_json` wrote.

    Raises:
        SchemaError: the text is not such a table.
    """
    try:
        data = json.loads(text)
        columns = tuple(
            Column(
                name=c["name"],
                type=MySQLType(**{**c["type"], "elements": tuple(c["type"]["elements"])}),
                nullable=c["nullable"],
                default=c["default"],
                column_id=c["column_id"],
            )
            for c in data["columns"]
        )
        indexes = tuple(Index(**{**i, "columns": tuple(i["columns"])}) for i in data["indexes"])
        return TableSchema(
            database=data["database"],
            table=data["table"],
            columns=columns,
            indexes=indexes,
            table_id=data["table_id"],
            version=data["version"],
            pk_clustered=data["pk_clustered"],
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise SchemaError(f"a stored table schema cannot be read ({exc}); was it edited?") from None

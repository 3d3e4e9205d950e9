"""The table model every protocol encodes from: MySQL column types, columns, indexes and the
handle key, as TiDB's `TableInfo` holds them; the types as a table holds them
(`resolve_type`, `canonical_type`); stable table ids and versions; and the table's JSON form.

This module knows MySQL and TiDB rules (default lengths, charsets, handle-key selection);
it knows nothing of Kafka, of Spark or of any wire format, and parses no SQL: reading a
`CREATE TABLE` or a column type is `ticdc_sink.ddl`'s, building the table of a DataFrame
`ticdc_sink.writer.table`'s.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable

import attrs

from ticdc_sink import tso
from ticdc_sink.errors import SchemaError

__all__ = [
    "BINARY_CHARSET",
    "BINARY_TYPES",
    "CHARSETS",
    "Column",
    "DEFAULT_CHARSET",
    "DEFAULT_COLLATION",
    "ELEMENT_TYPES",
    "FLOAT_TYPES",
    "INTEGER_TYPES",
    "MYSQL_TYPE_METADATA",
    "Index",
    "MySQLType",
    "TABLE_METADATA",
    "TEMPORAL_FSP_TYPES",
    "TEXT_TYPES",
    "TableSchema",
    "canonical_type",
    "default_collation",
    "primary_key_columns",
    "resolve_type",
    "sql_quote",
    "stable_table_id",
    "stable_version",
    "table_schema_from_json",
    "table_schema_to_json",
]


INTEGER_TYPES = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})
# Names as TiDB's `TypeToStr` prints them: with charset binary the text names become these.
TEXT_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})
BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})

TEMPORAL_FSP_TYPES = frozenset({"datetime", "timestamp", "time"})
FLOAT_TYPES = frozenset({"float", "double"})
ELEMENT_TYPES = frozenset({"enum", "set"})
# Types whose charset is the column's (TiDB `typesNeedCharset`); every other type is `binary`.
_CHARSET_TYPES = TEXT_TYPES | ELEMENT_TYPES
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
BINARY_CHARSET = "binary"
# TiDB `charset.GetDefaultCollation` and the bytes per character (`Maxlen`) of the charsets
# TiDB supports.
CHARSETS = {
    "utf8mb4": ("utf8mb4_bin", 4),
    "utf8": ("utf8_bin", 3),
    "utf8mb3": ("utf8_bin", 3),
    "latin1": ("latin1_bin", 1),
    "ascii": ("ascii_bin", 1),
    "binary": ("binary", 1),
    "gbk": ("gbk_chinese_ci", 2),
    "gb18030": ("gb18030_chinese_ci", 4),
}

# The Spark field metadata the writer reads and a read writes: a column's definition
# (`ddl.parse_column_definition`); the table a read returned, on its `_table` column
# (`writer.table.declared_table`).
MYSQL_TYPE_METADATA = "mysql_type"
TABLE_METADATA = "ticdc_table"


def default_collation(charset: str) -> str:
    """TiDB's default collation of a charset (`<charset>_bin` for one TiDB does not list)."""
    known = CHARSETS.get(charset)
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
        if base in TEMPORAL_FSP_TYPES:
            width = _DEFAULT_FLEN[base]
            return width + self.fsp + 1 if self.fsp > 0 else width
        if base in ELEMENT_TYPES:
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
        if self.base in TEMPORAL_FSP_TYPES:
            return self.decimal or 0
        return 0

    @property
    def tidb_decimal(self) -> int:
        """TiDB's `FieldType.Decimal`: scale or fsp; -1 for FLOAT/DOUBLE without one."""
        if self.base in FLOAT_TYPES:
            return -1 if self.decimal is None else self.decimal
        if self.base == "decimal":
            return self.scale
        return self.fsp

    def to_sql(self) -> str:
        """The type as `SHOW CREATE TABLE` prints it; `parse_mysql_type` reads it back."""
        text = self.base
        if self.base in ELEMENT_TYPES:
            text += "(" + ",".join(sql_quote(e) for e in self.elements) + ")"
        elif self.base in TEMPORAL_FSP_TYPES:
            if self.decimal is not None:
                text += f"({self.decimal})"
        elif self.length is not None:
            if self.decimal is not None and self.base in (FLOAT_TYPES | {"decimal"}):
                text += f"({self.length},{self.decimal})"
            else:
                text += f"({self.length})"
        if self.unsigned:
            text += " unsigned"
        if self.zerofill:
            text += " zerofill"
        if self.charset is not None and self.charset != BINARY_CHARSET:
            text += f" CHARACTER SET {self.charset}"
        if self.collation is not None and self.collation != BINARY_CHARSET:
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
        return primary_key_columns(self.indexes)

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


def primary_key_columns(indexes: tuple[Index, ...]) -> tuple[str, ...]:
    for index in indexes:
        if index.primary:
            return index.columns
    return ()


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
        resolved = attrs.evolve(t, charset=BINARY_CHARSET, collation=BINARY_CHARSET)
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
        per_char = CHARSETS[resolved.charset][1] if resolved.charset in CHARSETS else 4
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
    if not (base in INTEGER_TYPES or base in FLOAT_TYPES or base == "decimal"):
        unsigned = zerofill = False
    if base in INTEGER_TYPES:
        dec = None
        if length == _DEFAULT_FLEN[base] - (1 if unsigned and base != "bigint" else 0):
            length = None
    elif base in FLOAT_TYPES:
        if dec is None and length is not None:
            length, dec = (None, None) if length == _DEFAULT_FLEN[base] else (length, 0)
    elif base == "decimal":
        length = _DEFAULT_FLEN["decimal"] if length is None else length
        dec = 0 if dec is None else dec
    elif base in TEMPORAL_FSP_TYPES:
        length, dec = None, dec or None
    elif base in ("char", "binary", "bit"):
        length, dec = (1 if length is None else length), None
    elif base in ("varchar", "varbinary", "vector"):
        dec = None
    else:
        length = dec = None
    return attrs.evolve(t, length=length, decimal=dec, unsigned=unsigned, zerofill=zerofill)


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


def sql_quote(value: str) -> str:
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

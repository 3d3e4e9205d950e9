"""The MySQL column type a row message implies, for protocols that carry less than a table
schema (avro, debezium, canal-json, open-protocol): each gives a type's base name and
some of its details, this module fills in the rest with the closest type that keeps every
value the protocol can carry.

What a base name alone cannot say, and what is chosen instead:

    char, varchar, varbinary without a length         -> length 255 / 16383 / 65535
    binary without a length                           -> varbinary(255) (binary(255) would
                                                         pad the values to 255 bytes)
    decimal without precision and scale               -> decimal(65,30)
    bit without a width                               -> bit(64)
    datetime, timestamp, time without an fsp          -> fsp 6
    enum, set without elements                        -> smallint unsigned (the index),
                                                         bigint unsigned (the bitmask)

The values decoders give (an index for ENUM, a bitmask for SET, text for temporal types)
stay exact under these types; only the declared type is wider than the source's.

Knows `ticdc_sink.schema` and `ticdc_sink.ddl`; nothing of Kafka or Spark.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ticdc_sink.ddl import normalize_default, parse_mysql_type
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema, resolve_type

__all__ = ["closest_type", "implied_table", "type_from_text"]

_DEFAULT_LENGTH = {"char": 255, "varchar": 16383, "varbinary": 65535, "bit": 64}
_FSP_TYPES = frozenset({"datetime", "timestamp", "time"})
_INTEGER_BASES = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})
_PLAIN = frozenset(
    {
        "year",
        "date",
        "json",
        "vector",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
    }
)


def closest_type(
    base: str,
    *,
    unsigned: bool = False,
    length: int | None = None,
    scale: int | None = None,
    elements: Sequence[str] | None = None,
) -> MySQLType:
    """The MySQL type of base name `base` (TiDB's `TypeToStr` name, any case) with the
    details given, the rest filled in as the module docstring says.

    Raises:
        SchemaError: `base` is not a MySQL type TiCDC replicates.
    """
    base = base.strip().lower()
    if base in _INTEGER_BASES:
        return MySQLType(base, unsigned=unsigned)
    if base == "decimal":
        if length is None:
            return MySQLType("decimal", 65, 30, unsigned=unsigned)
        return MySQLType("decimal", length, scale or 0, unsigned=unsigned)
    if base == "binary" and length is None:
        # Not binary(255): BINARY(n) values are padded to n bytes, so a wider BINARY
        # would change the values written again.
        return MySQLType("varbinary", 255)
    if base in _DEFAULT_LENGTH:
        return MySQLType(base, length or _DEFAULT_LENGTH[base])
    if base in _FSP_TYPES:
        return MySQLType(base, decimal=6 if scale is None else scale)
    if base in ("enum", "set"):
        if elements:
            return MySQLType(base, elements=tuple(elements))
        return MySQLType("smallint" if base == "enum" else "bigint", unsigned=True)
    if base in ("float", "double"):
        return MySQLType(base, length, scale, unsigned=unsigned)
    if base in _PLAIN:
        return MySQLType(base)
    raise SchemaError(f"MySQL type {base!r} is not one TiCDC replicates")


def type_from_text(text: str, *, whole: bool = False) -> MySQLType:
    """A type as canal-json's `mysqlType` writes it: a whole type (`decimal(10,2)`,
    `enum('a','b')`, with content-compatible) is read as such; a base name with flags
    (`int unsigned`, `decimal unsigned zerofill`) is completed by `closest_type`, unless
    `whole` says the message writes whole types (it has a type with parameters), where a
    bare name is the whole type (`time` is time(0), `float` a float without length).

    Raises:
        SchemaError: not a MySQL type.
    """
    if "(" in text or whole:
        try:
            return parse_mysql_type(text)
        except SchemaError:
            pass  # TiDB prints some types MySQL's grammar does not take; use the name
    words = text.replace("(", " ").split()
    if not words:
        raise SchemaError(f"MySQL type {text!r} is empty")
    flags = [w.lower() for w in words[1:]]
    t = closest_type(words[0], unsigned="unsigned" in flags or "zerofill" in flags)
    if "zerofill" in flags and (t.is_integer or t.base in ("float", "double", "decimal")):
        t = attrs.evolve(t, zerofill=True)
    return t


def implied_table(
    database: str,
    table: str,
    columns: Sequence[tuple[str, MySQLType]],
    primary_key: Sequence[str] = (),
    *,
    nullable: Sequence[bool] | None = None,
    defaults: Sequence[str | None] | None = None,
    indexes: Sequence[Index] = (),
) -> TableSchema:
    """A table schema from a row message's column names and types, as the writer would
    hold it (`schema.resolve_type`: charsets filled in, one spelling per type; column ids
    1, 2, ... in message order): `primary_key` its primary key, `indexes` its other keys;
    `nullable` each column's NULL flag and `defaults` its default where the protocol
    carries them, else every column but the primary key's is nullable, without default.

    Raises:
        DecodeError: a column name that is not a non-empty string, or one named twice.
    """
    seen: set[str] = set()
    for name, _ in columns:
        if not isinstance(name, str) or not name:
            raise DecodeError(
                f"{database}.{table} names a column {name!r}; a column name is a non-empty string"
            )
        if name in seen:
            raise DecodeError(f"{database}.{table} names its column {name!r} twice")
        seen.add(name)
    flags = nullable if nullable is not None else [name not in primary_key for name, _ in columns]
    values = defaults if defaults is not None else [None] * len(columns)
    keys = tuple(indexes)
    if primary_key:
        keys = (Index("PRIMARY", tuple(primary_key), unique=True, primary=True), *keys)
    return TableSchema(
        database,
        table,
        tuple(
            Column(
                name,
                resolve_type(t),
                nullable=flag and name not in primary_key,
                default=normalize_default(default, resolve_type(t)),
                column_id=i,
            )
            for i, ((name, t), flag, default) in enumerate(
                zip(columns, flags, values, strict=True), 1
            )
        ),
        keys,
    )

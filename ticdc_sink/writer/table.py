"""The table a write sends, built from the DataFrame's Spark schema (`build_table_schema`):
the Spark -> MySQL type mapping (`spark_to_mysql`), StructField metadata `mysql_type`, the
`column-types`, `table-ddl` and `primary-key` options, and the table a read returned
(`declared_table`). Only `pyspark.sql.types` is used; it needs no SparkSession.

Precedence when building a table (later wins): the default Spark mapping < StructField
metadata `mysql_type` < option `column-types` < option `table-ddl`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import pyspark.sql.types as T

from ticdc_sink.ddl import ColumnDefinition, ParsedDDL, parse_column_definition, parse_table_ddl
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import (
    MYSQL_TYPE_METADATA,
    TABLE_METADATA,
    Column,
    Index,
    MySQLType,
    TableSchema,
    primary_key_columns,
    resolve_type,
    stable_table_id,
    stable_version,
    table_schema_from_json,
)

__all__ = ["build_table_schema", "declared_table", "spark_to_mysql"]


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
    primary = set(primary_key_columns(indexes))
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

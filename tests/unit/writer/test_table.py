"""Unit tests of ticdc_sink.writer.table: the Spark -> MySQL mapping and the table built from
a DataFrame's schema (options, DDL, ids, a read's table). No SparkSession:
pyspark.sql.types are plain objects."""

from __future__ import annotations

import datetime as dt

import pyspark.sql.types as T
import pytest

from ticdc_sink import tso
from ticdc_sink.ddl import ColumnDefinition, column_definition_sql, parse_table_ddl
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import Column, MySQLType, TableSchema, stable_table_id, table_schema_to_json
from ticdc_sink.writer.table import build_table_schema, declared_table, spark_to_mysql

# ------------------------------------------------------------------ Spark mapping


@pytest.mark.parametrize(
    ("spark", "expected"),
    [
        (T.LongType(), MySQLType("bigint")),
        (T.IntegerType(), MySQLType("int")),
        (T.ShortType(), MySQLType("smallint")),
        (T.ByteType(), MySQLType("tinyint")),
        (T.FloatType(), MySQLType("float")),
        (T.DoubleType(), MySQLType("double")),
        (T.DecimalType(12, 4), MySQLType("decimal", length=12, decimal=4)),
        (T.StringType(), MySQLType("text")),
        (T.VarcharType(20), MySQLType("varchar", length=20)),
        (T.CharType(3), MySQLType("char", length=3)),
        (T.BinaryType(), MySQLType("blob")),
        (T.DateType(), MySQLType("date")),
        (T.TimestampType(), MySQLType("timestamp", decimal=6)),
        (T.TimestampNTZType(), MySQLType("datetime", decimal=6)),
        (T.BooleanType(), MySQLType("tinyint", length=1)),
        (T.MapType(T.StringType(), T.LongType()), MySQLType("json")),
        (T.StructType([T.StructField("a", T.LongType())]), MySQLType("json")),
        (T.ArrayType(T.LongType()), MySQLType("json")),
    ],
)
def test_spark_mapping(spark: T.DataType, expected: MySQLType) -> None:
    assert spark_to_mysql(spark, {}, column="c").type == expected


@pytest.mark.skipif(not hasattr(T, "TimeType"), reason="pyspark without TimeType")
def test_spark_time_type() -> None:
    assert spark_to_mysql(T.TimeType(3), column="t").type == MySQLType("time", decimal=3)


def _unsupported_types() -> list[T.DataType]:
    types: list[T.DataType] = [
        T.NullType(),
        T.CalendarIntervalType(),
        T.DayTimeIntervalType(),
        T.YearMonthIntervalType(),
    ]
    if hasattr(T, "VariantType"):
        types.append(T.VariantType())
    return types


@pytest.mark.parametrize("spark", _unsupported_types(), ids=lambda t: t.simpleString())
def test_unsupported_spark_type_names_column_and_type(spark: T.DataType) -> None:
    with pytest.raises(SchemaError) as info:
        spark_to_mysql(spark, None, column="weird")
    assert "weird" in str(info.value)
    assert spark.simpleString() in str(info.value)
    assert info.value.column == "weird"


def test_metadata_mysql_type_wins() -> None:
    got = spark_to_mysql(T.LongType(), {"mysql_type": "int unsigned"}, column="n")
    assert got == ColumnDefinition(MySQLType("int", unsigned=True))
    got = spark_to_mysql(T.LongType(), {"mysql_type": "int NOT NULL DEFAULT 5"}, column="n")
    assert got == ColumnDefinition(MySQLType("int"), nullable=False, default="5")
    # even an unsupported Spark type can be written when the MySQL type is given
    assert spark_to_mysql(T.NullType(), {"mysql_type": "json"}, column="n").type.base == "json"


def test_bad_metadata_mysql_type_names_column() -> None:
    with pytest.raises(SchemaError, match="column n: metadata mysql_type"):
        spark_to_mysql(T.LongType(), {"mysql_type": "integr"}, column="n")
    with pytest.raises(SchemaError, match="must be a string"):
        spark_to_mysql(T.LongType(), {"mysql_type": 5}, column="n")


# ------------------------------------------------------------------ build_table_schema


def _frame(*fields: T.StructField) -> T.StructType:
    return T.StructType(list(fields))


FRAME = _frame(
    T.StructField("id", T.LongType(), False),
    T.StructField("name", T.StringType()),
    T.StructField("price", T.DecimalType(10, 2), metadata={"mysql_type": "decimal(12,4)"}),
    T.StructField("_op", T.StringType()),
)


def test_build_from_spark_schema() -> None:
    table = build_table_schema("shop", "orders", FRAME, reserved={"_op"})
    assert table.column_names == ("id", "name", "price")
    assert [c.column_id for c in table.columns] == [1, 2, 3]
    assert table.column("id").type == MySQLType("bigint", charset="binary", collation="binary")
    # Spark's nullable flag declares nothing: a non-nullable field is still nullable.
    assert table.column("id").nullable
    assert table.column("name").nullable
    assert table.column("name").type == MySQLType(
        "text", charset="utf8mb4", collation="utf8mb4_bin"
    )
    assert table.column("price").type.to_sql() == "decimal(12,4)"  # metadata wins
    assert table.indexes == ()
    assert table.handle_key == ()
    assert table.handle_key_indexes == ()


def test_spark_nullability_alone_changes_neither_the_table_nor_its_version() -> None:
    # A literal is not nullable, the same column from a file source is: one query's
    # micro-batches would flip NOT NULL (issue 23, finding 5).
    def frame(nullable: bool) -> T.StructType:
        return _frame(
            T.StructField("id", T.LongType(), nullable),
            T.StructField("v", T.StringType(), nullable),
            T.StructField("_op", T.StringType(), nullable),
        )

    literal, from_file = (
        build_table_schema("d", "t", frame(nullable), reserved={"_op"}, primary_key=("id",))
        for nullable in (False, True)
    )
    assert literal == from_file
    assert literal.column("v").nullable and not literal.column("id").nullable


def test_not_null_and_defaults_are_declared_in_mysql_type_or_column_types() -> None:
    frame = _frame(
        T.StructField("a", T.LongType(), metadata={"mysql_type": "int unsigned NOT NULL"}),
        T.StructField("b", T.StringType(), metadata={"mysql_type": "varchar(8) DEFAULT 'x'"}),
        T.StructField("c", T.StringType(), False),
    )
    table = build_table_schema("d", "t", frame, column_types={"c": "text NOT NULL"})
    assert [(c.name, c.type.to_sql(), c.nullable, c.default) for c in table.columns] == [
        ("a", "int unsigned", False, None),
        ("b", "varchar(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", True, "x"),
        ("c", "text CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", False, None),
    ]
    with pytest.raises(SchemaError, match="give the type, NOT NULL and DEFAULT only"):
        build_table_schema("d", "t", frame, column_types={"a": "int PRIMARY KEY"})


def test_precedence_metadata_column_types_ddl() -> None:
    frame = _frame(
        T.StructField("a", T.LongType(), metadata={"mysql_type": "int"}),
        T.StructField("b", T.LongType(), metadata={"mysql_type": "int"}),
    )
    table = build_table_schema("d", "t", frame, column_types={"a": "smallint unsigned"})
    assert table.column("a").type.to_sql() == "smallint unsigned"  # column-types > metadata
    assert table.column("b").type.to_sql() == "int"
    table = build_table_schema(
        "d",
        "t",
        frame,
        column_types={"a": "smallint unsigned"},
        table_ddl="CREATE TABLE t (b bigint NOT NULL, a mediumint)",
    )
    assert table.column("a").type.base == "mediumint"  # table-ddl > column-types
    assert table.column_names == ("b", "a")  # DDL order
    assert not table.column("b").nullable


def test_column_types_errors() -> None:
    with pytest.raises(SchemaError, match="column-types names column 'nope'") as info:
        build_table_schema("d", "t", FRAME, reserved={"_op"}, column_types={"nope": "int"})
    assert info.value.column == "nope"
    with pytest.raises(SchemaError, match="column name: option column-types") as info:
        build_table_schema("d", "t", FRAME, reserved={"_op"}, column_types={"name": "strng"})
    assert info.value.column == "name"
    with pytest.raises(SchemaError, match="names column 'nope', which the DataFrame does not"):
        build_table_schema("d", "t", FRAME, reserved={"_op"}, column_types={"nope": "int"})
    # A metadata column is in the DataFrame, but is no table column: say that.
    with pytest.raises(SchemaError, match="names column '_op', which is a metadata column"):
        build_table_schema("d", "t", FRAME, reserved={"_op"}, column_types={"_op": "int"})


def test_unsupported_spark_column_in_frame() -> None:
    frame = _frame(T.StructField("iv", T.DayTimeIntervalType()))
    with pytest.raises(SchemaError, match="column iv has Spark type interval day to second"):
        build_table_schema("d", "t", frame)


def test_ddl_and_frame_must_have_the_same_columns() -> None:
    frame = _frame(T.StructField("a", T.LongType()), T.StructField("x", T.LongType()))
    with pytest.raises(SchemaError) as info:
        build_table_schema("d", "t", frame, table_ddl="CREATE TABLE t (a int, b int)")
    message = str(info.value)
    assert "columns b of table-ddl are not in the DataFrame" in message
    assert "DataFrame columns x are not in table-ddl" in message


def test_ddl_names() -> None:
    frame = _frame(T.StructField("a", T.LongType()))
    table = build_table_schema(None, None, frame, table_ddl="CREATE TABLE `s`.`t` (a int)")
    assert (table.database, table.table) == ("s", "t")
    table = build_table_schema("opt", "t", frame, table_ddl="CREATE TABLE `t` (a int)")
    assert table.database == "opt"  # database absent from the DDL: the option's
    with pytest.raises(SchemaError, match="creates table 'u' but the table is 't'"):
        build_table_schema("d", "t", frame, table_ddl="CREATE TABLE u (a int)")
    with pytest.raises(SchemaError, match="in database 'x' but the database is 'd'"):
        build_table_schema("d", "t", frame, table_ddl="CREATE TABLE x.t (a int)")
    with pytest.raises(
        SchemaError, match="no database name; set option 'database', or add a '_database' column"
    ):
        build_table_schema(None, "t", frame, table_ddl="CREATE TABLE t (a int)")
    with pytest.raises(
        SchemaError,
        match="no database and table name; set option 'database' and 'table', or add a "
        "'_database' and a '_table' column",
    ):
        build_table_schema(None, None, frame)


def test_primary_key_option() -> None:
    frame = _frame(T.StructField("a", T.LongType()), T.StructField("b", T.StringType()))
    table = build_table_schema("d", "t", frame, primary_key=("b", "a"))
    assert table.primary_key == ("b", "a")
    assert not table.column("a").nullable and not table.column("b").nullable
    assert table.handle_key == ("a", "b")  # column order, not index order
    assert table.handle_key_indexes == (0, 1)
    assert not table.pk_is_handle
    with pytest.raises(SchemaError, match="primary-key names zz"):
        build_table_schema("d", "t", frame, primary_key=("zz",))
    with pytest.raises(SchemaError, match="table-ddl's primary key is a"):
        build_table_schema(
            "d",
            "t",
            frame,
            primary_key=("b",),
            table_ddl="CREATE TABLE t (a int PRIMARY KEY, b text)",
        )
    same = build_table_schema(
        "d", "t", frame, primary_key=("a",), table_ddl="CREATE TABLE t (a int PRIMARY KEY, b text)"
    )
    assert same.primary_key == ("a",)


def test_duplicate_frame_columns_case_insensitive() -> None:
    frame = _frame(T.StructField("a", T.LongType()), T.StructField("A", T.LongType()))
    with pytest.raises(SchemaError, match="case-insensitive"):
        build_table_schema("d", "t", frame)


def test_options_and_ddl_name_columns_in_any_case() -> None:
    # Spark and MySQL match column names in any case; so do the options naming columns.
    frame = _frame(
        T.StructField("Id", T.LongType()),
        T.StructField("price", T.StringType()),
        T.StructField("_OP", T.StringType()),
    )
    table = build_table_schema(
        "d", "t", frame, reserved={"_OP"}, column_types={"PRICE": "decimal(10,2)"}
    )
    assert table.column("price").type.to_sql() == "decimal(10,2)"
    table = build_table_schema("d", "t", frame, reserved={"_OP"}, primary_key=("ID",))
    assert table.primary_key == table.handle_key == ("Id",)  # the column's own spelling
    assert not table.column("Id").nullable
    ddl = "CREATE TABLE t (ID bigint NOT NULL, Price text, PRIMARY KEY (id))"
    table = build_table_schema("d", "t", frame, reserved={"_OP"}, table_ddl=ddl)
    assert table.column_names == ("ID", "Price")  # the DDL's spelling goes on the wire
    assert table.primary_key == ("ID",)
    with pytest.raises(SchemaError, match="names column '_op', which is a metadata column"):
        build_table_schema("d", "t", frame, reserved={"_OP"}, column_types={"_op": "int"})
    with pytest.raises(SchemaError, match="names column 'price' twice, as 'price' and 'Price'"):
        build_table_schema(
            "d", "t", frame, reserved={"_OP"}, column_types={"price": "int", "Price": "int"}
        )
    with pytest.raises(SchemaError, match="primary-key repeats a column"):
        build_table_schema("d", "t", frame, reserved={"_OP"}, primary_key=("id", "ID"))


def test_ddl_keys_name_columns_in_any_case() -> None:
    parsed = parse_table_ddl(
        "CREATE TABLE t (Id int NOT NULL, Code varchar(8), PRIMARY KEY (ID), UNIQUE KEY uk (code))"
    )
    assert [(i.name, i.columns) for i in parsed.indexes] == [
        ("PRIMARY", ("Id",)),
        ("uk", ("Code",)),
    ]


def test_only_reserved_columns() -> None:
    with pytest.raises(SchemaError, match="no columns"):
        build_table_schema("d", "t", _frame(T.StructField("_op", T.StringType())), reserved={"_op"})


# ------------------------------------------------------------------ ids


def test_table_id_is_stable_and_positive() -> None:
    first = build_table_schema("shop", "orders", FRAME, reserved={"_op"})
    again = build_table_schema("shop", "orders", FRAME, reserved={"_op"})
    other = build_table_schema("shop", "items", FRAME, reserved={"_op"})
    assert first.table_id == again.table_id == stable_table_id("shop", "orders")
    assert 0 < first.table_id < 2**31
    assert other.table_id != first.table_id


def test_version_is_stable_and_follows_the_schema() -> None:
    first = build_table_schema("shop", "orders", FRAME, reserved={"_op"})
    again = build_table_schema("shop", "orders", FRAME, reserved={"_op"})
    assert first.version == again.version
    assert 0 < first.version < 2**63
    physical = dt.datetime.fromtimestamp(tso.physical_ms(first.version) / 1000, dt.UTC)
    assert physical.year == 2020  # reads as a TSO
    renamed = build_table_schema("shop", "orders2", FRAME, reserved={"_op"})
    assert renamed.version == first.version  # RENAME keeps the version, as in TiDB
    retyped = build_table_schema(
        "shop", "orders", FRAME, reserved={"_op"}, column_types={"name": "varchar(20)"}
    )
    keyed = build_table_schema("shop", "orders", FRAME, reserved={"_op"}, primary_key=("id",))
    assert len({first.version, retyped.version, keyed.version}) == 3


def test_explicit_ids_win() -> None:
    table = build_table_schema("s", "t", FRAME, reserved={"_op"}, table_id=148, version=7)
    assert (table.table_id, table.version) == (148, 7)


def test_table_schema_is_hashable_and_comparable() -> None:
    a = build_table_schema("s", "t", FRAME, reserved={"_op"}, primary_key=("id",))
    b = build_table_schema("s", "t", FRAME, reserved={"_op"}, primary_key=("id",))
    assert a.handle_key == ("id",)  # fill the cached properties first
    assert a == b and hash(a) == hash(b)
    assert Column("x", MySQLType("int")) == Column("x", MySQLType("int"))


# ------------------------------------------------------------------ a read's table (ticdc_table)


def _read_frame(table: TableSchema, *extra: T.StructField) -> T.StructType:
    """A read's DataFrame schema: the columns with their definitions, `_table` with the
    table (as `read.rows.arrow_schema` writes them)."""
    fields = [
        T.StructField(c.name, T.StringType(), metadata={"mysql_type": column_definition_sql(c)})
        for c in table.columns
    ]
    metadata = {"ticdc_table": table_schema_to_json(table)}
    return T.StructType([*fields, *extra, T.StructField("_table", T.StringType(), False, metadata)])


READ = build_table_schema(
    "shop",
    "orders",
    _frame(T.StructField("id", T.LongType()), T.StructField("code", T.StringType())),
    table_ddl=(
        "CREATE TABLE shop.orders (id bigint NOT NULL, code varchar(8) NOT NULL DEFAULT 'x', "
        "PRIMARY KEY (id), UNIQUE KEY uk_code (code))"
    ),
    table_id=148,
    version=447984074911121426,
)


def test_a_reads_table_gives_its_keys_id_and_version_back() -> None:
    frame = _read_frame(READ)
    declared = declared_table(frame, "_table")
    assert declared == READ
    again = build_table_schema("shop", "orders", frame, reserved={"_table"}, declared=declared)
    assert again == READ


def test_a_reads_table_with_a_column_more_keeps_its_keys_and_id_not_its_version() -> None:
    frame = _read_frame(READ, T.StructField("note", T.StringType()))
    declared = declared_table(frame, "_table")
    again = build_table_schema("shop", "orders", frame, reserved={"_table"}, declared=declared)
    assert again.indexes == READ.indexes and again.table_id == READ.table_id
    assert again.version != READ.version  # another schema: a version of its own
    # another table's name: the keys, but a table id of its own
    other = build_table_schema("shop", "copy", frame, reserved={"_table"}, declared=declared)
    assert other.indexes == READ.indexes and other.table_id != READ.table_id


def test_primary_key_replaces_a_reads_primary_key() -> None:
    frame = _read_frame(READ)
    declared = declared_table(frame, "_table")
    again = build_table_schema(
        "shop", "orders", frame, reserved={"_table"}, declared=declared, primary_key=("code",)
    )
    assert again.primary_key == ("code",)
    assert [i.name for i in again.indexes] == ["PRIMARY", "uk_code"]


def test_a_ticdc_table_metadata_that_is_not_a_table_names_the_column() -> None:
    frame = T.StructType([T.StructField("_t", T.StringType(), metadata={"ticdc_table": "{}"})])
    with pytest.raises(SchemaError, match="column _t: metadata ticdc_table: .* drop the") as info:
        declared_table(frame, "_t")
    assert info.value.column == "_t"
    assert declared_table(frame, "_table") is None

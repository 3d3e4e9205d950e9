"""Unit tests of ticdc_sink.schema: MySQL types, DDL parsing, the Spark mapping and the
table model (handle key, ids). No SparkSession: pyspark.sql.types are plain objects."""

from __future__ import annotations

import datetime as dt

import pyspark.sql.types as T
import pytest

from ticdc_sink import tso
from ticdc_sink.ddl import (
    ColumnDefinition,
    column_definition_sql,
    parse_column_definition,
    parse_mysql_type,
    parse_table_ddl,
)
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import (
    Column,
    Index,
    MySQLType,
    TableSchema,
    resolve_type,
    stable_table_id,
    table_schema_to_json,
)
from ticdc_sink.writer.table import build_table_schema, declared_table, spark_to_mysql

# ------------------------------------------------------------------ parse_mysql_type


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tinyint", MySQLType("tinyint")),
        ("tinyint(1)", MySQLType("tinyint", length=1)),
        ("TINYINT UNSIGNED", MySQLType("tinyint", unsigned=True)),
        ("smallint(5) unsigned", MySQLType("smallint", length=5, unsigned=True)),
        ("mediumint(9) zerofill", MySQLType("mediumint", length=9, unsigned=True, zerofill=True)),
        ("int", MySQLType("int")),
        ("integer", MySQLType("int")),
        ("int unsigned", MySQLType("int", unsigned=True)),
        ("int(11) unsigned zerofill", MySQLType("int", length=11, unsigned=True, zerofill=True)),
        ("bigint(20) unsigned", MySQLType("bigint", length=20, unsigned=True)),
        ("bool", MySQLType("tinyint", length=1)),
        ("boolean", MySQLType("tinyint", length=1)),
        ("float", MySQLType("float")),
        ("float unsigned", MySQLType("float", unsigned=True)),
        ("float(7,3)", MySQLType("float", length=7, decimal=3)),
        ("float(10)", MySQLType("float")),
        ("float(30)", MySQLType("double")),
        ("double", MySQLType("double")),
        ("real", MySQLType("double")),
        ("double precision", MySQLType("double")),
        ("double(10,2) unsigned", MySQLType("double", length=10, decimal=2, unsigned=True)),
        ("decimal", MySQLType("decimal")),
        ("decimal(10,2)", MySQLType("decimal", length=10, decimal=2)),
        ("decimal(5)", MySQLType("decimal", length=5)),
        ("numeric(8,3)", MySQLType("decimal", length=8, decimal=3)),
        ("decimal(10,2) unsigned", MySQLType("decimal", length=10, decimal=2, unsigned=True)),
        ("date", MySQLType("date")),
        ("datetime", MySQLType("datetime")),
        ("datetime(3)", MySQLType("datetime", decimal=3)),
        ("timestamp", MySQLType("timestamp")),
        ("timestamp(6)", MySQLType("timestamp", decimal=6)),
        ("time(2)", MySQLType("time", decimal=2)),
        ("year", MySQLType("year")),
        ("year(4)", MySQLType("year")),
        ("bit", MySQLType("bit")),
        ("bit(5)", MySQLType("bit", length=5)),
        ("json", MySQLType("json")),
        ("enum('a','b')", MySQLType("enum", elements=("a", "b"))),
        ("enum('it''s','x ')", MySQLType("enum", elements=("it's", "x"))),
        ("set('a','b')", MySQLType("set", elements=("a", "b"))),
        ("char", MySQLType("char")),
        ("char(3)", MySQLType("char", length=3)),
        ("varchar(20)", MySQLType("varchar", length=20)),
        (
            "varchar(20) CHARACTER SET latin1 COLLATE latin1_bin",
            MySQLType("varchar", length=20, charset="latin1", collation="latin1_bin"),
        ),
        (
            "varchar(20) COLLATE utf8_general_ci",
            MySQLType("varchar", 20, charset="utf8", collation="utf8_general_ci"),
        ),
        ("tinytext", MySQLType("tinytext")),
        ("text", MySQLType("text")),
        ("mediumtext", MySQLType("mediumtext")),
        ("longtext", MySQLType("longtext")),
        ("binary", MySQLType("binary")),
        ("binary(4)", MySQLType("binary", length=4)),
        ("varbinary(10)", MySQLType("varbinary", length=10)),
        ("tinyblob", MySQLType("tinyblob")),
        ("blob", MySQLType("blob")),
        ("mediumblob", MySQLType("mediumblob")),
        ("longblob", MySQLType("longblob")),
        ("char(3) CHARACTER SET binary", MySQLType("binary", length=3, charset="binary")),
        ("text CHARACTER SET binary", MySQLType("blob", charset="binary")),
        ("vector(3)", MySQLType("vector", length=3)),
    ],
)
def test_parse_mysql_type(text: str, expected: MySQLType) -> None:
    assert parse_mysql_type(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "int unsigned",
        "int(11) unsigned zerofill",
        "decimal(10,2)",
        "varchar(20)",
        "enum('a','b''c','d\\\\e')",
        "set('a','b')",
        "datetime(3)",
        "bit(5)",
        "tinyint(1)",
        "binary(4)",
        "json",
        "float(7,3) unsigned",
        "varchar(20) CHARACTER SET latin1 COLLATE latin1_bin",
    ],
)
def test_to_sql_round_trips(text: str) -> None:
    parsed = parse_mysql_type(text)
    assert parse_mysql_type(parsed.to_sql()) == parsed


def test_to_sql_spelling() -> None:
    assert parse_mysql_type("INT(11) UNSIGNED").to_sql() == "int(11) unsigned"
    assert parse_mysql_type("ENUM('a','b')").to_sql() == "enum('a','b')"
    assert parse_mysql_type("numeric(8,3)").to_sql() == "decimal(8,3)"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("foo", "'foo'"),
        ("varchar", "needs a length"),
        ("varchar(70000)", "0..65535"),
        ("decimal(70,2)", "1..65"),
        ("decimal(5,6)", "cannot exceed"),
        ("datetime(7)", "0..6"),
        ("bit(65)", "1..64"),
        ("int(300)", "1..255"),
        ("int not null", "not part of a type"),
        ("varchar(3) default 'x'", "not part of a type"),
        ("int, b int", "single column type"),
        ("enum()", "at least one member"),
        ("set('a,b')", "cannot contain ','"),
        ("varchar(10) CHARACTER SET klingon", "unknown character set"),
        ("geometry", "not supported"),
        ("date zerofill", "numeric types only"),
        ("varchar(", "cannot parse"),
    ],
)
def test_parse_mysql_type_errors_name_the_text(text: str, fragment: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_mysql_type(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


# ------------------------------------------------------------------ flen, scale, fsp


@pytest.mark.parametrize(
    ("text", "flen"),
    [
        ("tinyint", 4),
        ("tinyint unsigned", 3),
        ("tinyint(1)", 1),
        ("smallint", 6),
        ("smallint unsigned", 5),
        ("mediumint", 9),
        ("mediumint unsigned", 8),
        ("int", 11),
        ("int unsigned", 10),
        ("bigint", 20),
        ("bigint unsigned", 20),
        ("float", 12),
        ("double", 22),
        ("float(7,3)", 7),
        ("decimal", 10),
        ("decimal(12,6)", 12),
        ("date", 10),
        ("datetime", 19),
        ("datetime(3)", 23),
        ("timestamp", 19),
        ("timestamp(6)", 26),
        ("time", 10),
        ("time(2)", 13),
        ("year", 4),
        ("json", 4294967295),
        ("bit", 1),
        ("bit(5)", 5),
        ("enum('a','b')", 1),
        ("enum('a','bcd')", 3),
        ("enum('é')", 2),
        ("set('a','b','c')", len("a,b,c")),
        ("set('ab','c')", 4),
        ("char", 1),
        ("char(3)", 3),
        ("binary", 1),
        ("varchar(20)", 20),
        ("varbinary(10)", 10),
        ("tinytext", 255),
        ("text", 65535),
        ("mediumtext", 16777215),
        ("longtext", 4294967295),
        ("tinyblob", 255),
        ("blob", 65535),
        ("mediumblob", 16777215),
        ("longblob", 4294967295),
        ("vector", -1),
        ("vector(3)", 3),
    ],
)
def test_flen_defaults(text: str, flen: int) -> None:
    assert parse_mysql_type(text).flen == flen


def test_scale_fsp_and_tidb_decimal() -> None:
    assert parse_mysql_type("decimal(10,2)").scale == 2
    assert parse_mysql_type("decimal(10)").scale == 0
    assert parse_mysql_type("decimal").tidb_decimal == 0
    assert parse_mysql_type("datetime(3)").fsp == 3
    assert parse_mysql_type("timestamp").fsp == 0
    assert parse_mysql_type("datetime(3)").scale == 0
    assert parse_mysql_type("decimal(10,2)").fsp == 0
    assert parse_mysql_type("float").tidb_decimal == -1
    assert parse_mysql_type("double(10,4)").tidb_decimal == 4
    assert parse_mysql_type("time(2)").tidb_decimal == 2


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


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("int(11)", "int"),  # TiDB's own width: the same FieldType as int
        ("int(10) unsigned", "int unsigned"),
        ("bigint(20) unsigned zerofill", "bigint unsigned zerofill"),
        ("tinyint(1)", "tinyint(1)"),
        ("int(5)", "int(5)"),
        ("decimal", "decimal(10,0)"),
        ("decimal(7)", "decimal(7,0)"),
        ("char", "char(1) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
        ("bit", "bit(1)"),
        ("datetime(0)", "datetime"),
        ("year(4)", "year"),
        ("text(60)", "tinytext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),  # 240 bytes
        ("text(20000)", "mediumtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
        ("text(20000) CHARACTER SET latin1", "text CHARACTER SET latin1 COLLATE latin1_bin"),
    ],
)
def test_one_spelling_per_type_tidb_cannot_tell_apart(written: str, canonical: str) -> None:
    resolved = resolve_type(parse_mysql_type(written))
    assert resolved.to_sql() == canonical
    # and the same flen and decimal as TiDB gives the type as written
    as_written = parse_mysql_type(written)
    if as_written.base not in ("text", "blob"):
        assert (resolved.flen, resolved.tidb_decimal) == (as_written.flen, as_written.tidb_decimal)


@pytest.mark.parametrize(
    "text",
    [
        "varchar(20) NOT NULL DEFAULT 'it''s'",
        "int unsigned",
        "datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)",
        "bit(5) DEFAULT b'101'",
        "decimal(10,2) DEFAULT '-1.50'",
        "float DEFAULT '1.5'",
        "enum('a','b') NOT NULL DEFAULT 'b'",
        "char(3) CHARACTER SET latin1",
        "varchar(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
        "timestamp DEFAULT '2020-01-02 03:04:05'",
        "text",
    ],
)
def test_a_column_definition_reads_back_as_it_is_written(text: str) -> None:
    parsed = parse_column_definition(text)
    column = Column("c", resolve_type(parsed.type), parsed.nullable, parsed.default)
    assert column_definition_sql(column) == text
    again = parse_column_definition(column_definition_sql(column))
    assert Column("c", resolve_type(again.type), again.nullable, again.default) == column


def test_bad_metadata_mysql_type_names_column() -> None:
    with pytest.raises(SchemaError, match="column n: metadata mysql_type"):
        spark_to_mysql(T.LongType(), {"mysql_type": "integr"}, column="n")
    with pytest.raises(SchemaError, match="must be a string"):
        spark_to_mysql(T.LongType(), {"mysql_type": 5}, column="n")


# ------------------------------------------------------------------ parse_table_ddl

SHOW_CREATE = """CREATE TABLE `orders` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `code` varchar(20) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL DEFAULT 'x',
  `flag` tinyint(1) DEFAULT NULL,
  `created` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  `kind` enum('a','b') DEFAULT 'a',
  `bits` bit(5) DEFAULT b'101',
  `price` decimal(10,2) DEFAULT '1.5',
  `ratio` float DEFAULT '1.5',
  `qty` int(11) DEFAULT '-5',
  `note` text,
  `doc` json DEFAULT NULL,
  `raw` varbinary(16) DEFAULT NULL,
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,
  UNIQUE KEY `uk_code` (`code`,`flag`),
  KEY `idx_created` (`created`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci AUTO_INCREMENT=30001"""


def test_a_wide_decimal_default_keeps_every_digit() -> None:
    ddl = parse_table_ddl(
        "CREATE TABLE t (id int PRIMARY KEY, d decimal(65,30) DEFAULT '12345678901234567890.5')"
    )
    assert ddl.columns[1].default == "12345678901234567890.5" + "0" * 29


def test_float_defaults_are_go_shortest_text() -> None:
    ddl = parse_table_ddl(
        "CREATE TABLE t (id int PRIMARY KEY, f float DEFAULT '3.14', "
        "p float DEFAULT '1.262177448353619e-29', d double DEFAULT '1e-7', "
        "z double DEFAULT '-0')"
    )
    defaults = [c.default for c in ddl.columns[1:]]
    # 2^-96 as float32: Go's shortest text has 8 digits (the neighbours of a power of
    # two are unevenly far), where the first 9-digit rounding reading back has 9.
    assert defaults == ["3.14", "0.000000000000000000000000000012621775", "0.0000001", "0"]


def test_parse_show_create_table() -> None:
    ddl = parse_table_ddl(SHOW_CREATE)
    assert ddl.database is None
    assert ddl.table == "orders"
    assert ddl.charset == "utf8mb4"
    assert ddl.collation == "utf8mb4_general_ci"
    assert ddl.pk_clustered is True
    assert ddl.primary_key == ("id",)
    cols = {c.name: c for c in ddl.columns}
    assert [c.column_id for c in ddl.columns] == list(range(1, 13))
    # bigint(20) unsigned: the width TiDB gives it anyway is left out (`canonical_type`)
    assert cols["id"].type == MySQLType(
        "bigint", unsigned=True, charset="binary", collation="binary"
    )
    assert not cols["id"].nullable
    assert cols["code"].type.charset == "latin1"
    assert cols["code"].type.collation == "latin1_bin"
    assert (cols["code"].nullable, cols["code"].default) == (False, "x")
    assert (cols["flag"].nullable, cols["flag"].default) == (True, None)
    assert cols["created"].default == "CURRENT_TIMESTAMP"
    assert cols["created"].type.fsp == 3
    assert cols["kind"].default == "a"
    assert cols["kind"].type.collation == "utf8mb4_general_ci"  # the table's
    assert cols["bits"].default == "5"
    assert cols["price"].default == "1.50"
    assert cols["ratio"].default == "1.5"
    assert cols["qty"].default == "-5"
    assert cols["note"].type.charset == "utf8mb4"
    assert cols["doc"].type.charset == "binary"
    assert cols["raw"].type.is_binary
    assert ddl.indexes == (
        Index("PRIMARY", ("id",), unique=True, primary=True),
        Index("uk_code", ("code", "flag"), unique=True),
        Index("idx_created", ("created",)),
    )


def test_parse_ddl_database_and_inline_keys() -> None:
    ddl = parse_table_ddl(
        "CREATE TABLE `shop`.`t` (`id` int NOT NULL PRIMARY KEY /*T![clustered_index] "
        "NONCLUSTERED */, `a` varchar(10) UNIQUE KEY, `b` int UNIQUE, c int, "
        "UNIQUE KEY (`c`), KEY (`c`))"
    )
    assert ddl.database == "shop"
    assert ddl.pk_clustered is False
    # table-level keys first, then column-level ones; unnamed keys take the column name
    assert [(i.name, i.columns, i.unique, i.primary) for i in ddl.indexes] == [
        ("c", ("c",), True, False),
        ("c_2", ("c",), False, False),
        ("PRIMARY", ("id",), True, True),
        ("a", ("a",), True, False),
        ("b", ("b",), True, False),
    ]


def test_parse_ddl_tidb_extras_and_ignored_parts() -> None:
    ddl = parse_table_ddl(
        "CREATE TABLE t (id bigint NOT NULL /*T![auto_rand] AUTO_RANDOM(5) */, "
        "a varchar(20) COMMENT 'hi', s int AS (id + 1) STORED, d datetime DEFAULT NOW(), "
        "b bool DEFAULT true, x bit(10) DEFAULT x'2AA', e int DEFAULT (rand()), "
        "PRIMARY KEY (id) CLUSTERED, KEY ix (a(10)) USING BTREE COMMENT 'c', "
        "KEY ex ((lower(a))), FULLTEXT KEY ft (a), "
        "CONSTRAINT fk FOREIGN KEY (id) REFERENCES p (id)) "
        "ENGINE=InnoDB DEFAULT CHARSET=latin1 /*T! SHARD_ROW_ID_BITS=4 */ "
        "PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10))"
    )
    cols = {c.name: c for c in ddl.columns}
    assert ddl.pk_clustered is True
    assert cols["a"].type.charset == "latin1"
    assert cols["a"].type.collation == "latin1_bin"
    assert cols["d"].default == "CURRENT_TIMESTAMP"
    assert cols["b"].default == "1"
    assert cols["x"].default == str(0x2AA)
    assert cols["e"].default == "(RAND())"
    assert [i.name for i in ddl.indexes] == ["PRIMARY", "ix"]
    assert ddl.indexes[1].columns == ("a",)


def test_parse_ddl_text_length_picks_the_type() -> None:
    ddl = parse_table_ddl("CREATE TABLE t (a text(100), b text(100) CHARSET latin1, c blob(70000))")
    assert [c.type.base for c in ddl.columns] == ["text", "tinytext", "mediumblob"]
    assert [c.type.flen for c in ddl.columns] == [65535, 255, 16777215]


@pytest.mark.parametrize(
    ("ddl", "fragment"),
    [
        ("", "empty"),
        ("SELECT 1", "SELECT statement"),
        ("CREATE VIEW v AS SELECT 1", "CREATE TABLE"),
        ("CREATE TABLE t LIKE u", "no column list"),
        ("CREATE TABLE t (id int); CREATE TABLE u (id int)", "2 statements"),
        ("CREATE TABLE t (", "cannot parse table-ddl"),
        ("CREATE TABLE t (id int, ID int)", "defined twice"),
        ("CREATE TABLE t (id int, PRIMARY KEY (nope))", "unknown column(s) nope"),
        ("CREATE TABLE t (id int PRIMARY KEY, PRIMARY KEY (id))", "more than one PRIMARY"),
        ("CREATE TABLE t (id int, v int AS (id) VIRTUAL)", "VIRTUAL generated column"),
        ("CREATE TABLE t (id geometry)", "not supported"),
        ("CREATE TABLE t (id int, UNIQUE KEY u ((id + 1)))", "expression"),
        ("CREATE TABLE t (id int DEFAULT 'abc')", "is not a number"),
        ("CREATE TABLE t (id int) DEFAULT CHARSET=klingon", "unknown table character set"),
        ("CREATE TABLE t (id varchar)", "column id: MySQL type 'varchar': varchar needs a length"),
        ("CREATE TABLE t (id int(300))", "column id: MySQL type 'int(300)'"),
    ],
)
def test_bad_ddl_says_what_is_wrong(ddl: str, fragment: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_table_ddl(ddl)
    assert fragment in str(info.value)


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


# ------------------------------------------------------------------ handle key


def _table(ddl: str) -> TableSchema:
    parsed = parse_table_ddl(ddl)
    frame = _frame(*(T.StructField(c.name, T.LongType()) for c in parsed.columns))
    return build_table_schema("d", parsed.table, frame, table_ddl=ddl)


def test_handle_key_is_the_primary_key() -> None:
    table = _table(
        "CREATE TABLE t (a int NOT NULL, b int NOT NULL, c int NOT NULL, "
        "UNIQUE KEY u (a), PRIMARY KEY (c, b))"
    )
    assert table.handle_key == ("b", "c")
    assert table.handle_key_indexes == (1, 2)


def test_handle_key_fewest_not_null_unique_columns() -> None:
    table = _table(
        "CREATE TABLE t (a int NOT NULL, b int NOT NULL, c int NOT NULL, d int NOT NULL, "
        "UNIQUE KEY u1 (a, b), UNIQUE KEY u2 (d), UNIQUE KEY u3 (c))"
    )
    assert table.handle_key == ("d",)  # fewest columns, first defined on a tie
    assert table.handle_key_indexes == (3,)


def test_handle_key_ignores_nullable_unique_keys() -> None:
    table = _table(
        "CREATE TABLE t (a int, b int NOT NULL, c int NOT NULL, "
        "UNIQUE KEY u1 (a), KEY k (b), UNIQUE KEY u2 (c, b))"
    )
    assert table.handle_key == ("b", "c")
    table = _table("CREATE TABLE t (a int, b int NOT NULL, UNIQUE KEY u (a, b), KEY k (b))")
    assert table.handle_key == ()
    assert table.handle_key_indexes == ()


def test_pk_is_handle() -> None:
    table = _table("CREATE TABLE t (id bigint NOT NULL, a int, PRIMARY KEY (id), KEY k (a))")
    assert table.pk_is_handle
    assert [i.name for i in table.tidb_indexes] == ["k"]
    assert [i.name for i in table.indexes] == ["PRIMARY", "k"]
    nonclustered = _table(
        "CREATE TABLE t (id bigint NOT NULL, PRIMARY KEY (id) /*T![clustered_index] "
        "NONCLUSTERED */)"
    )
    assert not nonclustered.pk_is_handle
    assert [i.name for i in nonclustered.tidb_indexes] == ["PRIMARY"]
    ddl = "CREATE TABLE t (id varchar(10) NOT NULL, PRIMARY KEY (id))"
    frame = _frame(T.StructField("id", T.StringType()))
    assert not build_table_schema("d", "t", frame, table_ddl=ddl).pk_is_handle
    composite = _table("CREATE TABLE t (a int, b int, PRIMARY KEY (a, b))")
    assert not composite.pk_is_handle
    assert composite.handle_key == ("a", "b")


def test_is_unique_key_and_column_lookup() -> None:
    table = _table(
        "CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a), UNIQUE KEY u (b), KEY k (c))"
    )
    assert table.is_unique_key("a") and table.is_unique_key("b")
    assert not table.is_unique_key("c")
    assert table.column_position("c") == 2
    with pytest.raises(SchemaError, match="has no column 'zz'"):
        table.column("zz")


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


def test_table_schema_json_round_trip() -> None:
    from ticdc_sink.schema import table_schema_from_json, table_schema_to_json

    parsed = parse_table_ddl(
        "CREATE TABLE `d`.`t` (`id` bigint unsigned NOT NULL, `e` enum('a','b') DEFAULT 'a', "
        "`p` decimal(10,2), `u` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, "
        "PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */, UNIQUE KEY `uk` (`u`))"
    )
    table = TableSchema("d", "t", parsed.columns, parsed.indexes, 7, 9, parsed.pk_clustered)
    assert table_schema_from_json(table_schema_to_json(table)) == table
    with pytest.raises(SchemaError, match="cannot be read"):
        table_schema_from_json('{"database": "d"}')


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

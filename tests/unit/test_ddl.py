"""Unit tests of ticdc_sink.ddl: MySQL column types, column definitions and CREATE TABLE
statements read as TiDB reads them."""

from __future__ import annotations

import pytest

from ticdc_sink.ddl import (
    column_definition_sql,
    parse_column_definition,
    parse_mysql_type,
    parse_table_ddl,
)
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import Column, Index, MySQLType, resolve_type

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

"""Unit tests of ticdc_sink.schema, the table model: lengths and scales as TiDB states them,
one spelling per type, the handle key, the JSON form."""

from __future__ import annotations

import pytest

from ticdc_sink.ddl import parse_mysql_type, parse_table_ddl
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import (
    TableSchema,
    resolve_type,
    table_schema_from_json,
    table_schema_to_json,
)

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


# ------------------------------------------------------------------ handle key


def _table(ddl: str) -> TableSchema:
    """The table a DDL states (as `writer.table.build_table_schema` builds it from one)."""
    parsed = parse_table_ddl(ddl)
    return TableSchema(
        "d", parsed.table, parsed.columns, parsed.indexes, pk_clustered=parsed.pk_clustered
    )


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
    assert not _table("CREATE TABLE t (id varchar(10) NOT NULL, PRIMARY KEY (id))").pk_is_handle
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


def test_table_schema_json_round_trip() -> None:
    parsed = parse_table_ddl(
        "CREATE TABLE `d`.`t` (`id` bigint unsigned NOT NULL, `e` enum('a','b') DEFAULT 'a', "
        "`p` decimal(10,2), `u` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, "
        "PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */, UNIQUE KEY `uk` (`u`))"
    )
    table = TableSchema("d", "t", parsed.columns, parsed.indexes, 7, 9, parsed.pk_clustered)
    assert table_schema_from_json(table_schema_to_json(table)) == table
    with pytest.raises(SchemaError, match="cannot be read"):
        table_schema_from_json('{"database": "d"}')

"""DDL text for schema changes: CREATE TABLE as TiDB's SHOW CREATE TABLE prints it (and
reads back through our own DDL parser), ALTER TABLE with several clauses, None when equal."""

from __future__ import annotations

import attrs
import pytest

from ticdc_sink.ddl import parse_mysql_type, parse_table_ddl
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import Column, Index, TableSchema
from ticdc_sink.schema_change import create_table_sql, ddl_for


def table(ddl: str, **changes: object) -> TableSchema:
    parsed = parse_table_ddl(ddl)
    schema = TableSchema(
        database=parsed.database or "test",
        table=parsed.table,
        columns=parsed.columns,
        indexes=parsed.indexes,
        pk_clustered=parsed.pk_clustered,
    )
    return attrs.evolve(schema, **changes) if changes else schema


BASE = table(
    "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) DEFAULT 'x', "
    "price DECIMAL(10,2) NOT NULL DEFAULT '1.50', flags BIT(3) DEFAULT b'101', "
    "ts TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3), kind ENUM('a','b''c'), "
    "note TEXT, big BIGINT UNSIGNED, UNIQUE KEY uk_name (name))"
)


def test_create_table_is_show_create_table() -> None:
    assert ddl_for(None, BASE) == (
        "CREATE TABLE `t` (\n"
        "  `id` int(11) NOT NULL,\n"
        "  `name` varchar(20) DEFAULT 'x',\n"
        "  `price` decimal(10,2) NOT NULL DEFAULT '1.50',\n"
        "  `flags` bit(3) DEFAULT b'101',\n"
        "  `ts` timestamp(3) DEFAULT CURRENT_TIMESTAMP(3),\n"
        "  `kind` enum('a','b''c') DEFAULT NULL,\n"
        "  `note` text,\n"
        "  `big` bigint(20) unsigned DEFAULT NULL,\n"
        "  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,\n"
        "  UNIQUE KEY `uk_name` (`name`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    )


def test_create_table_reads_back() -> None:
    again = table(create_table_sql(BASE))
    # Same columns up to the explicit display widths SHOW CREATE TABLE adds (int(11)).
    assert [(c.name, c.type.flen, c.nullable, c.default) for c in again.columns] == [
        (c.name, c.type.flen, c.nullable, c.default) for c in BASE.columns
    ]
    assert set(again.indexes) == set(BASE.indexes)
    assert ddl_for(BASE, again) is None


def test_equal_tables_give_none_even_with_other_ids() -> None:
    assert ddl_for(BASE, attrs.evolve(BASE, table_id=9, version=123)) is None


def test_alter_with_several_clauses() -> None:
    current = table(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, added INT NOT NULL DEFAULT '0', "
        "name VARCHAR(40) DEFAULT 'x', price DECIMAL(10,2) NOT NULL DEFAULT '1.50', "
        "flags BIT(3) DEFAULT b'101', ts TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3), "
        "kind ENUM('a','b''c'), note TEXT, tail JSON, KEY idx_price (price))"
    )
    assert ddl_for(BASE, current) == (
        "ALTER TABLE `t` DROP INDEX `uk_name`, DROP COLUMN `big`, "
        "ADD COLUMN `added` int(11) NOT NULL DEFAULT '0' AFTER `id`, "
        "MODIFY COLUMN `name` varchar(40) DEFAULT 'x', "
        "ADD COLUMN `tail` json, "
        "ADD KEY `idx_price` (`price`)"
    )


def test_alter_moves_columns_and_renames() -> None:
    previous = table("CREATE TABLE t (a INT, b INT, c INT)")
    current = table("CREATE TABLE u (c INT, a INT, b INT)")
    assert ddl_for(previous, current) == (
        "ALTER TABLE `t` MODIFY COLUMN `c` int(11) DEFAULT NULL FIRST, RENAME TO `test`.`u`"
    )


def test_charsets_and_types() -> None:
    current = TableSchema(
        "d",
        "t",
        (
            Column("a", parse_mysql_type("varchar(5) CHARACTER SET latin1")),
            Column("b", parse_mysql_type("char(2) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")),
            Column("c", parse_mysql_type("float(7,3) unsigned zerofill")),
            Column("d", parse_mysql_type("datetime(6)"), nullable=False),
            Column("e", parse_mysql_type("year")),
            Column("f", parse_mysql_type("tinyint unsigned")),
        ),
        indexes=(Index("PRIMARY", ("d",), unique=True, primary=True),),
    )
    text = ddl_for(None, current)
    assert text is not None
    assert "`a` varchar(5) DEFAULT NULL" in text  # the table charset comes from column a
    assert "`b` char(2) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL" in text
    assert "`c` float(7,3) unsigned zerofill DEFAULT NULL" in text
    assert "`d` datetime(6) NOT NULL" in text
    assert "`e` year(4) DEFAULT NULL" in text
    assert "`f` tinyint(3) unsigned DEFAULT NULL" in text
    assert "PRIMARY KEY (`d`) /*T![clustered_index] NONCLUSTERED */" in text
    assert text.endswith("DEFAULT CHARSET=latin1 COLLATE=latin1_bin")


def test_table_without_columns_is_an_error() -> None:
    with pytest.raises(SchemaError, match="no columns"):
        ddl_for(None, TableSchema("d", "t", ()))


def test_spark_nullability_alone_announces_no_schema_change() -> None:
    # One query's micro-batches: a literal column (not nullable) and the same column read
    # from a file (nullable). Spark infers that flag; it declares nothing (issue 23).
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from ticdc_sink import tso
    from ticdc_sink.config import SinkConfig
    from ticdc_sink.writer.commit import schema_change_query
    from ticdc_sink.writer.plan import make_plan

    config = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "unused:1",
            "topic": "t",
            "protocol": "debezium",
            "database": "shop",
            "table": "items",
            "primary-key": "id",
        }
    )

    def plan(nullable: bool):
        schema = StructType(
            [StructField("id", LongType(), nullable), StructField("v", StringType(), nullable)]
        )
        return make_plan(config, schema, tso.compose(1_700_000_000_000), batch_id=1)

    literal, from_file = plan(False), plan(True)
    assert literal.tables.named_table == from_file.tables.named_table
    assert schema_change_query(from_file, literal.tables.named_table) is None
    assert schema_change_query(literal, from_file.tables.named_table) is None

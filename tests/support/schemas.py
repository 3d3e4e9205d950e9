"""Table schemas for the codec and decoder unit tests, built without a DDL parser where
a test spells its columns: `col` and `table_of`; `USERS` (id, name); `SIMPLE_DOC_USER`,
the table of TiCDC's Simple protocol doc examples (tests/golden/simple); `ALL_TYPES_TABLE`, a
column of every MySQL type the encoders render, whose values
`strategies.all_types_rows` draws; `large_event_table()`, tiflow's every-type table with
defaults (NewLargeEvent4Test, from its DDL in tests/golden/avro); `table_from_ddl`, the
table a CREATE TABLE statement makes."""

from __future__ import annotations

from pathlib import Path

from ticdc_sink.ddl import parse_mysql_type, parse_table_ddl
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

__all__ = [
    "ALL_TYPES_TABLE",
    "SIMPLE_DOC_USER",
    "USERS",
    "col",
    "large_event_table",
    "table_from_ddl",
    "table_of",
]

_GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "avro"


def col(name: str, type_text: str, nullable: bool = True, default: str | None = None) -> Column:
    return Column(name, parse_mysql_type(type_text), nullable=nullable, default=default)


def table_of(
    *columns: Column, key: tuple[str, ...] = (), db: str = "db", name: str = "t"
) -> TableSchema:
    indexes = (Index("PRIMARY", key, unique=True, primary=True),) if key else ()
    return TableSchema(db, name, tuple(columns), indexes, table_id=1, version=1)


def table_from_ddl(ddl: str, database: str = "test") -> TableSchema:
    """The table `ddl` (CREATE TABLE) makes, in its own database or else `database`."""
    parsed = parse_table_ddl(ddl)
    return TableSchema(
        parsed.database or database,
        parsed.table,
        parsed.columns,
        parsed.indexes,
        pk_clustered=parsed.pk_clustered,
    )


def large_event_table() -> TableSchema:
    """tiflow pkg/sink/codec/utils/test_utils.go NewLargeEvent4Test: every type, defaults."""
    return table_from_ddl((_GOLDEN / "tiflow_large_event.ddl.sql").read_text())


USERS = table_of(
    col("id", "bigint", nullable=False),
    col("name", "varchar(20)"),
    key=("id",),
    db="shop",
    name="users",
)


# The Simple doc's table `simple.user`: id int primary key (the row handle), name
# varchar(255), age int, score float; table id 148, schema version 447984074911121426.
SIMPLE_DOC_USER = TableSchema(
    database="simple",
    table="user",
    columns=(
        Column("id", parse_mysql_type("int"), nullable=False, column_id=1),
        Column(
            "name",
            MySQLType("varchar", 255, charset="utf8mb4", collation="utf8mb4_bin"),
            column_id=2,
        ),
        Column("age", parse_mysql_type("int"), column_id=3),
        Column("score", parse_mysql_type("float"), column_id=4),
    ),
    indexes=(Index("PRIMARY", ("id",), unique=True, primary=True),),
    table_id=148,
    version=447984074911121426,
)


ALL_TYPES_TABLE = table_of(
    col("id", "int", nullable=False),
    col("ti", "tinyint"),
    col("tiu", "tinyint unsigned", default="3"),
    col("si", "smallint"),
    col("mi", "mediumint unsigned"),
    col("i", "int", default="-1"),
    col("iu", "int unsigned"),
    col("bi", "bigint"),
    col("biu", "bigint unsigned"),
    col("f", "float", default="1.5"),
    col("d", "double"),
    col("dec", "decimal(30,5)"),
    col("dec0", "decimal(10,0)", nullable=False),
    col("bit", "bit(64)"),
    col("vc", "varchar(100)", default="x"),
    col("tx", "text"),
    col("bn", "varbinary(100)"),
    col("bl", "blob"),
    col("e", "enum('a','b','c')"),
    col("s", "set('a','b','c','d')"),
    col("j", "json"),
    col("dt", "date"),
    col("dtm", "datetime(3)"),
    col("ts", "timestamp"),
    col("tm", "time"),
    col("y", "year"),
    col("v", "vector(3)"),
    key=("id",),
)

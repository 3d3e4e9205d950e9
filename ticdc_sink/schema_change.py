"""The DDL statement behind a change of a table's schema, for protocols that send DDL events.

The sink never sees DDL: it sees one table schema, then maybe another. `ddl_for` writes the
statement a TiDB user would have run to get from one to the other, so that the Debezium DDL
event (and any other protocol's) carries a query a consumer can read or replay:
`CREATE TABLE` as TiDB's `SHOW CREATE TABLE` prints it, or one `ALTER TABLE` with several
clauses (TiDB multi-schema change).

Formatting follows TiDB's `SHOW CREATE TABLE` (`executor/show.go`,
`ConstructResultOfShowCreateTable`): backquoted names, integer display widths (`int(11)`,
`bigint(20) unsigned`), literal defaults quoted (`DEFAULT '5'`), `DEFAULT NULL` on nullable
columns without a default (except TEXT/BLOB/JSON), `CHARACTER SET` / `COLLATE` only where a
column differs from the table, the primary key first after the columns, then the other keys,
`ENGINE=InnoDB DEFAULT CHARSET=… COLLATE=…`. The table charset is not part of
`TableSchema`; the charset of the first string column stands in for it (else utf8mb4).
Column comments, AUTO_INCREMENT and ON UPDATE are not modelled and never written.

This module knows the table model and MySQL syntax; nothing of protocols or Kafka.
"""

from __future__ import annotations

from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import (
    BINARY_TYPES,
    DEFAULT_CHARSET,
    INTEGER_TYPES,
    TEXT_TYPES,
    Column,
    Index,
    MySQLType,
    TableSchema,
    default_collation,
)

__all__ = ["create_table_sql", "ddl_for"]

# TiDB's display widths when none is declared (mysql.defaultLengthAndDecimal), unsigned
# integers but bigint one shorter.
_INT_WIDTH = {"tinyint": 4, "smallint": 6, "mediumint": 9, "int": 11, "bigint": 20}
_STRING_TYPES = TEXT_TYPES | {"enum", "set"}
_NO_DEFAULT_TYPES = frozenset(
    {"tinytext", "text", "mediumtext", "longtext", "json"}
    | (BINARY_TYPES - {"binary", "varbinary"})
)


def _quote_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _quote_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _table_charset(table: TableSchema) -> tuple[str, str]:
    for column in table.columns:
        t = column.type
        if t.base in _STRING_TYPES and t.charset and t.charset != "binary":
            charset = t.charset
            return charset, default_collation(charset)
    return DEFAULT_CHARSET, default_collation(DEFAULT_CHARSET)


def _type_sql(t: MySQLType, table_charset: tuple[str, str]) -> str:
    base = t.base
    if base in INTEGER_TYPES:
        width = t.length
        if width is None:
            width = _INT_WIDTH[base] - (1 if t.unsigned and base != "bigint" else 0)
        text = f"{base}({width})"
    elif base in ("float", "double"):
        text = base if t.length is None else f"{base}({t.length},{t.decimal or 0})"
    elif base == "decimal":
        text = f"decimal({t.length if t.length is not None else 10},{t.decimal or 0})"
    elif base == "bit":
        text = f"bit({t.length if t.length is not None else 1})"
    elif base in ("char", "binary"):
        text = f"{base}({t.length if t.length is not None else 1})"
    elif base in ("varchar", "varbinary"):
        text = f"{base}({t.length})"
    elif base == "year":
        text = "year(4)"
    elif base in ("datetime", "timestamp", "time"):
        text = f"{base}({t.fsp})" if t.fsp else base
    elif base in ("enum", "set"):
        text = base + "(" + ",".join(_quote_text(e) for e in t.elements) + ")"
    elif base == "vector":
        text = f"vector({t.length})" if t.length is not None else "vector"
    else:
        text = base
    if t.unsigned and base not in ("year", "bit"):
        text += " unsigned"
    if t.zerofill:
        text += " zerofill"
    if base in _STRING_TYPES:
        charset = t.charset or table_charset[0]
        collation = t.collation or default_collation(charset)
        if charset != table_charset[0]:
            text += f" CHARACTER SET {charset} COLLATE {collation}"
        elif collation != table_charset[1]:
            text += f" COLLATE {collation}"
    return text


def _default_sql(column: Column) -> str:
    default = column.default
    if default is None:
        if not column.nullable or column.type.base in _NO_DEFAULT_TYPES:
            return ""
        return " NULL DEFAULT NULL" if column.type.base == "timestamp" else " DEFAULT NULL"
    if default.upper() == "CURRENT_TIMESTAMP":
        fsp = column.type.fsp
        return f" DEFAULT CURRENT_TIMESTAMP({fsp})" if fsp else " DEFAULT CURRENT_TIMESTAMP"
    if column.type.base == "bit":
        try:
            return f" DEFAULT b'{int(default):b}'"
        except ValueError:
            pass
    return " DEFAULT " + _quote_text(default)


def _column_sql(column: Column, table_charset: tuple[str, str]) -> str:
    text = _quote_name(column.name) + " " + _type_sql(column.type, table_charset)
    if not column.nullable:
        text += " NOT NULL"
    return text + _default_sql(column)


def _index_sql(index: Index, table: TableSchema) -> str:
    columns = "(" + ",".join(_quote_name(c) for c in index.columns) + ")"
    if index.primary:
        clustered = table.pk_is_handle or table.pk_clustered is True
        return f"PRIMARY KEY {columns} /*T![clustered_index] " + (
            "CLUSTERED */" if clustered else "NONCLUSTERED */"
        )
    kind = "UNIQUE KEY" if index.unique else "KEY"
    return f"{kind} {_quote_name(index.name)} {columns}"


def create_table_sql(table: TableSchema, *, qualified: bool = False) -> str:
    """`CREATE TABLE` for `table` as TiDB's `SHOW CREATE TABLE` prints it; `qualified`:
    the table named with its database (`db`.`t`)."""
    charset = _table_charset(table)
    lines = [_column_sql(c, charset) for c in table.columns]
    indexes = sorted(table.indexes, key=lambda i: not i.primary)  # the primary key first
    lines += [_index_sql(i, table) for i in indexes]
    return (
        f"CREATE TABLE {_name(table, qualified)} (\n  "
        + ",\n  ".join(lines)
        + f"\n) ENGINE=InnoDB DEFAULT CHARSET={charset[0]} COLLATE={charset[1]}"
    )


def _check(table: TableSchema) -> None:
    if not table.columns:
        raise SchemaError(f"table {table.database}.{table.table} has no columns; give at least one")


def _name(table: TableSchema, qualified: bool) -> str:
    name = _quote_name(table.table)
    return f"{_quote_name(table.database)}.{name}" if qualified else name


def ddl_for(
    previous: TableSchema | None, current: TableSchema, *, qualified: bool = False
) -> str | None:
    """The DDL that turns `previous` into `current`: `CREATE TABLE …` when `previous` is None,
    one `ALTER TABLE …` with ADD/DROP/MODIFY COLUMN, index and RENAME clauses when they
    differ, None when the columns, keys and names are equal (ids and versions are ignored).
    `qualified`: the table named with its database, as pingcap/ticdc's table routing
    rewrites a routed table's DDL (`routing/ddl_query_rewriter.go`).

    Clauses run in TiDB's multi-schema-change order: drop indexes, drop columns, add and
    modify columns (with FIRST / AFTER where the order changed), add indexes, rename.

    Raises:
        SchemaError: a table without columns.
    """
    _check(current)
    if previous is None:
        return create_table_sql(current, qualified=qualified)
    _check(previous)
    charset = _table_charset(current)
    clauses: list[str] = []

    old_indexes = {(i.name, i.primary): i for i in previous.indexes}
    new_indexes = {(i.name, i.primary): i for i in current.indexes}
    for key, index in old_indexes.items():
        if new_indexes.get(key) != index:
            clauses.append(
                "DROP PRIMARY KEY" if index.primary else f"DROP INDEX {_quote_name(index.name)}"
            )

    old_columns = {c.name: c for c in previous.columns}
    new_names = {c.name for c in current.columns}
    for column in previous.columns:
        if column.name not in new_names:
            clauses.append(f"DROP COLUMN {_quote_name(column.name)}")

    # Retained columns in the order they have after the drops; positions are needed where
    # the wanted predecessor differs from the one the column has by then.
    order = [c.name for c in previous.columns if c.name in new_names]
    wanted = [c.name for c in current.columns]
    trailing_added = len(wanted)
    while trailing_added > 0 and wanted[trailing_added - 1] not in old_columns:
        trailing_added -= 1
    for i, column in enumerate(current.columns):
        predecessor = wanted[i - 1] if i else None
        position = " FIRST" if predecessor is None else f" AFTER {_quote_name(predecessor)}"
        definition = _column_sql(column, charset)
        if column.name not in old_columns:
            clauses.append("ADD COLUMN " + definition + ("" if i >= trailing_added else position))
            order.insert(i if i <= len(order) else len(order), column.name)
            continue
        at = order.index(column.name)
        in_place = (order[at - 1] if at else None) == predecessor
        old = old_columns[column.name]
        if not in_place or _column_sql(old, charset) != definition:
            clauses.append("MODIFY COLUMN " + definition + ("" if in_place else position))
            if not in_place:
                order.remove(column.name)
                order.insert(i, column.name)

    for key, index in new_indexes.items():
        if old_indexes.get(key) != index:
            clauses.append("ADD " + _index_sql(index, current))

    if (previous.database, previous.table) != (current.database, current.table):
        clauses.append(f"RENAME TO {_quote_name(current.database)}.{_quote_name(current.table)}")
    if not clauses:
        return None
    return f"ALTER TABLE {_name(previous, qualified)} " + ", ".join(clauses)

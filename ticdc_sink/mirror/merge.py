"""What the Delta and Iceberg writers share: the MERGE statement of a planned batch, the
commit properties that record its resolved ts, and `TableFormat`, the few things a table
format does differently.

One MERGE per table and micro-batch, its source the planned changes (one row per key,
`plan.DELETE_FLAG` saying delete), keys compared null-safe:

    MERGE INTO target t USING changes s ON t.id <=> s.id
    WHEN MATCHED AND s.<flag> THEN DELETE
    WHEN MATCHED THEN UPDATE SET a = s.a, ...
    WHEN NOT MATCHED AND NOT s.<flag> THEN INSERT (a, ...) VALUES (s.a, ...)

The assignments name target columns unqualified: Delta's schema evolution adds a column
the target lacks only then (`t.a = s.a` fails to resolve `t.a`; measured, Delta 4.4).

The commit that MERGE makes carries `RESOLVED_TS` (Delta: the commit's `userMetadata`, as
JSON; Iceberg: a snapshot summary property), set through the session conf the format
reads while the statement runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import attrs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructField, StructType

from ticdc_sink.mirror.plan import DELETE_FLAG

__all__ = [
    "RESOLVED_TS",
    "SOURCE_TABLE",
    "Commit",
    "TableFormat",
    "commit_properties",
    "merge_statement",
    "quote",
    "resolved_ts_of",
    "session_conf",
]

# The commit property naming the TiDB ts the table is at after the commit.
RESOLVED_TS = "ticdc.resolved-ts"
# The TiDB table the commit mirrors (`database.table`).
SOURCE_TABLE = "ticdc.source-table"


@attrs.frozen
class Commit:
    """A mirror commit of a table: its version (Delta) or snapshot id (Iceberg), which
    `VERSION AS OF` reads, and the TiDB resolved ts the table is at from it on."""

    version: int
    resolved_ts: int


class TableFormat(Protocol):
    """What the mirror needs of a table format."""

    name: str

    def exists(self, spark: SparkSession, target: str) -> bool: ...

    def history(self, spark: SparkSession, target: str) -> list[Commit]:
        """The mirror's commits of `target` that are current (oldest first)."""
        ...

    def resolved_ts(self, spark: SparkSession, target: str) -> int | None:
        """The resolved ts of the newest mirror commit, or None."""
        ...

    def create(
        self, spark: SparkSession, target: str, rows: DataFrame, properties: Mapping[str, str]
    ) -> None:
        """Create `target` holding `rows`, in one commit carrying `properties`."""
        ...

    def merge(
        self,
        spark: SparkSession,
        target: str,
        statement: str,
        added: Sequence[StructField],
        properties: Mapping[str, str],
    ) -> None:
        """Add the `added` columns and run `statement`, its commit carrying `properties`."""
        ...


def commit_properties(resolved_ts: int, source_table: str) -> dict[str, str]:
    return {RESOLVED_TS: str(resolved_ts), SOURCE_TABLE: source_table}


def resolved_ts_of(properties: Mapping[str, Any] | None) -> int | None:
    """The resolved ts a commit's properties record, or None (not a mirror commit)."""
    if not properties:
        return None
    value = properties.get(RESOLVED_TS)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def quote(name: str) -> str:
    """A column name as a SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def merge_statement(target: str, source_view: str, keys: Sequence[str], schema: StructType) -> str:
    """The MERGE of the planned changes in `source_view` (columns: `schema` and the delete
    flag) into `target` (a table name as SQL takes it)."""
    on = " AND ".join(f"t.{quote(k)} <=> s.{quote(k)}" for k in keys)
    names = [f.name for f in schema.fields]
    sets = ", ".join(f"{quote(c)} = s.{quote(c)}" for c in names if c not in keys)
    update = f"WHEN MATCHED THEN UPDATE SET {sets}\n" if sets else ""
    flag = quote(DELETE_FLAG)
    return (
        f"MERGE INTO {target} t\nUSING {quote(source_view)} s\nON {on}\n"
        f"WHEN MATCHED AND s.{flag} THEN DELETE\n"
        f"{update}"
        f"WHEN NOT MATCHED AND NOT s.{flag} THEN INSERT ({', '.join(map(quote, names))}) "
        f"VALUES ({', '.join('s.' + quote(c) for c in names)})"
    )


@contextmanager
def session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """`settings` in the session's conf while the block runs, the old values after.

    In `foreachBatch` the session is the query's own (Spark clones one per query), so
    another query's commits never see them."""
    old = {k: spark.conf.get(k, None) for k in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, was in old.items():
            if was is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, was)

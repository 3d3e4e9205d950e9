"""A micro-batch's change rows reduced to one change per key: what the MERGE applies.

The rows are the writer's input contract, as `readStream.format("ticdc")` gives them: the
table's columns, `_op`, `_commit_ts`, `_before`, `_database`, `_table` (and, with
`kafka-columns=true`, `_topic`, `_partition`, `_offset`; with `includeHeaders=true`,
`_headers`). Within a micro-batch the rows of different Kafka partitions have no order,
and a key may change several times, so:

- rows at or below `after_ts` (the resolved ts the target already records) are replays and
  are left out: the target holds them already;
- an UPDATE whose `_before` has another key moves the row: a DELETE of the old key at the
  same commit ts, then the new row;
- per key the change with the highest commit ts wins; at one commit ts (one transaction) a
  row written wins over a row deleted, since TiCDC splits a key-changing UPDATE into a
  DELETE of the old key and an INSERT of the new one, and a transaction that moves one row
  onto another's old key deletes and writes that key at the same ts.

The result has the table's columns and `DELETE_FLAG` (true: delete the key; false: upsert
the row). Pure DataFrame logic: no table format, no I/O, no action run.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ticdc_sink.errors import SchemaError
from ticdc_sink.read.rows import HEADERS, KAFKA_COLUMNS

__all__ = [
    "BEFORE",
    "COMMIT_TS",
    "DATABASE",
    "DELETE_FLAG",
    "METADATA_COLUMNS",
    "OP",
    "TABLE",
    "plan_changes",
    "table_columns",
]

OP = "_op"
COMMIT_TS = "_commit_ts"
BEFORE = "_before"
DATABASE = "_database"
TABLE = "_table"
# The reader's columns that are not the table's (kafka-columns and includeHeaders add
# the Kafka ones).
METADATA_COLUMNS = frozenset({OP, COMMIT_TS, BEFORE, DATABASE, TABLE, *KAFKA_COLUMNS, HEADERS})

DELETE_FLAG = "_ticdc_mirror_delete"
_RANK = "_ticdc_mirror_rank"
# At one commit ts, the higher rank wins: a row written over a row deleted.
_DELETE_RANK = 0
_WRITE_RANK = 1

# The input contract's spellings of each op (any case).
_DELETES = ("D", "DELETE")
_UPSERTS = ("C", "R", "U", "INSERT", "UPDATE")
_UPDATES = ("U", "UPDATE")


def table_columns(schema: StructType) -> list[str]:
    """The table's columns of a change stream: every column but the reader's metadata."""
    return [f.name for f in schema.fields if f.name.lower() not in METADATA_COLUMNS]


def plan_changes(rows: DataFrame, keys: Sequence[str], *, after_ts: int | None = None) -> DataFrame:
    """One change per key of `rows` (the change rows of one table), newer than `after_ts`.

    Raises:
        SchemaError: `rows` lacks `_op` or `_commit_ts`, or a key column (naming it).
    Rows whose `_op` is none of c/r/u/d, INSERT/UPDATE/DELETE fail the Spark job that runs
    the plan, with an error naming the value.
    """
    columns = table_columns(rows.schema)
    names = {c.lower(): c for c in rows.columns}
    for needed in (OP, COMMIT_TS):
        if needed not in names:
            raise SchemaError(
                f"the change stream has no column {needed}; mirror a stream read with "
                'spark.readStream.format("ticdc") (the writer\'s input contract)',
                column=needed,
            )
    table_names = {c.lower(): c for c in columns}
    missing = [k for k in keys if k.lower() not in table_names]
    if missing or not keys:
        raise SchemaError(
            f"key column {missing[0] if missing else '(none given)'} is not a column of the "
            f"change stream ({', '.join(columns)}); give keys= the table's primary key",
            column=missing[0] if missing else None,
        )
    keys = [table_names[k.lower()] for k in keys]
    ts = F.col(names[COMMIT_TS])
    if after_ts is not None:
        rows = rows.where(ts > F.lit(after_ts))
    op = F.upper(F.col(names[OP]))
    is_delete = (
        F.when(op.isin(*_DELETES), F.lit(True))
        .when(op.isin(*_UPSERTS), F.lit(False))
        .otherwise(
            F.raise_error(
                F.concat(
                    F.lit("ticdc: mirror: _op is '"),
                    F.coalesce(F.col(names[OP]), F.lit("null")),
                    F.lit("'; expected c, r, u, d or INSERT, UPDATE, DELETE"),
                )
            ).cast("boolean")
        )
    )
    changes = rows.select(
        *[F.col(c) for c in columns],
        ts.alias(COMMIT_TS),
        is_delete.alias(DELETE_FLAG),
        F.when(is_delete, F.lit(_DELETE_RANK)).otherwise(F.lit(_WRITE_RANK)).alias(_RANK),
    )
    if BEFORE in names:
        changes = changes.unionByName(_moved_from(rows, columns, keys, names, op))
    winner = F.max_by(
        F.struct(*[F.col(c) for c in columns if c not in keys], F.col(DELETE_FLAG)),
        F.struct(F.col(COMMIT_TS), F.col(_RANK)),
    ).alias("_winner")
    return (
        changes.groupBy(*keys)
        .agg(winner)
        .select(
            *[F.col(c) if c in keys else F.col(f"_winner.{c}").alias(c) for c in columns],
            F.col(f"_winner.{DELETE_FLAG}").alias(DELETE_FLAG),
        )
    )


def _moved_from(
    rows: DataFrame, columns: list[str], keys: list[str], names: dict[str, str], op: Column
) -> DataFrame:
    """A DELETE of the old key of every UPDATE whose `_before` holds another key."""
    before = F.col(names[BEFORE])
    fields = _before_fields(rows.schema[names[BEFORE]].dataType)
    missing = [k for k in keys if k.lower() not in fields]
    if missing:
        raise SchemaError(
            f"column {BEFORE} has no field {missing[0]}: its fields must be the table's columns",
            column=BEFORE,
        )
    old = {k: before.getField(fields[k.lower()]) for k in keys}
    same_key = functools.reduce(lambda a, b: a & b, [old[k].eqNullSafe(F.col(k)) for k in keys])
    moved = op.isin(*_UPDATES) & before.isNotNull() & ~same_key
    return rows.where(moved).select(
        *[
            (old[c] if c in keys else F.lit(None).cast(rows.schema[c].dataType)).alias(c)
            for c in columns
        ],
        F.col(names[COMMIT_TS]).alias(COMMIT_TS),
        F.lit(True).alias(DELETE_FLAG),
        F.lit(_DELETE_RANK).alias(_RANK),
    )


def _before_fields(data_type: object) -> dict[str, str]:
    if not isinstance(data_type, StructType):
        raise SchemaError(
            f"column {BEFORE} is a {data_type}, not a struct of the table's columns",
            column=BEFORE,
        )
    return {f.name.lower(): f.name for f in data_type.fields}

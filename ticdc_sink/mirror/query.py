"""The mirror's public surface: `MirrorBatch`, the `foreachBatch` function that applies a
micro-batch of a `readStream.format("ticdc")` stream to one table per TiDB table; `start`,
the streaming query running it; `resolved_ts` and `history`, "as of which TiDB ts is this
table (and each of its versions)".

Per micro-batch and TiDB table, in this order:

1. the batch's resolved ts: from the query's offset log when `checkpoint` is known
   (`progress`), else the largest commit ts of the table's rows;
2. the resolved ts the target records (its newest mirror commit); a table whose rows are
   all at or below it is a replay and gets no commit: a restart after a failure between
   the MERGE and the checkpoint re-runs the batch and changes nothing;
3. the rows above it planned to one change per key (`plan`), the target's columns checked
   against the stream's (`schema`: added columns evolve the table, anything else stops
   the query), and one MERGE (a new table: one CREATE TABLE AS) whose commit records the
   batch's resolved ts (`merge`, `delta`, `iceberg`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.types import StructType

from ticdc_sink.errors import ConfigError, InputError
from ticdc_sink.mirror.delta import DeltaFormat
from ticdc_sink.mirror.iceberg import IcebergFormat
from ticdc_sink.mirror.merge import Commit, TableFormat, commit_properties, merge_statement
from ticdc_sink.mirror.plan import COMMIT_TS, DATABASE, DELETE_FLAG, TABLE, plan_changes
from ticdc_sink.mirror.plan import table_columns as stream_columns
from ticdc_sink.mirror.progress import batch_resolved_ts
from ticdc_sink.mirror.schema import added_columns

__all__ = ["FORMATS", "MirrorBatch", "history", "resolved_ts", "start"]

FORMATS: dict[str, TableFormat] = {"delta": DeltaFormat(), "iceberg": IcebergFormat()}

Targets = str | Mapping[str, str]
Keys = Sequence[str] | Mapping[str, Sequence[str]]


def _format(name: str) -> TableFormat:
    found = FORMATS.get(name.lower())
    if found is None:
        raise ConfigError(
            f"mirror: format '{name}' is not one the mirror writes; use one of "
            f"{', '.join(sorted(FORMATS))}",
            option="format",
            value=name,
            allowed=tuple(sorted(FORMATS)),
        )
    return found


class MirrorBatch:
    """A `foreachBatch` function that mirrors a change stream into tables.

    `target`: the table of every TiDB table, as Spark SQL names it; `{schema}` and
    `{table}` stand for the TiDB database and table (`lake.shop.{table}`), or a mapping
    from `database.table` to a name. `keys`: the key columns (the TiDB primary key), or a
    mapping from `database.table` to them. `format`: `delta` or `iceberg`. `checkpoint`:
    the query's checkpointLocation, where the batch's resolved ts is read (without it,
    each commit records the largest commit ts of its rows, which the table is also at).

    Raises (when called):
        ConfigError: a TiDB table without a target or keys; a stream that is not
            watermark-consistent (a row above the batch's resolved ts).
        SchemaError: the stream's columns changed other than by added columns, or a key
            column is not one of them.
        InputError: a row without a commit ts.
    """

    def __init__(
        self,
        target: Targets,
        keys: Keys,
        *,
        format: str = "delta",
        checkpoint: str | None = None,
    ) -> None:
        self.target = target
        self.keys = keys
        self.format = _format(format)
        self.checkpoint = checkpoint
        _check_targets(target)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        resolved = batch_resolved_ts(self.checkpoint, batch_id) if self.checkpoint else None
        batch = batch.persist()
        try:
            for database, table, newest in self._tables(batch):
                if resolved is not None and newest > resolved:
                    raise ConfigError(
                        f"mirror: micro-batch {batch_id} holds a row of {database}.{table} "
                        f"at commit ts {newest}, above the batch's resolved ts {resolved}: "
                        "the stream is not watermark-consistent; read it with option "
                        "consistency=watermark (the default)",
                        option="consistency",
                    )
                rows = batch
                if DATABASE in batch.columns:
                    rows = rows.where(F.col(DATABASE).eqNullSafe(database))
                if TABLE in batch.columns:
                    rows = rows.where(F.col(TABLE).eqNullSafe(table))
                self._apply(spark, rows, database, table, newest, resolved or newest)
        finally:
            batch.unpersist()

    def target_of(self, database: str, table: str) -> str:
        """The target table of a TiDB table.

        Raises:
            ConfigError: `target` is a mapping without it.
        """
        if isinstance(self.target, str):
            return self.target.replace("{schema}", database).replace("{table}", table)
        name = f"{database}.{table}"
        if name not in self.target:
            raise ConfigError(
                f"mirror: the change stream holds table {name}, which target= does not name; "
                f"add it (names: {', '.join(sorted(self.target))})",
                option="target",
                value=name,
            )
        return self.target[name]

    def keys_of(self, database: str, table: str) -> list[str]:
        """The key columns of a TiDB table.

        Raises:
            ConfigError: `keys` is a mapping without it.
        """
        if not isinstance(self.keys, Mapping):
            return list(self.keys)
        name = f"{database}.{table}"
        if name not in self.keys:
            raise ConfigError(
                f"mirror: the change stream holds table {name}, which keys= does not name; "
                f"add its primary key columns (names: {', '.join(sorted(self.keys))})",
                option="keys",
                value=name,
            )
        return list(self.keys[name])

    def _tables(self, batch: DataFrame) -> list[tuple[str, str, int]]:
        """(database, table, largest commit ts) of each table in the batch.

        Raises:
            InputError: a row without a commit ts (null, or 0 as an Avro DELETE tombstone
                reads): it could be neither ordered nor told from a replay.
        """
        database = F.col(DATABASE) if DATABASE in batch.columns else F.lit("")
        table = F.col(TABLE) if TABLE in batch.columns else F.lit("")
        ts = F.col(COMMIT_TS)
        rows = (
            batch.groupBy(database.alias("d"), table.alias("t"))
            .agg(
                F.max(ts).alias("ts"),
                F.count_if(ts.isNull() | (ts <= 0)).alias("missing"),
            )
            .collect()
        )
        found = []
        for row in rows:
            name = f"{row['d']}.{row['t']}"
            if row["missing"]:
                raise InputError(
                    f"mirror: {row['missing']} rows of {name} have no {COMMIT_TS} (null or 0, "
                    "as Avro DELETE tombstones read); the mirror orders changes and skips "
                    "replays by it: read a protocol whose every row carries its commit ts",
                    table=name,
                    column=COMMIT_TS,
                )
            found.append((row["d"] or "", row["t"] or "", int(row["ts"])))
        if len(found) > 1 and isinstance(self.target, str) and "{table}" not in self.target:
            names = ", ".join(sorted(f"{d}.{t}" for d, t, _ in found))
            raise ConfigError(
                f"mirror: the change stream holds several tables ({names}) and target "
                f"'{self.target}' names one; put {{schema}} and {{table}} in it",
                option="target",
                value=self.target,
            )
        return sorted(found)

    def _apply(
        self, spark: SparkSession, rows: DataFrame, database: str, table: str, newest: int, ts: int
    ) -> None:
        target = self.target_of(database, table)
        source = f"{database}.{table}"
        fmt = self.format
        exists = fmt.exists(spark, target)
        recorded = fmt.resolved_ts(spark, target) if exists else None
        if recorded is not None and newest <= recorded:
            return  # every row is a replay: the target holds them already
        keys = self.keys_of(database, table)
        changes = plan_changes(rows, keys, after_ts=recorded)
        properties = commit_properties(ts, source)
        columns = StructType([rows.schema[c] for c in stream_columns(rows.schema)])
        if not exists:
            upserts = changes.where(~F.col(DELETE_FLAG)).drop(DELETE_FLAG)
            fmt.create(spark, target, upserts, properties)
            return
        added = added_columns(target, source, spark.table(target).schema, columns)
        spelled = [c for c in columns.names if c.lower() in {k.lower() for k in keys}]
        view = f"ticdc_mirror_{uuid.uuid4().hex}"
        changes.createOrReplaceTempView(view)
        try:
            statement = merge_statement(target, view, spelled, columns)
            fmt.merge(spark, target, statement, added, properties)
        finally:
            spark.catalog.dropTempView(view)


def _check_targets(target: Targets) -> None:
    if isinstance(target, str) and not target.strip():
        raise ConfigError("mirror: target is empty; name the table to mirror into", option="target")


def start(
    stream: DataFrame,
    *,
    target: Targets,
    keys: Keys,
    checkpoint: str,
    format: str = "delta",
    trigger: Mapping[str, Any] | None = None,
    query_name: str | None = None,
) -> StreamingQuery:
    """Start a streaming query mirroring `stream` (a `readStream.format("ticdc")` stream)
    into `target`; `trigger` as `DataStreamWriter.trigger`'s keywords
    (`{"availableNow": True}`, `{"processingTime": "1 minute"}`). The other arguments are
    `MirrorBatch`'s; `checkpoint` is the query's checkpointLocation.

    Raises:
        ConfigError: `stream` is not a streaming DataFrame, or a bad format or target.
    """
    if not stream.isStreaming:
        raise ConfigError(
            'mirror: the DataFrame is not a stream; give spark.readStream.format("ticdc")'
            "...load() (apply a batch read with MirrorBatch(...)(df, batch_id))",
            option="stream",
        )
    function = MirrorBatch(target, keys, format=format, checkpoint=checkpoint)
    writer = stream.writeStream.foreachBatch(function).option("checkpointLocation", checkpoint)
    if trigger:
        writer = writer.trigger(**trigger)
    if query_name:
        writer = writer.queryName(query_name)
    return writer.start()


def resolved_ts(spark: SparkSession, target: str, *, format: str = "delta") -> int | None:
    """The TiDB ts the mirror table `target` is at: the resolved ts its newest mirror
    commit records (None: no mirror commit yet). The table equals the TiDB table as of
    that ts (a TSO; `ticdc_sink.tso` converts it to a time)."""
    return _format(format).resolved_ts(spark, target)


def history(spark: SparkSession, target: str, *, format: str = "delta") -> list[Commit]:
    """Every current mirror commit of `target`, oldest first: the version (Delta) or
    snapshot id (Iceberg) that `VERSION AS OF` reads, and the TiDB ts the table is at in it."""
    return _format(format).history(spark, target)

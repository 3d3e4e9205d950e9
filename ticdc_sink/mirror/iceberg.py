"""The mirror's Apache Iceberg writer: one MERGE (or, for a new table, one CREATE TABLE AS)
per table and micro-batch, each one snapshot whose summary holds the commit properties
(`ticdc.resolved-ts`, `ticdc.source-table`), set through Iceberg's session conf
`spark.sql.iceberg.snapshot-property.<name>` while the statement runs.

It needs Iceberg's Spark runtime jar, its SQL extensions and a catalog in the session
(for example a Hadoop catalog over a directory: `spark.sql.catalog.lake =
org.apache.iceberg.spark.SparkCatalog`, `.type = hadoop`, `.warehouse = /path`). An added
column is added with `ALTER TABLE ... ADD COLUMN` before the MERGE: in Iceberg a schema
change is a metadata update, not a snapshot, so a micro-batch stays one snapshot.

Iceberg's Spark catalog caches each table it loads, per Spark session (catalog option
`cache-enabled`, default true; an entry expires 30 s after its last use), and a cached
table does not see commits made through another session's catalog. A streaming query
runs its micro-batches in a session of its own (Spark clones the one that started it, at
each start), so the mirror commits there: the history is read after the table is
refreshed (`REFRESH TABLE`), else `resolved_ts` in the session that started the query
would answer with the ts of the snapshot it last loaded, and the mirror's replay check
with an older ts than another writer's session committed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructField

from ticdc_sink.mirror.merge import Commit, quote, resolved_ts_of, session_conf

__all__ = ["IcebergFormat"]

_SNAPSHOT_PROPERTY = "spark.sql.iceberg.snapshot-property."


class IcebergFormat:
    """Iceberg tables, named as Spark SQL names them (`catalog.db.t`)."""

    name = "iceberg"

    def exists(self, spark: SparkSession, target: str) -> bool:
        return spark.catalog.tableExists(target)

    def history(self, spark: SparkSession, target: str) -> list[Commit]:
        spark.catalog.refreshTable(target)  # this session's cached table may be stale
        # The snapshots that led to the current one, oldest first (a rolled-back snapshot
        # is not the table's past).
        rows = spark.sql(
            f"SELECT h.snapshot_id, s.summary FROM {target}.history h "
            f"JOIN {target}.snapshots s ON h.snapshot_id = s.snapshot_id "
            "WHERE h.is_current_ancestor ORDER BY h.made_current_at, h.snapshot_id"
        ).collect()
        found = []
        for row in rows:
            ts = resolved_ts_of(row["summary"])
            if ts is not None:
                found.append(Commit(int(row["snapshot_id"]), ts))
        return found

    def resolved_ts(self, spark: SparkSession, target: str) -> int | None:
        commits = self.history(spark, target)
        return commits[-1].resolved_ts if commits else None

    def create(
        self, spark: SparkSession, target: str, rows: DataFrame, properties: Mapping[str, str]
    ) -> None:
        with session_conf(spark, _settings(properties)):
            rows.writeTo(target).using("iceberg").create()

    def merge(
        self,
        spark: SparkSession,
        target: str,
        statement: str,
        added: Sequence[StructField],
        properties: Mapping[str, str],
    ) -> None:
        if added:
            columns = ", ".join(f"{quote(f.name)} {f.dataType.simpleString()}" for f in added)
            spark.sql(f"ALTER TABLE {target} ADD COLUMNS ({columns})")
        with session_conf(spark, _settings(properties)):
            spark.sql(statement)


def _settings(properties: Mapping[str, str]) -> dict[str, str]:
    return {_SNAPSHOT_PROPERTY + k: v for k, v in properties.items()}

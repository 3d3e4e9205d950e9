"""The mirror's Delta Lake writer: one MERGE (or, for a new table, one CREATE TABLE AS) per
table and micro-batch, each one Delta commit whose `userMetadata` is the JSON of the
commit properties (`{"ticdc.resolved-ts": "...", "ticdc.source-table": "db.t"}`).

Everything goes through SQL and the session conf, so it needs Delta's jars and session
extension in the Spark session (`pip install "ticdc-sink[delta]"`, then
`delta.configure_spark_with_delta_pip`, or `spark.jars.packages`), not the `delta` Python
package. An added column evolves the table inside the MERGE's own commit
(`spark.databricks.delta.schema.autoMerge.enabled` while it runs), so a micro-batch stays
one commit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructField

from ticdc_sink.mirror.merge import Commit, resolved_ts_of, session_conf

__all__ = ["DeltaFormat"]

_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
_AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"
# DESCRIBE HISTORY reads one commit file per version listed: the newest this many first.
_RECENT = 100


class DeltaFormat:
    """Delta Lake tables, named as Spark SQL names them (`db.t`, or delta.`/path`)."""

    name = "delta"

    def exists(self, spark: SparkSession, target: str) -> bool:
        return spark.catalog.tableExists(target)

    def history(self, spark: SparkSession, target: str) -> list[Commit]:
        return sorted(self._commits(spark, target, None), key=lambda c: c.version)

    def resolved_ts(self, spark: SparkSession, target: str) -> int | None:
        for limit in (_RECENT, None):
            commits = self._commits(spark, target, limit)
            if commits:
                return max(commits, key=lambda c: c.version).resolved_ts
        return None

    def create(
        self, spark: SparkSession, target: str, rows: DataFrame, properties: Mapping[str, str]
    ) -> None:
        with session_conf(spark, {_USER_METADATA: json.dumps(dict(properties), sort_keys=True)}):
            rows.writeTo(target).using("delta").create()

    def merge(
        self,
        spark: SparkSession,
        target: str,
        statement: str,
        added: Sequence[StructField],
        properties: Mapping[str, str],
    ) -> None:
        settings = {_USER_METADATA: json.dumps(dict(properties), sort_keys=True)}
        if added:
            settings[_AUTO_MERGE] = "true"
        with session_conf(spark, settings):
            spark.sql(statement)

    def _commits(self, spark: SparkSession, target: str, limit: int | None) -> list[Commit]:
        sql = f"DESCRIBE HISTORY {target}" + (f" LIMIT {limit}" if limit else "")
        found = []
        for row in spark.sql(sql).select("version", "userMetadata").collect():
            ts = resolved_ts_of(_parse(row["userMetadata"]))
            if ts is not None:
                found.append(Commit(int(row["version"]), ts))
        return found


def _parse(text: str | None) -> dict[str, str] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None  # another writer's userMetadata
    return value if isinstance(value, dict) else None

"""The mirror: a TiDB table kept in Delta Lake or Apache Iceberg from a TiCDC change stream,
equal at every commit to the TiDB table as of the resolved ts the commit records.

    import ticdc_sink.mirror

    changes = spark.readStream.format("ticdc").option(...).load()
    query = ticdc_sink.mirror.start(
        changes, target="lake.shop.{table}", keys=["id"], checkpoint="/chk/mirror",
        format="iceberg",
    )
    ticdc_sink.mirror.resolved_ts(spark, "lake.shop.orders", format="iceberg")

One idea per module: `plan` (a batch's rows to one change per key: pure DataFrame logic),
`schema` (which column changes evolve the table), `progress` (the batch's resolved ts from
the query's offset log), `merge` (the MERGE statement and commit properties the formats
share), `delta` and `iceberg` (the table formats), `query` (`MirrorBatch`, `start`,
`resolved_ts`, `history`). It builds on the read side's public names only and needs
Delta's or Iceberg's jars in the Spark session, not their Python packages.
"""

from __future__ import annotations

from ticdc_sink.mirror.merge import RESOLVED_TS, Commit
from ticdc_sink.mirror.query import MirrorBatch, history, resolved_ts, start

__all__ = ["RESOLVED_TS", "Commit", "MirrorBatch", "history", "resolved_ts", "start"]

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

import importlib
from typing import Any

__all__ = ["RESOLVED_TS", "Commit", "MirrorBatch", "history", "resolved_ts", "start"]

# Loaded on first use (the modules import this package first: no import circle).
_HOMES = {
    "RESOLVED_TS": "merge",
    "Commit": "merge",
    "MirrorBatch": "query",
    "history": "query",
    "resolved_ts": "query",
    "start": "query",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'ticdc_sink.mirror' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ticdc_sink.mirror.{_HOMES[name]}"), name)

"""The read side of `format("ticdc")`: TiCDC topics back into change rows.

One idea per module: `options` (what a read takes), `offsets` (offset specs and ranges),
`consumer` (Kafka consumption), `decoding` (records -> events, errors with coordinates),
`discover` (the read's table, found on the driver), `rows` (events -> Arrow in the
writer's input contract), `columns` (runs of plain Simple rows -> Arrow column by
column), `scan` (a task's read of one range), `split` (ranges cut into parts for
minPartitions). Only
`ticdc_sink.datasource` knows Spark; this package knows Kafka, protocols and Arrow.
"""

from __future__ import annotations

__all__ = []  # internal: the public surface is format("ticdc")

"""The read side of `format("ticdc")`: TiCDC topics back into change rows.

One idea per module:

    read/
      options.py     ReadConfig: what a read takes, its options checked
      offsets.py     offset specs (starting/ending, timestamps) and offset ranges
      record.py      Record: one message read back, whichever client read it
      consumer.py    TopicLog: Kafka consumption (shared with `ticdc-sink decode`)
      decoding.py    records -> events, errors with topic, partition and offset
      discover.py    the read's table, found on the driver
      plan.py        a batch read's plan: topics, ranges, schemas, parts
      split.py       ranges into tasks: large split (minPartitions), small packed
      rows.py        events -> Arrow in the writer's input contract, row by row
      scan.py        a task's read of its ranges; runs of rows column-wise where the
                     decoder offers it (codec/<protocol>/read_columns.py: simple, avro,
                     canal_json)
      replay.py      TiCDC's replay rule: rows a restart re-sent, dropped
      stream.py      streaming reads: micro-batches cut at watermarks, on the driver
      micro_batches.py  a streaming read's micro-batches one after the other, for the
                     whole query: the scan, where the next starts, AvailableNow's end
      evolution.py   schema changes against a stream's columns

Only `ticdc_sink.datasource` (with `ticdc_sink.spark_arrow`) knows Spark; this package knows
Kafka, protocols and Arrow.
"""

from __future__ import annotations

__all__ = []  # internal: the public surface is format("ticdc")

"""TiCDC's Debezium protocol (`protocol=debezium`, reference §8): Debezium JSON envelopes
for rows, DDL events and watermarks, as tiflow's `pkg/sink/codec/debezium` writes them.

    debezium/
      temporal.py   MySQL temporal text as TiCDC reads it, zoned text (shared)
      values.py     value renderers per column, NULL as DEFAULT (shared)
      schema.py     field schemas, the `source` object, tidb_type, jdbc_type (shared)
      table.py      DebeziumTable: one table's constant text, compiled once (shared)
      row.py        DebeziumRowEncoder: encode_row
      batch.py      DebeziumBatchEncoder: the same messages, column-wise
      ddl.py        the DDL event (tableChanges)
      encoder.py    DebeziumEncoder (both paths, DDL) and the watermark
      decoder.py    DebeziumDecoder: envelopes back into events, the peek
      spec.py       SPEC: the protocol's traits, the entry `PROTOCOLS` names

The row and column-wise modules import the shared ones and never each other; `encoder.py`
alone imports both paths. The package re-exports the public names below.
"""

from __future__ import annotations

from ticdc_sink.codec.debezium.encoder import DebeziumEncoder, encode_watermark
from ticdc_sink.codec.debezium.schema import jdbc_type, schema_topic_name, tidb_type

__all__ = [
    "DebeziumEncoder",
    "encode_watermark",
    "jdbc_type",
    "schema_topic_name",
    "tidb_type",
]

"""TiCDC's Simple protocol (`protocol=simple`, reference §7): DML, BOOTSTRAP and WATERMARK
messages, in JSON or Avro (`encoding-format`).

    simple/
      values.py       JSON value text, tableSchema, the refused-value error (shared)
      json_row.py     JsonMarshaller: the JSON row path; JSON WATERMARK and DDL
      json_batch.py   JsonBatchMarshaller: JSON, column-wise
      avro_values.py  message.json, Avro primitives and value writers (shared)
      avro_row.py     AvroMarshaller: the Avro row path; Avro WATERMARK, DDL, tableSchema
      avro_batch.py   AvroBatchMarshaller: Avro, column-wise
      avro_dml.py     read_plain: a DML message's plain row, read without fastavro
      encoder.py      SimpleEncoder: picks the marshallers, size check, large messages
      decoder.py      SimpleDecoder: messages back into events (JSON, Avro), the peek
      read_columns.py SimpleRun: a read's plain rows -> Arrow, column by column
      message.json    tiflow's Avro writer schema, unchanged
      spec.py         SPEC: the protocol's traits, the entry `PROTOCOLS` names

The row and column-wise modules import `values` / `avro_values` and never each other;
`encoder.py` alone imports both paths. On the read side the decoder offers the column-wise
read (`column_run`) and `read_columns.py` never imports the decoder. The package
re-exports the public names below.
"""

from __future__ import annotations

from ticdc_sink.codec.simple.avro_row import AvroMarshaller
from ticdc_sink.codec.simple.encoder import SimpleEncoder, encode_ddl, encode_watermark
from ticdc_sink.codec.simple.json_row import JsonMarshaller
from ticdc_sink.codec.simple.values import PROTOCOL_VERSION, table_schema_json

__all__ = [
    "PROTOCOL_VERSION",
    "AvroMarshaller",
    "JsonMarshaller",
    "SimpleEncoder",
    "encode_ddl",
    "encode_watermark",
    "table_schema_json",
]

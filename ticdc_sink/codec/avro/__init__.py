"""TiCDC's Avro protocol (`protocol=avro`, reference §6): Confluent-framed Avro keys and
values, schemas in a Confluent Schema Registry.

    avro/
      schema.py     key and value schema text, field types, defaults, names (shared)
      values.py     the Avro value writers per column type (shared)
      framing.py    Confluent framing and the registry ids of a table (shared)
      row.py        AvroRowEncoder: encode_row, compiled per table; the size check
      batch.py      AvroBatchEncoder: the same messages, column-wise
      encoder.py    AvroEncoder: schemas checked, both paths offered
      confluent.py  Confluent framing read back: writer schemas by id (avro, debezium-avro)
      writer_schema.py  a writer schema as the decoder reads it (shared by the read paths)
      decoder.py    AvroDecoder: messages back into rows
      read_columns.py   AvroRun: a read's runs of records, column-wise
      spec.py       SPEC: the protocol's traits, the entry `PROTOCOLS` names

The row and column-wise modules import the shared ones and never each other; `encoder.py`
alone imports both paths. On the read side the decoder offers the column-wise read
(`record_run`) and `read_columns.py` never imports the decoder. The package re-exports
the public names below.
"""

from __future__ import annotations

from ticdc_sink.codec.avro.encoder import AvroEncoder
from ticdc_sink.codec.avro.framing import CONFLUENT_MAGIC
from ticdc_sink.codec.avro.schema import (
    KEY_RECORD,
    TICDC_BEFORE,
    TIDB_CHECKSUM_VERSION,
    TIDB_COMMIT_TS,
    TIDB_CORRUPTED,
    TIDB_OP,
    TIDB_PHYSICAL_TIME,
    TIDB_ROW_LEVEL_CHECKSUM,
    as_fastavro_reads_it,
    key_record_name,
    key_schema_json,
    record_name,
    tidb_type,
    timestamp_default_local,
    value_schema_json,
)
from ticdc_sink.codec.avro.values import decimal_bytes

__all__ = [
    "CONFLUENT_MAGIC",
    "KEY_RECORD",
    "TICDC_BEFORE",
    "TIDB_CHECKSUM_VERSION",
    "TIDB_COMMIT_TS",
    "TIDB_CORRUPTED",
    "TIDB_OP",
    "TIDB_PHYSICAL_TIME",
    "TIDB_ROW_LEVEL_CHECKSUM",
    "AvroEncoder",
    "as_fastavro_reads_it",
    "decimal_bytes",
    "key_record_name",
    "key_schema_json",
    "record_name",
    "tidb_type",
    "timestamp_default_local",
    "value_schema_json",
]

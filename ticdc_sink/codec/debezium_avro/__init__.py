"""TiCDC's debezium-avro protocol (`protocol=debezium-avro`, pingcap/ticdc v26.3.3,
`pkg/sink/codec/debezium/avro.go`): the Debezium key and envelope as Confluent-framed
Avro records, their schemas registered under `<topic>-key` and `<topic>-value`.

    debezium_avro/
      schema.py    the Kafka Connect schemas and their Avro form (TiCDC toAvroSchema)
      encoder.py   DebeziumAvroEncoder: values, key and envelope records, framing
      decoder.py   DebeziumAvroDecoder: the records back into Debezium's envelopes, decoded
      spec.py      SPEC: the protocol's traits, the entry `PROTOCOLS` names

It builds on `debezium` (field schemas, value rules, NULL as DEFAULT) and `avro`
(Confluent framing, registry ids).
"""

from __future__ import annotations

from ticdc_sink.codec.debezium_avro.encoder import DebeziumAvroEncoder

__all__ = ["DebeziumAvroEncoder"]

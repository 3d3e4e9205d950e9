"""TiCDC's Avro protocol (`protocol=avro`, reference §6), following tiflow
`pkg/sink/codec/avro/avro.go`: Confluent-framed Avro key and value records per table, with
schemas registered in a Confluent Schema Registry.

`AvroEncoder` builds both schema texts (`schema`) and checks them with fastavro, so a type
or default the protocol cannot carry fails on the driver, never calling the registry;
`encode_row` is the row path (`row`), `encode_batch` the column-wise one (`batch`), both
sharing the registry ids (`framing.SchemaHeaders`). This is the only module that imports
both paths.

Avro has no wall-clock fields, so `build_ts_ms` does not exist here, and no bootstrap, DDL
or watermark messages (`avro-enable-watermark`, a TiCDC testing mode, is not supported).
Not supported either: AWS Glue framing. With `integrity-check-level=correctness` the value
records carry TiCDC's row checksum fields (`schema`, `values.checksum_fields`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import fastavro
import orjson

from ticdc_sink.codec import ClaimCheckStore, EncodedBatch, Message, SchemaRegistry
from ticdc_sink.codec.avro.batch import AvroBatchEncoder
from ticdc_sink.codec.avro.framing import SchemaHeaders
from ticdc_sink.codec.avro.row import AvroRowEncoder
from ticdc_sink.codec.avro.schema import (
    as_fastavro_reads_it,
    key_record_name,
    key_schema_json,
    record_name,
    value_schema_json,
)
from ticdc_sink.errors import SchemaError
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["AvroEncoder", "build_encoder"]


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str,
    registry: SchemaRegistry | None,
    claim_check: ClaimCheckStore | None,
) -> AvroEncoder:
    """The encoder of one table (`protocols.build_encoder`); Avro writes no "now" and has no
    large-message policy, so `build_ts_ms` and `claim_check` go unused."""
    return AvroEncoder(config, table, topic=topic, registry=registry)


class AvroEncoder:
    """The Avro protocol encoder of one table, built once and reused for every row.

    Messages: key = Confluent-framed record of the handle-key columns (None without a
    handle key); value = Confluent-framed record of the new image, None (a tombstone) for
    DELETE. `len(key) + len(value) + 36 > max-message-bytes` raises MessageTooLargeError:
    Avro has no large-message handling (tiflow AppendRowChangedEvent).
    """

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        topic: str,
        registry: SchemaRegistry | None,
    ) -> None:
        """Compile the table for `topic` (the Kafka topic the messages go to; subjects
        derive from it).

        Raises:
            SchemaError: a column type or default the protocol cannot carry, or column
                names that collide once sanitised.
        """
        self.config = config
        self.table = table
        self.topic = topic
        self.record_name = record_name(table)
        self.key_record_name = key_record_name(config, table)
        self.key_schema = key_schema_json(config, table)
        self.value_schema = value_schema_json(config, table)
        for text in (self.key_schema, self.value_schema):
            if text is not None:
                try:
                    fastavro.parse_schema(as_fastavro_reads_it(orjson.loads(text)))
                except Exception as exc:  # fastavro raises several exception types
                    raise SchemaError(
                        f"table {table.database}.{table.table}: the Avro schema is "
                        f"invalid: {exc}; check the column types and defaults in table-ddl"
                    ) from exc
        self._headers = SchemaHeaders(
            registry,
            topic=topic,
            record_name=self.record_name,
            key_record_name=self.key_record_name,
            key_schema=self.key_schema,
            value_schema=self.value_schema,
        )
        self._row = AvroRowEncoder(config, table, self._headers)
        self._batch: AvroBatchEncoder | None = None

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change (`row.AvroRowEncoder.encode_row`, which
        says what it raises)."""
        return self._row.encode_row(change)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages `encode_row` gives for every event of `batch` (a key-changing
        UPDATE split into DELETE + INSERT), rendered column-wise (built on the first
        batch); values the writers refuse are left to the row path (`row_path`).

        Raises:
            ConfigError: the encoder has no registry.
            RegistryError: from the registry, when fetching a schema id.
        """
        if self._batch is None:
            self._batch = AvroBatchEncoder(self.config, self.table, self._headers)
        return self._batch.encode_batch(batch, key_indexes)

    def encode_bootstrap(self) -> None:
        """None: the Avro protocol has no bootstrap message (schemas live in the registry)."""
        return None

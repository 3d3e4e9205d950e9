"""TiCDC's Debezium protocol (`protocol=debezium`, reference §8): row, DDL and watermark
messages as tiflow `pkg/sink/codec/debezium/codec.go` writes them.

Every message has a JSON key and a JSON value, each `{"payload":…,"schema":…}` (the
`schema` part is left out with `debezium-disable-schema`). `DebeziumEncoder` compiles a
table once (`table`) and offers the row path (`row`) and the column-wise path (`batch`):
this is the only module that imports both. `build_ts_ms` stands in for Go's `time.Now()`
in the top-level `payload.ts_ms` of rows, DDLs and watermarks, so that replaying a batch
writes identical bytes. The watermark payload order is `source, ts_ms, transaction, op`
(the code; the docs show `op` first). With `large-message-handle-compression` every key
and value is compressed (tiflow debezium `encoder.go`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ticdc_sink.codec import ClaimCheckStore, EncodedBatch, Message, SchemaRegistry
from ticdc_sink.codec.choices import LargeMessageCompression
from ticdc_sink.codec.common import sanitize_name
from ticdc_sink.codec.compression import compress, compress_batch
from ticdc_sink.codec.debezium.batch import DebeziumBatchEncoder
from ticdc_sink.codec.debezium.ddl import encode_ddl_event
from ticdc_sink.codec.debezium.row import DebeziumRowEncoder
from ticdc_sink.codec.debezium.schema import (
    TAIL_SCHEMA,
    check_ts,
    source_parts,
    source_schema,
    source_text,
)
from ticdc_sink.codec.debezium.table import DebeziumTable
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.gotext import jsoniter_quote
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["DebeziumEncoder", "build_encoder", "encode_table_ddl", "encode_watermark"]


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The watermark (checkpoint) message, only with `enable-tidb-extension` (else None):
    tiflow `EncodeCheckpointEvent`, reference §8.6. The caller broadcasts it."""
    if not config.enable_tidb_extension:
        return None
    check_ts(commit_ts, "commit ts")
    cluster = config.debezium_cluster_name
    with_schema = not config.debezium_disable_schema
    key = '{"payload":{}'
    if with_schema:
        key += (
            ',"schema":{"type":"struct","name":'
            + jsoniter_quote(sanitize_name(cluster) + ".watermark.Key")
            + ',"optional":false,"fields":[]}'
        )
    key += "}"
    source = source_text(source_parts(cluster, "", ""), commit_ts)
    value = (
        '{"payload":{"source":'
        + source
        + ',"ts_ms":'
        + str(int(build_ts_ms))
        + ',"transaction":null,"op":"m"}'
    )
    if with_schema:
        value += (
            ',"schema":{"type":"struct","optional":false,"name":'
            + jsoniter_quote(sanitize_name(cluster) + ".watermark.Envelope")
            + ',"version":1,"fields":['
            + source_schema(config)
            + ","
            + TAIL_SCHEMA
            + "]}"
        )
    value += "}"
    compression = config.large_message_handle_compression
    return Message(
        key=compress(compression, key.encode()),
        value=compress(compression, value.encode()),
        commit_ts=commit_ts,
        rows=0,
    )


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str,
    registry: SchemaRegistry | None,
    claim_check: ClaimCheckStore | None,
) -> DebeziumEncoder:
    """The encoder of one table (`protocols.build_encoder`); `topic` and `registry` are
    avro's, and debezium has no large-message policy (`claim_check`)."""
    return DebeziumEncoder(config, table, build_ts_ms=build_ts_ms)


def encode_table_ddl(
    config: CodecConfig,
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    *,
    commit_ts: int,
    build_ts_ms: int,
) -> Message:
    """The DDL message announcing `table` (`protocols.encode_ddl`)."""
    encoder = DebeziumEncoder(config, table, build_ts_ms=build_ts_ms)
    return encoder.encode_ddl(previous, query, commit_ts)


class DebeziumEncoder:
    """One table's Debezium encoder (tiflow `dbzCodec`), built once, reused for every row.
    Options: see `table.DebeziumTable`. No size check: TiCDC has none for Debezium.

    Raises:
        SchemaError: a column type Debezium cannot carry.
        ConfigError: an unknown `time-zone`.
    """

    def __init__(self, config: CodecConfig, table: TableSchema, *, build_ts_ms: int) -> None:
        self._config = config
        self._build_ts_ms = int(build_ts_ms)
        self._table = DebeziumTable(config, table, build_ts_ms=build_ts_ms)
        self._row = DebeziumRowEncoder(self._table)
        self._batch: DebeziumBatchEncoder | None = None

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change (`row.DebeziumRowEncoder.encode_row`,
        which says what it raises)."""
        message = self._row.encode_row(change)
        return _compressed(message, self._config.large_message_handle_compression)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of a whole batch of this table, column-wise (built on the first
        batch): exactly what `encode_row` gives for each event, those only the row path
        can write listed in `row_path`."""
        if self._batch is None:
            self._batch = DebeziumBatchEncoder(self._table)
        encoded = self._batch.encode_batch(batch, key_indexes)
        return compress_batch(encoded, self._config.large_message_handle_compression, keys=True)

    def encode_bootstrap(self) -> None:
        """Debezium has no bootstrap message."""
        return None

    def encode_ddl(self, previous: TableSchema | None, query: str, commit_ts: int) -> Message:
        """The DDL event of this encoder's table (`ddl.encode_ddl_event`).

        Raises:
            InputError: a commit ts that is no TSO.
        """
        message = encode_ddl_event(
            self._table.table,
            previous,
            query,
            commit_ts,
            cluster=self._config.debezium_cluster_name,
            schema=source_schema(self._config) if self._table.with_schema else None,
            build_ts_ms=self._build_ts_ms,
        )
        return _compressed(message, self._config.large_message_handle_compression)


def _compressed(message: Message, compression: LargeMessageCompression) -> Message:
    """tiflow debezium `BatchEncoder` compresses every key and value it writes
    (`large-message-handle-compression`; no size check follows)."""
    if compression is LargeMessageCompression.NONE:
        return message
    return attrs.evolve(
        message,
        key=None if message.key is None else compress(compression, message.key),
        value=None if message.value is None else compress(compression, message.value),
    )

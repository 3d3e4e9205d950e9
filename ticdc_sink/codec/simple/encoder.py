"""TiCDC's Simple protocol (reference §7): DML, BOOTSTRAP and WATERMARK, JSON or Avro.

The encoder owns the size check and the large-message policy (tiflow
`pkg/sink/codec/simple/encoder.go`); a marshaller turns events into bytes (tiflow
`simple/marshaller.go`): `JsonMarshaller` for `encoding-format=json` (the default),
`AvroMarshaller` for `encoding-format=avro`, both behind `_Marshaller`, each with its
column-wise twin (`JsonBatchMarshaller`, `AvroBatchMarshaller`). This is the only module
that imports both paths. No DDL messages from the sink: it never sees DDL (for tests and
tools, `encode_ddl` writes one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ticdc_sink.codec import (
    RECORD_OVERHEAD,
    ClaimCheckStore,
    EncodedBatch,
    Message,
    SchemaRegistry,
)
from ticdc_sink.codec.checksum import TableChecksum
from ticdc_sink.codec.choices import EncodingFormat
from ticdc_sink.codec.compression import compress, compress_batch
from ticdc_sink.codec.large_message import ROW_KEY, LargeMessagePolicy
from ticdc_sink.codec.simple import avro_row, json_row
from ticdc_sink.codec.simple.avro_batch import AvroBatchMarshaller
from ticdc_sink.codec.simple.avro_row import AvroMarshaller
from ticdc_sink.codec.simple.json_batch import JsonBatchMarshaller
from ticdc_sink.codec.simple.json_row import JsonMarshaller
from ticdc_sink.codec.simple.values import SimpleDDL, ddl_type_index
from ticdc_sink.errors import ConfigError, MessageTooLargeError
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = [
    "SimpleEncoder",
    "build_encoder",
    "encode_ddl",
    "encode_table_ddl",
    "encode_watermark",
]


class _Marshaller(Protocol):
    """Bytes for one table's events in one encoding (tiflow simple/marshaller.go)."""

    def marshal_row(
        self, change: RowChange, *, handle_key_only: bool, claim_check_location: str
    ) -> bytes: ...

    def marshal_bootstrap(self) -> bytes: ...


class _BatchMarshaller(Protocol):
    """`_Marshaller.marshal_row` for every event of a batch, column-wise."""

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch: ...


def _is_avro(config: CodecConfig) -> bool:
    if config.encoding_format == EncodingFormat.AVRO:
        return True
    if config.encoding_format != EncodingFormat.JSON:  # pragma: no cover - config validates
        raise ConfigError(
            f"option 'encoding-format' is '{config.encoding_format}' for protocol simple; "
            "use json or avro",
            option="encoding-format",
            value=str(config.encoding_format),
            allowed=(EncodingFormat.JSON.value, EncodingFormat.AVRO.value),
        )
    return False


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message:
    """A WATERMARK message in the configured encoding: null key (it travels tiflow's sync
    producer path)."""
    if _is_avro(config):
        value = avro_row.marshal_watermark(commit_ts, build_ts_ms)
    else:
        value = json_row.marshal_watermark(commit_ts, build_ts_ms)
    value = compress(config.large_message_handle_compression, value)
    return Message(key=None, value=value, commit_ts=commit_ts)


def encode_ddl(
    config: CodecConfig,
    ddl_type: str,
    sql: str,
    commit_ts: int,
    *,
    build_ts_ms: int,
    table: TableSchema | None = None,
    pre_table: TableSchema | None = None,
) -> Message:
    """A DDL message in the configured encoding (tiflow newDDLMessage / newDDLMessageMap):
    `ddl_type` one of CREATE, ALTER, ERASE, RENAME, TRUNCATE, CINDEX, DINDEX, QUERY;
    `table`/`pre_table` the schema after/before. Null key. The sink sends no Simple DDL
    (TiCDC's DDL comes from TiDB); this feeds decoders in tests and tools. No size check.

    Raises:
        InputError: an unknown DDL type.
        SchemaError: see table_schema_json.
    """
    ddl_type_index(ddl_type)  # refuses an unknown type in either encoding
    ddl = SimpleDDL(ddl_type, sql, commit_ts, build_ts_ms, table, pre_table)
    marshal = avro_row.marshal_ddl if _is_avro(config) else json_row.marshal_ddl
    value = compress(config.large_message_handle_compression, marshal(ddl))
    return Message(key=None, value=value, commit_ts=commit_ts)


def encode_table_ddl(
    config: CodecConfig,
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    *,
    commit_ts: int,
    build_ts_ms: int,
) -> Message:
    """The DDL message announcing `table` (`protocols.encode_ddl`): CREATE without
    `previous`, else ALTER."""
    ddl_type = "CREATE" if previous is None else "ALTER"
    return encode_ddl(
        config, ddl_type, query, commit_ts, build_ts_ms=build_ts_ms, table=table, pre_table=previous
    )


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str,
    registry: SchemaRegistry | None,
    claim_check: ClaimCheckStore | None,
) -> SimpleEncoder:
    """The encoder of one table (`protocols.build_encoder`); `topic` and `registry` are
    avro's."""
    return SimpleEncoder(config, table, build_ts_ms=build_ts_ms, claim_check=claim_check)


class SimpleEncoder:
    """The Simple protocol encoder of one table, built once and reused for every row.

    `encoding-format` picks the marshaller (json or avro). Messages above
    `max-message-bytes` (key + value + 36) follow `large-message-handle-option`: `none`
    raises MessageTooLargeError, `handle-key-only` re-encodes with the handle-key columns
    and `handleKeyOnly` true (and raises if that is still too large), in either encoding.
    `claim-check` first writes the full message to the injected store (see
    `codec.claim_check` for the file), then sends the handle-key-only form carrying
    `claimCheckLocation` as well as `handleKeyOnly` true (tiflow `simple/encoder.go`).
    """

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        build_ts_ms: int,
        claim_check: ClaimCheckStore | None = None,
    ) -> None:
        """Build the encoder; every message it makes carries `build_ts_ms` as buildTs.
        `claim_check` stores the messages `large-message-handle-option=claim-check` diverts.

        Raises:
            SchemaError: a column type the protocol cannot carry, or a VECTOR column with
                integrity-check-level=correctness.
        """
        avro = _is_avro(config)
        self.config = config
        self.table = table
        self._checksum = (
            TableChecksum(table, time_zone=config.time_zone) if config.row_checksum else None
        )
        self._marshaller: _Marshaller
        if avro:
            self._marshaller = AvroMarshaller(
                table,
                time_zone=config.time_zone,
                build_ts_ms=build_ts_ms,
                checksum=self._checksum,
            )
        else:
            self._marshaller = JsonMarshaller(
                table,
                time_zone=config.time_zone,
                build_ts_ms=build_ts_ms,
                checksum=self._checksum,
            )
        self._large = LargeMessagePolicy(
            config, table, self._small, store=claim_check, protocol="simple"
        )
        self._bootstrap: Message | None = None
        self._build_ts_ms = build_ts_ms
        self._batch_marshaller: _BatchMarshaller | None = None

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The DML messages of a whole batch, column-wise, by the marshaller's twin (built
        on the first batch); no size check here (the writer takes messages above
        max-message-bytes from `encode_row`)."""
        if self._batch_marshaller is None:
            if _is_avro(self.config):
                self._batch_marshaller = AvroBatchMarshaller(
                    self.table,
                    time_zone=self.config.time_zone,
                    build_ts_ms=self._build_ts_ms,
                    checksum=self._checksum,
                )
            else:
                self._batch_marshaller = JsonBatchMarshaller(
                    self.table,
                    time_zone=self.config.time_zone,
                    build_ts_ms=self._build_ts_ms,
                    checksum=self._checksum,
                )
        encoded = self._batch_marshaller.encode_batch(batch, key_indexes)
        return compress_batch(encoded, self.config.large_message_handle_compression)

    def encode_row(self, change: RowChange) -> Message:
        """The DML message of one row change; the Kafka key is empty.

        Raises:
            InputError: a value that does not fit its column.
            MessageTooLargeError: above max-message-bytes and the policy cannot help.
        """
        value = self._marshaller.marshal_row(change, handle_key_only=False, claim_check_location="")
        return self._large.message(change, value)

    def _small(self, change: RowChange, location: str) -> bytes:
        """The handle-key-only form of a change (naming the claim-check `location`)."""
        return self._marshaller.marshal_row(
            change, handle_key_only=True, claim_check_location=location
        )

    def encode_bootstrap(self) -> Message:
        """The table's BOOTSTRAP message (built once: buildTs is fixed per encoder).

        Raises:
            MessageTooLargeError: above max-message-bytes (tiflow checks DDL-path messages
                and has no fallback for them).
        """
        if self._bootstrap is None:
            value = self._marshaller.marshal_bootstrap()
            value = compress(self.config.large_message_handle_compression, value)
            size = len(value) + RECORD_OVERHEAD
            if size > self.config.max_message_bytes:
                raise MessageTooLargeError(
                    table=f"{self.table.database}.{self.table.table}",
                    key="(bootstrap)",
                    size=size,
                    limit=self.config.max_message_bytes,
                )
            self._bootstrap = Message(key=ROW_KEY, value=value, commit_ts=0, rows=0)
        return self._bootstrap

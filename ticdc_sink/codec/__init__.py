"""Encoders: one per protocol, behind one interface. Encoders do no I/O.

`build_encoder` and `encode_watermark` are the only places that know every protocol
(tiflow `pkg/sink/codec/builder/encoder_builder.go`); protocol modules import `Message`
from here and are imported lazily, so this package imports no protocol at load time.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from ticdc_sink.config import CodecConfig
from ticdc_sink.config import Protocol as ProtocolName
from ticdc_sink.errors import ConfigError
from ticdc_sink.events import RowChange
from ticdc_sink.schema import TableSchema

__all__ = [
    "ClaimCheckStore",
    "Encoder",
    "Message",
    "SchemaRegistry",
    "build_encoder",
    "ddl_partitions",
    "encode_ddl",
    "encode_watermark",
]


@attrs.frozen
class Message:
    """One Kafka record before routing: key and value bytes (None means a null key or a
    tombstone value), and what the writer needs to route and account for it."""

    key: bytes | None
    value: bytes | None
    commit_ts: int = 0
    rows: int = 0
    #: Sent in place of a message above max-message-bytes (handle-key-only or claim-check).
    diverted: bool = False


class Encoder(Protocol):
    """One table's encoder, built once and reused for every row of that table."""

    def encode_row(self, change: RowChange) -> Message:
        """The message of one row change."""
        ...

    def encode_bootstrap(self) -> Message | None:
        """The table's schema message, or None when the protocol has none."""
        ...


class SchemaRegistry(Protocol):
    """Schema ids for the avro encoder (tiflow `avro/schema_manager.go`): the encoder
    stays free of I/O; `ticdc_sink.registry` implements this over HTTP."""

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        """The registry id of `schema` (compact Avro schema JSON, sent as is) under the
        subject the configured strategy gives for the topic, record full name and role."""
        ...


class ClaimCheckStore(Protocol):
    """Where `claim-check` puts messages above max-message-bytes (tiflow
    `pkg/sink/kafka/claimcheck`): the encoders stay free of I/O; `ticdc_sink.claim_check`
    implements this over a directory (`file://`) or fsspec."""

    def location(self, name: str) -> str:
        """The location a message names for file `name`: the storage URI without its
        trailing "/" and query, then "/" and `name` (tiflow `FileNameWithPrefix`)."""
        ...

    def write(self, name: str, data: bytes) -> None:
        """Store `data` as file `name`, replacing a file of that name; done before the
        message naming it is produced."""
        ...


def _unsupported(protocol: str) -> ConfigError:
    allowed = tuple(p.value for p in ProtocolName)
    return ConfigError(
        f"option 'protocol' is '{protocol}'; use one of {', '.join(allowed)}",
        option="protocol",
        value=str(protocol),
        allowed=allowed,
    )


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str = "",
    registry: SchemaRegistry | None = None,
    claim_check: ClaimCheckStore | None = None,
) -> Encoder:
    """The encoder of `config.protocol` for one table.

    `build_ts_ms` stands in for every "now" a protocol writes (Simple `buildTs`, Debezium
    `ts_ms`, canal-json `ts`): given by the caller, not read from the clock, so that a
    replayed batch writes identical bytes. `topic` and `registry` matter to avro only,
    which fetches schema ids on its first row; without a registry the encoder only checks
    that the table can be encoded (the driver does that before any task runs).
    `claim_check` is the store of `large-message-handle-option=claim-check` (simple and
    canal-json); without one such an encoder refuses the first message it would divert.

    Raises:
        ConfigError: an option the protocol does not support.
        SchemaError: a column type the protocol cannot carry.
    """
    match config.protocol:
        case ProtocolName.SIMPLE:
            from ticdc_sink.codec.simple import SimpleEncoder

            return SimpleEncoder(config, table, build_ts_ms=build_ts_ms, claim_check=claim_check)
        case ProtocolName.AVRO:
            from ticdc_sink.codec.avro import AvroEncoder

            return AvroEncoder(config, table, topic=topic, registry=registry)
        case ProtocolName.DEBEZIUM:
            from ticdc_sink.codec.debezium import DebeziumEncoder

            return DebeziumEncoder(config, table, build_ts_ms=build_ts_ms)
        case ProtocolName.CANAL_JSON:
            from ticdc_sink.codec.canal_json import CanalJsonEncoder

            return CanalJsonEncoder(config, table, build_ts_ms=build_ts_ms, claim_check=claim_check)
    raise _unsupported(config.protocol)


def encode_ddl(
    config: CodecConfig,
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    *,
    commit_ts: int,
    build_ts_ms: int,
) -> Message | None:
    """The DDL message announcing `table` (`previous` is its schema before `query`, None
    for a CREATE), sent by the caller to the partitions `ddl_partitions` names; None when
    the protocol sends no DDL from this sink (see `config.DDL_PROTOCOLS`)."""
    match config.protocol:
        case ProtocolName.SIMPLE:
            from ticdc_sink.codec import simple

            return simple.encode_ddl(
                config,
                "CREATE" if previous is None else "ALTER",
                query,
                commit_ts,
                build_ts_ms=build_ts_ms,
                table=table,
                pre_table=previous,
            )
        case ProtocolName.DEBEZIUM:
            from ticdc_sink.codec.debezium import DebeziumEncoder

            encoder = DebeziumEncoder(config, table, build_ts_ms=build_ts_ms)
            return encoder.encode_ddl(previous, query, commit_ts)
        case ProtocolName.CANAL_JSON:
            from ticdc_sink.codec.canal_json import CanalJsonEncoder

            encoder = CanalJsonEncoder(config, table, build_ts_ms=build_ts_ms)
            return encoder.encode_ddl(previous, query, commit_ts)
    return None


def ddl_partitions(config: CodecConfig, partition_count: int) -> range:
    """Where a DDL message goes (tiflow `mq_ddl_sink.go`): canal-json to partition 0,
    every other protocol to every partition of the topic."""
    if config.protocol is ProtocolName.CANAL_JSON:
        return range(min(1, partition_count))
    return range(partition_count)


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The watermark (resolved ts) message of `config.protocol`, broadcast by the caller to
    every partition of every topic; None when the protocol sends none: simple always
    sends one, debezium and canal-json with enable-tidb-extension, avro never (TiCDC's
    avro watermark is a test-only mode that Confluent consumers cannot read).
    """
    match config.protocol:
        case ProtocolName.SIMPLE:
            from ticdc_sink.codec import simple

            return simple.encode_watermark(config, commit_ts, build_ts_ms=build_ts_ms)
        case ProtocolName.AVRO:
            return None
        case ProtocolName.DEBEZIUM:
            from ticdc_sink.codec import debezium

            return debezium.encode_watermark(config, commit_ts, build_ts_ms=build_ts_ms)
        case ProtocolName.CANAL_JSON:
            from ticdc_sink.codec import canal_json

            return canal_json.encode_watermark(config, commit_ts, build_ts_ms=build_ts_ms)
    raise _unsupported(config.protocol)

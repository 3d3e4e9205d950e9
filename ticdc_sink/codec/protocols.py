"""Every protocol, and the dispatch to a protocol through its spec: `PROTOCOLS`, the one
list of protocols, `protocol_spec` / `find_protocol` (a protocol's traits by name), and
`build_encoder`, `build_batcher`, `encode_ddl`, `encode_watermark`, `ddl_partitions`
(tiflow `pkg/sink/codec/builder/encoder_builder.go`), and `decoder_for`, a protocol's
decoder by name. config, the writer, the data source, the read side and the CLI read
traits here instead of comparing names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_sink.codec import ClaimCheckStore, Encoder, Message, MessageBatcher, SchemaRegistry
from ticdc_sink.codec.avro.spec import SPEC as AVRO
from ticdc_sink.codec.canal_json.spec import SPEC as CANAL_JSON
from ticdc_sink.codec.debezium.spec import SPEC as DEBEZIUM
from ticdc_sink.codec.debezium_avro.spec import SPEC as DEBEZIUM_AVRO
from ticdc_sink.codec.open_protocol.spec import SPEC as OPEN_PROTOCOL
from ticdc_sink.codec.simple.spec import SPEC as SIMPLE
from ticdc_sink.codec.spec import ProtocolSpec, Watermark
from ticdc_sink.decode import Decoder, DecoderSettings
from ticdc_sink.errors import ConfigError, DecodeError

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig
    from ticdc_sink.schema import TableSchema

__all__ = [
    "PROTOCOLS",
    "build_batcher",
    "build_encoder",
    "ddl_partitions",
    "decoder_for",
    "encode_ddl",
    "encode_watermark",
    "find_protocol",
    "protocol_spec",
    "protocol_specs",
]


#: Every protocol's spec; the order is the one option errors and the docs list them in.
#: A new protocol is one package, one line here and its `codec.choices.Protocol` value.
PROTOCOLS: tuple[ProtocolSpec, ...] = (
    SIMPLE,
    AVRO,
    DEBEZIUM,
    DEBEZIUM_AVRO,
    CANAL_JSON,
    OPEN_PROTOCOL,
)


def protocol_specs() -> tuple[ProtocolSpec, ...]:
    """`PROTOCOLS`: every protocol's spec, in order."""
    return PROTOCOLS


def find_protocol(protocol: str) -> ProtocolSpec | None:
    """The spec of a protocol by its name or an alias (any case, spaces around ignored),
    or None."""
    name = str(protocol).strip().lower()
    for spec in protocol_specs():
        if name in spec.names():
            return spec
    return None


def protocol_spec(protocol: str) -> ProtocolSpec:
    """The spec of a protocol by its name or an alias, as `find_protocol`.

    Raises:
        ConfigError: no protocol of that name, naming the option `protocol`.
    """
    spec = find_protocol(protocol)
    if spec is not None:
        return spec
    allowed = tuple(spec.name for spec in protocol_specs())
    raise ConfigError(
        f"option 'protocol' is '{protocol}'; use one of {', '.join(allowed)}",
        option="protocol",
        value=str(protocol),
        allowed=allowed,
    )


def decoder_for(protocol: str, settings: DecoderSettings | None = None) -> Decoder:
    """A new decoder for a protocol name as the `protocol` option spells it, reading with
    `settings` (the defaults when None).

    Raises:
        DecodeError: an unknown protocol, avro without `schema_for_id`, an unknown
            compression.
    """
    spec = find_protocol(protocol)
    if spec is not None:
        return spec.build_decoder(settings or DecoderSettings())
    names = [s.name for s in protocol_specs()]
    raise DecodeError(
        f"protocol {protocol!r} has no decoder; use {', '.join(names[:-1])} or {names[-1]}"
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
    return protocol_spec(config.protocol).build_encoder(
        config,
        table,
        build_ts_ms=build_ts_ms,
        topic=topic,
        registry=registry,
        claim_check=claim_check,
    )


def build_batcher(config: CodecConfig) -> MessageBatcher | None:
    """One partition's `MessageBatcher` for a protocol that puts several events in one
    Kafka message (`ProtocolSpec.batching`; open-protocol: up to `max-batch-size` events
    within `max-message-bytes`), None for the others (one event, one message)."""
    spec = protocol_spec(config.protocol)
    if not spec.batching or spec.build_batcher is None:
        return None
    return spec.build_batcher(config)


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
    the protocol sends no DDL from this sink, or not in `ticdc-version`
    (`ProtocolSpec.sends_ddl`)."""
    encode = config.spec.encode_table_ddl
    if not config.sends_ddl or encode is None:
        return None
    return encode(config, table, previous, query, commit_ts=commit_ts, build_ts_ms=build_ts_ms)


def ddl_partitions(config: CodecConfig, partition_count: int) -> range:
    """Where a DDL message goes (tiflow `mq_ddl_sink.go`): every partition of the topic,
    or partition 0 alone (canal-json; `ProtocolSpec.ddl_to_all_partitions`)."""
    if protocol_spec(config.protocol).ddl_to_all_partitions:
        return range(partition_count)
    return range(min(1, partition_count))


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The watermark (resolved ts) message of `config.protocol`, broadcast by the caller to
    every partition of every topic; None when the protocol sends none
    (`ProtocolSpec.watermark`: simple and open-protocol (its resolved event) always send
    one, debezium (from TiCDC v26.3) and canal-json with enable-tidb-extension, avro
    never)."""
    encode = config.spec.encode_watermark
    if config.watermark is Watermark.NEVER or encode is None:
        return None
    return encode(config, commit_ts, build_ts_ms=build_ts_ms)

"""What a protocol is, as the rest of the sink needs to know it: `ProtocolSpec`, its
traits and its entry points.

Each protocol package declares one `SPEC` in its `spec.py`, next to its code, importing
its entry points plainly; `ticdc_sink.codec.protocols.PROTOCOLS` lists them. config, the
writer, the data source and the CLI read these traits instead of comparing protocol
names, so a new protocol is one new package and one line in that list. This module
imports nothing of the sink at load time but `TiCDCVersion`: every protocol may import it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from ticdc_sink.ticdc_version import TiCDCVersion

if TYPE_CHECKING:
    from ticdc_sink.codec import Encoder, Message, MessageBatcher
    from ticdc_sink.decode import Decoder

__all__ = [
    "BOOTSTRAP_OPTIONS",
    "DDL_OPTIONS",
    "LARGE_MESSAGE_POLICIES",
    "REGISTRY_OPTIONS",
    "ProtocolSpec",
    "Watermark",
]

#: The sink's options about DDL messages; a protocol with `ddl` owns them.
DDL_OPTIONS = ("ddl-on-schema-change", "ddl-on-first-batch")

#: The schema registry's options; a protocol with `needs_registry` owns them.
REGISTRY_OPTIONS = (
    "schema-registry",
    "schema-registry-user",
    "schema-registry-password",
    "schema-registry-ca",
    "schema-registry-cert",
    "schema-registry-key",
    "schema-registry-timeout-ms",
)

#: The bootstrap options, read by a protocol with `bootstrap` but owned by none: TiCDC
#: takes them whatever the protocol, and its changefeed files carry them.
BOOTSTRAP_OPTIONS = (
    "send-bootstrap-interval-in-sec",
    "send-bootstrap-in-msg-count",
    "send-bootstrap-to-all-partition",
)

#: The `large-message-handle-option` values besides `none`, TiCDC's order.
LARGE_MESSAGE_POLICIES = ("handle-key-only", "claim-check")


class Watermark(enum.Enum):
    """When a protocol sends watermark (resolved ts) messages."""

    ALWAYS = "always"
    WITH_TIDB_EXTENSION = "with enable-tidb-extension"
    NEVER = "never"


@attrs.frozen
class ProtocolSpec:
    """One protocol's traits (tiflow declares the same facts across
    `pkg/config/sink.go`, `large_message.go` and `mq_ddl_sink.go`) and its entry points
    (tiflow `builder/encoder_builder.go` dispatches by protocol name), which
    `ticdc_sink.codec.protocols` calls:

    `build_encoder(config, table, *, build_ts_ms, topic, registry, claim_check)`;
    `build_decoder(settings)` (its decoder, `codec/<protocol>/decoder.py`, from one
    `decode.DecoderSettings`); with `ddl`, `encode_table_ddl(config, table, previous,
    query, *, commit_ts, build_ts_ms)`; unless `watermark` is NEVER,
    `encode_watermark(config, commit_ts, *, build_ts_ms)`; with `batching`,
    `build_batcher(config)`.
    """

    #: The `protocol` value, and other spellings TiCDC accepts for it.
    name: str
    build_encoder: Callable[..., Encoder]
    build_decoder: Callable[..., Decoder]
    encode_table_ddl: Callable[..., Message] | None = None
    encode_watermark: Callable[..., Message | None] | None = None
    build_batcher: Callable[..., MessageBatcher] | None = None
    aliases: tuple[str, ...] = ()
    #: Sends a DDL message when a table's schema changes; to every partition of the
    #: topic, or to partition 0 only (`ddl_to_all_partitions` False; tiflow
    #: mq_ddl_sink.go sends canal-json's there).
    ddl: bool = False
    ddl_to_all_partitions: bool = True
    #: The first TiCDC release with this protocol (debezium-avro: pingcap/ticdc v26.3).
    since: TiCDCVersion = TiCDCVersion.V8_5
    #: The first TiCDC release whose encoder sends this protocol's DDL and watermark
    #: messages (debezium: pingcap/ticdc v26.3; tiflow v8.5's `EncodeDDLEvent` and
    #: `EncodeCheckpointEvent` return none).
    events_since: TiCDCVersion = TiCDCVersion.V8_5
    #: What a TiCDC release changed in this protocol's messages, as `check` shows it.
    changes: tuple[tuple[TiCDCVersion, str], ...] = ()
    #: Needs a Confluent Schema Registry (`schema-registry`); its topic expressions must
    #: then hold {schema} and {table} (tiflow event_router.go) unless a record subject
    #: strategy lets tables share a topic.
    needs_registry: bool = False
    #: Sends bootstrap (table schema) messages (`send-bootstrap-*`).
    bootstrap: bool = False
    watermark: Watermark = Watermark.NEVER
    #: The encoder checks max-message-bytes (tiflow has no such check for debezium).
    size_check: bool = True
    #: The `large-message-handle-option` values besides `none` it takes, and whether
    #: they need `enable-tidb-extension` (tiflow LargeMessageHandleConfig.AdjustAndValidate).
    large_message_policies: tuple[str, ...] = ()
    large_message_needs_tidb_extension: bool = False
    #: Puts several events in one Kafka message: the writer merges each partition's
    #: messages through the module's `build_batcher` (open-protocol; tiflow
    #: `open/open_protocol_encoder.go` `AppendRowChangedEvent`).
    batching: bool = False
    #: Its messages tell the operation (INSERT, UPDATE, DELETE) only with
    #: enable-tidb-extension (avro's `_tidb_op`).
    operation_needs_tidb_extension: bool = False
    #: Its UPDATE messages can carry the old row (tiflow `SinkConfig.ValidateProtocol`:
    #: debezium's unless `debezium-output-old-value=false`; avro's only with
    #: pingcap/ticdc's `avro-include-before-value`).
    old_values: bool = True
    #: The boolean option that, false, drops the old row from its UPDATEs.
    old_values_option: str | None = None
    #: TiCDC's DML messages carry the row checksum with `integrity-check-level=correctness`
    #: (tiflow `EnableRowChecksum`: simple and avro in v8.5), and the (option, value)
    #: settings TiCDC requires for it (tiflow `common.Config.Validate`).
    row_checksum: bool = False
    row_checksum_requires: tuple[tuple[str, str], ...] = ()
    #: The options only this protocol (and others that list them) reads; set away from
    #: their default with another protocol, they are errors.
    options: tuple[str, ...] = ()
    #: The options it reads that TiCDC takes whatever the protocol (max-batch-size):
    #: owned by none, so set with a protocol that does not read them they are reported
    #: as ignored, not refused.
    shared_options: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        # Each trait that sends something needs the entry point that makes it.
        for trait, entry in (
            (self.ddl, self.encode_table_ddl),
            (self.watermark is not Watermark.NEVER, self.encode_watermark),
            (self.batching, self.build_batcher),
        ):
            if trait and entry is None:
                raise TypeError(f"protocol {self.name}: a trait without its entry point")

    def names(self) -> tuple[str, ...]:
        """`name` and its aliases: every spelling of `protocol` that means this one."""
        return (self.name, *self.aliases)

    def owns(self, option: str) -> bool:
        """Whether `option` is one of this protocol's (its DDL and registry options
        included): set away from its default with another protocol, it is an error."""
        return (
            option in self.options
            or (self.ddl and option in DDL_OPTIONS)
            or (self.needs_registry and option in REGISTRY_OPTIONS)
        )

    def sends_ddl(self, version: TiCDCVersion) -> bool:
        """Whether TiCDC `version` sends this protocol's DDL messages."""
        return self.ddl and version.at_least(self.events_since)

    def watermark_in(self, version: TiCDCVersion) -> Watermark:
        """When TiCDC `version` sends this protocol's watermark messages."""
        return self.watermark if version.at_least(self.events_since) else Watermark.NEVER

    def reads(self, option: str) -> bool:
        """Whether this protocol reads `option` (what docs/reference/write-options.md says):
        the options it owns, its shared options and, with `bootstrap`, the bootstrap
        options."""
        return (
            self.owns(option)
            or option in self.shared_options
            or (self.bootstrap and option in BOOTSTRAP_OPTIONS)
        )

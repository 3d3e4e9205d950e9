"""`CodecConfig`: what the encoders need to know, every codec option declared
once (`ticdc_sink.options.option_field`) and checked against the protocol's traits.

The protocol's traits come from its spec (`ticdc_sink.codec.protocols`): whether it owns
an option set away from its default, takes a large-message policy, writes the row
checksum, exists in `ticdc-version`. The encoders take a `CodecConfig` but import it for
annotations only; the values they compare with are `ticdc_sink.codec.choices`. Knows
nothing of Kafka, routing or the sink's other options (`ticdc_sink.config` builds on this).
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

import attrs

from ticdc_sink.codec.choices import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CorruptionHandleLevel,
    EncodingFormat,
    IntegrityCheckLevel,
    LargeMessageCompression,
    LargeMessageHandleOption,
    Protocol,
    SubjectNameStrategy,
)
from ticdc_sink.codec.protocols import protocol_spec, protocol_specs
from ticdc_sink.codec.spec import ProtocolSpec, Watermark
from ticdc_sink.errors import ConfigError
from ticdc_sink.options import (
    INT32_MAX,
    INT64_MAX,
    Invalid,
    and_list,
    check_since,
    enum_parser,
    int_parser,
    option_field,
    option_text,
    or_list,
    parse_bool,
    parse_storage_uri,
    parse_zone,
    too_new_error,
)
from ticdc_sink.redaction import masked_uri_repr
from ticdc_sink.ticdc_version import TiCDCVersion

__all__ = ["CodecConfig", "check_owned_options", "warn_raw_change_events_without_old_values"]

logger = logging.getLogger(__name__)


def _protocols_doc() -> str:
    # The `protocol` option's line, from the specs: `simple`, `avro` (`flat-avro`), ...
    def named(spec: ProtocolSpec) -> str:
        aliases = ", ".join(f"`{alias}`" for alias in spec.aliases)
        return f"`{spec.name}` ({aliases})" if aliases else f"`{spec.name}`"

    return f"{', '.join(named(spec) for spec in protocol_specs())}; see Protocols"


def _large_message_doc() -> str:
    # The `large-message-handle-option` line: which protocols take a policy, from the specs.
    takers = [
        f"{spec.name} with the extension" if spec.large_message_needs_tidb_extension else spec.name
        for spec in protocol_specs()
        if spec.large_message_policies
    ]
    return (
        f"`none` (too large is an error); `handle-key-only` or `claim-check` "
        f"({', '.join(takers)}); see Large messages"
    )


_CLUSTER_ID = re.compile(r"[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*")
_RESERVED_CLUSTER_IDS = frozenset({"owner", "capture", "task", "changefeed", "job", "meta"})


def _cluster_name(value: Any) -> str:
    # TiCDC's cluster-id rule (tiflow pkg/config/server_config.go, IsValidClusterID):
    # Debezium writes it as source.name and into every schema name.
    text = str(value).strip()
    if not _CLUSTER_ID.fullmatch(text) or text in _RESERVED_CLUSTER_IDS:
        raise Invalid(
            "use letters and digits in groups joined by single hyphens (e.g. tidb-prod), "
            f"not one of {', '.join(sorted(_RESERVED_CLUSTER_IDS))}"
        )
    return text


def check_owned_options(part: Any, protocol: str) -> None:
    """An option of another protocol (`ProtocolSpec.owns`), set away from its default,
    is a mistake worth reporting: it would silently do nothing."""
    for field in attrs.fields(type(part)):
        option = field.metadata.get("option")
        owners = [s.name for s in protocol_specs() if option and s.owns(option)]
        if not owners or protocol in owners or getattr(part, field.name) == field.default:
            continue
        raise ConfigError(
            f"option '{option}' applies to protocol {', '.join(owners)}, not to "
            f"'{protocol}'; remove it or change 'protocol'",
            option=option,
        )


@attrs.frozen
class CodecConfig:
    """What the encoders need to know."""

    protocol: Protocol = option_field(
        "protocol",
        Protocol("simple"),
        enum_parser(Protocol, {alias: s.name for s in protocol_specs() for alias in s.aliases}),
        doc=_protocols_doc(),
        ticdc=("protocol",),
    )
    ticdc_version: TiCDCVersion = option_field(
        "ticdc-version",
        TiCDCVersion.V26_3,
        enum_parser(TiCDCVersion),
        doc=(
            "the TiCDC release whose messages are written: `8.5` (pingcap/tiflow v8.5) or "
            "`26.3` (pingcap/ticdc v26.3). Under `8.5` debezium sends no DDL and no "
            "watermark messages and its `source` schema has no `commit_ts` / `cluster_id`, "
            "and what v8.5 lacks is refused (`debezium-avro`, the options marked v26.3, "
            "dispatchers `target-schema` / `target-table`); `check` lists what follows it"
        ),
    )
    encoding_format: EncodingFormat = option_field(
        "encoding-format",
        EncodingFormat.JSON,
        enum_parser(EncodingFormat),
        doc="`json` or `avro`",
        ticdc=("encoding-format",),
    )
    enable_tidb_extension: bool = option_field(
        "enable-tidb-extension",
        False,
        parse_bool,
        doc=(
            "TiDB extension fields and watermarks (avro `_tidb_*` fields; debezium `tidb_type` "
            'and `op: "m"`; canal-json `_tidb`); no effect for `simple`, as in TiCDC'
        ),
        ticdc=("enable-tidb-extension",),
    )
    time_zone: str = option_field(
        "time-zone",
        "UTC",
        parse_zone,
        doc=(
            "the zone TIMESTAMP values are rendered in (TiCDC's server time zone); the Spark "
            "session zone never changes what is written"
        ),
    )
    integrity_check_level: IntegrityCheckLevel = option_field(
        "integrity-check-level",
        IntegrityCheckLevel.NONE,
        enum_parser(IntegrityCheckLevel),
        doc=(
            "`correctness`: DML messages carry TiCDC's row checksum (Simple's `checksum` "
            "object or Avro record; avro's `_tidb_row_level_checksum`, `_tidb_corrupted` and "
            "`_tidb_checksum_version` fields, the value columns in column-ID order, which "
            "needs `enable-tidb-extension=true` and both avro handling modes `string`), the "
            "CRC32 TiDB computes over the columns in column-ID order, taken as "
            "the column order (of `table-ddl`, else the DataFrame): TiDB's differs for a "
            "table with `ADD COLUMN ... FIRST/AFTER` or a rewriting column-type change in its "
            "history. Debezium, canal-json and open-protocol messages carry no checksum in "
            "TiCDC either"
        ),
        ticdc=("[integrity] integrity-check-level",),
    )
    corruption_handle_level: CorruptionHandleLevel = option_field(
        "corruption-handle-level",
        CorruptionHandleLevel.WARN,
        enum_parser(CorruptionHandleLevel),
        doc=(
            "`warn` or `error`: what TiCDC does when the upstream row fails its checksum; "
            "rows here are checksummed as written, so none fails and `corrupted` is false"
        ),
        ticdc=("[integrity] corruption-handle-level",),
    )
    max_message_bytes: int = option_field(
        "max-message-bytes",
        10 * 1024 * 1024,
        int_parser(1, INT32_MAX),
        doc=(
            "largest message (key + value + 36 bytes, as TiCDC counts); lowered to the topic's "
            "`max.message.bytes` − 128 where the brokers report it"
        ),
        ticdc=("max-message-bytes",),
    )
    large_message_handle_option: LargeMessageHandleOption = option_field(
        "large-message-handle-option",
        LargeMessageHandleOption.NONE,
        enum_parser(LargeMessageHandleOption),
        doc=_large_message_doc(),
        ticdc=("large-message-handle-option",),
    )
    claim_check_storage_uri: str | None = option_field(
        "claim-check-storage-uri",
        None,
        parse_storage_uri,
        repr=masked_uri_repr,
        doc=(
            "claim-check: where full messages go, `file:///abs/dir`; other schemes (`s3://`, "
            "`gcs://`, ...) through `fsspec` if installed (`pip install ticdc-sink[claim-check]` "
            "plus the storage's fsspec package)"
        ),
        ticdc=("claim-check-storage-uri",),
    )
    claim_check_raw_value: bool = option_field(
        "claim-check-raw-value",
        False,
        parse_bool,
        doc=(
            "claim-check: store the message value itself instead of TiCDC's JSON "
            '`{"key":null,"value":"<base64>"}`'
        ),
        ticdc=("claim-check-raw-value",),
    )
    large_message_handle_compression: LargeMessageCompression = option_field(
        "large-message-handle-compression",
        LargeMessageCompression.NONE,
        enum_parser(LargeMessageCompression),
        doc=(
            "`snappy` (raw Snappy blocks) or `lz4` (LZ4 frames) compresses message values as "
            "TiCDC does, before the size check: simple (rows, bootstraps, watermarks, DDL), "
            "canal-json (rows, watermarks, DDL), open-protocol (row and DDL values; keys "
            "never), debezium (every key and value); the claim-check file holds the "
            "compressed value; avro ignores it, as TiCDC does. The decompressed bytes are "
            "TiCDC's, the compressed ones come from another encoder (any decoder reads them). "
            "Decoders take the same setting (`decode -o large-message-handle-compression=snappy`)"
        ),
        ticdc=("large-message-handle-compression",),
    )
    send_bootstrap_interval_in_sec: int = option_field(
        "send-bootstrap-interval-in-sec",
        120,
        int_parser(-INT64_MAX - 1, INT64_MAX),
        doc="BOOTSTRAP again after this many seconds",
        ticdc=("send-bootstrap-interval-in-sec",),
    )
    send_bootstrap_in_msg_count: int = option_field(
        "send-bootstrap-in-msg-count",
        10000,
        int_parser(-INT32_MAX - 1, INT32_MAX),
        doc="BOOTSTRAP again after this many rows; 0 in either disables bootstraps",
        ticdc=("send-bootstrap-in-msg-count",),
    )
    send_bootstrap_to_all_partition: bool = option_field(
        "send-bootstrap-to-all-partition",
        True,
        parse_bool,
        doc="BOOTSTRAP to every partition of the topic, else partition 0",
        ticdc=("send-bootstrap-to-all-partition",),
    )
    avro_decimal_handling_mode: AvroDecimalHandling = option_field(
        "avro-decimal-handling-mode",
        AvroDecimalHandling.PRECISE,
        enum_parser(AvroDecimalHandling),
        doc="`precise` (bytes, `decimal` logical type) or `string`",
        ticdc=("avro-decimal-handling-mode",),
    )
    avro_bigint_unsigned_handling_mode: AvroBigintUnsignedHandling = option_field(
        "avro-bigint-unsigned-handling-mode",
        AvroBigintUnsignedHandling.LONG,
        enum_parser(AvroBigintUnsignedHandling),
        doc="`long` (wraps above 2^63, as TiCDC) or `string`",
        ticdc=("avro-bigint-unsigned-handling-mode",),
    )
    avro_include_before_value: bool = option_field(
        "avro-include-before-value",
        False,
        parse_bool,
        doc=(
            "the value record gets `_ticdc_before` after the columns (null, or a "
            "`<table>_before` record of the old row: UPDATEs, which then need `_before`, and "
            "DELETEs) and always `_tidb_op` (`c`, `u`, `d`); a DELETE is then a value of the "
            "deleted row, not a tombstone. pingcap/ticdc's master (ticdc#5154, after v26.3.4: "
            "in no release yet)"
        ),
        ticdc=("avro-include-before-value",),
        since=TiCDCVersion.V26_3,
    )
    subject_name_strategy: SubjectNameStrategy = option_field(
        "subject-name-strategy",
        SubjectNameStrategy.TOPIC,
        enum_parser(
            SubjectNameStrategy,
            {
                "topicnamestrategy": "topic",
                "recordnamestrategy": "record",
                "topicrecordnamestrategy": "topic-record",
            },
        ),
        doc="`topic` (TiCDC's), `record`, `topic-record` (Confluent's names also accepted)",
    )
    debezium_disable_schema: bool = option_field(
        "debezium-disable-schema",
        False,
        parse_bool,
        doc="payload only, no `schema` part",
        ticdc=("debezium-disable-schema",),
    )
    debezium_output_old_value: bool = option_field(
        "debezium-output-old-value",
        True,
        parse_bool,
        doc="UPDATEs carry `before` (then every UPDATE needs `_before`)",
        ticdc=("[sink.debezium] output-old-value",),
    )
    debezium_cluster_name: str = option_field(
        "debezium-cluster-name",
        "default",
        _cluster_name,
        doc="TiCDC's cluster id, in `source.name` and schema names",
    )
    only_output_updated_columns: bool = option_field(
        "only-output-updated-columns",
        False,
        parse_bool,
        doc="the old row (canal-json `old`, open-protocol `p`) keeps only the changed columns",
        ticdc=("only-output-updated-columns",),
    )
    content_compatible: bool = option_field(
        "content-compatible",
        False,
        parse_bool,
        doc="Canal's own `mysqlType` text and `old` (implies the above)",
        ticdc=("content-compatible",),
    )
    output_row_key: bool = option_field(
        "output-row-key",
        False,
        parse_bool,
        doc=(
            "with `enable-tidb-extension=true`, each DML message carries TiDB's row key, "
            "`_tidb.rowkey`: base64 of `t`, the table id, `_r` and the row's integer handle "
            "(pingcap/ticdc v26.3; `table-id` should be TiDB's). Only tables whose primary key "
            "is one integer column that is the row handle; others are refused. TiCDC reads it "
            "from the sink URI only: the changefeed file's codec-config key is reported as "
            "ignored"
        ),
        ticdc=("output-row-key",),
        since=TiCDCVersion.V26_3,
    )
    delete_only_output_handle_key_columns: bool = option_field(
        "delete-only-output-handle-key-columns",
        False,
        parse_bool,
        doc="DELETEs carry only the handle key",
        ticdc=("delete-only-output-handle-key-columns",),
    )
    output_raw_change_event: bool = option_field(
        "output-raw-change-event",
        False,
        parse_bool,
        doc="an UPDATE that changes a handle or unique key is sent as one UPDATE, "
        "else as DELETE and INSERT",
        ticdc=("output-raw-change-event",),
    )
    ddl_on_schema_change: bool = option_field(
        "ddl-on-schema-change",
        True,
        parse_bool,
        doc="a DDL message when the table's schema changed between batches",
    )
    ddl_on_first_batch: bool = option_field(
        "ddl-on-first-batch",
        False,
        parse_bool,
        doc="a `CREATE TABLE` DDL message before a table's first batch",
    )
    max_batch_size: int = option_field(
        "max-batch-size",
        16,
        int_parser(1, INT32_MAX),
        doc=(
            "most row events in one Kafka message; the other protocols report it as ignored, "
            "as TiCDC accepts it from any"
        ),
        ticdc=("max-batch-size",),
    )
    open_output_old_value: bool = option_field(
        "open-output-old-value",
        True,
        parse_bool,
        doc="UPDATEs carry the old row `p` (then every UPDATE needs `_before`)",
        ticdc=("[sink.open] output-old-value",),
    )

    def __attrs_post_init__(self) -> None:
        self._check_version()
        self._check_protocol_options()
        self._check_large_message_option()
        self._check_integrity()

    @property
    def spec(self) -> ProtocolSpec:
        """The traits of `protocol` (ticdc_sink.codec.spec): what it sends and needs."""
        return protocol_spec(self.protocol)

    @property
    def sends_ddl(self) -> bool:
        """TiCDC `ticdc-version` sends this protocol's DDL messages (`ProtocolSpec.sends_ddl`)."""
        return self.spec.sends_ddl(self.ticdc_version)

    @property
    def watermark(self) -> Watermark:
        """When TiCDC `ticdc-version` sends this protocol's watermarks."""
        return self.spec.watermark_in(self.ticdc_version)

    def _check_version(self) -> None:
        version = self.ticdc_version
        if not version.at_least(self.spec.since):
            raise too_new_error("protocol", self.protocol.value, self.spec.since, version)
        check_since(self, version)

    @property
    def sends_old_values(self) -> bool:
        """UPDATE messages carry the old row (tiflow `SinkConfig.ValidateProtocol`'s
        outputOldValue), so a consumer of an unsplit key-changing UPDATE sees the old key."""
        if not self.spec.old_values:
            return False
        option = self.spec.old_values_option
        return option is None or bool(getattr(self, option.replace("-", "_")))

    @property
    def row_checksum(self) -> bool:
        """DML messages carry TiCDC's row checksum (tiflow `common.Config.EnableRowChecksum`,
        set by `[integrity] integrity-check-level = "correctness"`), in the protocols whose
        messages have a place for it."""
        return self.integrity_check_level is IntegrityCheckLevel.CORRECTNESS and self.spec.reads(
            "integrity-check-level"
        )

    def _check_protocol_options(self) -> None:
        check_owned_options(self, self.protocol)

    def _check_integrity(self) -> None:
        # TiCDC v8.5 writes the checksum in Simple (JSON and Avro) and avro messages only
        # (pkg/sink/codec/simple/message.go, simple/avro.go, avro/avro.go); debezium,
        # canal-json and open-protocol carry none, so the setting changes nothing there.
        spec = self.spec
        if self.integrity_check_level is IntegrityCheckLevel.NONE or not spec.row_checksum:
            return
        wrong = [
            (name, value, wanted)
            for name, wanted in spec.row_checksum_requires
            if (value := option_text(getattr(self, name.replace("-", "_")))) != wanted
        ]
        if wrong:
            name, value, _ = wrong[0]
            required = [f"{n}={w}" for n, w in spec.row_checksum_requires]
            to_set = [f"{n}={w}" for n, _, w in wrong]
            raise ConfigError(
                f"option {name!r} is {value!r}; protocol {spec.name} writes the row checksum "
                f"(integrity-check-level=correctness) only with {and_list(required)}, as TiCDC "
                f"requires; set {and_list(to_set)}, or integrity-check-level=none",
                option=name,
                value=value,
            )

    def _check_large_message_option(self) -> None:
        # tiflow LargeMessageHandleConfig.AdjustAndValidate: only simple and canal-json (the
        # latter with the TiDB extension) may shrink or offload large messages; claim-check
        # needs its storage URI.
        option = self.large_message_handle_option
        if option is not LargeMessageHandleOption.NONE:
            self._check_large_message_protocol(option)
        if option is not LargeMessageHandleOption.CLAIM_CHECK:
            for name, is_default in (
                ("claim-check-storage-uri", self.claim_check_storage_uri is None),
                ("claim-check-raw-value", not self.claim_check_raw_value),
            ):
                if not is_default:
                    raise ConfigError(
                        f"option '{name}' is set but 'large-message-handle-option' is "
                        f"'{option.value}'; set large-message-handle-option=claim-check or "
                        f"remove {name}",
                        option=name,
                    )
        elif self.claim_check_storage_uri is None:
            raise ConfigError(
                "option 'large-message-handle-option' is 'claim-check' but "
                "'claim-check-storage-uri' is empty; give where to store large messages, "
                "e.g. claim-check-storage-uri=file:///data/claim-check",
                option="claim-check-storage-uri",
            )

    def _check_large_message_protocol(self, option: LargeMessageHandleOption) -> None:
        spec = self.spec
        if option.value not in spec.large_message_policies:
            takers = [s.name for s in protocol_specs() if option.value in s.large_message_policies]
            raise ConfigError(
                f"option 'large-message-handle-option' is '{option.value}' but protocol "
                f"'{self.protocol.value}' does not support it; use none, or protocol "
                f"{or_list(takers)}",
                option="large-message-handle-option",
                value=option.value,
            )
        if spec.large_message_needs_tidb_extension and not self.enable_tidb_extension:
            raise ConfigError(
                f"option 'large-message-handle-option' is '{option.value}' with protocol "
                f"{spec.name}; that needs enable-tidb-extension=true",
                option="large-message-handle-option",
                value=option.value,
            )


@functools.cache
def warn_raw_change_events_without_old_values(protocol: str, option: str | None) -> None:
    """Warn that `output-raw-change-event=true` with a protocol sending no old values
    (`option`: the protocol's option that would send them, None: none) loses the old key
    of an UPDATE that changes it, once per process and protocol. TiCDC logs the same
    warning when a changefeed is created (tiflow pkg/config/sink.go,
    SinkConfig.ValidateProtocol)."""
    send_old_values = f"Send old values ({option}=true), or leave" if option else "Leave"
    logger.warning(
        "ticdc: output-raw-change-event=true with protocol %s, whose UPDATEs carry no old "
        "values: an UPDATE that changes the key is sent whole, and consumers never learn "
        "that the old key is gone. %s output-raw-change-event false to send such UPDATEs as "
        "DELETE and INSERT",
        protocol,
        send_old_values,
    )

"""The values the codec's options take, as `str` enums of the option values (the
`protocol` value, `encoding-format`, `large-message-handle-option`, the avro handling
modes, ...).

The encoders compare with these, so they live apart from `CodecConfig`
(`ticdc_sink.codec.config`), which reads the protocols' specs: an encoder imports this
module and never the config. Imports nothing of the sink.
"""

from __future__ import annotations

import enum

__all__ = [
    "AvroBigintUnsignedHandling",
    "AvroDecimalHandling",
    "CorruptionHandleLevel",
    "EncodingFormat",
    "IntegrityCheckLevel",
    "LargeMessageCompression",
    "LargeMessageHandleOption",
    "Protocol",
    "SubjectNameStrategy",
]


class Protocol(enum.StrEnum):
    """The `protocol` values: each protocol's `ProtocolSpec.name`, in the order of
    `ticdc_sink.codec.protocols.PROTOCOLS` (a test holds the two together). Code reads a
    protocol's traits from its spec, never compares members."""

    SIMPLE = "simple"
    AVRO = "avro"
    DEBEZIUM = "debezium"
    DEBEZIUM_AVRO = "debezium-avro"
    CANAL_JSON = "canal-json"
    OPEN_PROTOCOL = "open-protocol"


class EncodingFormat(enum.StrEnum):
    JSON = "json"
    AVRO = "avro"


class IntegrityCheckLevel(enum.StrEnum):
    NONE = "none"
    CORRECTNESS = "correctness"


class CorruptionHandleLevel(enum.StrEnum):
    WARN = "warn"
    ERROR = "error"


class LargeMessageHandleOption(enum.StrEnum):
    NONE = "none"
    HANDLE_KEY_ONLY = "handle-key-only"
    CLAIM_CHECK = "claim-check"


class LargeMessageCompression(enum.StrEnum):
    """`large-message-handle-compression` (tiflow compression.Supported)."""

    NONE = "none"
    SNAPPY = "snappy"
    LZ4 = "lz4"


class AvroDecimalHandling(enum.StrEnum):
    PRECISE = "precise"
    STRING = "string"


class AvroBigintUnsignedHandling(enum.StrEnum):
    LONG = "long"
    STRING = "string"


class SubjectNameStrategy(enum.StrEnum):
    """How Avro schemas are named in the registry. TiCDC knows only TOPIC; the record
    strategies let several tables share one topic (Confluent's names are aliases)."""

    TOPIC = "topic"
    RECORD = "record"
    TOPIC_RECORD = "topic-record"

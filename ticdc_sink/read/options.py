"""The reader's options: what `spark.read.format("ticdc")` takes, parsed once on the driver.

`ReadConfig.from_options` alone reads the raw option strings (Spark hands them lowercased,
values as given). Options share the writer's names where they mean the same thing
(`kafka.*`, `topic`, `protocol`, `encoding-format`, `database`, `table`) and
Spark's Kafka source's names for what only a reader has (`startingOffsets`,
`endingOffsets`, `kafkaConsumer.pollTimeoutMs`, `maxOffsetsPerTrigger`).

This module knows option text and nothing of Spark or Kafka clients.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

import attrs

from ticdc_sink.codec import find_protocol, protocol_specs
from ticdc_sink.codec.spec import ProtocolSpec
from ticdc_sink.config import RegistryConfig
from ticdc_sink.errors import ConfigError

__all__ = ["READ_OPTIONS", "READ_PROTOCOLS", "ReadConfig"]

#: The protocols the reader decodes, as the `protocol` option spells them (TiCDC's other
#: spellings, `flat-avro` and `default`, are taken too).
READ_PROTOCOLS = tuple(spec.name for spec in protocol_specs())

#: option -> what it means; the README's reading table says the same.
READ_OPTIONS = {
    "kafka.bootstrap.servers": "the brokers (required)",
    "kafka.<name>": "any librdkafka consumer setting, passed through",
    "topic": "the topic to read (required)",
    "protocol": "simple (the default), avro, debezium, canal-json or open-protocol",
    "encoding-format": "simple: json (default) or avro; other protocols: json",
    "schema-registry": "avro: the registry URL, http(s)://host:port (required for avro)",
    "schema-registry-user": "avro: basic-auth user",
    "schema-registry-password": "avro: basic-auth password (a secret)",
    "schema-registry-ca": "avro: CA file to verify an https registry",
    "schema-registry-cert": "avro: client certificate file (with the key)",
    "schema-registry-key": "avro: client key file (with the certificate)",
    "schema-registry-timeout-ms": "avro: bound for one registry request (30000)",
    "time-zone": "debezium: the writer's time-zone, TIMESTAMPs are read back in it (UTC)",
    "claim-check-storage-uri": "follow claim-check messages to the full row in this storage",
    "claim-check-raw-value": "the writer's claim-check-raw-value (false)",
    "large-message-handle-compression": "the writer's: none (default), snappy or lz4",
    "database": "read this database's table only",
    "table": "read this table only",
    "startingoffsets": (
        "earliest (batch default), latest (streaming default), or JSON {topic: {partition: offset}}"
    ),
    "endingoffsets": "latest (default), or JSON {topic: {partition: offset}}",
    "kafka-columns": "true: add _topic, _partition, _offset (default false)",
    "kafkaconsumer.polltimeoutms": "how long a read waits for the next message (120000)",
    "on-bad-message": "fail (default): a message that does not decode fails the read; skip",
    "consistency": "streaming: watermark (default): micro-batches end at watermarks; none",
    "maxoffsetspertrigger": "streaming: at most this many offsets per micro-batch (soft)",
    "schema-evolution": "streaming: fail (default) when a table's columns change; "
    "ignore-new-columns",
}

# What Spark itself puts among a source's options (load(path), readStream).
_SPARK_OPTIONS = frozenset({"path", "paths"})
_BOOLEANS = {"true": True, "false": False}


@attrs.frozen
class ReadConfig:
    """How to read one topic. Picklable and hashable: Spark carries it to every task."""

    bootstrap_servers: str
    topic: str
    protocol: str = "simple"
    encoding_format: str = "json"
    database: str | None = None
    table: str | None = None
    #: None: the read's default (batch: earliest, streaming: latest, as Spark's Kafka source).
    starting_offsets: str | None = None
    ending_offsets: str = "latest"
    kafka_columns: bool = False
    poll_timeout_s: float = 120.0
    #: Skip (and count) messages that do not decode instead of failing.
    skip_bad_messages: bool = False
    #: Streaming: end micro-batches at watermarks (True) or wherever the data ends.
    watermark_consistency: bool = True
    #: Streaming: the offsets a micro-batch reads at most (soft under watermark consistency).
    max_offsets_per_trigger: int | None = None
    #: Streaming: read on without the columns a table gains mid-stream.
    ignore_new_columns: bool = False
    #: librdkafka settings (`kafka.` prefix removed), sorted by name.
    client: tuple[tuple[str, str], ...] = ()
    #: The Confluent Schema Registry (protocols with `needs_registry`: avro).
    registry: RegistryConfig = RegistryConfig()
    time_zone: str = "UTC"
    #: Where the writer's claim-check files are (None: claim-check rows fail the read);
    #: may hold credentials, so kept out of repr.
    claim_check_storage_uri: str | None = attrs.field(default=None, repr=False)
    claim_check_raw_value: bool = False
    compression: str = "none"

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ReadConfig:
        """Read the options Spark gives a source.

        Raises:
            ConfigError: an unknown option (with the likely one), a missing required one,
                or a value that is not allowed; each names the option.
        """
        given = {str(k).strip().lower(): str(v) for k, v in options.items()}
        for key in _SPARK_OPTIONS:
            given.pop(key, None)
        client = {k.removeprefix("kafka."): v for k, v in given.items() if k.startswith("kafka.")}
        rest = {k: v for k, v in given.items() if not k.startswith("kafka.")}
        known = set(READ_OPTIONS) - {"kafka.bootstrap.servers", "kafka.<name>"}
        for key in rest:
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise ConfigError(
                    f"option {key!r} is not a reading option{hint} (reading takes "
                    f"{', '.join(sorted(READ_OPTIONS))})",
                    option=key,
                    allowed=tuple(sorted(READ_OPTIONS)),
                )
        servers = client.pop("bootstrap.servers", "").strip()
        if not servers:
            raise ConfigError(
                "option kafka.bootstrap.servers is not set; give the brokers to read from, "
                "as .option('kafka.bootstrap.servers', 'host:9092')",
                option="kafka.bootstrap.servers",
            )
        topic = rest.get("topic", "").strip()
        if not topic:
            raise ConfigError("option topic is not set; give the topic to read", option="topic")
        spec = _protocol(rest)
        formats = ("json", "avro") if spec.reads("encoding-format") else ("json",)
        registry = _registry(rest)
        if spec.needs_registry and not registry.url:
            raise ConfigError(
                f"option schema-registry is not set; protocol {spec.name} reads writer "
                "schemas from the Confluent Schema Registry, give its URL such as "
                "http://registry:8081",
                option="schema-registry",
            )
        return cls(
            bootstrap_servers=servers,
            topic=topic,
            protocol=spec.name,
            encoding_format=_choice(rest, "encoding-format", "json", formats),
            database=rest.get("database") or None,
            table=rest.get("table") or None,
            starting_offsets=rest["startingoffsets"].strip() if "startingoffsets" in rest else None,
            ending_offsets=rest.get("endingoffsets", "latest").strip(),
            kafka_columns=_boolean(rest, "kafka-columns"),
            poll_timeout_s=_positive_ms(rest, "kafkaconsumer.polltimeoutms", 120_000) / 1000,
            skip_bad_messages=_choice(rest, "on-bad-message", "fail", ("fail", "skip")) == "skip",
            watermark_consistency=_choice(rest, "consistency", "watermark", ("watermark", "none"))
            == "watermark",
            ignore_new_columns=_choice(
                rest, "schema-evolution", "fail", ("fail", "ignore-new-columns")
            )
            == "ignore-new-columns",
            max_offsets_per_trigger=(
                _positive(rest, "maxoffsetspertrigger", "a number of offsets above 0")
                if "maxoffsetspertrigger" in rest
                else None
            ),
            client=tuple(sorted(client.items())),
            registry=registry,
            time_zone=rest.get("time-zone", "UTC").strip() or "UTC",
            claim_check_storage_uri=rest.get("claim-check-storage-uri", "").strip() or None,
            claim_check_raw_value=_boolean(rest, "claim-check-raw-value"),
            compression=_choice(
                rest, "large-message-handle-compression", "none", ("none", "snappy", "lz4")
            ),
        )


def _protocol(options: Mapping[str, str]) -> ProtocolSpec:
    value = options.get("protocol", "simple").strip().lower()
    spec = find_protocol(value)
    if spec is None:
        raise ConfigError(
            f"option protocol is {value!r}; reading takes {', '.join(READ_PROTOCOLS)}",
            option="protocol",
            value=value,
            allowed=READ_PROTOCOLS,
        )
    return spec


def _registry(options: Mapping[str, str]) -> RegistryConfig:
    """The `schema-registry*` options as the writer reads them (`config.RegistryConfig`)."""
    given = {
        field.name: options[field.metadata["option"]]
        for field in attrs.fields(RegistryConfig)
        if field.metadata.get("option") in options
    }
    return RegistryConfig(**given)  # its converters raise ConfigError naming the option


def _choice(options: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = options.get(name, default).strip().lower()
    if value not in allowed:
        raise ConfigError(
            f"option {name} is {value!r}; reading takes {', '.join(allowed)}",
            option=name,
            value=value,
            allowed=allowed,
        )
    return value


def _boolean(options: Mapping[str, str], name: str) -> bool:
    value = options.get(name, "false").strip().lower()
    if value not in _BOOLEANS:
        raise ConfigError(
            f"option {name} is {value!r}; use true or false",
            option=name,
            value=value,
            allowed=("true", "false"),
        )
    return _BOOLEANS[value]


def _positive_ms(options: Mapping[str, str], name: str, default: int) -> int:
    return _positive(
        {name: options.get(name, str(default))}, name, "a number of milliseconds above 0"
    )


def _positive(options: Mapping[str, str], name: str, what: str) -> int:
    text = options[name].strip()
    if not text.isdigit() or int(text) == 0:
        raise ConfigError(f"option {name} is {text!r}; give {what}", option=name, value=text)
    return int(text)

"""The reader's options: what `spark.read.format("ticdc")` takes, parsed once on the driver.

`ReadConfig.from_options` alone reads the raw option strings (Spark hands them lowercased,
values as given). Options share the writer's names where they mean the same thing
(`kafka.*`, `topic`, `protocol`, `encoding-format`, `database`, `table`,
`broker-timeout-ms`, and the writer's `enable-tidb-extension` and `partition-num`, which
say which partitions carry watermarks) and Spark's Kafka source's names for what only a
reader has (`startingOffsets`, `endingOffsets`, `kafkaConsumer.pollTimeoutMs`,
`maxOffsetsPerTrigger`, `failOnDataLoss`).

Topics: `topic` names one topic or a comma-separated list (Spark's `subscribe`),
`topicPattern` a regular expression matched against the whole name of every topic the
brokers have (Spark's `subscribePattern`); one of the two, never both. `select_topics`
resolves them against the brokers' topic list.

`sink-uri` and `config` give what the writer's give (`config.layer_options`: the same
layers, explicit options winning): brokers, topic, protocol settings, the registry and
TiCDC's Kafka client parameters. Their settings that mean nothing to a reader are ignored,
and so is an explicit option that only the writer takes (`ReadConfig.ignored` lists it, for
a note: one option map may serve a write and a read); any other unknown option is an
error.

This module knows option text and nothing of Spark or Kafka clients.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from ticdc_sink.codec import find_protocol, protocol_specs
from ticdc_sink.codec.spec import ProtocolSpec
from ticdc_sink.config import (
    RegistryConfig,
    is_secret,
    layer_options,
    option_names,
    ticdc_kafka_settings,
)
from ticdc_sink.errors import ConfigError

__all__ = ["READ_OPTIONS", "READ_PROTOCOLS", "ReadConfig", "select_topics"]

#: The protocols the reader decodes, as the `protocol` option spells them (TiCDC's other
#: spellings, `flat-avro` and `default`, are taken too).
READ_PROTOCOLS = tuple(spec.name for spec in protocol_specs())

#: option -> what it means; the README's reading table says the same.
READ_OPTIONS = {
    "kafka.bootstrap.servers": "the brokers (required, unless sink-uri gives them)",
    "kafka.<name>": "any librdkafka consumer setting, passed through (fetch.wait.max.ms "
    "defaults to 20 here, not 500: a read visits partitions one after another)",
    "sink-uri": "the writer's kafka://host:9092/topic?protocol=... (brokers, topic, settings)",
    "config": "the writer's changefeed TOML file ([sink] settings)",
    "topic": "the topic to read, or a comma-separated list of topics",
    "topicpattern": "instead of topic: read every topic whose whole name matches this regex",
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
    "kafkaconsumer.polltimeoutms": "how long a task waits for the next message of its range "
    "(120000)",
    "broker-timeout-ms": "how long to try to reach the brokers (metadata, offsets) before "
    "failing (30000), as in writes",
    "failondataloss": "true (default): fail when offsets a stream was to read are gone (topic "
    "deleted or recreated, messages deleted); false: log a WARNING and read on from what is "
    "there",
    "on-bad-message": "fail (default): a message that does not decode fails the read; skip",
    "consistency": "streaming: watermark (default): micro-batches end at watermarks; none "
    "(batch and streaming: none drops replays by TiCDC's rule alone)",
    "replays": "drop (default): leave out the rows TiCDC replayed, as its consumer does; "
    "keep: every row message",
    "maxoffsetspertrigger": "streaming: at most this many offsets per micro-batch (soft)",
    "minoffsetspertrigger": "streaming: wait for this many new offsets before a micro-batch "
    "(PySpark 4.2+)",
    "maxtriggerdelay": "streaming: with minOffsetsPerTrigger, the longest wait (15m)",
    "minpartitions": "at least about this many Spark tasks: large ranges split (under "
    "consistency=watermark only just after a watermark)",
    "schema-evolution": "streaming: fail (default) when a table's columns change; "
    "ignore-new-columns",
    "enable-tidb-extension": "the writer's (false): debezium and canal-json carry watermarks "
    "only with true",
    "partition-num": "the writer's: only partitions below it carry watermarks (default: all)",
}

# What Spark itself puts among a source's options (load(path), readStream).
_SPARK_OPTIONS = frozenset({"path", "paths"})
_BOOLEANS = {"true": True, "false": False}
# Spark's Kafka source's spellings, pointed at ours when given.
_SPARK_KAFKA_SPELLINGS = {
    "subscribe": "topic",
    "subscribepattern": "topicPattern",
    "assign": "topic and startingOffsets",
}
# librdkafka settings that only a producer reads (TiCDC's Kafka parameters translate to
# them too); a consumer warns about each, so a read leaves them out.
_PRODUCER_SETTINGS = frozenset({"acks", "compression.type", "message.send.max.retries"})


def _masked_client(client: tuple[tuple[str, str], ...]) -> str:
    return repr(tuple((k, "***" if is_secret(k) else v) for k, v in client))


@attrs.frozen
class ReadConfig:
    """How to read TiCDC topics. Picklable and hashable: Spark carries it to every task."""

    bootstrap_servers: str
    #: The one topic a per-topic step reads (its consumer, a task's range, the decoder's
    #: messages): see `for_topic`. In the read's own config, the topics as named, for
    #: messages (`a, b`, or the pattern).
    topic: str
    #: The topics `topic` names (one or several); empty when `topic_pattern` selects.
    topics: tuple[str, ...] = ()
    #: `topicPattern`: read every topic whose whole name matches it.
    topic_pattern: str | None = None
    protocol: str = "simple"
    encoding_format: str = "json"
    database: str | None = None
    table: str | None = None
    #: None: the read's default (batch: earliest, streaming: latest, as Spark's Kafka source).
    starting_offsets: str | None = None
    ending_offsets: str = "latest"
    kafka_columns: bool = False
    poll_timeout_s: float = 120.0
    #: How long to wait for the brokers' metadata and offsets (`broker-timeout-ms`).
    broker_timeout_s: float = 30.0
    #: Offsets a stream was to read that are gone fail the query (Spark's failOnDataLoss).
    fail_on_data_loss: bool = True
    #: Skip (and count) messages that do not decode instead of failing.
    skip_bad_messages: bool = False
    #: Streaming: end micro-batches at watermarks (True) or wherever the data ends.
    watermark_consistency: bool = True
    #: Keep the rows TiCDC replayed (`replays=keep`) instead of dropping them (`replay`).
    keep_replays: bool = False
    #: Streaming: the offsets a micro-batch reads at most (soft under watermark consistency).
    max_offsets_per_trigger: int | None = None
    #: Streaming: new offsets a micro-batch waits for (Spark's minOffsetsPerTrigger).
    min_offsets_per_trigger: int | None = None
    #: Streaming: the longest a micro-batch waits for `min_offsets_per_trigger`, seconds.
    max_trigger_delay_s: float = 900.0
    #: Whether `maxTriggerDelay` was given (refused where PySpark has no read limits).
    max_trigger_delay_given: bool = False
    #: The fewest Spark partitions a read asks for (`split`); None: one per Kafka partition.
    min_partitions: int | None = None
    #: Streaming: read on without the columns a table gains mid-stream.
    ignore_new_columns: bool = False
    #: The writer's enable-tidb-extension: debezium and canal-json send watermarks only with it.
    tidb_extension: bool = False
    #: The writer's partition-num: partitions from it on carry no watermark (None: all do).
    partition_num: int | None = None
    #: librdkafka settings (`kafka.` prefix removed), sorted by name; secrets masked in repr.
    client: tuple[tuple[str, str], ...] = attrs.field(default=(), repr=_masked_client)
    #: The Confluent Schema Registry (protocols with `needs_registry`: avro).
    registry: RegistryConfig = RegistryConfig()
    time_zone: str = "UTC"
    #: Where the writer's claim-check files are (None: claim-check rows fail the read);
    #: may hold credentials, so kept out of repr.
    claim_check_storage_uri: str | None = attrs.field(default=None, repr=False)
    claim_check_raw_value: bool = False
    compression: str = "none"
    #: Options given explicitly that only the writer takes, ignored here (for a note).
    ignored: tuple[str, ...] = ()

    @property
    def named_topics(self) -> str:
        """The topics the options select, as a message names them."""
        if self.topic_pattern is not None:
            return f"topics matching {self.topic_pattern!r}"
        return f"topic {self.topic}" if len(self.topics) <= 1 else f"topics {self.topic}"

    def for_topic(self, topic: str) -> ReadConfig:
        """The config of a step that reads `topic` only."""
        return attrs.evolve(self, topic=topic, topics=(topic,), topic_pattern=None)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ReadConfig:
        """Read the options Spark gives a source, over the settings of `sink-uri` and
        `config` (as the writer layers them: explicit options win).

        Raises:
            ConfigError: an unknown option (with the likely one), a missing required one,
                or a value that is not allowed; each names the option.
        """
        given = {str(k).strip().lower(): str(v) for k, v in options.items()}
        for key in _SPARK_OPTIONS:
            given.pop(key, None)
        known = set(READ_OPTIONS) - {"kafka.bootstrap.servers", "kafka.<name>"}
        writers = option_names()
        unknown = [k for k in given if k not in known and not k.startswith("kafka.")]
        ignored = tuple(sorted(k for k in unknown if k in writers))
        for key in unknown:
            if key not in writers:
                raise _unknown(key, known)
        merged, explicit = layer_options({k: v for k, v in given.items() if k not in ignored})
        rest = {k: str(v) for k, v in merged.items() if k in known}
        client = _client(merged, explicit)
        servers = client.pop("bootstrap.servers", "").strip()
        if not servers:
            raise ConfigError(
                "option kafka.bootstrap.servers is not set; give the brokers to read from, "
                "as .option('kafka.bootstrap.servers', 'host:9092'), or a sink-uri",
                option="kafka.bootstrap.servers",
            )
        topics, pattern = _topics(rest, explicit)
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
            topic=", ".join(topics) if pattern is None else pattern,
            topics=topics,
            topic_pattern=pattern,
            protocol=spec.name,
            encoding_format=_choice(rest, "encoding-format", "json", formats),
            database=rest.get("database") or None,
            table=rest.get("table") or None,
            starting_offsets=rest["startingoffsets"].strip() if "startingoffsets" in rest else None,
            ending_offsets=rest.get("endingoffsets", "latest").strip(),
            kafka_columns=_boolean(rest, "kafka-columns"),
            poll_timeout_s=_positive_ms(rest, "kafkaconsumer.polltimeoutms", 120_000) / 1000,
            broker_timeout_s=_positive_ms(rest, "broker-timeout-ms", 30_000) / 1000,
            fail_on_data_loss=_boolean(rest, "failondataloss", default=True),
            skip_bad_messages=_choice(rest, "on-bad-message", "fail", ("fail", "skip")) == "skip",
            watermark_consistency=_choice(rest, "consistency", "watermark", ("watermark", "none"))
            == "watermark",
            keep_replays=_choice(rest, "replays", "drop", ("drop", "keep")) == "keep",
            ignore_new_columns=_choice(
                rest, "schema-evolution", "fail", ("fail", "ignore-new-columns")
            )
            == "ignore-new-columns",
            tidb_extension=_boolean(rest, "enable-tidb-extension"),
            partition_num=(
                _positive(rest, "partition-num", "the writer's partition-num, above 0")
                if "partition-num" in rest
                else None
            ),
            max_offsets_per_trigger=(
                _positive(rest, "maxoffsetspertrigger", "a number of offsets above 0")
                if "maxoffsetspertrigger" in rest
                else None
            ),
            min_offsets_per_trigger=(
                _positive(rest, "minoffsetspertrigger", "a number of offsets above 0")
                if "minoffsetspertrigger" in rest
                else None
            ),
            max_trigger_delay_s=_duration(rest, "maxtriggerdelay", "15m"),
            max_trigger_delay_given="maxtriggerdelay" in rest,
            min_partitions=(
                _positive(rest, "minpartitions", "a number of Spark partitions above 0")
                if "minpartitions" in rest
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
            ignored=ignored,
        )


def select_topics(config: ReadConfig, existing: Collection[str]) -> tuple[str, ...]:
    """The topics a read reads: those `topic` names, or the `existing` ones (the brokers'
    topics) that `topicPattern` matches, sorted.

    Raises:
        ConfigError: the pattern matches no topic (the message lists the topics there are).
    """
    if config.topic_pattern is None:
        return config.topics
    pattern = re.compile(config.topic_pattern)
    matched = tuple(sorted(t for t in existing if pattern.fullmatch(t)))
    if not matched:
        there = ", ".join(sorted(existing)) or "(none)"
        raise ConfigError(
            f"option topicPattern {config.topic_pattern!r} matches no topic; it must match a "
            f"whole topic name, and the brokers have: {there}",
            option="topicPattern",
            value=config.topic_pattern,
        )
    return matched


def _unknown(key: str, known: Collection[str]) -> ConfigError:
    ours = _SPARK_KAFKA_SPELLINGS.get(key)
    if ours is not None:
        hint = f"; it is Spark's Kafka source's option, here use {ours}"
    else:
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else ""
    return ConfigError(
        f"option {key!r} is not a reading option{hint} (reading takes "
        f"{', '.join(sorted(READ_OPTIONS))})",
        option=key,
        allowed=tuple(sorted(READ_OPTIONS)),
    )


def _client(merged: Mapping[str, Any], explicit: Collection[str]) -> dict[str, str]:
    """The librdkafka settings: TiCDC's Kafka parameters (from sink-uri or config, such as
    sasl-user or enable-tls) translated as the writer translates them, under the
    `kafka.*` settings, which win; producer-only settings left out."""
    translated = ticdc_kafka_settings(merged)
    given = {k.removeprefix("kafka."): str(v) for k, v in merged.items() if k.startswith("kafka.")}
    client = {**translated, **given}
    for name in _PRODUCER_SETTINGS:
        if f"kafka.{name}" not in explicit:
            client.pop(name, None)
    return client


def _topics(
    options: Mapping[str, str], explicit: Collection[str]
) -> tuple[tuple[str, ...], str | None]:
    """(the topics `topic` names, the `topicPattern`); exactly one of them is given."""
    pattern = options.get("topicpattern", "").strip() or None
    # A sink-uri's topic gives way to an explicit topicPattern, as explicit options win.
    text = "" if pattern and "topic" not in explicit else options.get("topic", "")
    topics = tuple(t.strip() for t in text.split(",") if t.strip())
    if topics and pattern is not None:
        raise ConfigError(
            f"options topic ({', '.join(topics)}) and topicPattern ({pattern!r}) are both "
            "set; give the topics to read with one of them",
            option="topicPattern",
            value=pattern,
        )
    if not topics and pattern is None:
        raise ConfigError(
            "option topic is not set; give the topic to read (or several, comma-separated, "
            "or option topicPattern, a regular expression over topic names)",
            option="topic",
        )
    templated = [t for t in topics if "{" in t]
    if templated:
        raise ConfigError(
            f"option topic is {templated[0]!r}, a writer's topic expression; a read names "
            "its topics (topic=a,b) or matches them (topicPattern=tidb_.*)",
            option="topic",
            value=templated[0],
        )
    if len(set(topics)) != len(topics):
        twice = next(t for t in topics if topics.count(t) > 1)
        raise ConfigError(
            f"option topic names topic {twice} twice; name each topic once",
            option="topic",
            value=twice,
        )
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"option topicPattern {pattern!r} is not a regular expression ({exc}); give "
                "one such as tidb_.*",
                option="topicPattern",
                value=pattern,
            ) from None
    return topics, pattern


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
    given: dict[str, Any] = {  # option text, for the fields' converters
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


def _boolean(options: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    value = options.get(name, str(default)).strip().lower()
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


#: Spark's time strings (`JavaUtils.timeStringAs`): a number and a unit, milliseconds
#: without one.
_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def _duration(options: Mapping[str, str], name: str, default: str) -> float:
    """A duration as Spark's Kafka source reads `maxTriggerDelay`, in seconds."""
    text = options.get(name, default).strip()
    found = re.fullmatch(r"(\d+)\s*([a-z]*)", text.lower())
    if found is None or found[2] not in {"", *_TIME_UNITS}:
        raise ConfigError(
            f"option {name} is {text!r}; give a duration such as 30s, 5m or 1h "
            f"(units {', '.join(_TIME_UNITS)}; milliseconds without one)",
            option=name,
            value=text,
        )
    return int(found[1]) * _TIME_UNITS.get(found[2], 1e-3)


def _positive(options: Mapping[str, str], name: str, what: str) -> int:
    text = options[name].strip()
    if not text.isdigit() or int(text) == 0:
        raise ConfigError(f"option {name} is {text!r}; give {what}", option=name, value=text)
    return int(text)

"""The reader's options: what `spark.read.format("ticdc")` takes, parsed once on the driver.

`ReadConfig.from_options` alone reads the raw option strings (Spark hands them lowercased,
values as given). Options share the writer's names where they mean the same thing
(`kafka.*`, `topic`, `protocol`, `encoding-format`, `database`, `table`,
`broker-timeout-ms`, and the writer's `enable-tidb-extension` and `partition-num`, which
say which partitions carry watermarks) and Spark's Kafka source's names for what only a
reader has (`startingOffsets`, `endingOffsets`, the timestamp options beside them,
`kafkaConsumer.pollTimeoutMs`, `maxOffsetsPerTrigger`, `failOnDataLoss`, `includeHeaders`).

Each option is declared once, in `READ_OPTIONS` (a `ReadOption`: its name as users spell
it, its aliases, its default as documented, its doc line, its parser and the `ReadConfig`
field it sets); `from_options` validates by the declarations, and the read options page and
the reading guide render them (tests/support/option_docs.py). The `schema-registry*`
options are the writer's declarations (`config.RegistryConfig`), which parse them here too.

Topics: `topic` names one topic or a comma-separated list (`subscribe`, Spark's name, is
taken for it), `topicPattern` a regular expression matched against the whole name of
every topic the brokers have (`subscribePattern` taken for it), `assign` Spark's JSON
`{"topic": [0, 1]}`: those partitions only; one of the three, never two, and never an
alias beside its original. `select_topics` resolves them against the brokers' topic list.

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
import functools
import logging
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs
import orjson

from ticdc_sink.codec.protocols import find_protocol, protocol_specs
from ticdc_sink.codec.spec import ProtocolSpec, Watermark
from ticdc_sink.config import (
    RegistryConfig,
    is_secret,
    layer_options,
    option_names,
    ticdc_kafka_settings,
)
from ticdc_sink.errors import ConfigError
from ticdc_sink.ticdc_version import TiCDCVersion

__all__ = [
    "READ_OPTIONS",
    "READ_PROTOCOLS",
    "ReadConfig",
    "ReadOption",
    "read_limits",
    "select_topics",
    "warn_ignored_by_reads",
]

logger = logging.getLogger(__name__)

#: The protocols the reader decodes, as the `protocol` option spells them (TiCDC's other
#: spellings, `flat-avro` and `default`, are taken too).
READ_PROTOCOLS = tuple(spec.name for spec in protocol_specs())

_BOOLEANS = {"true": True, "false": False}
#: `offsets-per-task`'s default: about half a second of one task's reading, where a Python
#: task costs tens of milliseconds to start (`read.split`).
OFFSETS_PER_TASK = 10_000
_VERSIONS = tuple(v.value for v in TiCDCVersion)


@attrs.frozen
class ReadOption:
    """One read option's declaration: `ReadConfig.from_options` validates by it and
    docs/reference/read-options.md renders it (tests/support/doc_pages.py)."""

    #: The name as users spell it (Spark's Kafka source's camelCase where it has the
    #: option); Spark hands keys lowercased, and any case is taken.
    name: str
    #: Its line in the docs.
    doc: str
    #: The default as the docs show it (markdown); empty: none.
    default: str = ""
    #: Other names taken for it (Spark's Kafka source's), never beside it.
    aliases: tuple[str, ...] = ()
    #: The `ReadConfig` field it sets and the parser of its text (called with the option
    #: lowercased, as messages name it, and the value given); None: `from_options` reads it
    #: (with other options).
    field: str | None = None
    parse: Callable[[str, str], Any] | None = attrs.field(default=None, eq=False)

    @property
    def key(self) -> str:
        """The name as Spark hands it."""
        return self.name.lower()


def _choice(name: str, text: str, allowed: tuple[str, ...]) -> str:
    value = text.strip().lower()
    if value not in allowed:
        raise ConfigError(
            f"option {name} is {value!r}; reading takes {', '.join(allowed)}",
            option=name,
            value=value,
            allowed=allowed,
        )
    return value


def _one_of(*allowed: str) -> Callable[[str, str], str]:
    return lambda name, text: _choice(name, text, allowed)


def _is(wanted: str, *allowed: str) -> Callable[[str, str], bool]:
    """A choice read as whether it is `wanted`."""
    return lambda name, text: _choice(name, text, allowed) == wanted


def _boolean(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value not in _BOOLEANS:
        raise ConfigError(
            f"option {name} is {value!r}; use true or false",
            option=name,
            value=value,
            allowed=("true", "false"),
        )
    return _BOOLEANS[value]


def _timestamp(name: str, text: str) -> int:
    """A timestamp option: milliseconds since the epoch."""
    text = text.strip()
    if not text.isdigit():
        spelled = _SPELLING[name]
        raise ConfigError(
            f"option {spelled} is {text!r}; give a timestamp in milliseconds since the "
            "epoch, such as 1700000000000",
            option=spelled,
            value=text,
        )
    return int(text)


def _positive(what: str) -> Callable[[str, str], int]:
    """A whole number above 0 (`what` says so in the message)."""

    def parse(name: str, text: str) -> int:
        text = text.strip()
        if not text.isdigit() or int(text) == 0:
            raise ConfigError(f"option {name} is {text!r}; give {what}", option=name, value=text)
        return int(text)

    return parse


def _whole(what: str) -> Callable[[str, str], int]:
    """A whole number, 0 too (`what` says so in the message)."""

    def parse(name: str, text: str) -> int:
        text = text.strip()
        if not text.isdigit():
            raise ConfigError(f"option {name} is {text!r}; give {what}", option=name, value=text)
        return int(text)

    return parse


def _seconds_of_ms(name: str, text: str) -> float:
    return _positive("a number of milliseconds above 0")(name, text) / 1000


#: Spark's time strings (`JavaUtils.timeStringAs`): a number and a unit, milliseconds
#: without one.
_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def _duration(name: str, text: str) -> float:
    """A duration as Spark's Kafka source reads `maxTriggerDelay`, in seconds."""
    text = text.strip()
    found = re.fullmatch(r"(\d+)\s*([a-z]*)", text.lower())
    if found is None or found[2] not in {"", *_TIME_UNITS}:
        raise ConfigError(
            f"option {name} is {text!r}; give a duration such as 30s, 5m or 1h "
            f"(units {', '.join(_TIME_UNITS)}; milliseconds without one)",
            option=name,
            value=text,
        )
    return int(found[1]) * _TIME_UNITS.get(found[2], 1e-3)


def _stripped(name: str, text: str) -> str:
    return text.strip()


def _stripped_or_none(name: str, text: str) -> str | None:
    return text.strip() or None


def _as_given_or_none(name: str, text: str) -> str | None:
    return text or None


def _version(name: str, text: str) -> TiCDCVersion:
    return TiCDCVersion(_choice(name, text, _VERSIONS))


def _registry_options() -> tuple[ReadOption, ...]:
    """The `schema-registry*` options: the writer's declarations (`config.RegistryConfig`),
    which also parse them (`_registry`)."""
    return tuple(
        ReadOption(
            field.metadata["option"],
            f"avro: {field.metadata['doc']}",
            "" if field.default is None else f"`{field.default}`",
        )
        for field in attrs.fields(RegistryConfig)
    )


#: Every read option, in the docs' order.
READ_OPTIONS: tuple[ReadOption, ...] = (
    ReadOption("kafka.bootstrap.servers", "brokers (required, unless `sink-uri` gives them)"),
    ReadOption(
        "kafka.<name>",
        "any librdkafka consumer setting, passed through (`fetch.wait.max.ms` defaults to 1 "
        "here, not 500: a read moves from range to range; `fetch.queue.backoff.ms` to 10, "
        "not 1000: a read drains its queue of fetched messages and moves on)",
    ),
    ReadOption(
        "sink-uri",
        "the writer's `kafka://host:9092/topic?protocol=...`: brokers, topic and settings (below)",
    ),
    ReadOption("config", "the writer's changefeed TOML file: its `[sink]` settings (below)"),
    ReadOption(
        "topic",
        "the topic to read, or several, comma-separated (`orders,items`); `subscribe` is "
        "Spark's Kafka source's name for it (give one of the two)",
        aliases=("subscribe",),
    ),
    ReadOption(
        "topicPattern",
        "instead of `topic`: every topic whose whole name matches this regular expression; "
        "`subscribePattern` is Spark's name for it",
        aliases=("subscribePattern",),
    ),
    ReadOption(
        "assign",
        'instead of `topic`: Spark\'s `{"orders": [0, 1], "items": [2]}`, read these '
        "partitions only (JSON offsets and timestamps then name exactly these)",
    ),
    ReadOption(
        "protocol",
        "`simple`, `avro` (also `flat-avro`), `debezium`, `canal-json` or `open-protocol` "
        "(also `default`)",
        "`simple`",
    ),
    ReadOption(
        "encoding-format", "`json` or `avro` (Simple); `json` for the other protocols", "`json`"
    ),
    *_registry_options(),
    ReadOption(
        "time-zone",
        "debezium: the writer's `time-zone`; TIMESTAMPs (written in UTC) are read back in it",
        "`UTC`",
        field="time_zone",
        parse=lambda name, text: text.strip() or "UTC",
    ),
    ReadOption(
        "claim-check-storage-uri",
        "simple, canal-json, open-protocol: follow claim-check messages to the full row in "
        "this storage (the file is found by its name, as TiCDC's consumer finds it, so the "
        "files may have moved); without it a claim-check row fails the read",
        field="claim_check_storage_uri",
        parse=_stripped_or_none,
    ),
    ReadOption(
        "claim-check-raw-value",
        "the writer's `claim-check-raw-value`",
        "`false`",
        field="claim_check_raw_value",
        parse=_boolean,
    ),
    ReadOption(
        "large-message-handle-compression",
        "the writer's: `snappy` or `lz4` values are decompressed",
        "`none`",
        field="compression",
        parse=_one_of("none", "snappy", "lz4"),
    ),
    ReadOption(
        "database",
        "read this database's tables only (with `table`: that table)",
        field="database",
        parse=_as_given_or_none,
    ),
    ReadOption(
        "table",
        "read the tables of this name only (with `database`: that database's)",
        field="table",
        parse=_as_given_or_none,
    ),
    ReadOption(
        "startingOffsets",
        '`earliest`, `latest`, or `{"a": {"0": 42, "1": -2}, "b": {"0": -1}}` (-2 earliest, '
        "-1 latest; every partition of every topic read named), as Spark's Kafka source",
        "`earliest` (batch), `latest` (streaming)",
        field="starting_offsets",
        parse=_stripped,
    ),
    ReadOption(
        "endingOffsets",
        '`latest`, or `{"a": {"0": 50, "1": -1}, "b": {"0": -1}}` (batch reads; a stream '
        "reads on); an offset past a partition's end is read up to, not cut short (below)",
        "`latest`",
        field="ending_offsets",
        parse=_stripped,
    ),
    ReadOption(
        "startingTimestamp",
        "start every partition at its first message whose timestamp is at or after this one "
        "(milliseconds since the epoch); before `startingOffsetsByTimestamp` and "
        "`startingOffsets`, as in Spark (below)",
        field="starting_timestamp",
        parse=_timestamp,
    ),
    ReadOption(
        "startingOffsetsByTimestamp",
        '`{"a": {"0": 1700000000000, "1": 1700000000000}}`: a starting timestamp per '
        "partition (every partition read named); before `startingOffsets`",
        field="starting_offsets_by_timestamp",
        parse=_stripped_or_none,
    ),
    ReadOption(
        "startingOffsetsByTimestampStrategy",
        "a partition with no message at or after its starting timestamp: `error` fails the "
        "read, naming the option, topic and partition; `latest` starts it at its latest "
        "offset",
        "`error`",
        field="starting_timestamp_latest",
        parse=_is("latest", "error", "latest"),
    ),
    ReadOption(
        "endingTimestamp",
        "batch reads: end every partition before its first message whose timestamp is at or "
        "after this one (a partition without one: at its latest offset); before "
        "`endingOffsetsByTimestamp` and `endingOffsets`",
        field="ending_timestamp",
        parse=_timestamp,
    ),
    ReadOption(
        "endingOffsetsByTimestamp",
        "batch reads: an ending timestamp per partition, JSON as "
        "`startingOffsetsByTimestamp`; before `endingOffsets`",
        field="ending_offsets_by_timestamp",
        parse=_stripped_or_none,
    ),
    ReadOption(
        "kafka-columns",
        "add `_topic`, `_partition`, `_offset` (which topic a row came from, when several "
        "are read)",
        "`false`",
        field="kafka_columns",
        parse=_boolean,
    ),
    ReadOption(
        "includeHeaders",
        "add `_headers`, each message's headers as Spark's Kafka source gives them: "
        "`array<struct<key:string,value:binary>>`, null for a message without headers",
        "`false`",
        field="include_headers",
        parse=_boolean,
    ),
    ReadOption(
        "kafkaConsumer.pollTimeoutMs",
        "how long a task waits for the next message of its range before failing (Spark's "
        "Kafka source's name and meaning)",
        "`120000`",
        field="poll_timeout_s",
        parse=_seconds_of_ms,
    ),
    ReadOption(
        "broker-timeout-ms",
        "how long to try to reach the brokers (metadata, offsets) before failing with an "
        "error naming them, as in writes",
        "`30000`",
        field="broker_timeout_s",
        parse=_seconds_of_ms,
    ),
    ReadOption(
        "failOnDataLoss",
        "streaming: offsets the stream was to read that are gone (a topic deleted or "
        "recreated, messages deleted by retention) fail the query; `false` logs a WARNING "
        "and reads on from what is there (Spark's Kafka source's option; below)",
        "`true`",
        field="fail_on_data_loss",
        parse=_boolean,
    ),
    ReadOption(
        "on-bad-message",
        "`skip`: leave out messages that do not decode; each task logs a WARNING with how "
        "many it skipped and the first error",
        "`fail`",
        field="skip_bad_messages",
        parse=_is("skip", "fail", "skip"),
    ),
    ReadOption(
        "consistency",
        "streaming: `watermark` ends every micro-batch at a watermark (below); `none` reads "
        "as far as the data goes; in batch and streaming reads, `none` drops replays by "
        "TiCDC's rule alone",
        "`watermark`",
        field="watermark_consistency",
        parse=_is("watermark", "watermark", "none"),
    ),
    ReadOption(
        "replays",
        "`drop`: leave out the rows TiCDC replayed, as its consumer does (below); `keep`: "
        "every row message, the raw log",
        "`drop`",
        field="keep_replays",
        parse=_is("keep", "drop", "keep"),
    ),
    ReadOption(
        "maxOffsetsPerTrigger",
        "streaming: offsets per micro-batch at most, shared across partitions; under "
        "`watermark` a soft limit (a batch never stops inside a commit ts)",
        field="max_offsets_per_trigger",
        parse=_positive("a number of offsets above 0"),
    ),
    ReadOption(
        "minOffsetsPerTrigger",
        "streaming (PySpark 4.2+): a micro-batch waits until this many new offsets are "
        "there, or `maxTriggerDelay` passed since the last one, as Spark's Kafka source; "
        "under `watermark` the batch still ends at a watermark; Trigger.AvailableNow never "
        "waits",
        field="min_offsets_per_trigger",
        parse=_positive("a number of offsets above 0"),
    ),
    ReadOption(
        "maxTriggerDelay",
        "streaming (PySpark 4.2+), with `minOffsetsPerTrigger`: the longest a micro-batch "
        "waits (Spark's time strings: `30s`, `5m`, `1h`; milliseconds without a unit)",
        "`15m`",
        field="max_trigger_delay_s",
        parse=_duration,
    ),
    ReadOption(
        "minPartitions",
        "batch and streaming: at least about this many Spark tasks; a large range is split "
        "in proportion to its size, as Spark's Kafka source splits it; under "
        "`consistency=watermark` only just after a watermark, where the replay rule needs "
        "nothing from before (a range with none inside stays whole), unless the writer "
        "sends none (avro; below)",
        field="min_partitions",
        parse=_positive("a number of Spark partitions above 0"),
    ),
    ReadOption(
        "offsets-per-task",
        "batch and streaming: offset ranges smaller than this are packed into one Spark "
        "task, which reads them one after the other, up to this many offsets a task (a "
        "larger range is a task alone); under `minPartitions` at least that many tasks "
        "are kept; `0`: one task per range (below)",
        f"`{OFFSETS_PER_TASK}`",
        field="offsets_per_task",
        parse=_whole("a number of offsets, 0 or more (0: one task per range)"),
    ),
    ReadOption(
        "schema-evolution",
        "streaming: `fail` stops the query before a change of the table's columns; "
        "`ignore-new-columns` reads on without columns the table gains",
        "`fail`",
        field="ignore_new_columns",
        parse=_is("ignore-new-columns", "fail", "ignore-new-columns"),
    ),
    ReadOption(
        "driver-scan",
        "streaming: what the driver reads to plan a micro-batch. `all`: every message (rows "
        "peeked, not decoded), so it ends a batch before a schema change and counts the "
        "batch's rows. `watermarks`: no row; under `consistency=watermark` each partition "
        "back from its end to the watermarks the cut needs, so its work does not grow with "
        "the batch; the log shows offsets, not rows, and a task that meets a change of the "
        "table's columns fails its batch (which delivers nothing), naming the batch's start "
        "to restart at with `all` (streaming guide: What the driver reads, Schema changes)",
        "`all`",
        field="tail_scan",
        parse=_is("watermarks", "all", "watermarks"),
    ),
    ReadOption(
        "enable-tidb-extension",
        "the writer's: debezium and canal-json topics carry watermarks only with `true` (a "
        "stream under `consistency=watermark` needs them)",
        "`false`",
        field="tidb_extension",
        parse=_boolean,
    ),
    ReadOption(
        "ticdc-version",
        "the writer's: debezium topics carry watermarks (with `enable-tidb-extension=true`) "
        "from TiCDC v26.3 on; under `8.5` a debezium stream under `consistency=watermark` is "
        "refused, as v8.5 sends none",
        f"`{TiCDCVersion.V26_3.value}`",
        field="ticdc_version",
        parse=_version,
    ),
    ReadOption(
        "partition-num",
        "the writer's: only partitions below it carry watermarks (TiCDC writes nothing to "
        "the others); default all",
        field="partition_num",
        parse=_positive("the writer's partition-num, above 0"),
    ),
)

#: Every name a read takes, lowercased as Spark hands it -> as users spell it.
_SPELLING = {
    name.lower(): name for option in READ_OPTIONS for name in (option.name, *option.aliases)
}
# Spark's Kafka source's names taken for ours: alias -> ours (both lowercased, as given).
_ALIASES = {alias.lower(): option.key for option in READ_OPTIONS for alias in option.aliases}
# What Spark itself puts among a source's options (load(path), readStream).
_SPARK_OPTIONS = frozenset({"path", "paths"})
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
    #: `assign`: the (topic, partition)s read, sorted; empty: every partition of the topics.
    assign: tuple[tuple[str, int], ...] = ()
    protocol: str = "simple"
    encoding_format: str = "json"
    database: str | None = None
    table: str | None = None
    #: None: the read's default (batch: earliest, streaming: latest, as Spark's Kafka source).
    starting_offsets: str | None = None
    ending_offsets: str = "latest"
    #: `startingTimestamp` (ms since the epoch), before the next two (`starting_option`).
    starting_timestamp: int | None = None
    #: `startingOffsetsByTimestamp`, JSON read against the topics when the read is planned.
    starting_offsets_by_timestamp: str | None = None
    #: `startingOffsetsByTimestampStrategy=latest`: a partition without a message at or
    #: after its starting timestamp starts at its latest offset (else: an error).
    starting_timestamp_latest: bool = False
    ending_timestamp: int | None = None
    ending_offsets_by_timestamp: str | None = None
    kafka_columns: bool = False
    #: `includeHeaders`: add the `_headers` column (`rows.HEADERS`).
    include_headers: bool = False
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
    #: The most offsets a task of several small ranges reads (`split.pack_parts`); 0: one
    #: task per range.
    offsets_per_task: int = OFFSETS_PER_TASK
    #: Streaming: read on without the columns a table gains mid-stream.
    ignore_new_columns: bool = False
    #: Streaming: the driver reads watermarks back from each partition's end only
    #: (`driver-scan=watermarks`), not every message (`read.stream.StreamScan`).
    tail_scan: bool = False
    #: The writer's enable-tidb-extension: debezium and canal-json send watermarks only with it.
    tidb_extension: bool = False
    #: The writer's ticdc-version: debezium sends watermarks from v26.3 on.
    ticdc_version: TiCDCVersion = TiCDCVersion.V26_3
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
    def carries_watermarks(self) -> bool:
        """Whether the topic's writer, as the options describe it, sends watermarks (True
        for a protocol this reader does not know: it is refused elsewhere)."""
        spec = find_protocol(self.protocol)
        if spec is None:
            return True
        watermark = spec.watermark_in(self.ticdc_version)
        if watermark is Watermark.WITH_TIDB_EXTENSION:
            return self.tidb_extension
        return watermark is Watermark.ALWAYS

    @property
    def named_topics(self) -> str:
        """The topics the options select, as a message names them."""
        if self.topic_pattern is not None:
            return f"topics matching {self.topic_pattern!r}"
        return f"topic {self.topic}" if len(self.topics) <= 1 else f"topics {self.topic}"

    @property
    def starting_option(self) -> str:
        """The option that says where the read starts, by Spark's Kafka source's
        precedence: startingTimestamp, startingOffsetsByTimestamp, startingOffsets."""
        if self.starting_timestamp is not None:
            return "startingTimestamp"
        if self.starting_offsets_by_timestamp is not None:
            return "startingOffsetsByTimestamp"
        return "startingOffsets"

    @property
    def ending_option(self) -> str:
        """As `starting_option`, for where a batch read ends."""
        if self.ending_timestamp is not None:
            return "endingTimestamp"
        if self.ending_offsets_by_timestamp is not None:
            return "endingOffsetsByTimestamp"
        return "endingOffsets"

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
        spelled = _take_aliases(given)
        known = set(_SPELLING) - {"kafka.bootstrap.servers", "kafka.<name>"}
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
        topics, pattern, assign = _topics(rest, explicit, spelled)
        spec = _protocol(rest)
        registry = _registry(rest)
        if spec.needs_registry and not registry.url:
            raise ConfigError(
                f"option schema-registry is not set; protocol {spec.name} reads writer "
                "schemas from the Confluent Schema Registry, give its URL such as "
                "http://registry:8081",
                option="schema-registry",
            )
        formats = ("json", "avro") if spec.reads("encoding-format") else ("json",)
        encoding_format = _choice("encoding-format", rest.get("encoding-format", "json"), formats)
        parsed = {
            option.field: option.parse(option.key, rest[option.key])
            for option in READ_OPTIONS
            if option.field is not None and option.parse is not None and option.key in rest
        }
        starting_ts = parsed.get("starting_timestamp")
        ending_ts = parsed.get("ending_timestamp")
        if starting_ts is not None and ending_ts is not None and starting_ts > ending_ts:
            raise ConfigError(
                f"option startingTimestamp ({starting_ts}) is after endingTimestamp "
                f"({ending_ts}); give a starting timestamp at or before the ending one",
                option="startingTimestamp",
                value=str(starting_ts),
            )
        return cls(
            bootstrap_servers=servers,
            topic=", ".join(topics) if pattern is None else pattern,
            topics=topics,
            topic_pattern=pattern,
            assign=assign,
            protocol=spec.name,
            encoding_format=encoding_format,
            max_trigger_delay_given="maxtriggerdelay" in rest,
            client=tuple(sorted(client.items())),
            registry=registry,
            ignored=ignored,
            **parsed,
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


def _take_aliases(given: dict[str, str]) -> dict[str, str]:
    """Spark's names for our options (`subscribe`, `subscribePattern`) taken as ours, in
    `given`; returns ours -> the name given, for messages.

    Raises:
        ConfigError: an alias and its original are both given.
    """
    spelled = {}
    for alias, ours in _ALIASES.items():
        if alias not in given:
            continue
        if ours in given:
            raise ConfigError(
                f"options {_SPELLING[alias]} and {_SPELLING[ours]} are both set; they are one "
                f"option ({_SPELLING[alias]} is Spark's Kafka source's name for it), give "
                "one of them",
                option=_SPELLING[alias],
                value=given[alias],
            )
        given[ours] = given.pop(alias)
        spelled[ours] = alias
    return spelled


def _unknown(key: str, known: Collection[str]) -> ConfigError:
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else ""
    return ConfigError(
        f"option {key!r} is not a reading option{hint} (reading takes "
        f"{', '.join(sorted(_SPELLING))})",
        option=key,
        allowed=tuple(sorted(_SPELLING)),
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
    options: Mapping[str, str], explicit: Collection[str], spelled: Mapping[str, str]
) -> tuple[tuple[str, ...], str | None, tuple[tuple[str, int], ...]]:
    """(the topics read, the `topicPattern`, the `assign`ed partitions); exactly one of
    topic, topicPattern and assign is given (`spelled`: the names they were given by)."""
    topic_name = _SPELLING[spelled.get("topic", "topic")]
    pattern_name = _SPELLING[spelled.get("topicpattern", "topicpattern")]
    pattern = options.get("topicpattern", "").strip() or None
    assigned = _assign(options["assign"]) if "assign" in options else ()
    # A sink-uri's topic gives way to an explicit topicPattern or assign, as explicit
    # options win.
    chosen = pattern or assigned
    text = "" if chosen and "topic" not in explicit else options.get("topic", "")
    topics = tuple(t.strip() for t in text.split(",") if t.strip())
    given = [
        f"{name} ({value})"
        for name, value in (
            (topic_name, ", ".join(topics)),
            (pattern_name, pattern),
            ("assign", options.get("assign", "").strip() if assigned else None),
        )
        if value
    ]
    if len(given) > 1:
        second = pattern_name if topics and pattern else "assign"
        raise ConfigError(
            f"options {' and '.join(given)} are both set; give the topics to read with one of them",
            option=second,
        )
    if assigned:
        return tuple(dict.fromkeys(t for t, _ in assigned)), None, tuple(sorted(assigned))
    if not topics and pattern is None:
        raise ConfigError(
            "option topic is not set; give the topic to read (or several, comma-separated, "
            "or option topicPattern, a regular expression over topic names, or assign, "
            "JSON of topics' partitions)",
            option="topic",
        )
    templated = [t for t in topics if "{" in t]
    if templated:
        raise ConfigError(
            f"option {topic_name} is {templated[0]!r}, a writer's topic expression; a read "
            "names its topics (topic=a,b) or matches them (topicPattern=tidb_.*)",
            option=topic_name,
            value=templated[0],
        )
    if len(set(topics)) != len(topics):
        twice = next(t for t in topics if topics.count(t) > 1)
        raise ConfigError(
            f"option {topic_name} names topic {twice} twice; name each topic once",
            option=topic_name,
            value=twice,
        )
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"option {pattern_name} {pattern!r} is not a regular expression ({exc}); give "
                "one such as tidb_.*",
                option=pattern_name,
                value=pattern,
            ) from None
    return topics, pattern, ()


def _assign(text: str) -> tuple[tuple[str, int], ...]:
    """Spark's `assign` JSON, {"topic": [0, 1], ...}, as (topic, partition)s in its order.

    Raises:
        ConfigError: not an object of topics to non-empty lists of partition numbers, or a
            partition named twice.
    """
    example = '{"orders": [0, 1], "items": [2]}'
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        parsed = None
    shaped = (
        isinstance(parsed, dict)
        and bool(parsed)
        and all(
            isinstance(t, str)
            and t.strip()
            and isinstance(ps, list)
            and ps
            and all(type(p) is int and p >= 0 for p in ps)
            for t, ps in parsed.items()
        )
    )
    if not shaped:
        raise ConfigError(
            f"option assign is {text!r}; give JSON of each topic to read with the partitions "
            f"to read, such as {example}",
            option="assign",
            value=text,
        )
    assert isinstance(parsed, dict)
    pairs = [(topic, p) for topic, ps in parsed.items() for p in ps]
    twice = [pair for pair in pairs if pairs.count(pair) > 1]
    if twice:
        topic, partition = twice[0]
        raise ConfigError(
            f"option assign names partition {partition} of topic {topic} twice; name each "
            "partition once",
            option="assign",
            value=text,
        )
    return tuple(pairs)


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


@functools.cache
def warn_ignored_by_reads(ignored: tuple[str, ...]) -> None:
    """Name the write options a read ignored (`ReadConfig.ignored`), once per process:
    one option map may serve a write and a read (Spark asks for the schema and the reader
    apart)."""
    logger.warning(
        "ticdc: ignored options that only a write takes (they mean nothing to a read): %s",
        ", ".join(ignored),
    )


def read_limits(config: ReadConfig) -> dict[str, object]:
    """The read-limit options given (`maxOffsetsPerTrigger`, `minOffsetsPerTrigger`,
    `maxTriggerDelay`) and their values. They need PySpark 4.2's read limits: a cap or a
    wait the reader applied itself would end Trigger.AvailableNow (which asks for the
    latest offset once) early."""
    limits = {
        "maxOffsetsPerTrigger": config.max_offsets_per_trigger,
        "minOffsetsPerTrigger": config.min_offsets_per_trigger,
        "maxTriggerDelay": config.max_trigger_delay_s if config.max_trigger_delay_given else None,
    }
    return {option: value for option, value in limits.items() if value is not None}

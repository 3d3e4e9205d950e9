"""`SinkConfig`: the whole configuration, and `SinkConfig.from_options`, the only code that
reads raw option strings. It merges four layers, later winning key by key:

    defaults  <  TOML file (`config`), section [sink]  <  `sink-uri`  <  explicit options

Keys are case-insensitive (Spark lowercases them). Spark's own `path` and `queryName` are
ignored here (`SPARK_OPTIONS`; the stream writer reads `queryName` itself). An unknown key
is an error with a close match suggested; `kafka.<name>` settings of the Java Kafka client
that librdkafka lacks (`sasl.jaas.config`, `ssl.truststore.location`, `max.request.size`,
...) are errors naming what to use instead (`JAVA_SETTINGS`); whether librdkafka takes the
rest is checked by `kafka_settings.check_client_config`, since config does not load librdkafka.
The rules across parts live in `SinkConfig`'s one validator (the topic rule of a protocol
with a registry, the registry's options, table routing's release, column selectors with
checksums, DDL event filters).
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

import attrs

from ticdc_sink.codec.choices import IntegrityCheckLevel, SubjectNameStrategy
from ticdc_sink.codec.config import CodecConfig, check_owned_options
from ticdc_sink.codec.protocols import protocol_specs
from ticdc_sink.column_selector import ColumnSelector, parse_column_selectors
from ticdc_sink.config.changefeed import load_changefeed
from ticdc_sink.config.layers import (
    LAYER_NAMES,
    LAYER_OPTIONS,
    Layer,
    source_label,
    split_registry_credentials,
    uri_layer,
)
from ticdc_sink.config.parts import (
    ROUTING_SINCE,
    InputConfig,
    KafkaConfig,
    RegistryConfig,
    RoutingConfig,
    setting_text,
)
from ticdc_sink.config.ticdc import (
    IGNORED,
    REFUSED,
    TICDC_KAFKA,
    check_acks,
    refusal,
    ticdc_kafka_settings,
)
from ticdc_sink.errors import ConfigError
from ticdc_sink.options import (
    FrozenMap,
    Invalid,
    option_field,
    parse_bool,
    parse_opt_str,
    spell_option,
    too_new_error,
)
from ticdc_sink.routing import TopicRouter, validate_topic_expression
from ticdc_sink.row_filter import EventFilterRule, filter_rules_filter, parse_event_filters
from ticdc_sink.table_filter import split_patterns

__all__ = [
    "JAVA_SETTINGS",
    "SPARK_OPTIONS",
    "SinkConfig",
    "layer_options",
    "option_names",
    "version_settings",
    "warn_ignored_settings",
]

logger = logging.getLogger(__name__)


# Options Spark adds to a sink's own (PySpark 4.0-4.3, classic and Connect): `path` from
# save(path) / start(path), `queryName` from writeStream.queryName(...)
# (DataStreamWriter.queryName puts it among the options). `checkpointLocation`, the third,
# is a field of SinkConfig.
SPARK_OPTIONS = ("path", "queryname")


def _filter_rules(value: Any) -> tuple[str, ...]:
    """`[filter] rules`: table-filter patterns (a TOML list, JSON text or a comma list),
    each checked as TiDB's table filter checks it."""
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text) if text.startswith("[") else split_patterns(text)
        except json.JSONDecodeError:
            raise Invalid('use a JSON list of patterns, e.g. ["db.*", "!db.tmp_*"]') from None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise Invalid("use a list of table-filter patterns, e.g. ['db.*', '!db.tmp_*']")
    patterns = tuple(v.strip() for v in value if v.strip())
    if patterns == ("*.*",):  # TiCDC's default, as an exported changefeed file lists it
        return ()
    if filter_rules_filter(patterns).is_empty:  # a pattern TiDB refuses raises here
        # TiDB's filter of only comments takes no table: TiCDC would replicate nothing.
        raise Invalid(
            "it has no pattern, only comments, so no table would be written; give "
            "patterns such as db.* (or leave the option out for every table)"
        )
    return patterns


def _column_selectors(value: Any) -> tuple[ColumnSelector, ...]:
    """`column-selectors`: TiCDC's selector list (TOML), or the same as JSON text."""
    try:
        return parse_column_selectors(value)
    except ValueError as exc:
        raise Invalid(str(exc)) from None


def _event_filters(value: Any) -> tuple[EventFilterRule, ...]:
    """`[filter] event-filters`: TiCDC's rule list (TOML), or the same as JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise Invalid(
                'use a JSON list of rules, e.g. [{"matcher": ["db.t"], "ignore-event": ["delete"]}]'
            ) from None
    return parse_event_filters(value, "event-filters")


def version_settings(config: CodecConfig) -> list[str]:
    """What follows `ticdc-version` in this configuration, one line each (for `check`):
    the protocol's changes by release, and what the release refuses."""
    version = config.ticdc_version
    spec = config.spec
    lines = [
        f"{spec.name} from TiCDC v{since.value}: {change}: "
        + ("yes" if version.at_least(since) else "no")
        for since, change in spec.changes
    ]
    refused = [f"protocol {s.name}" for s in protocol_specs() if not version.at_least(s.since)]
    refused += [
        f.metadata["option"]
        for f in attrs.fields(CodecConfig)
        if f.metadata.get("since") is not None and not version.at_least(f.metadata["since"])
    ]
    if not version.at_least(ROUTING_SINCE):
        refused.append("dispatchers target-schema / target-table")
    if refused:
        lines.append(f"refused (not in TiCDC v{version.value}): {', '.join(refused)}")
    return lines


@attrs.frozen
class SinkConfig:
    """The whole configuration; build it with `from_options`."""

    kafka: KafkaConfig
    routing: RoutingConfig
    codec: CodecConfig = CodecConfig()
    input: InputConfig = InputConfig()
    registry: RegistryConfig = RegistryConfig()
    checkpoint_location: str | None = option_field(
        "checkpointlocation",
        None,
        parse_opt_str,
        doc=(
            "streaming: the query's checkpoint (or Spark's "
            '`spark.sql.streaming.checkpointLocation` with a `queryName`, see "Where it runs"); '
            "for batch jobs optional (keeps watermarks monotonic across jobs, and the batch "
            "reports); the sink keeps its state under `<checkpointLocation>/ticdc/` and checks "
            "that it can write there before any task runs"
        ),
    )
    filter_rules: tuple[str, ...] = option_field(
        "filter-rules",
        (),
        _filter_rules,
        doc=(
            "TiCDC's `[filter] rules`: rows of tables the table-filter patterns do not take "
            "(`db.*`, `!db.tmp_*`, `/^db[0-9]$/.t`, the last matching pattern deciding; names "
            "in any case unless `case-sensitive`) are dropped and counted as `filtered` "
            '(docs/guides/filters.md, "Table filters")'
        ),
        ticdc=("[filter] rules",),
        shown_default="*.*",
    )
    event_filters: tuple[EventFilterRule, ...] = option_field(
        "event-filters",
        (),
        _event_filters,
        doc=(
            "TiCDC's `[filter] event-filters` (from the changefeed file, or JSON text): rows "
            "of matched tables dropped by `ignore-event` (insert, update, delete, all dml) "
            "or by SQL conditions `ignore-insert-value-expr`, `ignore-update-old-value-expr`, "
            "`ignore-update-new-value-expr`, `ignore-delete-value-expr` "
            '(docs/guides/filters.md, "Filters")'
        ),
        ticdc=("[filter] event-filters",),
    )
    column_selectors: tuple[ColumnSelector, ...] = option_field(
        "column-selectors",
        (),
        _column_selectors,
        doc=(
            "TiCDC's `[[sink.column-selectors]]` (from the changefeed file, or JSON text "
            '`[{"matcher": ["db.t"], "columns": ["id", "a*"]}]`): rows of the tables the first '
            "matching selector takes carry only the columns its patterns select (`*`, `!`, "
            "the last matching pattern deciding; the handle key must stay) "
            '(docs/guides/filters.md, "Column selectors")'
        ),
        ticdc=("column-selectors",),
    )
    force_replicate: bool = option_field(
        "force-replicate",
        False,
        parse_bool,
        doc=(
            "TiCDC's changefeed `force-replicate` (top level of the changefeed file): write "
            "a table that has neither a primary key nor a unique key of NOT NULL columns, "
            "as TiCDC then does (messages keyed on no column: debezium's key an empty "
            "struct, avro's key null, canal-json `pkNames` empty, index-value partitions by "
            "table name); without it such a table is refused on the driver, as TiCDC "
            "refuses to replicate it"
        ),
        ticdc=("force-replicate",),
    )
    # TiCDC settings given (sink-uri, config file) that mean nothing to this sink, by
    # name and source, so the driver can say it ignored them.
    ignored: tuple[str, ...] = attrs.field(default=(), eq=False)

    def __attrs_post_init__(self) -> None:
        # Cross-part rules live here, one place (style §5): the topic rule depends on the
        # protocol (tiflow event_router.go getTopicDispatcher); with a record subject
        # strategy several tables may share a topic, so avro's rule does not apply.
        spec = self.codec.spec
        record_subjects = self.codec.subject_name_strategy is not SubjectNameStrategy.TOPIC
        schema_and_table = spec.needs_registry and not record_subjects
        for topic in (self.routing.topic, *(r.topic for r in self.routing.dispatchers)):
            if topic is not None:
                validate_topic_expression(topic, spec.name, schema_and_table=schema_and_table)
        if spec.needs_registry and not self.registry.url:
            raise ConfigError(
                f"option 'schema-registry' is not set; protocol {spec.name} needs a "
                "Confluent Schema Registry URL such as http://registry:8081",
                option="schema-registry",
            )
        if not spec.needs_registry and self.registry.url:
            takers = [s.name for s in protocol_specs() if s.needs_registry]
            raise ConfigError(
                f"option 'schema-registry' applies to protocol {', '.join(takers)}, not to "
                f"'{spec.name}'; remove it or set protocol={takers[0]}",
                option="schema-registry",
            )
        check_owned_options(self.registry, spec.name)
        self._check_routing_version()
        if self.routing.case_sensitive and self.column_selectors:
            # Selectors are parsed before the flag is known; their matchers take it.
            selectors = tuple(attrs.evolve(s, case_sensitive=True) for s in self.column_selectors)
            object.__setattr__(self, "column_selectors", selectors)
        checksums = self.codec.integrity_check_level is not IntegrityCheckLevel.NONE
        if self.column_selectors and checksums:
            # tiflow ReplicaConfig.ValidateAndAdjust: a checksum covers the whole row.
            raise ConfigError(
                "option 'column-selectors' is set and 'integrity-check-level' is "
                f"'{self.codec.integrity_check_level.value}'; TiCDC refuses both at once (a "
                "row checksum covers every column); remove the column selectors or set "
                "integrity-check-level=none",
                option="column-selectors",
            )
        ddl_parts = [p for rule in self.event_filters for p in rule.ddl_parts]
        sends_ddl = self.codec.sends_ddl and (
            self.codec.ddl_on_schema_change or self.codec.ddl_on_first_batch
        )
        if ddl_parts and sends_ddl:
            raise ConfigError(
                f"option 'event-filters' ignores DDL ({ddl_parts[0]!r}), and this sink does "
                "not filter the DDL messages it sends yet; remove the DDL event types and "
                "ignore-sql, or set ddl-on-schema-change=false (and ddl-on-first-batch=false)",
                option="event-filters",
                value=ddl_parts[0],
            )

    def _check_routing_version(self) -> None:
        version = self.codec.ticdc_version
        if version.at_least(ROUTING_SINCE):
            return
        for rule in self.routing.dispatchers:
            for key, target in (
                ("target-schema", rule.target_schema),
                ("target-table", rule.target_table),
            ):
                if target is not None:
                    raise too_new_error(f"dispatchers {key}", target, ROUTING_SINCE, version)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> SinkConfig:
        """Merge the layers, reject unknown keys, convert and validate.

        Raises:
            ConfigError: naming the option (and its source), the value (masked when
                secret) and what is allowed.
        """
        explicit = Layer("option")
        for key, value in options.items():
            explicit.set(str(key).strip().lower(), value)
        # What Spark itself puts among a sink's options (DataStreamWriter, DataFrameWriter):
        # save(path) / start(path), and the streaming query's queryName(...).
        for key in SPARK_OPTIONS:
            explicit.values.pop(key, None)
        layers = _stack(explicit)

        merged: dict[str, Any] = {}
        ignored: list[str] = []
        shared: list[tuple[str, str]] = []
        for layer in layers:
            ignored += layer.ignored
            for key, value in layer.values.items():
                _check_known(key, value, layer.source)
                if key in IGNORED:
                    ignored.append(source_label(key, layer.source))
                elif key in _shared_options():
                    shared.append((key, source_label(key, layer.source)))
                merged[key] = value
        config = _build(merged)
        # TiCDC takes a protocol's shared options whatever the protocol (max-batch-size):
        # with one that does not read them they are ignored, not refused.
        spec = config.codec.spec
        ignored += [label for key, label in shared if key not in spec.shared_options]
        return attrs.evolve(config, ignored=tuple(ignored))


def layer_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], frozenset[str]]:
    """`options` (keys lowercased) over the settings of its `config` file and `sink-uri`,
    merged as `SinkConfig.from_options` merges them (later layers win key by key; the
    credentials in a `schema-registry` URL become its user and password), and the keys
    given as options. The reader shares the writer's layers through this; it neither
    checks nor converts the values.

    Raises:
        ConfigError: the config file or the sink-uri cannot be read.
    """
    explicit = Layer("option")
    for key, value in options.items():
        explicit.set(str(key).strip().lower(), value)
    given = frozenset(k for k in explicit.values if k not in LAYER_OPTIONS)
    merged: dict[str, Any] = {}
    for layer in _stack(explicit):
        merged.update(layer.values)
    split_registry_credentials(merged)
    return merged, given


def _stack(explicit: Layer) -> list[Layer]:
    """The layers under the explicit options (`config`, then `sink-uri`), and them."""
    layers: list[Layer] = []
    if "config" in explicit.values:
        layers.append(load_changefeed(str(explicit.values.pop("config"))))
    if "sink-uri" in explicit.values:
        layers.append(uri_layer(str(explicit.values.pop("sink-uri"))))
    layers.append(explicit)
    return layers


@functools.cache
def _shared_options() -> frozenset[str]:
    return frozenset(option for spec in protocol_specs() for option in spec.shared_options)


@functools.cache
def _field_options() -> dict[str, type]:
    found: dict[str, type] = {}
    for part in (KafkaConfig, RoutingConfig, CodecConfig, InputConfig, RegistryConfig, SinkConfig):
        for field in attrs.fields(part):
            if "option" in field.metadata and field.metadata["option"] != "kafka.*":
                found[field.metadata["option"]] = part
    return found


def _known_names() -> list[str]:
    return sorted(set(_field_options()) | TICDC_KAFKA | LAYER_NAMES | {"kafka.bootstrap.servers"})


def option_names() -> frozenset[str]:
    """Every option the writer takes by name (`kafka.*` settings aside): the reader tells
    a writer's option, which it ignores, from a typo."""
    return frozenset(_known_names())


# Where every option is listed; unknown-option errors point there.
_OPTIONS_HELP = "all options: docs/reference/write-options.md"


# Java Kafka client settings that Spark's Kafka sink passes through as `kafka.<name>` and
# librdkafka does not have (it would refuse them inside every task), with what to use
# instead. Names librdkafka knows (ssl.keystore.location, batch.size, linger.ms, ...) pass.
JAVA_SETTINGS: dict[str, str] = {
    "sasl.jaas.config": (
        "give kafka.sasl.username and kafka.sasl.password (with kafka.sasl.mechanism), or "
        "the sink-uri parameters sasl-user and sasl-password; Kerberos: kafka.sasl.kerberos.*, "
        "OAuth: kafka.sasl.oauthbearer.*"
    ),
    "ssl.truststore.location": (
        "give the CA certificate as a PEM file in kafka.ssl.ca.location (or sink-uri "
        "parameter ca); keytool -exportcert -rfc writes one from a truststore"
    ),
    "ssl.truststore.password": "remove it: a PEM CA file (kafka.ssl.ca.location) has none",
    "ssl.truststore.type": "remove it: kafka.ssl.ca.location takes a PEM file",
    "ssl.keystore.type": (
        "remove it: kafka.ssl.keystore.location takes a PKCS#12 file; or give PEM files in "
        "kafka.ssl.certificate.location and kafka.ssl.key.location"
    ),
    "ssl.protocol": "remove it: librdkafka negotiates the TLS version",
    "ssl.enabled.protocols": "remove it: librdkafka negotiates the TLS version",
    "max.request.size": (
        "use max-message-bytes, the sink's limit on a message (it raises "
        "kafka.message.max.bytes to match)"
    ),
    "key.serializer": "remove it: the sink writes each protocol's own bytes",
    "value.serializer": "remove it: the sink writes each protocol's own bytes",
    "partitioner.class": (
        "use partition (TiCDC's dispatchers: default, table, index-value, ts, columns)"
    ),
    "buffer.memory": "use kafka.queue.buffering.max.kbytes (KiB; the sink's default is 65536)",
    "max.block.ms": "remove it: a full queue waits for acknowledgements, up to message.timeout.ms",
    "send.buffer.bytes": "use kafka.socket.send.buffer.bytes",
    "receive.buffer.bytes": "use kafka.socket.receive.buffer.bytes",
    "interceptor.classes": "remove it: librdkafka has no interceptors for Python",
    "metric.reporters": "remove it (librdkafka statistics: kafka.statistics.interval.ms)",
    "sasl.login.callback.handler.class": (
        "use kafka.sasl.oauthbearer.method=oidc with kafka.sasl.oauthbearer.client.id, "
        "client.secret and token.endpoint.url"
    ),
    "sasl.client.callback.handler.class": "remove it: librdkafka has no callback handlers",
    "security.providers": "remove it: librdkafka has no security providers",
}


def _check_known(key: str, value: Any, source: str) -> None:
    if key.startswith("kafka.") and len(key) > len("kafka."):
        java = JAVA_SETTINGS.get(key[len("kafka.") :])
        if java is not None:
            raise ConfigError(
                f"{source_label(key, source)} is a setting of the Java Kafka client, which "
                f"librdkafka (the client this sink uses) does not have; {java}",
                option=key,
            )
        return
    if key in _field_options() or key in TICDC_KAFKA or key in IGNORED:
        return
    label = source_label(key, source)
    if key in REFUSED:
        refused = refusal(key, value, label)
        if refused is not None:
            raise refused
        return
    if key in LAYER_NAMES:
        raise ConfigError(f"{label} is only accepted as an option, not here", option=key)
    close = [spell_option(c) for c in difflib.get_close_matches(key, _known_names(), n=1)]
    hint = f"did you mean '{close[0]}'? ({_OPTIONS_HELP})" if close else _OPTIONS_HELP
    raise ConfigError(f"{label} is unknown; {hint}", option=key, allowed=tuple(close) or None)


def _check_bootstrap_spelling(client: Mapping[str, Any]) -> None:
    """With no brokers set, a `kafka.*` key close to bootstrap.servers is a typo of it:
    report that, not the missing setting (librdkafka would refuse the name anyway)."""
    close = difflib.get_close_matches("bootstrap.servers", list(client), n=1, cutoff=0.8)
    if close:
        raise ConfigError(
            f"option 'kafka.{close[0]}' is unknown; did you mean 'kafka.bootstrap.servers'?",
            option=f"kafka.{close[0]}",
            allowed=("kafka.bootstrap.servers",),
        )


def _kwargs(part: type, merged: Mapping[str, Any]) -> dict[str, Any]:
    return {
        field.name: merged[field.metadata["option"]]
        for field in attrs.fields(part)
        if field.metadata.get("option") in merged
    }


def _build(merged: dict[str, Any]) -> SinkConfig:
    client = {k[len("kafka.") :]: v for k, v in merged.items() if k.startswith("kafka.")}
    bootstrap = client.pop("bootstrap.servers", None)
    if not bootstrap:
        _check_bootstrap_spelling(client)
        raise ConfigError(
            "option 'kafka.bootstrap.servers' is not set; give it, or the brokers in "
            "sink-uri (kafka://host:9092,host2:9092/topic)",
            option="kafka.bootstrap.servers",
        )
    split_registry_credentials(merged)
    translated = ticdc_kafka_settings(merged)
    client = {**translated, **{k: setting_text(v) for k, v in client.items()}}
    check_acks(client)
    if "topic" not in merged:
        raise ConfigError(
            "option 'topic' is not set; give a topic or expression (tidb_{schema}_{table}), "
            "or the topic as the sink-uri path (kafka://host:9092/topic)",
            option="topic",
        )
    kafka_kwargs = _kwargs(KafkaConfig, merged)
    kafka_kwargs.pop("bootstrap_servers", None)
    routing = RoutingConfig(**_kwargs(RoutingConfig, merged))
    default_topic = routing.topic if TopicRouter(routing.topic).is_static else None
    codec = CodecConfig(**_kwargs(CodecConfig, merged))
    return SinkConfig(
        kafka=KafkaConfig(
            bootstrap_servers=bootstrap,
            client_config=FrozenMap(client),
            default_topic=default_topic,
            max_message_bytes=codec.max_message_bytes,
            **kafka_kwargs,
        ),
        routing=routing,
        codec=codec,
        input=InputConfig(**_kwargs(InputConfig, merged)),
        registry=RegistryConfig(**_kwargs(RegistryConfig, merged)),
        **_kwargs(SinkConfig, merged),
    )


@functools.cache
def warn_ignored_settings(ignored: tuple[str, ...]) -> None:
    """Name the TiCDC settings `from_options` ignored (`SinkConfig.ignored`), once per
    process: Spark asks for a stream writer twice per micro-batch."""
    logger.warning(
        "ticdc: ignored TiCDC settings that mean nothing to this sink: %s", "; ".join(ignored)
    )

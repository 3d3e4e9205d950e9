"""The parts of the sink's configuration besides the codec's: `KafkaConfig` (where and how
to produce), `RoutingConfig` (topic, partition dispatcher, TiCDC's dispatchers rules),
`InputConfig` (how DataFrame rows map to a table), `RegistryConfig` (the Confluent Schema
Registry). Each option is one field (`ticdc_sink.options.option_field`), parsed and
checked where it is declared; rules across parts are `SinkConfig`'s.

Data only: what a table's rules do (its topic, dispatcher, target names) is
`ticdc_sink.writer.rules`; the rules' value types come from `ticdc_sink.routing`.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

import attrs

from ticdc_sink.errors import ConfigError
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.options import (
    INT32_MAX,
    INT64_MAX,
    FrozenMap,
    Invalid,
    int_parser,
    option_field,
    parse_bool,
    parse_name,
    parse_names,
    parse_opt_str,
    parse_string_map,
)
from ticdc_sink.redaction import MASK, masked, masked_repr
from ticdc_sink.routing import DispatchRule, PartitionRule
from ticdc_sink.ticdc_version import TiCDCVersion

__all__ = [
    "InputConfig",
    "KafkaConfig",
    "ROUTING_KEYS",
    "ROUTING_SINCE",
    "RegistryConfig",
    "RoutingConfig",
    "acks_all",
    "rule_problem",
    "setting_text",
]


# librdkafka refuses to create a topic with more partitions or replicas than these
# (rd_kafka_NewTopic: RD_KAFKAP_PARTITIONS_MAX, RD_KAFKAP_BROKERS_MAX), whatever Kafka allows.
_MAX_PARTITIONS = 100_000
_MAX_REPLICATION_FACTOR = 10_000


def _client_map(value: Any) -> FrozenMap:
    if not isinstance(value, Mapping):
        raise Invalid("use a mapping of librdkafka settings")
    return FrozenMap({str(k): setting_text(v) for k, v in value.items()})


def setting_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _partition_rule(value: Any) -> PartitionRule:
    try:
        return PartitionRule.parse(value)
    except ConfigError as exc:
        raise Invalid(exc.message.split("; ", 1)[1], exc.allowed) from None


def _registry_url(value: Any) -> str | None:
    if value is None or value == "":
        return None
    text = str(value).strip().rstrip("/")
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid("use an http:// or https:// URL such as http://registry:8081")
    if "@" in parts.netloc:
        raise Invalid("give credentials in schema-registry-user / schema-registry-password")
    return text


# pingcap/ticdc's table routing keys (`target-schema`, `target-table`) among them.
ROUTING_KEYS = ("target-schema", "target-table")
_RULE_KEYS = frozenset(
    {"matcher", "topic", "partition", "dispatcher", "columns", "index", *ROUTING_KEYS}
)


def rule_problem(raw: Mapping[str, Any]) -> str | None:
    """What TiCDC would refuse in one dispatcher rule: both `dispatcher` and `partition`
    (tiflow SinkConfig.validateAndAdjust); None when the rule is fine."""
    if raw.get("dispatcher") and raw.get("partition"):
        return (
            f"rule {dict(raw)!r}: dispatcher and partition cannot be configured both (TiCDC's "
            "rule); keep partition (dispatcher is its old name)"
        )
    return None


def _dispatch_rules(value: Any) -> tuple[DispatchRule, ...]:
    """`dispatchers`: TiCDC's rule list (TOML), or the same as JSON text (an option)."""
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise Invalid(
                'use a JSON list of rules, e.g. [{"matcher": ["db.*"], "topic": "t_{table}"}]'
            ) from None
    if isinstance(value, tuple) and all(isinstance(r, DispatchRule) for r in value):
        return value
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise Invalid('use a list of rules, e.g. [{"matcher": ["db.*"], "topic": "t_{table}"}]')
    rules = []
    for raw in value:
        problem = rule_problem(raw)
        if problem is not None:
            raise Invalid(problem)
        unknown = sorted(set(raw) - _RULE_KEYS)
        if unknown:
            raise Invalid(
                f"rule {dict(raw)!r} has unknown key {unknown[0]!r}; a rule takes "
                + ", ".join(sorted(_RULE_KEYS))
            )
        matcher = raw.get("matcher")
        if isinstance(matcher, str):
            matcher = [matcher]
        if not isinstance(matcher, list) or not matcher:
            raise Invalid(f"rule {dict(raw)!r} needs matcher = ['db.table', ...]")
        columns = raw.get("columns") or ()
        targets = {key: raw.get(key) or None for key in ROUTING_KEYS}
        for key, target in targets.items():
            if target is not None and not isinstance(target, str):
                raise Invalid(f"rule {dict(raw)!r}: {key} must be a string")
        try:
            rules.append(
                DispatchRule(
                    [str(m) for m in matcher],
                    topic=raw.get("topic") or None,
                    partition=raw.get("partition") or raw.get("dispatcher") or "default",
                    columns=[str(c) for c in columns],
                    index=raw.get("index") or None,
                    target_schema=targets["target-schema"],
                    target_table=targets["target-table"],
                )
            )
        except ConfigError as exc:
            raise Invalid(f"rule {dict(raw)!r}: {exc.message}") from None
    return tuple(rules)


@attrs.frozen
class KafkaConfig:
    """Where and how to produce: brokers, librdkafka settings, topic creation."""

    bootstrap_servers: str = option_field(
        "kafka.bootstrap.servers", parse=parse_name, doc="brokers (or the hosts of `sink-uri`)"
    )
    client_config: FrozenMap = option_field(
        "kafka.*",
        FrozenMap(),
        parse=_client_map,
        repr=masked_repr,
        doc=(
            "any librdkafka producer setting, passed through; librdkafka checks them on the "
            "driver before any task runs (settings naming files are checked where the tasks run),"
            " so an unknown name (with the likely one suggested) or a bad value is an error "
            "naming the option; Java client settings Spark's Kafka sink takes "
            "(`sasl.jaas.config`, `ssl.truststore.location`, `max.request.size`, "
            "`key.serializer`, `buffer.memory`, ...) are errors that name what to use instead"
        ),
    )
    partition_num: int | None = option_field(
        "partition-num",
        None,
        int_parser(1, _MAX_PARTITIONS, optional=True),
        doc=(
            "partitions of a topic the sink creates (at most 100000, librdkafka's limit). An "
            "existing topic, as TiCDC: the fixed topic of `topic` or `sink-uri` is written to "
            "partitions `0 .. partition-num - 1` when partition-num is below its count (the "
            "others get nothing, watermarks included), and a partition-num above its count is an "
            "error; topics of expressions and `dispatchers` keep their own count"
        ),
        ticdc=("partition-num",),
        shown_default="3",
    )
    replication_factor: int = option_field(
        "replication-factor",
        1,
        int_parser(1, _MAX_REPLICATION_FACTOR),
        doc="replication factor of a topic the sink creates (at most 10000, librdkafka's limit)",
        ticdc=("replication-factor",),
    )
    auto_create_topic: bool = option_field(
        "auto-create-topic",
        True,
        parse_bool,
        doc="create missing topics; false makes a missing topic an error",
        ticdc=("auto-create-topic",),
    )
    broker_timeout_ms: int = option_field(
        "broker-timeout-ms",
        30000,
        int_parser(1, INT32_MAX),
        doc="how long to try to reach the brokers (metadata, topic creation) before failing",
    )
    # Not an option here: CodecConfig's max-message-bytes, copied by `SinkConfig.from_options`
    # (the producer sizes message.max.bytes by it).
    max_message_bytes: int = attrs.field(default=10 * 1024 * 1024)
    # Not an option: the fixed topic of `topic` (the sink-uri path), TiCDC's default topic,
    # which partition-num also governs when it exists already (producer.partition_count).
    # None when `topic` is an expression. Set by `SinkConfig.from_options`.
    default_topic: str | None = attrs.field(default=None)

    def producer_config(self) -> dict[str, str]:
        """Settings for `confluent_kafka.Producer`: the idempotent producer with acks=all
        (design §5), lz4-compressed batches and room for messages up to max-message-bytes,
        under the user's `kafka.*` settings (and sink-uri `compression`), which win.

        lz4 because it pays for itself on one machine: the broker moves fewer bytes for
        little CPU (benchmarks/RESULTS.md: Debezium with its schema part, ~3.6 KB a
        message, goes 3.2x faster end to end); every Kafka client reads it."""
        config = {
            "bootstrap.servers": self.bootstrap_servers,
            "enable.idempotence": "true",
            "acks": "all",
            "compression.type": "lz4",
        }
        # librdkafka refuses messages above message.max.bytes (default 1000000) before
        # sending; TiCDC's max-message-bytes defaults to 10 MiB, plus record overhead.
        # Batches stay bounded by batch.size (1000000), so brokers see no larger batches.
        if self.max_message_bytes + 128 > 1_000_000:
            config["message.max.bytes"] = str(min(self.max_message_bytes + 128, 1_000_000_000))
        config.update(self.client_config)
        # acks 0 or 1 (kafka.acks, or TiCDC's required-acks) without an explicit
        # kafka.enable.idempotence turns idempotence off, as Kafka's Java producer does:
        # librdkafka refuses idempotence without acks=all, and TiCDC's producer is not
        # idempotent, so required-acks=1 works there. Both asked for is refused on the
        # driver (`check_acks`).
        if not acks_all(config) and "enable.idempotence" not in self.client_config:
            config["enable.idempotence"] = "false"
        return config

    def redacted(self) -> dict[str, str]:
        """`producer_config()` with secrets masked, for logs."""
        return masked(self.producer_config())


@attrs.frozen
class RoutingConfig:
    """Topic expression and partition dispatcher (routing.py applies them); `dispatchers`
    are TiCDC's per-table rules, tried in order before these defaults."""

    topic: str = option_field(
        "topic",
        parse=parse_name,
        doc="topic or TiCDC topic expression with `{schema}` and `{table}`",
        shown_default="URI path",
    )
    partition: PartitionRule = option_field(
        "partition",
        PartitionRule.DEFAULT,
        _partition_rule,
        doc=(
            "`default` (= `table`), `table`, `index-value`, `ts`, `columns`, as TiCDC computes them"
        ),
    )
    partition_columns: tuple[str, ...] = option_field(
        "partition-columns", (), parse_names, doc="columns for `partition=columns`"
    )
    index: str | None = option_field(
        "index",
        None,
        parse_opt_str,
        doc="a unique index for `index-value` (default: the handle key)",
    )
    dispatchers: tuple[DispatchRule, ...] = option_field(
        "dispatchers",
        (),
        _dispatch_rules,
        doc=(
            'TiCDC\'s per-table rules (from the changefeed file, or JSON text): `[{"matcher": '
            '["db.*", "!db.tmp_*"], "topic": "t_{table}", "partition": "index-value"}]`; the '
            "first rule whose matcher takes a table decides its topic (none: `topic`) and "
            "partition dispatcher; tables no rule takes use `topic` and `partition`. "
            "`target-schema` / `target-table` (pingcap/ticdc's table routing: master, in no "
            "release yet; literal text with `{schema}`, `{table}`) rename the table in its "
            "messages (the first rule with one that takes it); topics and partitions keep "
            "the table's own names"
        ),
        ticdc=("dispatchers", "dispatchers.target-schema", "dispatchers.target-table"),
    )
    case_sensitive: bool = option_field(
        "case-sensitive",
        False,
        parse_bool,
        doc="dispatchers matchers compare names exactly (the changefeed file's top-level key)",
        ticdc=("case-sensitive",),
    )

    def __attrs_post_init__(self) -> None:
        if self.case_sensitive and self.dispatchers:
            # Rules are parsed before this flag is known; rebuild them with it.
            rules = tuple(r.with_case_sensitive(True) for r in self.dispatchers)
            object.__setattr__(self, "dispatchers", rules)
        if self.partition is PartitionRule.COLUMNS and not self.partition_columns:
            raise ConfigError(
                "option 'partition' is 'columns' but 'partition-columns' is empty; "
                "name the columns to hash, e.g. partition-columns=id,region",
                option="partition-columns",
                value="",
            )
        if self.partition_columns and self.partition is not PartitionRule.COLUMNS:
            raise ConfigError(
                f"option 'partition-columns' is set but 'partition' is "
                f"'{self.partition.value}'; set partition=columns or drop partition-columns",
                option="partition-columns",
                value=",".join(self.partition_columns),
            )
        if self.index and self.partition is not PartitionRule.INDEX_VALUE:
            raise ConfigError(
                f"option 'index' is set but 'partition' is '{self.partition.value}'; "
                "set partition=index-value or drop index",
                option="index",
                value=self.index,
            )


#: pingcap/ticdc's table routing (dispatchers target-schema / target-table).
ROUTING_SINCE = TiCDCVersion.V26_3


@attrs.frozen
class InputConfig:
    """How DataFrame rows map to a table: metadata columns and table schema refinements."""

    op_column: str = option_field(
        "op-column", "_op", parse_name, doc="name of the operation column"
    )
    commit_ts_column: str = option_field(
        "commit-ts-column", "_commit_ts", parse_name, doc="name of the commit ts column"
    )
    before_column: str = option_field(
        "before-column",
        "_before",
        parse_name,
        doc="name of the before-image column (UPDATE, DELETE)",
    )
    database_column: str = option_field(
        "database-column", "_database", parse_name, doc="name of the database column"
    )
    table_column: str = option_field(
        "table-column", "_table", parse_name, doc="name of the table column"
    )
    database: str | None = option_field(
        "database", None, parse_opt_str, doc="the database, when there is no `_database` column"
    )
    table: str | None = option_field(
        "table", None, parse_opt_str, doc="the table, when there is no `_table` column"
    )
    primary_key: tuple[str, ...] = option_field(
        "primary-key", (), parse_names, doc="comma-separated primary key columns"
    )
    column_types: FrozenMap = option_field(
        "column-types",
        FrozenMap(),
        parse_string_map,
        doc="JSON object: column to MySQL type, optionally with `NOT NULL` and `DEFAULT`",
    )
    table_ddl: str | None = option_field(
        "table-ddl", None, parse_opt_str, doc="`CREATE TABLE` statement"
    )
    table_id: int | None = option_field(
        "table-id",
        None,
        int_parser(1, INT64_MAX, optional=True),
        doc="`tableID` on the wire",
        shown_default="derived",
    )
    schema_version: int | None = option_field(
        "schema-version",
        None,
        int_parser(0, INT64_MAX, optional=True),
        doc="schema version on the wire",
        shown_default="derived",
    )
    allow_commit_ts_below_watermark: bool = option_field(
        "allow-commit-ts-below-watermark",
        False,
        parse_bool,
        doc=(
            "send rows whose `_commit_ts` is at or below a watermark an earlier batch sent, "
            "instead of failing; the batch report counts them (`below_watermark`); see Delivery "
            "guarantees"
        ),
    )

    def __attrs_post_init__(self) -> None:
        seen: dict[str, str] = {}
        for field_name, column in attrs.asdict(self.layout()).items():
            option = field_name.replace("_", "-")
            # Column names match in any case (input_batch.InputLayout.bind), so must these.
            if column.lower() in seen:
                raise ConfigError(
                    f"option '{option}' is '{column}', the same as "
                    f"'{seen[column.lower()]}' (column names match in any case); "
                    "each metadata column needs its own name",
                    option=option,
                    value=column,
                )
            seen[column.lower()] = option

    def layout(self) -> InputLayout:
        """The metadata column names as `input_batch.InputLayout` (its fields are the options
        of the same name here)."""
        names = attrs.fields_dict(InputLayout)
        return InputLayout(**{name: getattr(self, name) for name in names})


@attrs.frozen
class RegistryConfig:
    """The Confluent Schema Registry (protocol avro). `schema-registry` may carry
    `user:password@` (URL-encoded parts); they are moved to `user` and `password`, so
    `url` never holds credentials."""

    url: str | None = option_field(
        "schema-registry",
        None,
        _registry_url,
        doc="registry URL, `http(s)://[user:password@]host:port`",
        ticdc=("schema-registry",),
    )
    user: str | None = option_field(
        "schema-registry-user", None, parse_opt_str, doc="basic-auth user"
    )
    password: str | None = option_field(
        "schema-registry-password",
        None,
        parse_opt_str,
        repr=lambda v: MASK if v else repr(v),
        doc="basic-auth password (a secret)",
    )
    ca_location: str | None = option_field(
        "schema-registry-ca", None, parse_opt_str, doc="CA file to verify an https registry"
    )
    cert_location: str | None = option_field(
        "schema-registry-cert",
        None,
        parse_opt_str,
        doc="client certificate file for an https registry (with the key)",
    )
    key_location: str | None = option_field(
        "schema-registry-key",
        None,
        parse_opt_str,
        doc="client key file for an https registry (with the certificate)",
    )
    timeout_ms: int = option_field(
        "schema-registry-timeout-ms",
        30000,
        int_parser(1, INT32_MAX),
        doc="bound for one registry request",
    )

    def __attrs_post_init__(self) -> None:
        if self.password and not self.user:
            raise ConfigError(
                "option 'schema-registry-password' is set without 'schema-registry-user'; "
                "give both",
                option="schema-registry-user",
            )
        if bool(self.cert_location) != bool(self.key_location):
            raise ConfigError(
                "options 'schema-registry-cert' and 'schema-registry-key' go together; "
                "give both or neither",
                option="schema-registry-cert" if self.cert_location else "schema-registry-key",
            )

    def client_config(self) -> dict[str, Any]:
        """Settings for `confluent_kafka.schema_registry.SchemaRegistryClient`."""
        config: dict[str, Any] = {"url": self.url, "timeout": max(1, self.timeout_ms // 1000)}
        if self.user:
            config["basic.auth.user.info"] = f"{self.user}:{self.password or ''}"
        if self.ca_location:
            config["ssl.ca.location"] = self.ca_location
        if self.cert_location:
            config["ssl.certificate.location"] = self.cert_location
            config["ssl.key.location"] = self.key_location
        return config


def acks_all(settings: Mapping[str, Any]) -> bool:
    """Whether librdkafka's `acks` (alias `request.required.acks`; its default is all) in
    `settings` waits for all in-sync replicas."""
    acks = settings.get("acks", settings.get("request.required.acks", "all"))
    return str(acks).strip().lower() in ("all", "-1")

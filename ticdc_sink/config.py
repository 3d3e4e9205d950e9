"""SinkConfig: every option of the sink, parsed and validated once on the driver.

`SinkConfig.from_options(options)` is the only code that reads raw option strings. It
merges four layers, later winning key by key:

    defaults  <  TOML file (`config`), section [sink]  <  `sink-uri`  <  explicit options

Keys are case-insensitive (Spark lowercases them). Spark's own `path` and `queryName` are
ignored here (`SPARK_OPTIONS`; the stream writer reads `queryName` itself). An
unknown key is an error with a close match suggested. The result is frozen, hashable and
picklable; change it with `attrs.evolve`. This module knows option names, TiCDC's
sink-uri and changefeed-file names and librdkafka setting names; it opens no connection.

Options. Each option is declared once, as a field of the part that holds it (`_field`:
its type, default, one line of documentation and the TiCDC settings it honours); the
field is the option's snake_case twin and keeps the name in `metadata["option"]`. The
protocols that own an option say so in their specs (`ticdc_sink.codec.spec`). The write
options page (docs/reference/write-options.md) is rendered from these declarations at
every build of the docs (tests/support/option_docs.py). `sink-uri` and `config` are layers
(`LAYER_OPTIONS`).

TiCDC's other Kafka-sink settings are declared in `ticdc_sink.ticdc_settings`, each with
what the sink does with it: the Kafka parameters (tiflow `pkg/sink/kafka/options.go`)
become librdkafka settings in `kafka.client_config` (`_translate_ticdc_kafka`; a `kafka.*`
option for the same setting wins); settings that mean nothing here are accepted and
reported as ignored; settings that change what TiCDC writes and have no equivalent here
(or are not built yet) are errors that say why, unless they hold TiCDC's default (as a
file TiCDC exported does). The TiCDC settings page (docs/reference/ticdc-settings.md) is
rendered from that list and the options.

The changefeed file: `[sink]` keys that are options or TiCDC settings, `[sink.kafka-config]`
(the TiCDC Kafka parameters), `[sink.kafka-config.codec-config]`,
`[sink.kafka-config.large-message-handle]`, `dispatchers` (a single `*.*` rule becomes
topic/partition/index/partition-columns; several rules are matched per table with
TiDB's table-filter syntax, the first match winning) and the top-level `case-sensitive`.
`[sink] kafka.<name>` keys (TOML dotted keys) are `kafka.*` options; `[filter] rules` and
`[filter] event-filters` are the options `filter-rules` and `event-filters`; `[integrity]
integrity-check-level` and `corruption-handle-level` the options of those names. Other
sections of the file are TiCDC's, not the sink's, and are ignored, except the keys of
[filter] that change what TiCDC writes and are not built (refused unless at TiCDC's
default).

`kafka.<name>` settings of the Java Kafka client that librdkafka lacks (`sasl.jaas.config`,
`ssl.truststore.location`, `max.request.size`, ...) are errors naming what to use instead;
whether librdkafka takes the rest is checked by `producer.check_client_config`, since this
module does not load librdkafka.

Secrets (`sasl-password`, `sasl-oauth-client-secret`, `schema-registry-password`, the
credentials of a `schema-registry` URL, and `kafka.*` settings whose names contain
password, secret, jaas, key.pem or oauthbearer.config) never appear in `repr`, `str` or
errors. Options of another protocol, set away from their default, are errors.
"""

from __future__ import annotations

import base64
import difflib
import enum
import functools
import json
import re
import tomllib
import urllib.parse
import zoneinfo
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from ticdc_sink.codec import ProtocolSpec, protocol_spec, protocol_specs
from ticdc_sink.codec.spec import TiCDCVersion, Watermark
from ticdc_sink.column_selector import ColumnSelector, check_selection, parse_column_selectors
from ticdc_sink.errors import ConfigError
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.routing import (
    DispatchRule,
    PartitionRule,
    Route,
    TopicRouter,
    build_dispatcher,
    rule_for,
    target_name,
    validate_topic_expression,
)
from ticdc_sink.row_filter import (
    EventFilterRule,
    RowFilter,
    filter_rules_filter,
    parse_event_filters,
)
from ticdc_sink.schema import TableSchema
from ticdc_sink.table_filter import split_patterns
from ticdc_sink.ticdc_settings import SETTINGS as TICDC_SETTINGS
from ticdc_sink.ticdc_settings import Fate
from ticdc_sink.ticdc_settings import setting as ticdc_setting

__all__ = [
    "AvroBigintUnsignedHandling",
    "AvroDecimalHandling",
    "CodecConfig",
    "CorruptionHandleLevel",
    "EncodingFormat",
    "FrozenMap",
    "InputConfig",
    "IntegrityCheckLevel",
    "KafkaConfig",
    "LAYER_OPTIONS",
    "LargeMessageCompression",
    "LargeMessageHandleOption",
    "PartitionRule",
    "Protocol",
    "RegistryConfig",
    "RoutingConfig",
    "SPARK_OPTIONS",
    "SinkConfig",
    "SubjectNameStrategy",
    "acks_all",
    "is_secret",
    "layer_options",
    "mask_uri",
    "option_names",
    "parse_sink_uri",
    "redact_url",
    "spell_option",
    "ticdc_kafka_settings",
]

_MASK = "***"
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
# librdkafka refuses to create a topic with more partitions or replicas than these
# (rd_kafka_NewTopic: RD_KAFKAP_PARTITIONS_MAX, RD_KAFKAP_BROKERS_MAX), whatever Kafka allows.
_MAX_PARTITIONS = 100_000
_MAX_REPLICATION_FACTOR = 10_000


# The `protocol` values, from the protocols' specs (ticdc_sink.codec.PROTOCOLS), so that a
# new protocol needs no line here: Protocol.SIMPLE, Protocol.CANAL_JSON, ...
if TYPE_CHECKING:
    # A type checker sees the class, not the members built below (no code names one:
    # code reads a protocol's traits from its spec).
    class Protocol(enum.StrEnum):
        pass

else:
    Protocol = enum.StrEnum(
        "Protocol",
        [(spec.name.upper().replace("-", "_"), spec.name) for spec in protocol_specs()],
        module=__name__,
    )


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


# Options Spark adds to a sink's own (PySpark 4.0-4.3, classic and Connect): `path` from
# save(path) / start(path), `queryName` from writeStream.queryName(...)
# (DataStreamWriter.queryName puts it among the options). `checkpointLocation`, the third,
# is a field of SinkConfig.
SPARK_OPTIONS = ("path", "queryname")


# -- secrets and immutable mappings ----------------------------------------------------

_SECRET_OPTIONS = frozenset({"sasl-password", "sasl-oauth-client-secret", "sasl-gssapi-password"})
_SECRET_MARKERS = ("password", "secret", "jaas", "key.pem", "oauthbearer.config")


def is_secret(name: str) -> bool:
    """Whether an option or librdkafka setting holds a secret (masked everywhere)."""
    name = name.lower()
    return name in _SECRET_OPTIONS or any(marker in name for marker in _SECRET_MARKERS)


class FrozenMap(Mapping[str, str]):
    """An immutable str -> str mapping that hashes and pickles, for config fields."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self._data = dict(data or {})

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def _masked(mapping: Mapping[str, str]) -> dict[str, str]:
    return {k: (_MASK if is_secret(k) else v) for k, v in mapping.items()}


def _masked_repr(mapping: Mapping[str, str]) -> str:
    return repr(_masked(mapping))


# -- errors and field helpers ------------------------------------------------------------


class _Invalid(ValueError):
    """Raised by a parser; the field wrapper turns it into a ConfigError naming the option."""

    def __init__(self, allowed: str, choices: tuple[str, ...] | None = None) -> None:
        super().__init__(allowed)
        self.allowed = allowed
        self.choices = choices


def _shown(option: str, value: object) -> str:
    if is_secret(option) or option == "kafka.*":
        return _MASK
    if option == "schema-registry":
        value = redact_url(str(value))
    elif option == "claim-check-storage-uri":
        value = mask_uri(str(value))
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _invalid(
    option: str, value: object, allowed: str, choices: tuple[str, ...] | None = None
) -> ConfigError:
    shown = _shown(option, value)
    return ConfigError(
        f"option '{spell_option(option)}' is '{shown}'; {allowed}",
        option=option,
        value=shown,
        allowed=choices,
    )


def _field(
    option: str,
    default: Any = attrs.NOTHING,
    parse: Callable[[Any], Any] | None = None,
    *,
    doc: str,
    ticdc: tuple[str, ...] = (),
    shown_default: str | None = None,
    since: TiCDCVersion | None = None,
    **kwargs: Any,
) -> Any:
    """An attrs field for `option`, the option's one declaration: its type (the
    annotation), default, `doc` (its line in docs/reference/write-options.md; the
    protocols that own it come from their specs), the TiCDC settings it honours (`ticdc`,
    as TiCDC spells them), the first TiCDC release that has it (`since`: set away from its
    default under an older `ticdc-version` it is refused, `check_since`) and, where the
    default is not a value, the default as documented (`shown_default`). `parse` converts
    raw (string) or typed values and raises `_Invalid`, reported as a ConfigError that
    names the option."""

    def convert(value: Any) -> Any:
        if parse is None:
            return value
        try:
            return parse(value)
        except _Invalid as exc:
            # `from None`: the chained error could quote a secret value.
            raise _invalid(option, value, exc.allowed, exc.choices) from None

    if since is not None:
        doc += f" (TiCDC v{since.value} on: refused under an older `ticdc-version`)"
    metadata = {
        "option": option,
        "doc": doc,
        "ticdc": ticdc,
        "shown_default": shown_default,
        "since": since,
    }
    return attrs.field(default=default, converter=convert, metadata=metadata, **kwargs)


def _int(lo: int, hi: int, *, optional: bool = False) -> Callable[[Any], int | None]:
    def parse(value: Any) -> int | None:
        if optional and (value is None or value == ""):
            return None
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise _Invalid(f"use an integer from {lo} to {hi}")
        return value

    return parse


_TRUE = {"1", "t", "true"}
_FALSE = {"0", "f", "false"}


def _bool(value: Any) -> bool:
    # Go strconv.ParseBool, as TiCDC reads its URI parameters (any case here).
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise _Invalid("use true or false", ("true", "false"))


_E = TypeVar("_E", bound=enum.StrEnum)


def _enum(cls: type[_E], aliases: Mapping[str, str] | None = None) -> Callable[[Any], _E]:
    def parse(value: Any) -> _E:
        text = str(value).strip().lower()
        text = (aliases or {}).get(text, text)
        try:
            return cls(text)
        except ValueError:
            choices = tuple(member.value for member in cls)
            raise _Invalid(_choose(text, choices), choices) from None

    return parse


def _choose(text: str, choices: tuple[str, ...]) -> str:
    """ "use one of ...", led by the likely intended value (`canal_json`: canal-json)."""
    allowed = f"use one of {', '.join(choices)}"
    close = difflib.get_close_matches(text.replace("_", "-"), choices, n=1, cutoff=0.75)
    return f"did you mean '{close[0]}'? {allowed}" if close else allowed


def _either(names: list[str]) -> str:
    """ "a", "a or b", "a, b or c": the protocols that take a setting, for messages."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _both(settings: list[str]) -> str:
    """ "a", "a and b", "a, b and c": settings to set together, for messages."""
    return settings[0] if len(settings) == 1 else f"{', '.join(settings[:-1])} and {settings[-1]}"


def _option_text(value: Any) -> str:
    """An option's value as a user spells it: `true`, an enum's value, the text."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value.value) if isinstance(value, enum.Enum) else str(value)


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Invalid("use a string")
    return value


def _storage_uri(value: Any) -> str | None:
    # TiCDC's external storage URIs: file:///abs/dir, s3://bucket/prefix, gcs://..., ...
    text = _opt_str(value)
    if text is None:
        return None
    parts = urllib.parse.urlsplit(text.strip())
    if not re.fullmatch(r"[a-z][a-z0-9+.-]*", parts.scheme) or not (parts.netloc or parts.path):
        raise _Invalid("use a URI such as file:///data/claim-check or s3://bucket/prefix")
    if parts.scheme == "file" and (
        parts.netloc not in ("", "localhost") or not parts.path.startswith("/")
    ):
        raise _Invalid("use file:// with an absolute path, such as file:///data/claim-check")
    return text.strip()


def mask_uri(uri: str) -> str:
    """`uri` with its user info and query values masked (TiCDC `MaskSensitiveDataInURI`):
    storage URIs may carry access keys there."""
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return "(unparseable URI)"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{_MASK}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(
        f"{name}={_MASK}" for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _masked_uri_repr(value: str | None) -> str:
    return repr(None if value is None else mask_uri(value))


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("use a non-empty name")
    return value


def _names(value: Any) -> tuple[str, ...]:
    """A comma list ("a, b") or a sequence of names; no empty or duplicate names."""
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(str(item).strip() for item in items)
    if any(not n for n in names) or len({n.lower() for n in names}) != len(names):
        raise _Invalid("use a comma-separated list of distinct column names, e.g. id,region")
    return names


def _string_map(value: Any) -> FrozenMap:
    """A JSON object (or a mapping) of str -> str, e.g. column-types."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise _Invalid(
                'use a JSON object of column -> MySQL type, e.g. {"price": "decimal(10,2)"}'
            ) from None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _Invalid('use a JSON object of column -> MySQL type, e.g. {"price": "decimal(10,2)"}')
    return value if isinstance(value, FrozenMap) else FrozenMap(value)


def _client_map(value: Any) -> FrozenMap:
    if not isinstance(value, Mapping):
        raise _Invalid("use a mapping of librdkafka settings")
    return FrozenMap({str(k): _setting(v) for k, v in value.items()})


def _setting(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _zone(value: Any) -> str:
    text = str(value).strip()
    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
        raise _Invalid("use an IANA time zone name such as UTC or Asia/Shanghai") from None
    return text


def _partition_rule(value: Any) -> PartitionRule:
    try:
        return PartitionRule.parse(value)
    except ConfigError as exc:
        raise _Invalid(exc.message.split("; ", 1)[1], exc.allowed) from None


_CLUSTER_ID = re.compile(r"[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*")
_RESERVED_CLUSTER_IDS = frozenset({"owner", "capture", "task", "changefeed", "job", "meta"})


def _cluster_name(value: Any) -> str:
    # TiCDC's cluster-id rule (tiflow pkg/config/server_config.go, IsValidClusterID):
    # Debezium writes it as source.name and into every schema name.
    text = str(value).strip()
    if not _CLUSTER_ID.fullmatch(text) or text in _RESERVED_CLUSTER_IDS:
        raise _Invalid(
            "use letters and digits in groups joined by single hyphens (e.g. tidb-prod), "
            f"not one of {', '.join(sorted(_RESERVED_CLUSTER_IDS))}"
        )
    return text


def _registry_url(value: Any) -> str | None:
    if value is None or value == "":
        return None
    text = str(value).strip().rstrip("/")
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Invalid("use an http:// or https:// URL such as http://registry:8081")
    if "@" in parts.netloc:
        raise _Invalid("give credentials in schema-registry-user / schema-registry-password")
    return text


# pingcap/ticdc's table routing keys (`target-schema`, `target-table`) among them.
_ROUTING_KEYS = ("target-schema", "target-table")
_RULE_KEYS = frozenset(
    {"matcher", "topic", "partition", "dispatcher", "columns", "index", *_ROUTING_KEYS}
)


def _rule_problem(raw: Mapping[str, Any]) -> str | None:
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
            raise _Invalid(
                'use a JSON list of rules, e.g. [{"matcher": ["db.*"], "topic": "t_{table}"}]'
            ) from None
    if isinstance(value, tuple) and all(isinstance(r, DispatchRule) for r in value):
        return value
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise _Invalid('use a list of rules, e.g. [{"matcher": ["db.*"], "topic": "t_{table}"}]')
    rules = []
    for raw in value:
        problem = _rule_problem(raw)
        if problem is not None:
            raise _Invalid(problem)
        unknown = sorted(set(raw) - _RULE_KEYS)
        if unknown:
            raise _Invalid(
                f"rule {dict(raw)!r} has unknown key {unknown[0]!r}; a rule takes "
                + ", ".join(sorted(_RULE_KEYS))
            )
        matcher = raw.get("matcher")
        if isinstance(matcher, str):
            matcher = [matcher]
        if not isinstance(matcher, list) or not matcher:
            raise _Invalid(f"rule {dict(raw)!r} needs matcher = ['db.table', ...]")
        columns = raw.get("columns") or ()
        targets = {key: raw.get(key) or None for key in _ROUTING_KEYS}
        for key, target in targets.items():
            if target is not None and not isinstance(target, str):
                raise _Invalid(f"rule {dict(raw)!r}: {key} must be a string")
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
            raise _Invalid(f"rule {dict(raw)!r}: {exc.message}") from None
    return tuple(rules)


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
            raise _Invalid('use a JSON list of patterns, e.g. ["db.*", "!db.tmp_*"]') from None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _Invalid("use a list of table-filter patterns, e.g. ['db.*', '!db.tmp_*']")
    patterns = tuple(v.strip() for v in value if v.strip())
    if patterns == ("*.*",):  # TiCDC's default, as an exported changefeed file lists it
        return ()
    if filter_rules_filter(patterns).is_empty:  # a pattern TiDB refuses raises here
        # TiDB's filter of only comments takes no table: TiCDC would replicate nothing.
        raise _Invalid(
            "it has no pattern, only comments, so no table would be written; give "
            "patterns such as db.* (or leave the option out for every table)"
        )
    return patterns


def _column_selectors(value: Any) -> tuple[ColumnSelector, ...]:
    """`column-selectors`: TiCDC's selector list (TOML), or the same as JSON text."""
    try:
        return parse_column_selectors(value)
    except ValueError as exc:
        raise _Invalid(str(exc)) from None


def _event_filters(value: Any) -> tuple[EventFilterRule, ...]:
    """`[filter] event-filters`: TiCDC's rule list (TOML), or the same as JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise _Invalid(
                'use a JSON list of rules, e.g. [{"matcher": ["db.t"], "ignore-event": ["delete"]}]'
            ) from None
    return parse_event_filters(value, "event-filters")


# -- the config classes ------------------------------------------------------------------


@attrs.frozen
class KafkaConfig:
    """Where and how to produce: brokers, librdkafka settings, topic creation."""

    bootstrap_servers: str = _field(
        "kafka.bootstrap.servers", parse=_name, doc="brokers (or the hosts of `sink-uri`)"
    )
    client_config: FrozenMap = _field(
        "kafka.*",
        FrozenMap(),
        parse=_client_map,
        repr=_masked_repr,
        doc=(
            "any librdkafka producer setting, passed through; librdkafka checks them on the "
            "driver before any task runs (settings naming files are checked where the tasks run),"
            " so an unknown name (with the likely one suggested) or a bad value is an error "
            "naming the option; Java client settings Spark's Kafka sink takes "
            "(`sasl.jaas.config`, `ssl.truststore.location`, `max.request.size`, "
            "`key.serializer`, `buffer.memory`, ...) are errors that name what to use instead"
        ),
    )
    partition_num: int | None = _field(
        "partition-num",
        None,
        _int(1, _MAX_PARTITIONS, optional=True),
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
    replication_factor: int = _field(
        "replication-factor",
        1,
        _int(1, _MAX_REPLICATION_FACTOR),
        doc="replication factor of a topic the sink creates (at most 10000, librdkafka's limit)",
        ticdc=("replication-factor",),
    )
    auto_create_topic: bool = _field(
        "auto-create-topic",
        True,
        _bool,
        doc="create missing topics; false makes a missing topic an error",
        ticdc=("auto-create-topic",),
    )
    broker_timeout_ms: int = _field(
        "broker-timeout-ms",
        30000,
        _int(1, _INT32_MAX),
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
        # driver (`_check_acks`).
        if not acks_all(config) and "enable.idempotence" not in self.client_config:
            config["enable.idempotence"] = "false"
        return config

    def redacted(self) -> dict[str, str]:
        """`producer_config()` with secrets masked, for logs."""
        return _masked(self.producer_config())


@attrs.frozen
class RoutingConfig:
    """Topic expression and partition dispatcher (routing.py applies them); `dispatchers`
    are TiCDC's per-table rules, tried in order before these defaults."""

    topic: str = _field(
        "topic",
        parse=_name,
        doc="topic or TiCDC topic expression with `{schema}` and `{table}`",
        shown_default="URI path",
    )
    partition: PartitionRule = _field(
        "partition",
        PartitionRule.DEFAULT,
        _partition_rule,
        doc=(
            "`default` (= `table`), `table`, `index-value`, `ts`, `columns`, as TiCDC computes them"
        ),
    )
    partition_columns: tuple[str, ...] = _field(
        "partition-columns", (), _names, doc="columns for `partition=columns`"
    )
    index: str | None = _field(
        "index", None, _opt_str, doc="a unique index for `index-value` (default: the handle key)"
    )
    dispatchers: tuple[DispatchRule, ...] = _field(
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
    case_sensitive: bool = _field(
        "case-sensitive",
        False,
        _bool,
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

    def dispatch_rule(self, database: str, table: str) -> DispatchRule:
        """The rule that decides a table's topic and partition dispatcher: the first
        `dispatchers` rule whose matcher takes the table, else the catch-all rule of the
        topic, partition, partition-columns and index options (TiCDC appends the same to
        a changefeed's rules: tiflow event_router.go, NewEventRouter)."""
        found = rule_for(self.dispatchers, database, table)
        if found is not None:
            return found
        return DispatchRule(
            ["*.*"],
            topic=self.topic,
            partition=self.partition,
            columns=self.partition_columns,
            index=self.index,
        )

    def target_of(self, database: str, table: str) -> tuple[str, str]:
        """The (schema, table) names a table's messages carry: pingcap/ticdc's table
        routing by the rules' `target-schema` / `target-table` (`routing.target_name`);
        its topic and partition are still decided on its own names."""
        return target_name(self.dispatchers, database, table)

    def routed(self, table: TableSchema) -> TableSchema:
        """`table` named as its messages name it (`target_of`): what the encoders see;
        `table` itself when no rule renames it."""
        names = self.target_of(table.database, table.table)
        if names == (table.database, table.table):
            return table
        return attrs.evolve(table, database=names[0], table=names[1])

    def topic_for(self, database: str, table: str) -> str:
        """The topic of a table: its rule's topic expression, else `topic`."""
        rule = self.dispatch_rule(database, table)
        return TopicRouter(rule.topic or self.topic).topic_for(database, table)

    def route(self, table: TableSchema) -> Route:
        """Where the table's rows go: its topic and partition dispatcher, both from
        `dispatch_rule`. The writer and `ticdc-sink check` / `dry-run` route with this, so
        they cannot disagree.

        Raises:
            ConfigError: partition columns or an index the table does not have.
        """
        rule = self.dispatch_rule(table.database, table.table)
        dispatcher = build_dispatcher(rule.partition, table, columns=rule.columns, index=rule.index)
        topic = TopicRouter(rule.topic or self.topic).topic_for(table.database, table.table)
        return Route(topic, dispatcher)


def _check_owned_options(part: Any, protocol: str) -> None:
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


def _too_new(option: str, value: str, since: TiCDCVersion, version: TiCDCVersion) -> ConfigError:
    return ConfigError(
        f"option {option!r} is {value!r}, which TiCDC v{version.value} does not have (it is "
        f"pingcap/ticdc's, ticdc-version {since.value}) and option 'ticdc-version' is "
        f"'{version.value}'; set ticdc-version={since.value} or remove {option}",
        option=option,
        value=value,
    )


def check_since(part: Any, version: TiCDCVersion) -> None:
    """Refuse an option of `part` set away from its default that TiCDC `version` lacks
    (its declaration's `since`).

    Raises:
        ConfigError: naming the option, its value, the release that has it and
            ticdc-version.
    """
    for field in attrs.fields(type(part)):
        since = field.metadata.get("since")
        value = getattr(part, field.name)
        if since is None or version.at_least(since) or value == field.default:
            continue
        raise _too_new(field.metadata["option"], _option_text(value), since, version)


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


#: pingcap/ticdc's table routing (dispatchers target-schema / target-table).
ROUTING_SINCE = TiCDCVersion.V26_3


@attrs.frozen
class CodecConfig:
    """What the encoders need to know."""

    protocol: Protocol = _field(
        "protocol",
        Protocol("simple"),
        _enum(Protocol, {alias: s.name for s in protocol_specs() for alias in s.aliases}),
        doc=_protocols_doc(),
        ticdc=("protocol",),
    )
    ticdc_version: TiCDCVersion = _field(
        "ticdc-version",
        TiCDCVersion.V26_3,
        _enum(TiCDCVersion),
        doc=(
            "the TiCDC release whose messages are written: `8.5` (pingcap/tiflow v8.5) or "
            "`26.3` (pingcap/ticdc v26.3). Under `8.5` debezium sends no DDL and no "
            "watermark messages and its `source` schema has no `commit_ts` / `cluster_id`, "
            "and what v8.5 lacks is refused (`debezium-avro`, the options marked v26.3, "
            "dispatchers `target-schema` / `target-table`); `check` lists what follows it"
        ),
    )
    encoding_format: EncodingFormat = _field(
        "encoding-format",
        EncodingFormat.JSON,
        _enum(EncodingFormat),
        doc="`json` or `avro`",
        ticdc=("encoding-format",),
    )
    enable_tidb_extension: bool = _field(
        "enable-tidb-extension",
        False,
        _bool,
        doc=(
            "TiDB extension fields and watermarks (avro `_tidb_*` fields; debezium `tidb_type` "
            'and `op: "m"`; canal-json `_tidb`); no effect for `simple`, as in TiCDC'
        ),
        ticdc=("enable-tidb-extension",),
    )
    time_zone: str = _field(
        "time-zone",
        "UTC",
        _zone,
        doc=(
            "the zone TIMESTAMP values are rendered in (TiCDC's server time zone); the Spark "
            "session zone never changes what is written"
        ),
    )
    integrity_check_level: IntegrityCheckLevel = _field(
        "integrity-check-level",
        IntegrityCheckLevel.NONE,
        _enum(IntegrityCheckLevel),
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
    corruption_handle_level: CorruptionHandleLevel = _field(
        "corruption-handle-level",
        CorruptionHandleLevel.WARN,
        _enum(CorruptionHandleLevel),
        doc=(
            "`warn` or `error`: what TiCDC does when the upstream row fails its checksum; "
            "rows here are checksummed as written, so none fails and `corrupted` is false"
        ),
        ticdc=("[integrity] corruption-handle-level",),
    )
    max_message_bytes: int = _field(
        "max-message-bytes",
        10 * 1024 * 1024,
        _int(1, _INT32_MAX),
        doc=(
            "largest message (key + value + 36 bytes, as TiCDC counts); lowered to the topic's "
            "`max.message.bytes` − 128 where the brokers report it"
        ),
        ticdc=("max-message-bytes",),
    )
    large_message_handle_option: LargeMessageHandleOption = _field(
        "large-message-handle-option",
        LargeMessageHandleOption.NONE,
        _enum(LargeMessageHandleOption),
        doc=_large_message_doc(),
        ticdc=("large-message-handle-option",),
    )
    claim_check_storage_uri: str | None = _field(
        "claim-check-storage-uri",
        None,
        _storage_uri,
        repr=_masked_uri_repr,
        doc=(
            "claim-check: where full messages go, `file:///abs/dir`; other schemes (`s3://`, "
            "`gcs://`, ...) through `fsspec` if installed (`pip install ticdc-sink[claim-check]` "
            "plus the storage's fsspec package)"
        ),
        ticdc=("claim-check-storage-uri",),
    )
    claim_check_raw_value: bool = _field(
        "claim-check-raw-value",
        False,
        _bool,
        doc=(
            "claim-check: store the message value itself instead of TiCDC's JSON "
            '`{"key":null,"value":"<base64>"}`'
        ),
        ticdc=("claim-check-raw-value",),
    )
    large_message_handle_compression: LargeMessageCompression = _field(
        "large-message-handle-compression",
        LargeMessageCompression.NONE,
        _enum(LargeMessageCompression),
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
    send_bootstrap_interval_in_sec: int = _field(
        "send-bootstrap-interval-in-sec",
        120,
        _int(-_INT64_MAX - 1, _INT64_MAX),
        doc="BOOTSTRAP again after this many seconds",
        ticdc=("send-bootstrap-interval-in-sec",),
    )
    send_bootstrap_in_msg_count: int = _field(
        "send-bootstrap-in-msg-count",
        10000,
        _int(-_INT32_MAX - 1, _INT32_MAX),
        doc="BOOTSTRAP again after this many rows; 0 in either disables bootstraps",
        ticdc=("send-bootstrap-in-msg-count",),
    )
    send_bootstrap_to_all_partition: bool = _field(
        "send-bootstrap-to-all-partition",
        True,
        _bool,
        doc="BOOTSTRAP to every partition of the topic, else partition 0",
        ticdc=("send-bootstrap-to-all-partition",),
    )
    avro_decimal_handling_mode: AvroDecimalHandling = _field(
        "avro-decimal-handling-mode",
        AvroDecimalHandling.PRECISE,
        _enum(AvroDecimalHandling),
        doc="`precise` (bytes, `decimal` logical type) or `string`",
        ticdc=("avro-decimal-handling-mode",),
    )
    avro_bigint_unsigned_handling_mode: AvroBigintUnsignedHandling = _field(
        "avro-bigint-unsigned-handling-mode",
        AvroBigintUnsignedHandling.LONG,
        _enum(AvroBigintUnsignedHandling),
        doc="`long` (wraps above 2^63, as TiCDC) or `string`",
        ticdc=("avro-bigint-unsigned-handling-mode",),
    )
    avro_include_before_value: bool = _field(
        "avro-include-before-value",
        False,
        _bool,
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
    subject_name_strategy: SubjectNameStrategy = _field(
        "subject-name-strategy",
        SubjectNameStrategy.TOPIC,
        _enum(
            SubjectNameStrategy,
            {
                "topicnamestrategy": "topic",
                "recordnamestrategy": "record",
                "topicrecordnamestrategy": "topic-record",
            },
        ),
        doc="`topic` (TiCDC's), `record`, `topic-record` (Confluent's names also accepted)",
    )
    debezium_disable_schema: bool = _field(
        "debezium-disable-schema",
        False,
        _bool,
        doc="payload only, no `schema` part",
        ticdc=("debezium-disable-schema",),
    )
    debezium_output_old_value: bool = _field(
        "debezium-output-old-value",
        True,
        _bool,
        doc="UPDATEs carry `before` (then every UPDATE needs `_before`)",
        ticdc=("[sink.debezium] output-old-value",),
    )
    debezium_cluster_name: str = _field(
        "debezium-cluster-name",
        "default",
        _cluster_name,
        doc="TiCDC's cluster id, in `source.name` and schema names",
    )
    only_output_updated_columns: bool = _field(
        "only-output-updated-columns",
        False,
        _bool,
        doc="the old row (canal-json `old`, open-protocol `p`) keeps only the changed columns",
        ticdc=("only-output-updated-columns",),
    )
    content_compatible: bool = _field(
        "content-compatible",
        False,
        _bool,
        doc="Canal's own `mysqlType` text and `old` (implies the above)",
        ticdc=("content-compatible",),
    )
    output_row_key: bool = _field(
        "output-row-key",
        False,
        _bool,
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
    delete_only_output_handle_key_columns: bool = _field(
        "delete-only-output-handle-key-columns",
        False,
        _bool,
        doc="DELETEs carry only the handle key",
        ticdc=("delete-only-output-handle-key-columns",),
    )
    output_raw_change_event: bool = _field(
        "output-raw-change-event",
        False,
        _bool,
        doc="an UPDATE that changes a handle or unique key is sent as one UPDATE, "
        "else as DELETE and INSERT",
        ticdc=("output-raw-change-event",),
    )
    ddl_on_schema_change: bool = _field(
        "ddl-on-schema-change",
        True,
        _bool,
        doc="a DDL message when the table's schema changed between batches",
    )
    ddl_on_first_batch: bool = _field(
        "ddl-on-first-batch",
        False,
        _bool,
        doc="a `CREATE TABLE` DDL message before a table's first batch",
    )
    max_batch_size: int = _field(
        "max-batch-size",
        16,
        _int(1, _INT32_MAX),
        doc=(
            "most row events in one Kafka message; the other protocols report it as ignored, "
            "as TiCDC accepts it from any"
        ),
        ticdc=("max-batch-size",),
    )
    open_output_old_value: bool = _field(
        "open-output-old-value",
        True,
        _bool,
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
            raise _too_new("protocol", self.protocol.value, self.spec.since, version)
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
        _check_owned_options(self, self.protocol)

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
            if (value := _option_text(getattr(self, name.replace("-", "_")))) != wanted
        ]
        if wrong:
            name, value, _ = wrong[0]
            required = [f"{n}={w}" for n, w in spec.row_checksum_requires]
            to_set = [f"{n}={w}" for n, _, w in wrong]
            raise ConfigError(
                f"option {name!r} is {value!r}; protocol {spec.name} writes the row checksum "
                f"(integrity-check-level=correctness) only with {_both(required)}, as TiCDC "
                f"requires; set {_both(to_set)}, or integrity-check-level=none",
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
                f"{_either(takers)}",
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


@attrs.frozen
class InputConfig:
    """How DataFrame rows map to a table: metadata columns and table schema refinements."""

    op_column: str = _field("op-column", "_op", _name, doc="name of the operation column")
    commit_ts_column: str = _field(
        "commit-ts-column", "_commit_ts", _name, doc="name of the commit ts column"
    )
    before_column: str = _field(
        "before-column", "_before", _name, doc="name of the before-image column (UPDATE, DELETE)"
    )
    database_column: str = _field(
        "database-column", "_database", _name, doc="name of the database column"
    )
    table_column: str = _field("table-column", "_table", _name, doc="name of the table column")
    database: str | None = _field(
        "database", None, _opt_str, doc="the database, when there is no `_database` column"
    )
    table: str | None = _field(
        "table", None, _opt_str, doc="the table, when there is no `_table` column"
    )
    primary_key: tuple[str, ...] = _field(
        "primary-key", (), _names, doc="comma-separated primary key columns"
    )
    column_types: FrozenMap = _field(
        "column-types",
        FrozenMap(),
        _string_map,
        doc="JSON object: column to MySQL type, optionally with `NOT NULL` and `DEFAULT`",
    )
    table_ddl: str | None = _field("table-ddl", None, _opt_str, doc="`CREATE TABLE` statement")
    table_id: int | None = _field(
        "table-id",
        None,
        _int(1, _INT64_MAX, optional=True),
        doc="`tableID` on the wire",
        shown_default="derived",
    )
    schema_version: int | None = _field(
        "schema-version",
        None,
        _int(0, _INT64_MAX, optional=True),
        doc="schema version on the wire",
        shown_default="derived",
    )
    allow_commit_ts_below_watermark: bool = _field(
        "allow-commit-ts-below-watermark",
        False,
        _bool,
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
            # Column names match in any case (events.InputLayout.bind), so must these.
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
        """The metadata column names as `events.InputLayout` (its fields are the options
        of the same name here)."""
        names = attrs.fields_dict(InputLayout)
        return InputLayout(**{name: getattr(self, name) for name in names})


@attrs.frozen
class RegistryConfig:
    """The Confluent Schema Registry (protocol avro). `schema-registry` may carry
    `user:password@` (URL-encoded parts); they are moved to `user` and `password`, so
    `url` never holds credentials."""

    url: str | None = _field(
        "schema-registry",
        None,
        _registry_url,
        doc="registry URL, `http(s)://[user:password@]host:port`",
        ticdc=("schema-registry",),
    )
    user: str | None = _field("schema-registry-user", None, _opt_str, doc="basic-auth user")
    password: str | None = _field(
        "schema-registry-password",
        None,
        _opt_str,
        repr=lambda v: _MASK if v else repr(v),
        doc="basic-auth password (a secret)",
    )
    ca_location: str | None = _field(
        "schema-registry-ca", None, _opt_str, doc="CA file to verify an https registry"
    )
    cert_location: str | None = _field(
        "schema-registry-cert",
        None,
        _opt_str,
        doc="client certificate file for an https registry (with the key)",
    )
    key_location: str | None = _field(
        "schema-registry-key",
        None,
        _opt_str,
        doc="client key file for an https registry (with the certificate)",
    )
    timeout_ms: int = _field(
        "schema-registry-timeout-ms",
        30000,
        _int(1, _INT32_MAX),
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


@attrs.frozen
class SinkConfig:
    """The whole configuration; build it with `from_options`."""

    kafka: KafkaConfig
    routing: RoutingConfig
    codec: CodecConfig = CodecConfig()
    input: InputConfig = InputConfig()
    registry: RegistryConfig = RegistryConfig()
    checkpoint_location: str | None = _field(
        "checkpointlocation",
        None,
        _opt_str,
        doc=(
            "streaming: the query's checkpoint (or Spark's "
            '`spark.sql.streaming.checkpointLocation` with a `queryName`, see "Where it runs"); '
            "for batch jobs optional (keeps watermarks monotonic across jobs, and the batch "
            "reports); the sink keeps its state under `<checkpointLocation>/ticdc/` and checks "
            "that it can write there before any task runs"
        ),
    )
    filter_rules: tuple[str, ...] = _field(
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
    event_filters: tuple[EventFilterRule, ...] = _field(
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
    column_selectors: tuple[ColumnSelector, ...] = _field(
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
    force_replicate: bool = _field(
        "force-replicate",
        False,
        _bool,
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
        _check_owned_options(self.registry, spec.name)
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
                    raise _too_new(f"dispatchers {key}", target, ROUTING_SINCE, version)

    def column_selection(self, table: TableSchema) -> tuple[int, ...] | None:
        """The positions of `table`'s columns sent under `column-selectors` (None: all),
        checked against the table's keys and its `columns` partition dispatcher.

        Raises:
            ConfigError: the selection breaks one of the rules of
                `column_selector.check_selection`.
        """
        if not self.column_selectors:
            return None
        rule = self.routing.dispatch_rule(table.database, table.table)
        hashed = rule.columns if rule.partition is PartitionRule.COLUMNS else ()
        return check_selection(self.column_selectors, table, hashed)

    def row_filter(self) -> RowFilter:
        """The `[filter]` section as the writer applies it (with `case-sensitive`)."""
        return RowFilter(self.filter_rules, self.event_filters, self.routing.case_sensitive)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> SinkConfig:
        """Merge the layers, reject unknown keys, convert and validate.

        Raises:
            ConfigError: naming the option (and its source), the value (masked when
                secret) and what is allowed.
        """
        explicit = _Layer("option")
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
                if key in _IGNORED:
                    ignored.append(_label(key, layer.source))
                elif key in _shared_options():
                    shared.append((key, _label(key, layer.source)))
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
    explicit = _Layer("option")
    for key, value in options.items():
        explicit.set(str(key).strip().lower(), value)
    given = frozenset(k for k in explicit.values if k not in LAYER_OPTIONS)
    merged: dict[str, Any] = {}
    for layer in _stack(explicit):
        merged.update(layer.values)
    _split_registry_credentials(merged)
    return merged, given


def ticdc_kafka_settings(merged: Mapping[str, Any]) -> dict[str, str]:
    """TiCDC's Kafka parameters among `merged` (tiflow pkg/sink/kafka/options.go) as
    librdkafka settings, as the writer translates them.

    Raises:
        ConfigError: a parameter's value is not one TiCDC takes.
    """
    return _translate_ticdc_kafka(merged)


def _stack(explicit: _Layer) -> list[_Layer]:
    """The layers under the explicit options (`config`, then `sink-uri`), and them."""
    layers: list[_Layer] = []
    if "config" in explicit.values:
        layers.append(_load_toml(str(explicit.values.pop("config"))))
    if "sink-uri" in explicit.values:
        layers.append(_uri_layer(str(explicit.values.pop("sink-uri"))))
    layers.append(explicit)
    return layers


# -- option names ------------------------------------------------------------------------


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


@functools.cache
def _sink_section_options() -> dict[str, dict[str, str]]:
    # `[sink.<section>] <key>` TiCDC names of the options (`ticdc=`), as section -> key ->
    # option: [sink.debezium] output-old-value is debezium-output-old-value.
    found: dict[str, dict[str, str]] = {}
    for part in set(_field_options().values()):
        for field in attrs.fields(part):
            for name in field.metadata.get("ticdc", ()):
                match = re.fullmatch(r"\[sink\.([a-z-]+)\] ([a-z-]+)", name)
                if match:
                    found.setdefault(match[1], {})[match[2]] = field.metadata["option"]
    return found


def _named(fate: Fate) -> frozenset[str]:
    return frozenset(s.name for s in TICDC_SETTINGS if s.fate is fate)


# TiCDC sink-uri / [sink.kafka-config] parameters translated to librdkafka settings.
_TICDC_KAFKA = _named(Fate.LIBRDKAFKA)
# TiCDC names that do not change what this sink writes.
_IGNORED = _named(Fate.IGNORED)
# TiCDC names this sink refuses unless they hold TiCDC's default (a changefeed file
# exported by TiCDC lists them with it).
_REFUSED = _named(Fate.REFUSED) | _named(Fate.NOT_YET)


def _is_default(value: Any, default: Any) -> bool:
    if value is None or value == "" or value == [] or value == {} or value == default:
        return True
    if default is None and isinstance(value, dict):  # a section of empty values
        return all(_is_default(v, None) for v in value.values())
    if isinstance(default, bool):
        try:
            return _bool(value) is default
        except _Invalid:
            return False
    if isinstance(default, dict):
        return isinstance(value, dict) and all(
            k in default and _is_default(v, default[k]) for k, v in value.items()
        )
    return isinstance(default, str) and str(value).strip().lower() == default


#: The options that carry other settings, with their documentation.
LAYER_OPTIONS = {
    "sink-uri": (
        "`kafka://host:port[,host:port]/topic?protocol=simple&partition-num=3&...` with TiCDC's "
        "parameter names (`kafka-client-id`, `compression`, `required-acks`, `sasl-user`, "
        "`sasl-password`, `sasl-mechanism`, `enable-tls`, `ca`, `cert`, `key`, `dial-timeout`, "
        "...)"
    ),
    "config": "path of a TiCDC changefeed TOML file; its `[sink]` section is read",
}
_LAYERS = frozenset(LAYER_OPTIONS)


def _known_names() -> list[str]:
    return sorted(set(_field_options()) | _TICDC_KAFKA | _LAYERS | {"kafka.bootstrap.servers"})


def option_names() -> frozenset[str]:
    """Every option the writer takes by name (`kafka.*` settings aside): the reader tells
    a writer's option, which it ignores, from a typo."""
    return frozenset(_known_names())


# Where every option is listed; unknown-option errors point there.
_OPTIONS_HELP = "all options: docs/reference/write-options.md"

# Options whose documented spelling is not all lowercase (Spark lowercases option keys);
# messages and suggestions use the documented one.
_SPELLING = {"checkpointlocation": "checkpointLocation"}


def spell_option(option: str) -> str:
    """An option name as the docs spell it (`checkpointLocation`), for messages."""
    return _SPELLING.get(option, option)


# Java Kafka client settings that Spark's Kafka sink passes through as `kafka.<name>` and
# librdkafka does not have (it would refuse them inside every task), with what to use
# instead. Names librdkafka knows (ssl.keystore.location, batch.size, linger.ms, ...) pass.
_JAVA_SETTINGS: dict[str, str] = {
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
        java = _JAVA_SETTINGS.get(key[len("kafka.") :])
        if java is not None:
            raise ConfigError(
                f"{_label(key, source)} is a setting of the Java Kafka client, which "
                f"librdkafka (the client this sink uses) does not have; {java}",
                option=key,
            )
        return
    if key in _field_options() or key in _TICDC_KAFKA or key in _IGNORED:
        return
    label = _label(key, source)
    if key in _REFUSED:
        refused = _refused(key, value, label)
        if refused is not None:
            raise refused
        return
    if key in _LAYERS:
        raise ConfigError(f"{label} is only accepted as an option, not here", option=key)
    close = [spell_option(c) for c in difflib.get_close_matches(key, _known_names(), n=1)]
    hint = f"did you mean '{close[0]}'? ({_OPTIONS_HELP})" if close else _OPTIONS_HELP
    raise ConfigError(f"{label} is unknown; {hint}", option=key, allowed=tuple(close) or None)


def _refused(name: str, value: Any, label: str) -> ConfigError | None:
    """The error for TiCDC setting `name` (a `REFUSED` or `NOT_YET` one) set to `value`,
    labelled `label`; None when it holds TiCDC's default."""
    declared = ticdc_setting(name)
    assert declared is not None
    if _is_default(value, declared.default):
        return None
    if declared.fate is Fate.NOT_YET:
        why = f"does not support yet ({declared.note})"
    else:
        why = f"does not support ({declared.note})"
    return ConfigError(f"{label} is a TiCDC setting this sink {why}; remove it", option=name)


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


def _label(key: str, source: str) -> str:
    if source == "option":
        return f"option '{spell_option(key)}'"
    return f"{source} '{key}'"


class _Layer:
    """One layer of raw settings and where it came from (for error messages)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.values: dict[str, Any] = {}
        self.ignored: list[str] = []

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value


# -- sink-uri ------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """`url` with any `user:password@` part masked, for messages and logs."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "(unparseable URL)"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit(
        (parts.scheme, f"{_MASK}@{host}", parts.path, parts.query, parts.fragment)
    )


def _split_registry_credentials(merged: dict[str, Any]) -> None:
    """Move `user:password@` of `schema-registry` (URL-encoded parts) to the user and
    password options, so the URL itself never carries them."""
    url = merged.get("schema-registry")
    if not isinstance(url, str) or "@" not in url:
        return
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        raise ConfigError(
            f"option 'schema-registry' is '{redact_url(url)}'; it is not a URL",
            option="schema-registry",
        ) from None
    userinfo, _, host = parts.netloc.rpartition("@")
    if "schema-registry-user" in merged or "schema-registry-password" in merged:
        raise ConfigError(
            "option 'schema-registry' carries credentials and 'schema-registry-user' is "
            "also set; give the credentials once",
            option="schema-registry",
        )
    user, _, password = userinfo.partition(":")
    merged["schema-registry-user"] = urllib.parse.unquote(user)
    if password:
        merged["schema-registry-password"] = urllib.parse.unquote(password)
    merged["schema-registry"] = urllib.parse.urlunsplit(
        (parts.scheme, host, parts.path, parts.query, parts.fragment)
    )


def _redact_uri(uri: str) -> str:
    """The URI with user info and secret parameter values masked, for messages."""
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return "(unparseable sink-uri)"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if "@" in parts.netloc:
        netloc = f"{_MASK}@{netloc}"
    query = "&".join(
        f"{k}={_MASK if is_secret(k) else redact_url(v) if k == 'schema-registry' else v}"
        for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def parse_sink_uri(uri: str) -> dict[str, str]:
    """Read a TiCDC Kafka sink URI into option names: `kafka.bootstrap.servers` from the
    hosts, `topic` from the path, and each query parameter under its own name.

    `kafka+ssl://` turns `enable-tls` on unless the URI sets it. Unknown parameters are
    reported by `from_options`, which knows all names.

    Raises:
        ConfigError: not a kafka URI, user info in it, no hosts, a repeated parameter.
    """
    shown = _redact_uri(uri)
    try:
        parts = urllib.parse.urlsplit(uri.strip())
    except ValueError:
        raise ConfigError(
            f"option 'sink-uri' is '{shown}'; it is not a URI", option="sink-uri"
        ) from None
    scheme = parts.scheme.lower()
    if scheme not in ("kafka", "kafka+ssl"):
        raise ConfigError(
            f"option 'sink-uri' is '{shown}'; its scheme must be kafka or kafka+ssl "
            "(kafka://host:9092/topic?protocol=simple)",
            option="sink-uri",
            value=shown,
            allowed=("kafka", "kafka+ssl"),
        )
    if "@" in parts.netloc:
        raise ConfigError(
            f"option 'sink-uri' is '{shown}'; it must not carry credentials before the "
            "hosts; use sasl-user and sasl-password parameters",
            option="sink-uri",
            value=shown,
        )
    hosts = [h.strip() for h in parts.netloc.split(",") if h.strip()]
    if not hosts:
        raise ConfigError(
            f"option 'sink-uri' is '{shown}'; it names no broker (kafka://host:9092/topic)",
            option="sink-uri",
            value=shown,
        )
    values: dict[str, str] = {"kafka.bootstrap.servers": ",".join(hosts)}
    topic = urllib.parse.unquote(parts.path).strip("/")
    if topic:
        values["topic"] = topic
    if scheme == "kafka+ssl":
        values["enable-tls"] = "true"
    seen: set[str] = set()
    for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        key = key.strip().lower()
        if key in seen:
            raise ConfigError(
                f"sink-uri parameter '{key}' is given twice; give it once", option=key
            )
        seen.add(key)
        values[key] = value
    return values


def _uri_layer(uri: str) -> _Layer:
    layer = _Layer("sink-uri parameter")
    for key, value in parse_sink_uri(uri).items():
        layer.set(key, value)
    return layer


# -- TOML changefeed file -----------------------------------------------------------------


def _load_toml(path: str) -> _Layer:
    try:
        with open(path, "rb") as f:
            document = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(
            f"option 'config' is '{path}'; the file cannot be read ({exc.strerror})",
            option="config",
            value=path,
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"option 'config' is '{path}'; it is not valid TOML ({exc})",
            option="config",
            value=path,
        ) from None
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise ConfigError(
            f"option 'config' is '{path}'; it is not UTF-8 text (byte 0x{byte:02x} at offset "
            f"{exc.start}); TOML files are UTF-8: save it as UTF-8",
            option="config",
            value=path,
        ) from None
    layer = _Layer(f"config file {path} [sink] key")
    # Top level in TiCDC's file (`ReplicaConfig`): case-sensitive (dispatchers and filters
    # use it) and force-replicate (tables without a handle key).
    for key in ("case-sensitive", "force-replicate"):
        if key in document:
            layer.set(key, document[key])
    for name, section in document.items():
        if isinstance(section, dict):
            _check_changefeed_section(path, name, section)
    integrity = document.get("integrity")
    if isinstance(integrity, dict):
        for key in ("integrity-check-level", "corruption-handle-level"):
            if key in integrity:
                layer.set(key, integrity[key])
    filters = document.get("filter")
    if isinstance(filters, dict):
        if "rules" in filters:
            layer.set("filter-rules", filters["rules"])
        if "event-filters" in filters:
            layer.set("event-filters", filters["event-filters"])
    layer.ignored += [
        f"config file {path} [{name}]"
        if isinstance(document[name], dict)
        else f"config file {path} key '{name}'"
        for name in document
        if name not in ("sink", "case-sensitive", "force-replicate", "filter", "integrity")
    ]
    sink = document.get("sink", {})
    if not isinstance(sink, dict):
        raise ConfigError(
            f"config file {path}: [sink] must be a table", option="config", value=path
        )
    for key, value in sink.items():
        key = key.lower()
        if key == "kafka-config" and isinstance(value, dict):
            for sub, sub_value in value.items():
                sub = sub.lower()
                if sub in ("codec-config", "large-message-handle") and isinstance(sub_value, dict):
                    for name, item in sub_value.items():
                        if (sub, name.lower()) in _URI_ONLY:
                            layer.ignored.append(
                                f"config file {path} [sink.kafka-config.{sub}] key "
                                f"'{name}' (TiCDC takes it from the sink URI only)"
                            )
                        else:
                            layer.set(name.lower(), item)
                else:
                    layer.set(sub, sub_value)
        elif key == "kafka" and isinstance(value, dict):
            for name, item in _flatten(value, "kafka"):
                layer.set(name.lower(), item)
        elif key in _sink_section_options() and isinstance(value, dict):
            # [sink.debezium] output-old-value, as the options' TiCDC names say
            options = _sink_section_options()[key]
            for name, item in value.items():
                layer.set(options.get(name.lower(), f"{key}-{name.lower()}"), item)
        elif key == "dispatchers":
            for name, item in _dispatcher_options(value, path).items():
                layer.set(name, item)
        else:
            layer.set(key, value)
    return layer


# Codec keys TiCDC declares in its changefeed file but never applies: pingcap/ticdc
# v26.3 `pkg/sink/codec/common/config.go` mergeConfig copies no `OutputRowKey` from the
# file's CodecConfig (pkg/config/sink.go), so only the sink URI's output-row-key counts.
_URI_ONLY = frozenset({("codec-config", "output-row-key")})


def _check_changefeed_section(path: str, name: str, section: Mapping[str, Any]) -> None:
    """A changefeed section other than [sink] means nothing to the sink, except the keys
    that change what TiCDC writes ([filter], [integrity]): those are refused unless they
    hold TiCDC's default."""
    for key, value in section.items():
        full = f"[{name}] {key}"
        if ticdc_setting(full) is None:
            continue
        refused = _refused(full, value, f"config file {path} [{name}] key '{key}'")
        if refused is not None:
            raise refused


def _flatten(table: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Any]]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}.{key}")
        else:
            yield f"{prefix}.{key}", value


def _dispatcher_options(rules: Any, path: str) -> dict[str, Any]:
    """`[sink] dispatchers`: a single catch-all rule (`*.*`) becomes the topic / partition
    options; several rules stay a list for `dispatchers` (matched per table)."""
    if not rules:
        return {}
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise ConfigError(
            f"config file {path} [sink] dispatchers must be a list of tables "
            "({matcher = [...], topic = ..., partition = ...})",
            option="dispatchers",
        )
    for raw in rules:
        problem = _rule_problem(raw)
        if problem is not None:
            raise ConfigError(
                f"config file {path} [sink] dispatchers {problem}", option="dispatchers"
            )
    rule = rules[0]
    catch_all = [str(m).strip() for m in rule.get("matcher", [])] == ["*.*"]
    if len(rules) > 1 or not catch_all or any(rule.get(key) for key in _ROUTING_KEYS):
        return {"dispatchers": rules}
    out: dict[str, Any] = {}
    if rule.get("topic"):
        out["topic"] = rule["topic"]
    partition = rule.get("partition") or rule.get("dispatcher")
    if partition:
        out["partition"] = partition
    if rule.get("index"):
        out["index"] = rule["index"]
    if rule.get("columns"):
        out["partition-columns"] = rule["columns"]
    return out


# -- building -------------------------------------------------------------------------------


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
    _split_registry_credentials(merged)
    translated = _translate_ticdc_kafka(merged)
    client = {**translated, **{k: _setting(v) for k, v in client.items()}}
    _check_acks(client)
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


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_DURATION_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}


def _duration_ms(option: str, value: Any) -> str:
    """A Go `time.ParseDuration` text ("10s", "1m30s", "500ms") in whole milliseconds."""
    text = str(value).strip()
    if not text or _DURATION.sub("", text) != "":
        raise _invalid(option, value, "use a Go duration such as 10s, 500ms or 1m30s")
    total = sum(float(n) * _DURATION_MS[u] for n, u in _DURATION.findall(text))
    if total < 1:
        raise _invalid(option, value, "use a duration of at least 1ms")
    return str(int(total))


_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
_COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")


def _translate_ticdc_kafka(merged: Mapping[str, Any]) -> dict[str, str]:
    """TiCDC's Kafka parameters (tiflow pkg/sink/kafka/options.go) as librdkafka settings."""
    p = {k: merged[k] for k in _TICDC_KAFKA if k in merged}
    out: dict[str, str] = {}
    if "kafka-client-id" in p:
        client_id = str(p["kafka-client-id"])
        if not re.fullmatch(r"[A-Za-z0-9._-]+", client_id):  # tiflow validClientID
            raise _invalid("kafka-client-id", client_id, "use only A-Z a-z 0-9 . _ -")
        out["client.id"] = client_id
    if "compression" in p:
        codec = str(p["compression"]).strip().lower()
        if codec not in _COMPRESSIONS:
            raise _invalid(
                "compression", p["compression"], f"use one of {', '.join(_COMPRESSIONS)}"
            )
        out["compression.type"] = codec
    if "required-acks" in p:
        acks = {"-1": "all", "0": "0", "1": "1"}.get(str(p["required-acks"]).strip())
        if acks is None:
            raise _invalid("required-acks", p["required-acks"], "use -1 (all), 0 or 1")
        out["acks"] = acks
    if "dial-timeout" in p:
        out["socket.connection.setup.timeout.ms"] = _duration_ms("dial-timeout", p["dial-timeout"])
    socket = [int(_duration_ms(k, p[k])) for k in ("read-timeout", "write-timeout") if k in p]
    if socket:
        out["socket.timeout.ms"] = str(max(socket))
    if "max-retry" in p:
        given_acks = {
            k: merged[f"kafka.{k}"]
            for k in ("acks", "request.required.acks")
            if f"kafka.{k}" in merged
        }
        out["message.send.max.retries"] = _max_retry(
            p["max-retry"], merged, acks_all({**out, **given_acks})
        )

    sasl = False
    if p.get("sasl-user"):
        out["sasl.username"] = str(p["sasl-user"])
        sasl = True
    if p.get("sasl-password"):
        out["sasl.password"] = str(p["sasl-password"])
        sasl = True
    if p.get("sasl-mechanism"):
        mechanism = str(p["sasl-mechanism"]).strip().upper()
        if mechanism not in _MECHANISMS:
            raise _invalid(
                "sasl-mechanism", p["sasl-mechanism"], f"use one of {', '.join(_MECHANISMS)}"
            )
        out["sasl.mechanism"] = mechanism
        sasl = True
    if p.get("sasl-gssapi-auth-type"):
        if str(p["sasl-gssapi-auth-type"]).strip().lower() != "keytab":
            raise _invalid(
                "sasl-gssapi-auth-type",
                p["sasl-gssapi-auth-type"],
                "use keytab (librdkafka logs in with a keytab, not a password)",
            )
    for option, setting in (
        ("sasl-gssapi-keytab-path", "sasl.kerberos.keytab"),
        ("sasl-gssapi-service-name", "sasl.kerberos.service.name"),
    ):
        if p.get(option):
            out[setting] = str(p[option])
    if p.get("sasl-gssapi-user"):
        realm = p.get("sasl-gssapi-realm")
        user = str(p["sasl-gssapi-user"])
        out["sasl.kerberos.principal"] = f"{user}@{realm}" if realm else user
    if p.get("sasl-oauth-client-id"):
        out["sasl.oauthbearer.method"] = "oidc"
        out["sasl.oauthbearer.client.id"] = str(p["sasl-oauth-client-id"])
        sasl = True
    if p.get("sasl-oauth-client-secret"):
        try:
            # tiflow applySASL: the secret is given base64-encoded.
            secret = base64.b64decode(str(p["sasl-oauth-client-secret"]), validate=True).decode()
        except ValueError:
            raise _invalid(
                "sasl-oauth-client-secret", "", "give the client secret base64-encoded, as TiCDC"
            ) from None
        out["sasl.oauthbearer.client.secret"] = secret
    if p.get("sasl-oauth-token-url"):
        out["sasl.oauthbearer.token.endpoint.url"] = str(p["sasl-oauth-token-url"])
    if p.get("sasl-oauth-scopes"):
        scopes = p["sasl-oauth-scopes"]
        scopes = scopes.split(",") if isinstance(scopes, str) else scopes
        out["sasl.oauthbearer.scope"] = " ".join(str(s).strip() for s in scopes if str(s).strip())
    if p.get("sasl-oauth-grant-type"):
        if str(p["sasl-oauth-grant-type"]).strip() != "client_credentials":
            raise _invalid(
                "sasl-oauth-grant-type", p["sasl-oauth-grant-type"], "use client_credentials"
            )
    if sasl and "sasl.mechanism" not in out:
        out["sasl.mechanism"] = "OAUTHBEARER" if "sasl.oauthbearer.client.id" in out else "PLAIN"

    # tiflow applyTLS: ca, cert and key go together; a ca turns TLS on unless enable-tls
    # says false, which is then an error.
    for option, setting in (
        ("ca", "ssl.ca.location"),
        ("cert", "ssl.certificate.location"),
        ("key", "ssl.key.location"),
    ):
        if p.get(option):
            out[setting] = str(p[option])
    if "key" in p and not p.get("ca") and not _looks_like_path(p["key"]):
        # `.option("key", "id")`: the message key, not TiCDC's TLS key file.
        raise _invalid(
            "key",
            p["key"],
            "to choose the Kafka message key, name the key columns in 'primary-key' (the "
            "handle key is the message key; partition=index-value partitions by it); "
            "'key' is the TLS client key file of a TiCDC sink-uri, given with ca and cert",
        )
    if ("cert" in p or "key" in p) and not p.get("ca"):
        raise _invalid(
            "cert" if "cert" in p else "key",
            p.get("cert") or p.get("key"),
            "give ca, cert and key together (TiCDC rule)",
        )
    tls = _bool_param("enable-tls", p["enable-tls"]) if "enable-tls" in p else None
    if tls is False and p.get("ca"):
        raise _invalid("enable-tls", p["enable-tls"], "use true: ca/cert/key are given")
    tls = bool(tls) or bool(p.get("ca"))
    if (
        tls
        and "insecure-skip-verify" in p
        and _bool_param("insecure-skip-verify", p["insecure-skip-verify"])
    ):
        out["enable.ssl.certificate.verification"] = "false"
        out["ssl.endpoint.identification.algorithm"] = "none"
    if sasl or tls:
        out["security.protocol"] = ("SASL_" if sasl else "") + ("SSL" if tls else "PLAINTEXT")
    return out


# tiflow pkg/sink/kafka/options.go defaultProducerMaxRetry: what a negative max-retry keeps.
_TICDC_MAX_RETRY = 5


def acks_all(settings: Mapping[str, Any]) -> bool:
    """Whether librdkafka's `acks` (alias `request.required.acks`; its default is all) in
    `settings` waits for all in-sync replicas."""
    acks = settings.get("acks", settings.get("request.required.acks", "all"))
    return str(acks).strip().lower() in ("all", "-1")


def _check_acks(client: Mapping[str, Any]) -> None:
    """The idempotent producer needs acks=all (librdkafka refuses it otherwise): asking
    for both idempotence and fewer acks names the two settings.

    Raises:
        ConfigError: kafka.enable.idempotence is true and acks is 0 or 1.
    """
    idempotent = str(client.get("enable.idempotence", "")).strip().lower()
    if acks_all(client) or idempotent in ("", *_FALSE):
        return
    name = "acks" if "acks" in client else "request.required.acks"
    value = client[name]
    raise ConfigError(
        f"option 'kafka.{name}' is {value!r} and kafka.enable.idempotence is true; the "
        "idempotent producer needs acks=all: set kafka.acks=all (sink-uri required-acks=-1), "
        "or kafka.enable.idempotence=false to write with fewer acknowledgements",
        option=f"kafka.{name}",
        value=str(value),
        allowed=("all", "-1"),
    )


def _max_retry(value: Any, merged: Mapping[str, Any], all_acks: bool) -> str:
    """`max-retry`, sarama's Producer.Retry.Max, as librdkafka's message.send.max.retries
    (tiflow ignores a negative one, keeping its default of 5). The idempotent producer
    (the sink's default with acks=all) needs at least one retry: librdkafka refuses 0
    then."""
    try:
        retries = _int(-_INT32_MAX - 1, _INT32_MAX)(value)
    except _Invalid as exc:
        raise _invalid("max-retry", value, exc.allowed) from None
    assert retries is not None
    if retries < 0:
        retries = _TICDC_MAX_RETRY
    default = "true" if all_acks else "false"
    idempotent = str(merged.get("kafka.enable.idempotence", default)).strip().lower()
    if retries == 0 and idempotent not in _FALSE:
        raise _invalid(
            "max-retry",
            value,
            "use 1 or more: the sink's producer is idempotent (kafka.enable.idempotence), "
            "which needs retries; or set kafka.enable.idempotence=false",
        )
    return str(retries)


def _looks_like_path(value: Any) -> bool:
    text = str(value).strip()
    return "/" in text or "\\" in text or text.endswith((".pem", ".key", ".crt", ".der"))


def _bool_param(option: str, value: Any) -> bool:
    try:
        return _bool(value)
    except _Invalid as exc:
        raise _invalid(option, value, exc.allowed, exc.choices) from None

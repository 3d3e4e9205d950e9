"""The `config` option: a TiCDC changefeed TOML file read into one layer of settings.

`[sink]` keys that are options or TiCDC settings, `[sink.kafka-config]` (the TiCDC Kafka
parameters), `[sink.kafka-config.codec-config]`, `[sink.kafka-config.large-message-handle]`,
`[sink.<section>] <key>` as the options' TiCDC names say (`[sink.debezium]
output-old-value`), `dispatchers` (a single `*.*` rule becomes topic / partition / index /
partition-columns; several rules are matched per table with TiDB's table-filter syntax,
the first match winning) and the top-level `case-sensitive` and `force-replicate`.
`[sink] kafka.<name>` keys (TOML dotted keys) are `kafka.*` options; `[filter] rules` and
`[filter] event-filters` are the options `filter-rules` and `event-filters`; `[integrity]
integrity-check-level` and `corruption-handle-level` the options of those names. Other
sections of the file are TiCDC's, not the sink's, and are ignored, except the keys of
[filter] that change what TiCDC writes and are not built (refused unless at TiCDC's
default).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from ticdc_sink.codec.config import CodecConfig
from ticdc_sink.config.layers import Layer
from ticdc_sink.config.parts import (
    ROUTING_KEYS,
    InputConfig,
    KafkaConfig,
    RegistryConfig,
    RoutingConfig,
    rule_problem,
)
from ticdc_sink.config.ticdc import refusal
from ticdc_sink.errors import ConfigError
from ticdc_sink.ticdc_settings import setting as ticdc_setting

__all__ = ["load_changefeed"]


@functools.cache
def _sink_section_options() -> dict[str, dict[str, str]]:
    # `[sink.<section>] <key>` TiCDC names of the options (`ticdc=`), as section -> key ->
    # option: [sink.debezium] output-old-value is debezium-output-old-value.
    found: dict[str, dict[str, str]] = {}
    # SinkConfig's own options are top-level and [filter] keys, read by name below.
    for part in (KafkaConfig, RoutingConfig, CodecConfig, InputConfig, RegistryConfig):
        for field in attrs.fields(part):
            for name in field.metadata.get("ticdc", ()):
                match = re.fullmatch(r"\[sink\.([a-z-]+)\] ([a-z-]+)", name)
                if match:
                    found.setdefault(match[1], {})[match[2]] = field.metadata["option"]
    return found


def load_changefeed(path: str) -> Layer:
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
    layer = Layer(f"config file {path} [sink] key")
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
        refused = refusal(full, value, f"config file {path} [{name}] key '{key}'")
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
        problem = rule_problem(raw)
        if problem is not None:
            raise ConfigError(
                f"config file {path} [sink] dispatchers {problem}", option="dispatchers"
            )
    rule = rules[0]
    catch_all = [str(m).strip() for m in rule.get("matcher", [])] == ["*.*"]
    if len(rules) > 1 or not catch_all or any(rule.get(key) for key in ROUTING_KEYS):
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

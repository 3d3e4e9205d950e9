"""A layer of raw settings and where it came from (an option, a `sink-uri` parameter, a
key of the changefeed file), for error messages that name the source; the options that
carry other layers (`LAYER_OPTIONS`: `sink-uri`, `config`); and the credentials of a
`schema-registry` URL moved to their own options as the layers merge.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from ticdc_sink.config.sink_uri import parse_sink_uri
from ticdc_sink.errors import ConfigError
from ticdc_sink.options import spell_option
from ticdc_sink.redaction import redact_url

__all__ = [
    "LAYER_NAMES",
    "LAYER_OPTIONS",
    "Layer",
    "source_label",
    "split_registry_credentials",
    "uri_layer",
]


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


#: Their names.
LAYER_NAMES = frozenset(LAYER_OPTIONS)


def source_label(key: str, source: str) -> str:
    """How an error names `key` from `source`: `option 'x'`, `sink-uri parameter 'x'`, ..."""
    if source == "option":
        return f"option '{spell_option(key)}'"
    return f"{source} '{key}'"


class Layer:
    """One layer of raw settings and where it came from (for error messages)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.values: dict[str, Any] = {}
        self.ignored: list[str] = []

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value


def split_registry_credentials(merged: dict[str, Any]) -> None:
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


def uri_layer(uri: str) -> Layer:
    """The layer of the `sink-uri` option's parameters (`parse_sink_uri`)."""
    layer = Layer("sink-uri parameter")
    for key, value in parse_sink_uri(uri).items():
        layer.set(key, value)
    return layer

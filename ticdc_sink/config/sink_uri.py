"""The `sink-uri` option: TiCDC's Kafka sink URI read into option names (the hosts are
`kafka.bootstrap.servers`, the path `topic`, each query parameter its own name), and the
URI as messages may show it (credentials and secret parameters masked).
"""

from __future__ import annotations

import urllib.parse

from ticdc_sink.errors import ConfigError
from ticdc_sink.redaction import MASK, is_secret, redact_url

__all__ = ["parse_sink_uri", "redact_sink_uri"]


def redact_sink_uri(uri: str) -> str:
    """The URI with user info and secret parameter values masked, for messages."""
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return "(unparseable sink-uri)"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if "@" in parts.netloc:
        netloc = f"{MASK}@{netloc}"
    query = "&".join(
        f"{k}={MASK if is_secret(k) else redact_url(v) if k == 'schema-registry' else v}"
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
    shown = redact_sink_uri(uri)
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

"""TiCDC's other Kafka-sink settings as the sink takes them (declared, each with its fate,
in `ticdc_sink.ticdc_settings`): the Kafka parameters (tiflow `pkg/sink/kafka/options.go`)
translated into librdkafka settings (`ticdc_kafka_settings`; a `kafka.*` option for the
same setting wins), the names that mean nothing here (`IGNORED`: reported as ignored),
and those that change what TiCDC writes and have no equivalent here (`REFUSED`: errors
that say why, unless they hold TiCDC's default, as a file TiCDC exported does).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from ticdc_sink.config.parts import acks_all
from ticdc_sink.errors import ConfigError
from ticdc_sink.options import FALSE_TEXTS, INT32_MAX, Invalid, int_parser, option_error, parse_bool
from ticdc_sink.ticdc_settings import SETTINGS as TICDC_SETTINGS
from ticdc_sink.ticdc_settings import Fate
from ticdc_sink.ticdc_settings import setting as ticdc_setting

__all__ = ["IGNORED", "REFUSED", "TICDC_KAFKA", "check_acks", "refusal", "ticdc_kafka_settings"]


def _named(fate: Fate) -> frozenset[str]:
    return frozenset(s.name for s in TICDC_SETTINGS if s.fate is fate)


# TiCDC sink-uri / [sink.kafka-config] parameters translated to librdkafka settings.
TICDC_KAFKA = _named(Fate.LIBRDKAFKA)
# TiCDC names that do not change what this sink writes.
IGNORED = _named(Fate.IGNORED)
# TiCDC names this sink refuses unless they hold TiCDC's default (a changefeed file
# exported by TiCDC lists them with it).
REFUSED = _named(Fate.REFUSED) | _named(Fate.NOT_YET)


def _is_default(value: Any, default: Any) -> bool:
    if value is None or value == "" or value == [] or value == {} or value == default:
        return True
    if default is None and isinstance(value, dict):  # a section of empty values
        return all(_is_default(v, None) for v in value.values())
    if isinstance(default, bool):
        try:
            return parse_bool(value) is default
        except Invalid:
            return False
    if isinstance(default, dict):
        return isinstance(value, dict) and all(
            k in default and _is_default(v, default[k]) for k, v in value.items()
        )
    return isinstance(default, str) and str(value).strip().lower() == default


def refusal(name: str, value: Any, label: str) -> ConfigError | None:
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


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_DURATION_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}


def _duration_ms(option: str, value: Any) -> str:
    """A Go `time.ParseDuration` text ("10s", "1m30s", "500ms") in whole milliseconds."""
    text = str(value).strip()
    if not text or _DURATION.sub("", text) != "":
        raise option_error(option, value, "use a Go duration such as 10s, 500ms or 1m30s")
    total = sum(float(n) * _DURATION_MS[u] for n, u in _DURATION.findall(text))
    if total < 1:
        raise option_error(option, value, "use a duration of at least 1ms")
    return str(int(total))


_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
_COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")


def ticdc_kafka_settings(merged: Mapping[str, Any]) -> dict[str, str]:
    """TiCDC's Kafka parameters among `merged` (tiflow pkg/sink/kafka/options.go) as
    librdkafka settings, as the writer translates them.

    Raises:
        ConfigError: a parameter's value is not one TiCDC takes.
    """
    p = {k: merged[k] for k in TICDC_KAFKA if k in merged}
    out: dict[str, str] = {}
    if "kafka-client-id" in p:
        client_id = str(p["kafka-client-id"])
        if not re.fullmatch(r"[A-Za-z0-9._-]+", client_id):  # tiflow validClientID
            raise option_error("kafka-client-id", client_id, "use only A-Z a-z 0-9 . _ -")
        out["client.id"] = client_id
    if "compression" in p:
        codec = str(p["compression"]).strip().lower()
        if codec not in _COMPRESSIONS:
            raise option_error(
                "compression", p["compression"], f"use one of {', '.join(_COMPRESSIONS)}"
            )
        out["compression.type"] = codec
    if "required-acks" in p:
        acks = {"-1": "all", "0": "0", "1": "1"}.get(str(p["required-acks"]).strip())
        if acks is None:
            raise option_error("required-acks", p["required-acks"], "use -1 (all), 0 or 1")
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
            raise option_error(
                "sasl-mechanism", p["sasl-mechanism"], f"use one of {', '.join(_MECHANISMS)}"
            )
        out["sasl.mechanism"] = mechanism
        sasl = True
    if p.get("sasl-gssapi-auth-type"):
        if str(p["sasl-gssapi-auth-type"]).strip().lower() != "keytab":
            raise option_error(
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
            raise option_error(
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
            raise option_error(
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
        raise option_error(
            "key",
            p["key"],
            "to choose the Kafka message key, name the key columns in 'primary-key' (the "
            "handle key is the message key; partition=index-value partitions by it); "
            "'key' is the TLS client key file of a TiCDC sink-uri, given with ca and cert",
        )
    if ("cert" in p or "key" in p) and not p.get("ca"):
        raise option_error(
            "cert" if "cert" in p else "key",
            p.get("cert") or p.get("key"),
            "give ca, cert and key together (TiCDC rule)",
        )
    tls = _bool_param("enable-tls", p["enable-tls"]) if "enable-tls" in p else None
    if tls is False and p.get("ca"):
        raise option_error("enable-tls", p["enable-tls"], "use true: ca/cert/key are given")
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


def check_acks(client: Mapping[str, Any]) -> None:
    """The idempotent producer needs acks=all (librdkafka refuses it otherwise): asking
    for both idempotence and fewer acks names the two settings.

    Raises:
        ConfigError: kafka.enable.idempotence is true and acks is 0 or 1.
    """
    idempotent = str(client.get("enable.idempotence", "")).strip().lower()
    if acks_all(client) or idempotent in ("", *FALSE_TEXTS):
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
        retries = int_parser(-INT32_MAX - 1, INT32_MAX)(value)
    except Invalid as exc:
        raise option_error("max-retry", value, exc.allowed) from None
    assert retries is not None
    if retries < 0:
        retries = _TICDC_MAX_RETRY
    default = "true" if all_acks else "false"
    idempotent = str(merged.get("kafka.enable.idempotence", default)).strip().lower()
    if retries == 0 and idempotent not in FALSE_TEXTS:
        raise option_error(
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
        return parse_bool(value)
    except Invalid as exc:
        raise option_error(option, value, exc.allowed, exc.choices) from None

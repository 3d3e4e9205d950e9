"""TiCDC's Kafka-sink settings that are not options of this sink, and what the sink does
with each: declared once, here.

TiCDC v8.5 reads them from the sink URI and the changefeed file (tiflow
`pkg/config/sink.go`, `pkg/config/large_message.go`, `pkg/sink/kafka/options.go`,
`pkg/sink/codec/common/config.go`; newer keys from pingcap/ticdc `pkg/config/sink.go`).
The settings that are options here (same name, or as an option's `ticdc` names) are
declared with the options, in `ticdc_sink.config`. Every other one is one of:

- `LIBRDKAFKA`: honoured, as the librdkafka setting(s) `note` names, or checked where
  librdkafka has one way only (`config._translate_ticdc_kafka` does it);
- `IGNORED`: accepted and reported as ignored: it means nothing here (`note` says why);
- `REFUSED`: an error naming it (`note`: why there is no equivalent), unless it holds
  TiCDC's `default`, as a changefeed file TiCDC exported lists it;
- `NOT_YET`: changes TiCDC's output and is not built yet: refused like `REFUSED`.

Names are as TiCDC spells them: a sink-URI parameter or `[sink]` / `[sink.kafka-config]`
/ codec-config / large-message-handle key by its own name; a key of another changefeed
section as `[section] key`; a dispatcher rule key as `dispatchers.key`. The TiCDC
settings page (docs/reference/ticdc-settings.md) is rendered from this list and the
option declarations (tests/support/option_docs.py). This module knows nothing else of the sink.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

__all__ = ["SETTINGS", "Fate", "TiCDCSetting", "setting"]


class Fate(enum.Enum):
    """What the sink does with a TiCDC setting."""

    LIBRDKAFKA = "librdkafka"
    IGNORED = "ignored"
    REFUSED = "refused"
    NOT_YET = "not yet built"


@attrs.frozen
class TiCDCSetting:
    """One TiCDC setting: its name, what the sink does with it and why (`note`), and
    the value TiCDC defaults to (accepted when refused; None: any empty value)."""

    name: str
    fate: Fate
    note: str
    default: Any = None


_L, _I, _R, _N = Fate.LIBRDKAFKA, Fate.IGNORED, Fate.REFUSED, Fate.NOT_YET
_STORAGE = "a setting of TiCDC's storage sink"

SETTINGS: tuple[TiCDCSetting, ...] = (
    # pkg/sink/kafka/options.go urlConfig and [sink.kafka-config]
    TiCDCSetting("kafka-client-id", _L, "librdkafka `client.id`, of `[A-Za-z0-9._-]+`"),
    TiCDCSetting("compression", _L, "librdkafka `compression.type`: none, gzip, snappy, lz4, zstd"),
    TiCDCSetting(
        "required-acks",
        _L,
        "librdkafka `acks`: -1 (all), 0, 1; 0 and 1 turn the idempotent producer off (TiCDC's "
        "is not idempotent)",
    ),
    TiCDCSetting(
        "dial-timeout", _L, "librdkafka `socket.connection.setup.timeout.ms` (a Go duration)"
    ),
    TiCDCSetting(
        "read-timeout", _L, "librdkafka `socket.timeout.ms`: the larger of read and write"
    ),
    TiCDCSetting(
        "write-timeout", _L, "librdkafka `socket.timeout.ms`: the larger of read and write"
    ),
    TiCDCSetting(
        "max-retry",
        _L,
        "librdkafka `message.send.max.retries` (sarama's Producer.Retry.Max); negative: "
        "TiCDC's 5; at least 1 while the producer is idempotent",
    ),
    TiCDCSetting(
        "sasl-user", _L, "librdkafka `sasl.username`; turns SASL on (PLAIN unless a mechanism)"
    ),
    TiCDCSetting("sasl-password", _L, "librdkafka `sasl.password` (a secret)"),
    TiCDCSetting(
        "sasl-mechanism",
        _L,
        "librdkafka `sasl.mechanism`: plain, scram-sha-256/512, gssapi, oauthbearer",
    ),
    TiCDCSetting(
        "sasl-gssapi-auth-type",
        _L,
        "checked: `keytab` only, as librdkafka logs in with a keytab; `user` is refused",
    ),
    TiCDCSetting("sasl-gssapi-keytab-path", _L, "librdkafka `sasl.kerberos.keytab`"),
    TiCDCSetting("sasl-gssapi-service-name", _L, "librdkafka `sasl.kerberos.service.name`"),
    TiCDCSetting("sasl-gssapi-user", _L, "librdkafka `sasl.kerberos.principal` (with the realm)"),
    TiCDCSetting("sasl-gssapi-realm", _L, "librdkafka `sasl.kerberos.principal`: its realm"),
    TiCDCSetting(
        "sasl-gssapi-password",
        _R,
        "librdkafka logs in to Kerberos with a keytab, never a password; give "
        "sasl-gssapi-keytab-path (ktutil writes a keytab)",
        "",
    ),
    TiCDCSetting(
        "sasl-gssapi-kerberos-config-path",
        _R,
        "librdkafka's Kerberos reads krb5.conf from the KRB5_CONFIG environment variable "
        "of each executor, not from a setting; set spark.executorEnv.KRB5_CONFIG",
        "",
    ),
    TiCDCSetting(
        "sasl-gssapi-disable-pafxfast",
        _R,
        "a switch of Go's gokrb5; librdkafka uses the system's Kerberos, where FAST is "
        "configured in krb5.conf",
        False,
    ),
    TiCDCSetting(
        "sasl-oauth-client-id",
        _L,
        "librdkafka `sasl.oauthbearer.client.id`, `sasl.oauthbearer.method=oidc`",
    ),
    TiCDCSetting(
        "sasl-oauth-client-secret",
        _L,
        "librdkafka `sasl.oauthbearer.client.secret` (base64, as TiCDC)",
    ),
    TiCDCSetting("sasl-oauth-token-url", _L, "librdkafka `sasl.oauthbearer.token.endpoint.url`"),
    TiCDCSetting("sasl-oauth-scopes", _L, "librdkafka `sasl.oauthbearer.scope`"),
    TiCDCSetting(
        "sasl-oauth-grant-type", _L, "checked: `client_credentials` only, librdkafka's grant"
    ),
    TiCDCSetting(
        "sasl-oauth-audience",
        _R,
        "librdkafka's OIDC token request sends no audience parameter",
        "",
    ),
    TiCDCSetting("enable-tls", _L, "librdkafka `security.protocol` SSL (SASL_SSL with SASL)"),
    TiCDCSetting("ca", _L, "librdkafka `ssl.ca.location`; turns TLS on"),
    TiCDCSetting("cert", _L, "librdkafka `ssl.certificate.location` (with ca and key)"),
    TiCDCSetting("key", _L, "librdkafka `ssl.key.location` (with ca and cert)"),
    TiCDCSetting(
        "insecure-skip-verify",
        _L,
        "librdkafka `enable.ssl.certificate.verification=false`, "
        "`ssl.endpoint.identification.algorithm=none`",
    ),
    TiCDCSetting("kafka-version", _I, "librdkafka negotiates the protocol version with brokers"),
    TiCDCSetting(
        "glue-schema-registry-config",
        _R,
        "AWS Glue Schema Registry framing is not built; use a Confluent registry",
    ),
    # pkg/sink/codec/common/config.go and [sink.kafka-config.codec-config]
    TiCDCSetting(
        "avro-enable-watermark",
        _R,
        "a TiCDC testing mode: Confluent consumers cannot read its watermark messages",
        False,
    ),
    # pkg/config/sink.go [sink]
    TiCDCSetting(
        "transaction-atomicity",
        _R,
        "TiCDC's rule for Kafka: table level atomicity is not supported by kafka scheme; use none",
        "none",
    ),
    TiCDCSetting(
        "send-all-bootstrap-at-start",
        _R,
        "TiCDC sends every replicated table's BOOTSTRAP when a changefeed starts; this sink "
        "knows a table from its rows and sends its BOOTSTRAP before them "
        "(send-bootstrap-*)",
        False,
    ),
    TiCDCSetting("encoder-concurrency", _I, "Spark's tasks encode in parallel"),
    TiCDCSetting("enable-kafka-sink-v2", _I, "TiCDC's choice of Go Kafka client"),
    TiCDCSetting("advance-timeout-in-sec", _I, "TiCDC's internal transaction batching"),
    TiCDCSetting("safe-mode", _I, "a MySQL sink setting"),
    TiCDCSetting("terminator", _I, _STORAGE),
    TiCDCSetting("date-separator", _I, _STORAGE),
    TiCDCSetting("enable-partition-separator", _I, _STORAGE),
    TiCDCSetting("file-index-digit", _I, _STORAGE),
    TiCDCSetting("csv", _I, _STORAGE),
    TiCDCSetting("cloud-storage-config", _I, _STORAGE),
    TiCDCSetting("mysql-config", _I, "TiCDC's MySQL sink section"),
    TiCDCSetting("pulsar-config", _I, "TiCDC's Pulsar sink section"),
    # changefeed sections other than [sink] (pkg/config/filter.go)
    TiCDCSetting(
        "[filter] ignore-txn-start-ts",
        _R,
        "rows here carry no transaction start ts; filter the DataFrame instead",
        [],
    ),
)


def setting(name: str) -> TiCDCSetting | None:
    """The declaration of TiCDC setting `name`, or None."""
    return _BY_NAME.get(name)


_BY_NAME = {s.name: s for s in SETTINGS}

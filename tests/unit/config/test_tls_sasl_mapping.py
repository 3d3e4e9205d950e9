"""TLS and SASL settings reach the clients exactly (issue 6 item 7): TiCDC's sink-uri
parameters (and the same keys in a changefeed file) and `kafka.*` options, through
`KafkaConfig.producer_config()`, into what `KafkaProducer` hands librdkafka (producer and
admin client); the schema-registry TLS and auth options into `SchemaRegistryClient`'s
settings and a real client built from them.

tests/unit/config/test_config.py checks that each TiCDC parameter lands in `client_config`;
this file checks the whole security part of the final librdkafka config, per combination.
"""

from __future__ import annotations

import base64
import ssl
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.producer import KafkaProducer
from ticdc_sink.registry import ConfluentSchemaRegistry

SECURITY_PREFIXES = ("security.", "ssl.", "sasl.", "enable.ssl.")


def security_part(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k.startswith(SECURITY_PREFIXES)}


class Captured:
    """Factories standing in for confluent_kafka.Producer and AdminClient."""

    def __init__(self) -> None:
        self.producer: dict[str, Any] | None = None

    def __call__(self, config: dict[str, Any]) -> Any:
        self.producer = dict(config)
        return self

    def flush(self, timeout: float = 0) -> int:
        return 0

    def poll(self, timeout: float = 0) -> int:
        return 0

    def __len__(self) -> int:
        return 0


def librdkafka_configs(options: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the producer and the admin client would be given for these options."""
    config = SinkConfig.from_options(options)
    captured = Captured()
    producer = KafkaProducer(config.kafka, factory=captured)
    admin = dict(producer._admin_config)
    assert captured.producer is not None
    return captured.producer, admin


URI = "kafka://b1:9092,b2:9092/t"
B64 = base64.b64encode(b"oauth-secret").decode()

CASES = [
    ("kafka+ssl scheme", {"sink-uri": "kafka+ssl://b1:9093/t"}, {"security.protocol": "SSL"}),
    (
        "enable-tls only",
        {"sink-uri": f"{URI}?enable-tls=true"},
        {"security.protocol": "SSL"},
    ),
    (
        "ca turns tls on",
        {"sink-uri": f"{URI}?ca=/tls/ca.pem"},
        {"security.protocol": "SSL", "ssl.ca.location": "/tls/ca.pem"},
    ),
    (
        "mutual tls",
        {"sink-uri": f"{URI}?enable-tls=true&ca=/tls/ca.pem&cert=/tls/c.pem&key=/tls/k.pem"},
        {
            "security.protocol": "SSL",
            "ssl.ca.location": "/tls/ca.pem",
            "ssl.certificate.location": "/tls/c.pem",
            "ssl.key.location": "/tls/k.pem",
        },
    ),
    (
        "insecure-skip-verify",
        {"sink-uri": f"{URI}?enable-tls=true&insecure-skip-verify=true"},
        {
            "security.protocol": "SSL",
            "enable.ssl.certificate.verification": "false",
            "ssl.endpoint.identification.algorithm": "none",
        },
    ),
    (
        "insecure-skip-verify without tls is ignored, as in TiCDC",
        {"sink-uri": f"{URI}?insecure-skip-verify=true"},
        {},
    ),
    (
        "insecure-skip-verify=false",
        {"sink-uri": f"{URI}?ca=/tls/ca.pem&insecure-skip-verify=false"},
        {"security.protocol": "SSL", "ssl.ca.location": "/tls/ca.pem"},
    ),
    (
        "sasl plain by default",
        {"sink-uri": f"{URI}?sasl-user=u&sasl-password=p"},
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "u",
            "sasl.password": "p",
        },
    ),
    (
        "sasl scram over tls",
        {
            "sink-uri": f"{URI}?sasl-user=u&sasl-password=p&sasl-mechanism=scram-sha-256"
            "&enable-tls=true&ca=/tls/ca.pem"
        },
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "u",
            "sasl.password": "p",
            "ssl.ca.location": "/tls/ca.pem",
        },
    ),
    (
        "gssapi with a keytab",
        {
            "sink-uri": f"{URI}?sasl-mechanism=gssapi&sasl-gssapi-auth-type=keytab"
            "&sasl-gssapi-keytab-path=/k/cdc.keytab&sasl-gssapi-service-name=kafka"
            "&sasl-gssapi-user=cdc&sasl-gssapi-realm=EXAMPLE.COM"
        },
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "GSSAPI",
            "sasl.kerberos.keytab": "/k/cdc.keytab",
            "sasl.kerberos.service.name": "kafka",
            "sasl.kerberos.principal": "cdc@EXAMPLE.COM",
        },
    ),
    (
        "oauth client credentials",
        {
            "sink-uri": f"{URI}?sasl-oauth-client-id=cid&sasl-oauth-client-secret={B64}"
            "&sasl-oauth-token-url=https%3A%2F%2Fidp%2Ftoken&sasl-oauth-scopes=a,b"
            "&sasl-oauth-grant-type=client_credentials&enable-tls=true"
        },
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.client.id": "cid",
            "sasl.oauthbearer.client.secret": "oauth-secret",
            "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
            "sasl.oauthbearer.scope": "a b",
        },
    ),
    (
        "kafka.* options alone",
        {
            "kafka.bootstrap.servers": "b1:9092",
            "topic": "t",
            "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.username": "u",
            "kafka.sasl.password": "p",
            "kafka.ssl.ca.location": "/tls/ca.pem",
            "kafka.ssl.key.password": "kp",
        },
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": "p",
            "ssl.ca.location": "/tls/ca.pem",
            "ssl.key.password": "kp",
        },
    ),
    (
        "kafka.* options win over sink-uri parameters",
        {
            "sink-uri": f"{URI}?sasl-user=u&sasl-password=p&ca=/tls/ca.pem",
            "kafka.security.protocol": "SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.ssl.ca.location": "/other/ca.pem",
        },
        {
            "security.protocol": "SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": "p",
            "ssl.ca.location": "/other/ca.pem",
        },
    ),
]


@pytest.mark.parametrize(("options", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_security_settings_reach_the_producer_and_the_admin_client(options, expected) -> None:
    producer, admin = librdkafka_configs(options)
    assert security_part(producer) == expected
    # Topic creation talks to the same brokers: the admin client gets the same settings.
    assert security_part(admin) == expected
    config = SinkConfig.from_options(options)
    assert security_part(config.kafka.producer_config()) == expected


def test_the_changefeed_file_maps_like_the_sink_uri(tmp_path: Path) -> None:
    path = tmp_path / "changefeed.toml"
    path.write_text(
        "[sink.kafka-config]\n"
        'sasl-user = "u"\nsasl-password = "p"\nsasl-mechanism = "SCRAM-SHA-512"\n'
        'enable-tls = true\nca = "/tls/ca.pem"\ncert = "/tls/c.pem"\nkey = "/tls/k.pem"\n'
        "insecure-skip-verify = true\n"
    )
    from_file, _ = librdkafka_configs(
        {"config": str(path), "kafka.bootstrap.servers": "b1:9092", "topic": "t"}
    )
    from_uri, _ = librdkafka_configs(
        {
            "sink-uri": "kafka://b1:9092/t?sasl-user=u&sasl-password=p&sasl-mechanism="
            "SCRAM-SHA-512&enable-tls=true&ca=/tls/ca.pem&cert=/tls/c.pem&key=/tls/k.pem"
            "&insecure-skip-verify=true"
        }
    )
    assert security_part(from_file) == security_part(from_uri)
    assert from_file["security.protocol"] == "SASL_SSL"
    assert from_file["enable.ssl.certificate.verification"] == "false"


def test_the_producer_keeps_its_delivery_settings_next_to_security() -> None:
    producer, admin = librdkafka_configs({"sink-uri": f"{URI}?sasl-user=u&sasl-password=p"})
    assert producer["bootstrap.servers"] == "b1:9092,b2:9092"
    assert (producer["enable.idempotence"], producer["acks"]) == ("true", "all")
    assert "enable.idempotence" not in admin and "acks" not in admin
    assert admin["allow.auto.create.topics"] == "false"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"sink-uri": f"{URI}?key=/tls/k.pem"}, "give ca, cert and key together"),
        ({"sink-uri": f"{URI}?ca=/tls/ca.pem&enable-tls=false"}, "option 'enable-tls'"),
        ({"sink-uri": f"{URI}?enable-tls=maybe"}, "option 'enable-tls' is 'maybe'"),
        ({"sink-uri": f"{URI}?insecure-skip-verify=yes-ish&ca=/c"}, "insecure-skip-verify"),
        ({"sink-uri": f"{URI}?sasl-mechanism=ntlm"}, "option 'sasl-mechanism' is 'ntlm'"),
        ({"sink-uri": f"{URI}?sasl-gssapi-auth-type=user"}, "use keytab"),
        ({"sink-uri": f"{URI}?sasl-oauth-grant-type=password"}, "client_credentials"),
        ({"sink-uri": f"{URI}?sasl-oauth-client-secret=%%%"}, "base64"),
    ],
)
def test_bad_security_parameters_name_the_option(options, fragment) -> None:
    with pytest.raises(ConfigError, match=fragment):
        SinkConfig.from_options(options)


# -- schema registry -------------------------------------------------------------------------

AVRO = {"kafka.bootstrap.servers": "b1:9092", "topic": "t_{schema}_{table}", "protocol": "avro"}


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A self-signed CA-capable certificate and its key (openssl), for the real client."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return {"cert": str(cert), "key": str(key)}


def test_registry_tls_and_auth_options_reach_the_client_settings() -> None:
    config = SinkConfig.from_options(
        {
            **AVRO,
            "schema-registry": "https://u%40corp:p%3Aw@registry:8081",
            "schema-registry-ca": "/tls/ca.pem",
            "schema-registry-cert": "/tls/c.pem",
            "schema-registry-key": "/tls/k.pem",
            "schema-registry-timeout-ms": "7000",
        }
    )
    assert config.registry.client_config() == {
        "url": "https://registry:8081",
        "timeout": 7,
        "basic.auth.user.info": "u@corp:p:w",
        "ssl.ca.location": "/tls/ca.pem",
        "ssl.certificate.location": "/tls/c.pem",
        "ssl.key.location": "/tls/k.pem",
    }
    plain = SinkConfig.from_options({**AVRO, "schema-registry": "http://registry:8081"})
    assert plain.registry.client_config() == {"url": "http://registry:8081", "timeout": 30}


def test_a_real_registry_client_accepts_the_tls_settings(tls_files) -> None:
    config = SinkConfig.from_options(
        {
            **AVRO,
            "schema-registry": "https://127.0.0.1:1",
            "schema-registry-user": "u",
            "schema-registry-password": "p",
            "schema-registry-ca": tls_files["cert"],
            "schema-registry-cert": tls_files["cert"],
            "schema-registry-key": tls_files["key"],
        }
    )
    registry = ConfluentSchemaRegistry(config.registry)
    client = registry._get_client()  # builds confluent_kafka's SchemaRegistryClient
    rest = client._rest_client
    assert rest.base_urls == ["https://127.0.0.1:1"]
    # The CA file is the one trusted (and only it); the client chain loaded without error.
    trusted = rest.verify.get_ca_certs()
    assert [dict(item[0] for item in c["subject"]) for c in trusted] == [
        {"commonName": "127.0.0.1"}
    ]
    assert rest.verify.verify_mode == ssl.CERT_REQUIRED
    assert rest.auth == ("u", "p")
    registry.close()


def test_a_missing_registry_tls_file_is_a_config_error_naming_the_options() -> None:
    config = SinkConfig.from_options(
        {**AVRO, "schema-registry": "https://127.0.0.1:1", "schema-registry-ca": "/no/ca.pem"}
    )
    registry = ConfluentSchemaRegistry(config.registry)
    with pytest.raises(ConfigError, match="schema-registry-ca"):
        registry._get_client()

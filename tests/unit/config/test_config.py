"""SinkConfig.from_options: layers, sink-uri, TOML, validation, redaction, the options table."""

from __future__ import annotations

import base64
import json
import pickle
import re
from pathlib import Path

import attrs
import pytest

from ticdc_sink.config import (
    CodecConfig,
    EncodingFormat,
    FrozenMap,
    InputConfig,
    LargeMessageHandleOption,
    PartitionRule,
    Protocol,
    RegistryConfig,
    RoutingConfig,
    SinkConfig,
    SubjectNameStrategy,
    layer_options,
    parse_sink_uri,
)
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import ConfigError
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.schema import Column, TableSchema
from ticdc_sink.ticdc_settings import SETTINGS as TICDC_SETTINGS
from ticdc_sink.ticdc_settings import Fate
from ticdc_sink.writer import rules as writer_rules

BASE = {"kafka.bootstrap.servers": "broker:9092", "topic": "orders"}
SECRET = "pa55-W0rd-xyzzy"


def build(**options: str) -> SinkConfig:
    return SinkConfig.from_options({**BASE, **{k.replace("_", "-"): v for k, v in options.items()}})


def error(options: dict) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        SinkConfig.from_options(options)
    return info.value


# -- defaults and basic values ----------------------------------------------------------------


def test_defaults() -> None:
    c = SinkConfig.from_options(BASE)
    assert c.kafka.bootstrap_servers == "broker:9092"
    assert dict(c.kafka.client_config) == {}
    assert c.kafka.partition_num is None
    assert (c.kafka.replication_factor, c.kafka.broker_timeout_ms) == (1, 30000)
    assert c.routing == RoutingConfig(topic="orders")
    assert c.routing.partition is PartitionRule.DEFAULT
    assert c.codec == CodecConfig()
    assert c.codec.protocol is Protocol.SIMPLE
    assert c.codec.max_message_bytes == c.kafka.max_message_bytes == 10 * 1024 * 1024
    assert c.input == InputConfig()
    assert c.input.layout().op_column == "_op"
    assert c.checkpoint_location is None


def test_every_option_converts() -> None:
    c = SinkConfig.from_options(
        {
            **BASE,
            "topic": "tidb_{schema}_{table}",
            "partition": "Columns",
            "partition-columns": "id, region",
            "partition-num": "6",
            "replication-factor": "3",
            "auto-create-topic": "false",
            "broker-timeout-ms": "5000",
            "max-message-bytes": "1048576",
            "protocol": "simple",
            "encoding-format": "AVRO",
            "enable-tidb-extension": "True",
            "time-zone": "Asia/Shanghai",
            "large-message-handle-option": "handle-key-only",
            "send-bootstrap-interval-in-sec": "60",
            "send-bootstrap-in-msg-count": "500",
            "send-bootstrap-to-all-partition": "false",
            "database": "shop",
            "table": "orders",
            "primary-key": "id,region",
            "column-types": '{"price": "decimal(10,2)"}',
            "table-ddl": "CREATE TABLE t (id int primary key)",
            "table-id": "42",
            "schema-version": "7",
            "op-column": "op",
            "commit-ts-column": "ts",
            "before-column": "old",
            "database-column": "db",
            "table-column": "tbl",
            "checkpointlocation": "/chk",
            "path": "ignored-by-the-sink",
        }
    )
    assert c.routing.partition is PartitionRule.COLUMNS
    assert c.routing.partition_columns == ("id", "region")
    assert (c.kafka.partition_num, c.kafka.replication_factor) == (6, 3)
    assert c.kafka.auto_create_topic is False
    assert c.kafka.broker_timeout_ms == 5000
    assert c.codec.max_message_bytes == c.kafka.max_message_bytes == 1048576
    assert c.codec.encoding_format is EncodingFormat.AVRO
    assert c.codec.enable_tidb_extension is True
    assert c.codec.time_zone == "Asia/Shanghai"
    assert c.codec.large_message_handle_option is LargeMessageHandleOption.HANDLE_KEY_ONLY
    assert (c.codec.send_bootstrap_interval_in_sec, c.codec.send_bootstrap_in_msg_count) == (
        60,
        500,
    )
    assert c.codec.send_bootstrap_to_all_partition is False
    assert c.input.primary_key == ("id", "region")
    assert dict(c.input.column_types) == {"price": "decimal(10,2)"}
    assert (c.input.table_id, c.input.schema_version) == (42, 7)
    assert c.input.layout() == InputLayout(
        op_column="op",
        commit_ts_column="ts",
        before_column="old",
        database_column="db",
        table_column="tbl",
    )
    assert c.checkpoint_location == "/chk"


def test_bootstrap_can_be_turned_off_as_in_ticdc() -> None:
    # tiflow ShouldSendBootstrapMsg: both must be > 0, else no bootstrap messages
    c = build(send_bootstrap_interval_in_sec="0", send_bootstrap_in_msg_count="-1")
    assert (c.codec.send_bootstrap_interval_in_sec, c.codec.send_bootstrap_in_msg_count) == (0, -1)


def test_keys_are_case_insensitive() -> None:
    c = SinkConfig.from_options({**BASE, "checkpointLocation": "/chk", "Partition-Num": "2"})
    assert c.checkpoint_location == "/chk"
    assert c.kafka.partition_num == 2


@pytest.mark.parametrize("name", ["simple", "avro", "flat-avro", "debezium", "canal-json"])
def test_every_protocol_name_is_accepted(name: str) -> None:
    topic = "{schema}_{table}" if "avro" in name else "t"
    extra = {"schema-registry": "http://registry:8081"} if "avro" in name else {}
    c = SinkConfig.from_options({**BASE, "protocol": name, "topic": topic, **extra})
    assert c.codec.protocol.value == name.replace("flat-", "")


# -- TiCDC's Kafka parameters ----------------------------------------------------------------

TICDC_KAFKA = [s for s in TICDC_SETTINGS if s.fate is Fate.LIBRDKAFKA]


SAMPLES = {
    "kafka-client-id": "spark-1",
    "compression": "zstd",
    "required-acks": "-1",
    "dial-timeout": "10s",
    "read-timeout": "1m30s",
    "write-timeout": "500ms",
    "sasl-user": "u",
    "sasl-password": SECRET,
    "sasl-mechanism": "scram-sha-512",
    "sasl-gssapi-auth-type": "keytab",
    "sasl-gssapi-keytab-path": "/k.keytab",
    "sasl-gssapi-service-name": "kafka",
    "sasl-gssapi-user": "cdc",
    "sasl-gssapi-realm": "EXAMPLE.COM",
    "sasl-oauth-client-id": "cid",
    "sasl-oauth-client-secret": base64.b64encode(SECRET.encode()).decode(),
    "sasl-oauth-token-url": "https://idp/token",
    "sasl-oauth-scopes": "a,b",
    "sasl-oauth-grant-type": "client_credentials",
    "enable-tls": "true",
    "ca": "/ca.pem",
    "cert": "/cert.pem",
    "key": "/key.pem",
    "insecure-skip-verify": "true",
    "max-retry": "3",
}


@pytest.mark.parametrize("declared", TICDC_KAFKA, ids=[s.name for s in TICDC_KAFKA])
def test_ticdc_kafka_parameters_become_librdkafka_settings(declared) -> None:
    # The first librdkafka setting the declaration names is the one it sets.
    option = declared.name
    extra = {"ca": "/ca.pem"} if option in ("cert", "key", "insecure-skip-verify") else {}
    if option == "sasl-gssapi-realm":
        extra = {"sasl-gssapi-user": "cdc"}
    c = SinkConfig.from_options({**BASE, **extra, option: SAMPLES[option]})
    named = re.findall(r"`([a-z]+(?:\.[a-z]+)+)", declared.note)
    if named:
        assert named[0] in c.kafka.client_config, (option, dict(c.kafka.client_config))


def test_ticdc_kafka_parameter_values() -> None:
    c = SinkConfig.from_options({**BASE, **SAMPLES})
    cc = c.kafka.client_config
    assert cc["client.id"] == "spark-1"
    assert cc["compression.type"] == "zstd"
    assert cc["acks"] == "all"
    assert cc["socket.connection.setup.timeout.ms"] == "10000"
    assert cc["socket.timeout.ms"] == "90000"
    assert cc["sasl.mechanism"] == "SCRAM-SHA-512"
    assert cc["sasl.password"] == SECRET
    assert cc["sasl.oauthbearer.client.secret"] == SECRET  # base64-decoded, as TiCDC
    assert cc["sasl.kerberos.principal"] == "cdc@EXAMPLE.COM"
    assert cc["sasl.oauthbearer.scope"] == "a b"
    assert cc["security.protocol"] == "SASL_SSL"
    assert cc["enable.ssl.certificate.verification"] == "false"


def test_sasl_without_tls_and_tls_without_sasl() -> None:
    sasl = build(sasl_user="u", sasl_password="p").kafka.client_config
    assert (sasl["security.protocol"], sasl["sasl.mechanism"]) == ("SASL_PLAINTEXT", "PLAIN")
    tls = build(ca="/ca.pem").kafka.client_config
    assert tls["security.protocol"] == "SSL"
    assert build(enable_tls="true").kafka.client_config["security.protocol"] == "SSL"


def test_kafka_options_win_over_ticdc_parameters() -> None:
    c = build(**{"kafka-client-id": "a"}, **{"kafka.client.id": "b"})
    assert c.kafka.client_config["client.id"] == "b"
    c = SinkConfig.from_options({**BASE, "sasl-user": "u", "kafka.security.protocol": "SASL_SSL"})
    assert c.kafka.client_config["security.protocol"] == "SASL_SSL"


def test_tls_rules_of_ticdc() -> None:
    assert "ca" in str(error({**BASE, "cert": "/c.pem"}))
    assert error({**BASE, "ca": "/ca.pem", "enable-tls": "false"}).option == "enable-tls"


# -- producer config --------------------------------------------------------------------------


def test_producer_config_defaults_and_overrides() -> None:
    c = build()
    pc = c.kafka.producer_config()
    assert pc["bootstrap.servers"] == "broker:9092"
    assert (pc["enable.idempotence"], pc["acks"]) == ("true", "all")
    assert int(pc["message.max.bytes"]) > c.kafka.max_message_bytes
    assert pc["compression.type"] == "lz4"
    pc = build(**{"kafka.acks": "1", "kafka.enable.idempotence": "false"}).kafka.producer_config()
    assert (pc["acks"], pc["enable.idempotence"]) == ("1", "false")
    zstd = build(**{"kafka.compression.type": "zstd"}).kafka.producer_config()
    assert zstd["compression.type"] == "zstd"
    uri = "kafka://broker:9092/t?protocol=simple&compression=none"
    assert build(**{"sink-uri": uri}).kafka.producer_config()["compression.type"] == "none"
    assert "message.max.bytes" not in build(max_message_bytes="100000").kafka.producer_config()


# -- sink-uri ---------------------------------------------------------------------------------


def test_sink_uri_examples_from_ticdc_docs() -> None:
    c = SinkConfig.from_options(
        {
            "sink-uri": "kafka://127.0.0.1:9092/topic-name?protocol=canal-json"
            "&kafka-version=2.4.0&partition-num=6&max-message-bytes=67108864"
            "&replication-factor=1&enable-tidb-extension=true"
        }
    )
    assert c.kafka.bootstrap_servers == "127.0.0.1:9092"
    assert c.routing.topic == "topic-name"
    assert c.codec.protocol is Protocol.CANAL_JSON
    assert c.codec.enable_tidb_extension is True
    assert (c.kafka.partition_num, c.kafka.replication_factor) == (6, 1)
    assert c.codec.max_message_bytes == c.kafka.max_message_bytes == 67108864

    c = SinkConfig.from_options(
        {
            "sink-uri": "kafka://10.0.10.1:9092,10.0.10.2:9092,10.0.10.3:9092/cdc-test?protocol=simple"
        }
    )
    assert c.kafka.bootstrap_servers == "10.0.10.1:9092,10.0.10.2:9092,10.0.10.3:9092"


def test_parse_sink_uri() -> None:
    assert parse_sink_uri("kafka+ssl://h:9093/t%20x/?protocol=avro") == {
        "kafka.bootstrap.servers": "h:9093",
        "topic": "t x",
        "enable-tls": "true",
        "protocol": "avro",
    }
    assert "topic" not in parse_sink_uri("kafka://h:9092")


@pytest.mark.parametrize(
    ("uri", "match"),
    [
        ("mysql://h:3306/", r"kafka or kafka\+ssl"),
        ("kafka:///t", "no broker"),
        ("kafka://h:9092/t?protocol=simple&protocol=avro", "twice"),
        ("kafka://h:9092/t?protocl=simple", "did you mean 'protocol'"),
        ("kafka://h:9092/t?sink-uri=x", "only accepted as an option"),
    ],
)
def test_bad_sink_uris(uri: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SinkConfig.from_options({"sink-uri": uri})


def test_sink_uri_unknown_parameter_names_its_source() -> None:
    e = error({"sink-uri": "kafka://h:9092/t?partition-nums=3"})
    assert str(e).startswith("ticdc: sink-uri parameter 'partition-nums' is unknown")
    assert "did you mean 'partition-num'" in str(e)


def test_required_brokers_and_topic() -> None:
    assert error({"topic": "t"}).option == "kafka.bootstrap.servers"
    assert error({"kafka.bootstrap.servers": "b:9092"}).option == "topic"
    assert error({"sink-uri": "kafka://b:9092"}).option == "topic"


# -- layers -----------------------------------------------------------------------------------

TOML = """
case-sensitive = false
[filter]
rules = ['*.*']

[sink]
protocol = "canal-json"
send-bootstrap-in-msg-count = 7
encoder-concurrency = 32
dispatchers = [
  {matcher = ['*.*'], topic = "file_{schema}_{table}", partition = "index-value", index = "uk"},
]
kafka.acks = "1"
kafka.socket.keepalive.enable = true

[sink.kafka-config]
partition-num = 2
replication-factor = 2
max-message-bytes = 1000
sasl-user = "file-user"
sasl-password = "SECRET"

[sink.kafka-config.codec-config]
enable-tidb-extension = true
encoding-format = "json"

[sink.kafka-config.large-message-handle]
large-message-handle-option = "handle-key-only"
""".replace("SECRET", SECRET)


@pytest.fixture
def toml_file(tmp_path: Path) -> str:
    path = tmp_path / "changefeed.toml"
    path.write_text(TOML)
    return str(path)


def test_toml_file_layer(toml_file: str) -> None:
    c = SinkConfig.from_options({"config": toml_file, "kafka.bootstrap.servers": "b:9092"})
    assert c.codec.protocol is Protocol.CANAL_JSON
    assert c.codec.send_bootstrap_in_msg_count == 7
    assert c.codec.enable_tidb_extension is True
    assert c.codec.large_message_handle_option is LargeMessageHandleOption.HANDLE_KEY_ONLY
    assert c.routing.topic == "file_{schema}_{table}"
    assert c.routing.partition is PartitionRule.INDEX_VALUE
    assert c.routing.index == "uk"
    assert (c.kafka.partition_num, c.kafka.replication_factor) == (2, 2)
    assert c.codec.max_message_bytes == 1000
    cc = c.kafka.client_config
    assert cc["acks"] == "1"
    assert cc["socket.keepalive.enable"] == "true"
    assert (cc["sasl.username"], cc["sasl.password"]) == ("file-user", SECRET)


def test_precedence_defaults_toml_uri_options(toml_file: str) -> None:
    c = SinkConfig.from_options(
        {
            "config": toml_file,
            "sink-uri": "kafka://uri:9092/uri-topic?partition-num=4&max-message-bytes=2000"
            "&sasl-user=uri-user",
            "partition-num": "8",
            "kafka.acks": "all",
        }
    )
    assert c.kafka.partition_num == 8  # option > uri > file
    assert c.codec.max_message_bytes == 2000  # uri > file
    assert c.kafka.replication_factor == 2  # file > default
    assert c.routing.topic == "uri-topic"  # uri path > file dispatcher
    assert c.kafka.client_config["sasl.username"] == "uri-user"
    assert c.kafka.client_config["acks"] == "all"
    assert c.codec.time_zone == "UTC"  # default
    assert c.kafka.bootstrap_servers == "uri:9092"
    c = SinkConfig.from_options(
        {"sink-uri": "kafka://uri:9092/uri-topic", "kafka.bootstrap.servers": "opt:9092"}
    )
    assert c.kafka.bootstrap_servers == "opt:9092"


def test_toml_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[sink]\nprotocl = 'simple'\n")
    e = error({**BASE, "config": str(bad)})
    assert "[sink] key 'protocl' is unknown; did you mean 'protocol'?" in str(e)
    bad.write_text("[sink\n")
    assert "not valid TOML" in str(error({**BASE, "config": str(bad)}))
    assert "cannot be read" in str(error({**BASE, "config": str(tmp_path / "missing.toml")}))
    bad.write_text("[sink]\ndispatchers = [{matcher = ['db'], topic = 'x'}]\n")
    assert "matcher pattern 1 'db': wrong table pattern" in str(error({**BASE, "config": str(bad)}))
    bad.write_text("[sink]\ncolumn-selectors = [{matcher = ['db'], columns = ['a']}]\n")
    assert "entry 1 matcher pattern 1 'db': wrong table pattern" in str(
        error({**BASE, "config": str(bad)})
    )


# -- unknown options and invalid values -------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("partiton", "partition"),
        ("topik", "topic"),
        ("primary-keys", "primary-key"),
        ("timezone", "time-zone"),
        ("sink_uri", "sink-uri"),
        ("enable-tidb-extensions", "enable-tidb-extension"),
    ],
)
def test_unknown_option_suggests(key: str, suggestion: str) -> None:
    e = error({**BASE, key: "x"})
    assert str(e) == (
        f"ticdc: option '{key}' is unknown; did you mean '{suggestion}'? "
        "(all options: docs/reference/write-options.md)"
    )
    assert e.option == key


def test_unknown_option_without_a_close_match_points_at_the_options_page() -> None:
    message = str(error({**BASE, "zzzzzz": "1"}))
    assert message.endswith("all options: docs/reference/write-options.md")


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("partition", "hash", "use one of default, table, index-value, ts, columns"),
        ("protocol", "json", "use one of simple, avro, debezium, debezium-avro, canal-json"),
        ("encoding-format", "xml", "use one of json, avro"),
        ("enable-tidb-extension", "maybe", "use true or false"),
        ("partition-num", "many", "use an integer from 1 to 100000"),
        ("partition-num", "-1", "use an integer from 1 to 100000"),
        # librdkafka creates no topic with more (RD_KAFKAP_PARTITIONS_MAX, _BROKERS_MAX)
        ("partition-num", "1000000", "use an integer from 1 to 100000"),
        ("replication-factor", "10001", "use an integer from 1 to 10000"),
        ("max-message-bytes", "0", "use an integer from 1"),
        ("time-zone", "Mars/Olympus", "IANA time zone"),
        ("time-zone", "../etc/passwd", "IANA time zone"),
        ("large-message-handle-option", "drop", "none, handle-key-only, claim-check"),
        ("primary-key", "id,,x", "comma-separated list"),
        ("primary-key", "id,ID", "distinct"),
        ("column-types", "{price: decimal}", "JSON object"),
        ("column-types", '{"a": 1}', "JSON object"),
        ("table-id", "0", "integer from 1"),
        ("op-column", "", "non-empty name"),
        ("required-acks", "2", "-1 (all), 0 or 1"),
        ("compression", "brotli", "none, gzip, snappy, lz4, zstd"),
        ("dial-timeout", "10", "Go duration"),
        ("kafka-client-id", "a b", "A-Z a-z 0-9"),
        ("sasl-mechanism", "kerberos", "PLAIN"),
        ("sasl-gssapi-auth-type", "user", "keytab"),
        ("sasl-oauth-grant-type", "password", "client_credentials"),
    ],
)
def test_invalid_values_name_option_value_and_allowed(option, value, allowed) -> None:
    e = error({**BASE, option: value})
    assert e.option == option
    first_line = str(e).splitlines()[0]
    assert first_line.startswith(f"ticdc: option '{option}' is '{value}'; ")
    assert allowed in first_line


def test_cross_field_rules() -> None:
    assert error({**BASE, "partition": "columns"}).option == "partition-columns"
    assert error({**BASE, "partition-columns": "a"}).option == "partition-columns"
    assert error({**BASE, "index": "uk"}).option == "index"
    assert error({**BASE, "protocol": "avro", "topic": "{schema}"}).option == "topic"
    e = error({**BASE, "protocol": "debezium", "large-message-handle-option": "claim-check"})
    assert e.option == "large-message-handle-option"
    e = error({**BASE, "op-column": "x", "table-column": "x"})
    assert "each metadata column" in str(e)
    e = error({**BASE, "op-column": "kind", "table-column": "KIND"})
    assert "the same as 'op-column' (column names match in any case)" in str(e)


def test_unsupported_ticdc_settings_say_so() -> None:
    e = error({**BASE, "avro-enable-watermark": "true"})
    assert str(e).splitlines()[0] == (
        "ticdc: option 'avro-enable-watermark' is a TiCDC setting this sink does not support "
        "(a TiCDC testing mode: Confluent consumers cannot read its watermark messages); "
        "remove it"
    )


def test_unsupported_ticdc_settings_at_their_default_are_accepted(tmp_path: Path) -> None:
    exported = tmp_path / "exported.toml"
    exported.write_text(
        "[sink]\nonly-output-updated-columns = false\nschema-registry = ''\n"
        "content-compatible = false\ndispatchers = []\n"
        "[sink.debezium]\noutput-old-value = true\n[sink.open]\noutput-old-value = true\n"
        "[sink.kafka-config.codec-config]\navro-decimal-handling-mode = 'precise'\n"
        "[sink.kafka-config.large-message-handle]\nlarge-message-handle-compression = 'none'\n"
        "claim-check-raw-value = false\n"
    )
    assert SinkConfig.from_options({**BASE, "config": str(exported)}) == build()
    assert build(only_output_updated_columns="false") == build()
    assert error({**BASE, "avro-decimal-handling-mode": "string"}).option == (
        "avro-decimal-handling-mode"
    )


def test_ignored_ticdc_settings() -> None:
    c = build(kafka_version="2.4.0", max_batch_size="16")
    assert c == build()


# -- secrets ----------------------------------------------------------------------------------


def _secret_configs(toml_file: str) -> list[SinkConfig]:
    return [
        build(sasl_user="u", sasl_password=SECRET),
        SinkConfig.from_options(
            {"sink-uri": f"kafka://b:9092/t?sasl-user=u&sasl-password={SECRET}"}
        ),
        build(**{"kafka.sasl.password": SECRET, "kafka.ssl.key.password": SECRET}),
        build(**{"kafka.sasl.oauthbearer.client.secret": SECRET}),
        build(sasl_oauth_client_secret=base64.b64encode(SECRET.encode()).decode()),
        SinkConfig.from_options({"config": toml_file, "kafka.bootstrap.servers": "b:9092"}),
    ]


def test_secrets_never_in_repr_or_str(toml_file: str) -> None:
    for c in _secret_configs(toml_file):
        for text in (repr(c), str(c), repr(c.kafka), str(c.kafka.redacted())):
            assert SECRET not in text
            assert "***" in text
        assert SECRET in c.kafka.producer_config().values()  # the producer still gets it


def test_secrets_never_in_errors() -> None:
    cases = [
        {**BASE, "sasl-password": SECRET, "partition": "bogus"},
        {**BASE, "sasl-oauth-client-secret": SECRET + "!not-base64"},
        {"sink-uri": f"mysql://u:{SECRET}@h/t?sasl-password={SECRET}"},
        {"sink-uri": f"kafka://u:{SECRET}@h:9092/t"},
        {"sink-uri": f"kafka://h:9092/t?sasl-password={SECRET}&sasl-password={SECRET}"},
        {"sink-uri": f"kafka://h:9092/t?sasl-password={SECRET}&bogus=1"},
        {**BASE, "kafka.sasl.password": SECRET, "sasl-mechanism": "nope"},
    ]
    for options in cases:
        e = error(options)
        assert SECRET not in str(e)
        assert SECRET not in repr(e)
        assert SECRET not in str(e.value)
        assert e.__cause__ is None or SECRET not in str(e.__cause__)


# -- frozen, hashable, picklable, evolve ------------------------------------------------------


def test_pickle_hash_and_evolve(toml_file: str) -> None:
    c = SinkConfig.from_options(
        {
            "config": toml_file,
            "kafka.bootstrap.servers": "b:9092",
            "column-types": '{"a": "int"}',
            "primary-key": "a",
        }
    )
    again = pickle.loads(pickle.dumps(c))
    assert again == c
    assert hash(again) == hash(c)
    assert {c: 1}[again] == 1
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        c.codec = CodecConfig()  # type: ignore[misc]
    changed = attrs.evolve(c, codec=attrs.evolve(c.codec, time_zone="Europe/Berlin"))
    assert changed.codec.time_zone == "Europe/Berlin"
    assert c.codec.time_zone == "UTC"
    with pytest.raises(ConfigError):
        attrs.evolve(c.codec, time_zone="Nowhere/Land")
    with pytest.raises(ConfigError):
        attrs.evolve(
            c,
            routing=attrs.evolve(c.routing, topic="{schema}"),
            codec=CodecConfig(protocol=Protocol.AVRO),
        )


def test_frozen_map() -> None:
    m = FrozenMap({"a": "1"})
    assert m == {"a": "1"}
    assert hash(m) == hash(FrozenMap({"a": "1"}))
    assert pickle.loads(pickle.dumps(m)) == m
    with pytest.raises(TypeError):
        m["b"] = "2"  # type: ignore[index]


def test_config_error_first_line_stands_alone() -> None:
    e = error({**BASE, "partition": "hash"})
    assert re.fullmatch(r"ticdc: option 'partition' is 'hash'; use one of [a-z, -]+", str(e))


# -- protocols beyond simple ------------------------------------------------------------------

AVRO = {**BASE, "protocol": "avro", "topic": "t_{schema}_{table}"}


def test_avro_needs_a_registry() -> None:
    e = error(AVRO)
    assert e.option == "schema-registry"
    assert "protocol avro needs a Confluent Schema Registry URL" in str(e)


def test_registry_credentials_in_the_url_are_moved_out_and_never_shown() -> None:
    c = SinkConfig.from_options(
        {**AVRO, "schema-registry": f"https://us%40r:{SECRET.replace('-', '%2D')}@reg:8081/"}
    )
    assert c.registry.url == "https://reg:8081"
    assert c.registry.user == "us@r"
    assert c.registry.password == SECRET
    assert c.registry.client_config()["basic.auth.user.info"] == f"us@r:{SECRET}"
    assert SECRET not in repr(c) and SECRET not in str(c)


def test_registry_credentials_in_the_sink_uri_are_masked_in_errors() -> None:
    uri = (
        "kafka://b:9092/t_{schema}_{table}?protocol=avro&schema-registry="
        f"http%3A%2F%2Fu%3A{SECRET}%40reg%3A8081&partition=bogus"
    )
    e = error({"sink-uri": uri})
    assert SECRET not in str(e) and SECRET not in repr(e)
    c = SinkConfig.from_options({"sink-uri": uri.replace("&partition=bogus", "")})
    assert (c.registry.url, c.registry.user, c.registry.password) == (
        "http://reg:8081",
        "u",
        SECRET,
    )


def test_registry_options() -> None:
    c = SinkConfig.from_options(
        {
            **AVRO,
            "schema-registry": "http://reg:8081",
            "schema-registry-user": "u",
            "schema-registry-password": SECRET,
            "schema-registry-ca": "/ca.pem",
            "schema-registry-timeout-ms": "2500",
        }
    )
    assert c.registry.client_config() == {
        "url": "http://reg:8081",
        "timeout": 2,
        "basic.auth.user.info": f"u:{SECRET}",
        "ssl.ca.location": "/ca.pem",
    }
    assert SECRET not in repr(c.registry)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"schema-registry": "registry:8081"}, "use an http:// or https:// URL"),
        ({"schema-registry": "ftp://registry"}, "use an http:// or https:// URL"),
        (
            {"schema-registry": "http://u:p@r:1", "schema-registry-user": "v"},
            "give the credentials once",
        ),
        ({"schema-registry-password": SECRET}, "without 'schema-registry-user'"),
        ({"schema-registry-cert": "/c.pem"}, "go together"),
    ],
)
def test_registry_errors(options: dict, fragment: str) -> None:
    e = error({**AVRO, "schema-registry": "http://reg:8081", **options})
    assert fragment in str(e)
    assert SECRET not in str(e)


def test_registry_with_another_protocol_is_an_error() -> None:
    e = error({**BASE, "schema-registry": "http://reg:8081"})
    assert "applies to protocol avro, debezium-avro, not to 'simple'" in str(e)


def test_avro_topic_rule_depends_on_the_subject_strategy() -> None:
    with_registry = {**AVRO, "schema-registry": "http://reg:8081"}
    assert "{schema}" in str(error({**with_registry, "topic": "t_{table}"}))
    c = SinkConfig.from_options(
        {**with_registry, "topic": "t_{table}", "subject-name-strategy": "RecordNameStrategy"}
    )
    assert c.codec.subject_name_strategy is SubjectNameStrategy.RECORD
    c = SinkConfig.from_options(
        {**with_registry, "topic": "all", "subject-name-strategy": "topic-record"}
    )
    assert c.codec.subject_name_strategy is SubjectNameStrategy.TOPIC_RECORD


@pytest.mark.parametrize(
    ("option", "value", "protocol"),
    [
        ("avro-decimal-handling-mode", "string", "simple"),
        ("avro-bigint-unsigned-handling-mode", "string", "debezium"),
        ("subject-name-strategy", "record", "canal-json"),
        ("debezium-disable-schema", "true", "canal-json"),
        ("debezium-output-old-value", "false", "simple"),
        ("debezium-cluster-name", "prod", "simple"),
        ("only-output-updated-columns", "true", "debezium"),
        ("content-compatible", "true", "simple"),
        ("delete-only-output-handle-key-columns", "true", "debezium"),
        ("encoding-format", "avro", "canal-json"),
    ],
)
def test_options_of_another_protocol_are_errors(option: str, value: str, protocol: str) -> None:
    e = error({**BASE, "protocol": protocol, option: value})
    assert e.option == option
    assert f"option '{option}' applies to protocol" in str(e)
    assert f"not to '{protocol}'" in str(e)


def test_protocol_options_at_their_default_are_fine_anywhere() -> None:
    c = build(debezium_output_old_value="true", avro_decimal_handling_mode="precise")
    assert c.codec.debezium_output_old_value


def test_debezium_options() -> None:
    c = build(
        protocol="debezium",
        debezium_disable_schema="true",
        debezium_output_old_value="false",
        debezium_cluster_name="tidb-prod-2",
    )
    assert c.codec.debezium_disable_schema
    assert not c.codec.debezium_output_old_value
    assert c.codec.debezium_cluster_name == "tidb-prod-2"


@pytest.mark.parametrize("name", ["", "a_b", "-a", "a--b", "owner", "中文"])
def test_debezium_cluster_name_follows_ticdc_cluster_id_rules(name: str) -> None:
    e = error({**BASE, "protocol": "debezium", "debezium-cluster-name": name})
    assert "letters and digits" in str(e)


def test_debezium_old_value_from_the_changefeed_file(tmp_path: Path) -> None:
    f = tmp_path / "cf.toml"
    f.write_text("[sink]\nprotocol = 'debezium'\n[sink.debezium]\noutput-old-value = false\n")
    c = SinkConfig.from_options({**BASE, "config": str(f)})
    assert not c.codec.debezium_output_old_value


def test_canal_json_options() -> None:
    c = build(protocol="canal-json", content_compatible="true", only_output_updated_columns="1")
    assert c.codec.content_compatible and c.codec.only_output_updated_columns


def test_registry_config_is_hashable_and_picklable() -> None:
    import pickle

    r = RegistryConfig(url="http://r:1", user="u", password=SECRET)
    assert pickle.loads(pickle.dumps(r)) == r
    assert hash(r) == hash(pickle.loads(pickle.dumps(r)))
    assert CodecConfig().subject_name_strategy is SubjectNameStrategy.TOPIC


CHANGEFEED = """
case-sensitive = true
[sink]
protocol = "canal-json"

[[sink.dispatchers]]
matcher = ['shop.orders']
topic = "orders_{table}"
partition = "index-value"

[[sink.dispatchers]]
matcher = ['shop.*', '!shop.tmp_*']
topic = "shop_all"
partition = "columns"
columns = ["region"]

[[sink.dispatchers]]
matcher = ['logs.*']
dispatcher = "ts"
"""


def test_a_changefeed_file_with_several_dispatchers(tmp_path: Path) -> None:
    f = tmp_path / "cf.toml"
    f.write_text(CHANGEFEED)
    c = SinkConfig.from_options({**BASE, "config": str(f)})
    rules = c.routing.dispatchers
    assert [r.topic for r in rules] == ["orders_{table}", "shop_all", None]
    assert [r.partition.value for r in rules] == ["index-value", "columns", "ts"]
    assert rules[1].columns == ("region",)
    assert c.routing.case_sensitive and all(r.filter.case_sensitive for r in rules)
    assert c.routing.topic == "orders"  # the default topic for tables no rule takes


@pytest.mark.parametrize(
    ("rules", "fragment"),
    [
        ('[{"matcher": ["db.*"], "partiton": "ts"}]', "unknown key 'partiton'"),
        ('[{"topic": "x"}]', "needs matcher"),
        ('[{"matcher": ["db.*"], "partition": "hash"}]', "'hash'"),
        ('[{"matcher": ["db.*"], "topic": "bad topic"}]', "option 'topic'"),
        ("not json", "JSON list of rules"),
    ],
)
def test_bad_dispatchers_are_named(rules: str, fragment: str) -> None:
    e = error({**BASE, "dispatchers": rules})
    assert e.option == "dispatchers" or e.option == "topic"
    assert fragment in str(e)


def test_avro_dispatcher_topics_need_schema_and_table() -> None:
    rules = '[{"matcher": ["db.*"], "topic": "t_{table}"}]'
    e = error(
        {
            **AVRO,
            "schema-registry": "http://r:1",
            "topic": "a_{schema}_{table}",
            "dispatchers": rules,
        }
    )
    assert "must contain {schema} and then {table}" in str(e)


def test_settings_without_meaning_here_are_reported_by_name(tmp_path: Path) -> None:
    f = tmp_path / "cf.toml"
    f.write_text(
        "memory-quota = 1073741824\n[filter]\nrules = ['*.*']\n[sink]\nencoder-concurrency = 4\n"
        "[sink.kafka-config]\nkafka-version = '2.4.0'\n"
    )
    c = SinkConfig.from_options(
        {"config": str(f), "sink-uri": "kafka://b:9092/t?max-batch-size=16"}
    )
    assert c.ignored == (
        f"config file {f} key 'memory-quota'",
        f"config file {f} [sink] key 'encoder-concurrency'",
        f"config file {f} [sink] key 'kafka-version'",
        "sink-uri parameter 'max-batch-size'",
    )
    assert c == SinkConfig.from_options({"kafka.bootstrap.servers": "b:9092", "topic": "t"})


# -- issue 13: errors a user can act on -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "instead"),
    [
        ("sasl.jaas.config", "kafka.sasl.username and kafka.sasl.password"),
        ("ssl.truststore.location", "kafka.ssl.ca.location"),
        ("ssl.truststore.password", "remove it"),
        ("max.request.size", "max-message-bytes"),
        ("key.serializer", "remove it"),
        ("value.serializer", "remove it"),
        ("buffer.memory", "kafka.queue.buffering.max.kbytes"),
        ("partitioner.class", "use partition"),
    ],
)
def test_java_client_settings_name_the_librdkafka_equivalent(name: str, instead: str) -> None:
    e = error({**BASE, f"kafka.{name}": SECRET})
    text = str(e)
    assert text.startswith(f"ticdc: option 'kafka.{name}' is a setting of the Java Kafka client")
    assert instead in text and e.option == f"kafka.{name}"
    assert SECRET not in text


def test_a_typo_in_kafka_bootstrap_servers_is_an_unknown_option() -> None:
    e = error({"topic": "t", "kafka.bootstrap.server": "b:9092"})
    assert str(e) == (
        "ticdc: option 'kafka.bootstrap.server' is unknown; did you mean 'kafka.bootstrap.servers'?"
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"checkpointlocaton": "/chk"}, "did you mean 'checkpointLocation'?"),
        ({"protocol": "canal_json"}, "did you mean 'canal-json'? use one of simple"),
        ({"large-message-handle-option": "claim_check"}, "did you mean 'claim-check'?"),
        ({"checkpointlocation": 5}, "option 'checkpointLocation' is '5'"),
    ],
)
def test_suggestions_keep_the_documented_spelling(options: dict, expected: str) -> None:
    assert expected in str(error({**BASE, **options}))


def test_the_option_key_is_answered_as_the_message_key_not_as_tls() -> None:
    text = str(error({**BASE, "key": "id"}))
    assert text.startswith("ticdc: option 'key' is 'id'; to choose the Kafka message key")
    assert "primary-key" in text
    # a file path keeps TiCDC's TLS rule
    assert "give ca, cert and key together" in str(error({**BASE, "key": "/tls/client.key"}))


def test_a_changefeed_file_that_is_not_utf8(tmp_path) -> None:
    path = tmp_path / "changefeed.toml"
    path.write_bytes('[sink]\nprotocol = "caf\xe9"\n'.encode("latin-1"))
    text = str(error({**BASE, "config": str(path)}))
    assert text == (
        f"ticdc: option 'config' is '{path}'; it is not UTF-8 text (byte 0xe9 at offset 22); "
        "TOML files are UTF-8: save it as UTF-8"
    )


def test_the_default_topic_is_the_fixed_topic_only() -> None:
    assert build().kafka.default_topic == "orders"
    assert build(topic="tidb_{schema}_{table}").kafka.default_topic is None


def test_routing_follows_the_first_matching_dispatchers_rule() -> None:
    rules = json.dumps(
        [{"matcher": ["shop.*"], "topic": "rule_{table}", "partition": "index-value"}]
    )
    routing = build(dispatchers=rules, partition="table").routing
    table = TableSchema("shop", "orders", (Column("id", parse_mysql_type("bigint")),), ())
    route = writer_rules.route(routing, table)
    assert route.topic == "rule_orders" and route.dispatcher.rule is PartitionRule.INDEX_VALUE
    other = writer_rules.route(routing, attrs.evolve(table, database="hr"))
    assert other.topic == "orders" and other.dispatcher.rule is PartitionRule.TABLE
    assert writer_rules.topic_for(routing, "shop", "x") == "rule_x"


def test_open_protocol_options(tmp_path: Path) -> None:
    # TiCDC's `default` protocol is open-protocol; max-batch-size defaults to 16 (tiflow
    # common.defaultMaxBatchSize) and counts for open-protocol only.
    c = SinkConfig.from_options({**BASE, "protocol": "default"})
    assert c.codec.protocol == "open-protocol" and c.codec.max_batch_size == 16
    assert c.codec.open_output_old_value and c.ignored == ()
    f = tmp_path / "cf.toml"
    f.write_text(
        "[sink]\nprotocol = 'open-protocol'\nmax-batch-size = 64\n"
        "delete-only-output-handle-key-columns = true\n"
        "[sink.open]\noutput-old-value = false\n"
        "[sink.kafka-config.large-message-handle]\n"
        "large-message-handle-option = 'handle-key-only'\n"
    )
    c = SinkConfig.from_options({**BASE, "config": str(f)})
    assert c.codec.max_batch_size == 64 and not c.codec.open_output_old_value
    assert c.codec.delete_only_output_handle_key_columns
    assert c.codec.large_message_handle_option == "handle-key-only"
    with pytest.raises(ConfigError, match="option 'max-batch-size' is '0'"):
        SinkConfig.from_options({**BASE, "protocol": "open-protocol", "max-batch-size": "0"})
    with pytest.raises(ConfigError, match="'open-output-old-value' applies to protocol open"):
        SinkConfig.from_options({**BASE, "open-output-old-value": "false"})


def test_shared_options_are_ignored_by_the_protocols_that_do_not_read_them() -> None:
    # TiCDC takes max-batch-size and large-message-handle-compression whatever the
    # protocol; one that does not read them reports them as ignored, never refuses them.
    options = {"max-batch-size": "4", "large-message-handle-compression": "lz4"}
    avro = {**BASE, "protocol": "avro", "schema-registry": "http://r:1", **options}
    assert SinkConfig.from_options(avro).ignored == (
        "option 'max-batch-size'",
        "option 'large-message-handle-compression'",
    )
    simple = SinkConfig.from_options({**BASE, **options})
    assert simple.ignored == ("option 'max-batch-size'",)
    assert simple.codec.large_message_handle_compression == "lz4"
    opened = SinkConfig.from_options({**BASE, "protocol": "open-protocol", **options})
    assert opened.ignored == () and opened.codec.max_batch_size == 4


def test_old_values_follow_the_protocols_option() -> None:
    assert build(protocol="open-protocol").codec.sends_old_values
    assert not build(protocol="open-protocol", open_output_old_value="false").codec.sends_old_values
    assert not build(protocol="debezium", debezium_output_old_value="false").codec.sends_old_values
    assert build(protocol="canal-json").codec.sends_old_values


def test_layer_options_merges_the_file_the_uri_and_the_options_as_the_writer(
    tmp_path: Path,
) -> None:
    # The reader shares these layers; the writer's from_options merges them the same way.
    changefeed = tmp_path / "cf.toml"
    changefeed.write_text('[sink]\nprotocol = "avro"\nschema-registry = "http://r:1"\n')
    merged, explicit = layer_options(
        {
            "config": str(changefeed),
            "SINK-URI": "kafka://h:9092/t?protocol=canal-json&schema-registry=http://u:p@s:2",
            "Protocol": "simple",
        }
    )
    assert merged["protocol"] == "simple"  # explicit wins over the URI, the URI over the file
    assert merged["kafka.bootstrap.servers"] == "h:9092" and merged["topic"] == "t"
    assert (merged["schema-registry"], merged["schema-registry-user"]) == ("http://s:2", "u")
    assert explicit == frozenset({"protocol"})

"""Bad input through Spark, case by case (design §6, issue 6 item 5): every failure raises
the sink's own error class with a message that names what to fix, and no failed batch
leaves a watermark or committed state behind.

Spark wraps what the Python data source raises (on the driver: when it builds the writer;
in a task: as the task's failure), so each case checks the exception text for the class
name (`ConfigError`, `InputError`, ...), the `ticdc: ` prefix and a fragment naming the
option, column, value or table to fix. Then the no-commit check: the state under the
checkpoint location holds no watermark and no committed table schema, and the topic holds
no watermark (or does not exist, for errors raised before any task).

Cost: cases that fail on the driver run no task; cases that fail in a task write one or two
rows in one partition. One Spark session, broker and registry for the run.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.support.registry import TestSchemaRegistry
from ticdc_sink._local_broker import free_port
from ticdc_sink.decode import DecodedRow, DecodedWatermark, decode_record, decoder_for
from ticdc_sink.events import Op
from ticdc_sink.state import SinkState

pytestmark = pytest.mark.integration

TABLE = {"database": "db", "table": "t"}
# A key for the tables whose options declare none (a table without one is refused).
KEY = {"primary-key": "id"}
REG_USER, REG_PASSWORD = "matrix-user", "matrix-Pa55"


# -- helpers ------------------------------------------------------------------------------


def save(df: Any, bootstrap: str, options: dict[str, str], mode: str = "append") -> None:
    writer = df.write.format("ticdc").mode(mode)
    if bootstrap:
        writer = writer.option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def failure_text(exc: BaseException) -> str:
    """What Spark shows of a failure: its message, with the Python traceback of a task."""
    return "\n".join(str(e) for e in (exc, exc.__cause__, exc.__context__) if e is not None)


def assert_error(exc: BaseException, cls: str, *fragments: str) -> None:
    text = failure_text(exc)
    shown = "\n".join(line for line in text.splitlines() if "ticdc" in line) or text[:3000]
    assert re.search(rf"\b{cls}\b", text), f"{cls} not in: {shown}"
    assert "ticdc: " in text, shown
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in: {shown}"


def topic_exists(broker: Any, topic: str) -> bool:
    metadata = broker.admin().list_topics(topic, timeout=10)
    found = metadata.topics.get(topic)
    return found is not None and found.error is None and bool(found.partitions)


def assert_nothing_committed(
    broker: Any, topic: str, checkpoint: Path, *, protocol: str = "simple", created: bool = True
) -> None:
    """No watermark and no committed schema under the checkpoint; no watermark in the topic
    (`created=False`: the topic must not even exist, the write failed before any task)."""
    if checkpoint.exists():
        state = SinkState(str(checkpoint))
        assert state.last_watermark() is None
        tables = checkpoint / "ticdc" / "tables"
        assert not tables.exists() or not os.listdir(tables)
    if not created:
        assert not topic_exists(broker, topic)
        return
    if protocol == "avro" or not topic_exists(broker, topic):
        return  # avro has no watermarks
    decoder = decoder_for(protocol)
    records = broker.consume_all(topic)
    kinds = [type(e) for r in records for e in decode_record(decoder, r.key, r.value)]
    assert DecodedWatermark not in kinds


@pytest.fixture
def case(topics, tmp_path):
    """(topic, checkpoint dir) of one case: a topic per case, so no-watermark checks see
    only that case's messages."""
    return topics("bim"), tmp_path / "chk"


# -- options, sink-uri, TOML, topic and partition settings: fail on the driver ----------------

TOML_UNKNOWN = """
[sink]
protocol = "simple"
no-such-key = 1
"""
TOML_BAD_VALUE = """
[sink]
protocol = "simple"
[sink.kafka-config]
partition-num = "many"
"""
TOML_SYNTAX = "[sink\nprotocol = simple"
TOML_LATIN1 = '[sink]\nprotocol = "caf\xe9"\n'.encode("latin-1")

# (id, options, error class, fragments). `{topic}` in a value becomes the case's topic;
# `config` values are TOML texts written to a file first.
DRIVER_CASES = [
    ("unknown-option", {"protocl": "simple"}, "ConfigError", ["'protocl'", "protocol"]),
    (
        "bad-protocol",
        {"protocol": "maxwell"},
        "ConfigError",
        ["option 'protocol' is 'maxwell'"],
    ),
    (
        "bad-encoding-format",
        {"encoding-format": "xml"},
        "ConfigError",
        ["option 'encoding-format' is 'xml'"],
    ),
    ("bad-partition", {"partition": "hash"}, "ConfigError", ["option 'partition' is 'hash'"]),
    ("partition-columns-missing", {"partition": "columns"}, "ConfigError", ["partition-columns"]),
    (
        "partition-column-unknown",
        {"partition": "columns", "partition-columns": "nope"},
        "ConfigError",
        ["option 'partition-columns' names column 'nope'", "db.t", "id, name"],
    ),
    (
        "index-unknown",
        {"partition": "index-value", "index": "nope"},
        "ConfigError",
        ["option 'index' is 'nope'", "db.t"],
    ),
    ("partition-num-zero", {"partition-num": "0"}, "ConfigError", ["option 'partition-num'"]),
    (
        "partition-num-text",
        {"partition-num": "three"},
        "ConfigError",
        ["option 'partition-num' is 'three'"],
    ),
    (
        "replication-factor-zero",
        {"replication-factor": "0"},
        "ConfigError",
        ["option 'replication-factor'"],
    ),
    (
        "max-message-bytes-negative",
        {"max-message-bytes": "-1"},
        "ConfigError",
        ["option 'max-message-bytes'"],
    ),
    (
        "broker-timeout-text",
        {"broker-timeout-ms": "soon"},
        "ConfigError",
        ["option 'broker-timeout-ms'"],
    ),
    (
        "auto-create-topic-text",
        {"auto-create-topic": "maybe"},
        "ConfigError",
        ["option 'auto-create-topic'"],
    ),
    ("topic-with-space", {"topic": "bad topic {table}"}, "ConfigError", ["option 'topic'"]),
    ("topic-unknown-placeholder", {"topic": "t_{region}"}, "ConfigError", ["option 'topic'"]),
    ("time-zone", {"time-zone": "Mars/Olympus"}, "ConfigError", ["time-zone", "Mars/Olympus"]),
    (
        "column-types-bad-json",
        {"column-types": "{name: int"},
        "ConfigError",
        ["option 'column-types'"],
    ),
    (
        "column-types-bad-type",
        {"column-types": '{"name": "varchar(-1)"}'},
        "SchemaError",
        ["varchar(-1)"],
    ),
    ("column-types-unknown-column", {"column-types": '{"nope": "int"}'}, "SchemaError", ["nope"]),
    ("primary-key-unknown", {"primary-key": "nope"}, "SchemaError", ["primary-key names nope"]),
    (
        "table-ddl-unparsable",
        {"table-ddl": "CREATE TABLEX t (id int)"},
        "SchemaError",
        ["table-ddl"],
    ),
    (
        "table-ddl-column-missing",
        {"table-ddl": "CREATE TABLE t (id bigint PRIMARY KEY, name text, extra int NOT NULL)"},
        "SchemaError",
        ["extra"],
    ),
    (
        "debezium-cluster-name",
        {"protocol": "debezium", "debezium-cluster-name": "a_b"},
        "ConfigError",
        ["debezium-cluster-name"],
    ),
    (
        "option-of-another-protocol",
        {"protocol": "canal-json", "debezium-disable-schema": "true"},
        "ConfigError",
        ["debezium-disable-schema", "applies to protocol"],
    ),
    (
        "open-protocol-max-batch-size",
        {"protocol": "open-protocol", "max-batch-size": "0"},
        "ConfigError",
        ["option 'max-batch-size' is '0'"],
    ),
    (
        "open-protocol-option-elsewhere",
        {"protocol": "debezium", "open-output-old-value": "false"},
        "ConfigError",
        ["open-output-old-value", "applies to protocol open-protocol"],
    ),
    (
        "open-protocol-delete-key-only-without-key",
        {
            "protocol": "open-protocol",
            "delete-only-output-handle-key-columns": "true",
            "primary-key": "",
            "force-replicate": "true",
        },
        "SchemaError",
        ["has no handle key", "delete-only-output-handle-key-columns"],
    ),
    (
        "open-protocol-claim-check-raw-value",
        {
            "protocol": "open-protocol",
            "large-message-handle-option": "claim-check",
            "claim-check-storage-uri": "file:///tmp/cc",
            "claim-check-raw-value": "true",
        },
        "ConfigError",
        ["'claim-check-raw-value' applies to protocol simple, canal-json, not to 'open-protocol'"],
    ),
    (
        "large-message-option",
        {"large-message-handle-option": "drop"},
        "ConfigError",
        ["option 'large-message-handle-option' is 'drop'"],
    ),
    (
        "avro-topic-rule",
        {"protocol": "avro", "topic": "t_{table}", "schema-registry": "http://127.0.0.1:1"},
        "ConfigError",
        ["must contain {schema} and then {table}"],
    ),
    (
        "avro-without-registry",
        {"protocol": "avro", "topic": "t_{schema}_{table}"},
        "ConfigError",
        ["option 'schema-registry' is not set"],
    ),
    (
        "registry-with-simple",
        {"schema-registry": "http://127.0.0.1:1"},
        "ConfigError",
        ["option 'schema-registry' applies to protocol avro"],
    ),
    (
        "registry-not-a-url",
        {"protocol": "avro", "schema-registry": "registry:8081"},
        "ConfigError",
        ["schema-registry", "http://"],
    ),
    ("compression", {"compression": "brotli"}, "ConfigError", ["compression", "zstd"]),
    (
        "required-acks",
        {"required-acks": "2"},
        "ConfigError",
        ["option 'required-acks' is '2'", "use -1 (all), 0 or 1"],
    ),
    (
        "sasl-mechanism",
        {"sasl-mechanism": "kerberos"},
        "ConfigError",
        ["option 'sasl-mechanism' is 'kerberos'", "SCRAM-SHA-256"],
    ),
    (
        "tls-cert-without-ca",
        {"cert": "/c.pem"},
        "ConfigError",
        ["option 'cert' is '/c.pem'", "give ca, cert and key together"],
    ),
    (
        "op-column-type",
        {"op-column": "name", "column-types": '{"name": "int"}'},
        "SchemaError",
        ["option column-types names column 'name', which is a metadata column", "op-column"],
    ),
    ("sink-uri-scheme", {"sink-uri": "http://broker:9092/t"}, "ConfigError", ["sink-uri"]),
    (
        "sink-uri-unknown-param",
        {"sink-uri": "kafka://{bootstrap}/{topic}?protocl=simple"},
        "ConfigError",
        ["protocl"],
    ),
    (
        "sink-uri-bad-partition-num",
        {"sink-uri": "kafka://{bootstrap}/{topic}?partition-num=x"},
        "ConfigError",
        ["partition-num"],
    ),
    (
        "sink-uri-bad-duration",
        {"sink-uri": "kafka://{bootstrap}/{topic}?dial-timeout=ten"},
        "ConfigError",
        ["dial-timeout", "Go duration"],
    ),
    (
        "sink-uri-no-topic",
        {"sink-uri": "kafka://{bootstrap}/", "topic": ""},
        "ConfigError",
        ["option 'topic' is not set", "kafka://host:9092/topic"],
    ),
    (
        "toml-missing-file",
        {"config": "/no/such/changefeed.toml"},
        "ConfigError",
        ["/no/such/changefeed.toml"],
    ),
    (
        "toml-syntax",
        {"config": TOML_SYNTAX},
        "ConfigError",
        ["option 'config'", "not valid TOML", "line 1"],
    ),
    ("toml-unknown-key", {"config": TOML_UNKNOWN}, "ConfigError", ["no-such-key"]),
    ("toml-bad-value", {"config": TOML_BAD_VALUE}, "ConfigError", ["partition-num", "many"]),
    # issue 13: these failed inside a task with a raw error, or with the wrong error
    (
        "toml-not-utf8",
        {"config": TOML_LATIN1},
        "ConfigError",
        ["option 'config'", "is not UTF-8 text (byte 0xe9"],
    ),
    (
        "partition-num-above-librdkafka",
        {"partition-num": "1000000"},
        "ConfigError",
        ["option 'partition-num' is '1000000'; use an integer from 1 to 100000"],
    ),
    (
        "replication-factor-above-librdkafka",
        {"replication-factor": "20000"},
        "ConfigError",
        ["option 'replication-factor' is '20000'; use an integer from 1 to 10000"],
    ),
    (
        "kafka-unknown-setting",
        {"kafka.lingr.ms": "5"},
        "ConfigError",
        ["option 'kafka.lingr.ms' is unknown to librdkafka", "did you mean 'kafka.linger.ms'?"],
    ),
    (
        "kafka-bad-value",
        {"kafka.acks": "two"},
        "ConfigError",
        ["option 'kafka.acks' is refused by librdkafka", "request.required.acks"],
    ),
    (
        "kafka-bad-sasl-mechanism",
        {
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "KERBEROS",
            "kafka.sasl.username": "u",
            "kafka.sasl.password": "p",
        },
        "ConfigError",
        ["librdkafka, the Kafka client, refuses the kafka.* settings", "KERBEROS"],
    ),
    (
        "kafka-java-jaas",
        {"kafka.sasl.jaas.config": 'PlainLoginModule required username="u" password="p";'},
        "ConfigError",
        ["option 'kafka.sasl.jaas.config' is a setting of the Java Kafka client"],
    ),
    (
        "kafka-java-truststore",
        {"kafka.ssl.truststore.location": "/tls/truststore.jks"},
        "ConfigError",
        ["kafka.ssl.truststore.location", "kafka.ssl.ca.location"],
    ),
    (
        "kafka-java-max-request-size",
        {"kafka.max.request.size": "2000000"},
        "ConfigError",
        ["kafka.max.request.size", "max-message-bytes"],
    ),
    (
        "kafka-java-serializer",
        {"kafka.key.serializer": "org.apache.kafka.common.serialization.StringSerializer"},
        "ConfigError",
        ["kafka.key.serializer", "remove it"],
    ),
    (
        "bootstrap-servers-typo",
        {"kafka.bootstrap.server": "{bootstrap}"},
        "ConfigError",
        ["option 'kafka.bootstrap.server' is unknown", "'kafka.bootstrap.servers'"],
    ),
    (
        "checkpoint-location-typo",
        {"checkpointLocaton": "/tmp/x"},
        "ConfigError",
        ["did you mean 'checkpointLocation'?", "all options: docs/reference/write-options.md"],
    ),
    (
        "protocol-underscore",
        {"protocol": "canal_json"},
        "ConfigError",
        ["option 'protocol' is 'canal_json'; did you mean 'canal-json'?"],
    ),
    (
        "option-key-is-not-tls",
        {"key": "id"},
        "ConfigError",
        ["option 'key' is 'id'; to choose the Kafka message key", "primary-key"],
    ),
    (
        "event-filter-function",
        {
            "config": "[[filter.event-filters]]\nmatcher = ['db.t']\n"
            "ignore-insert-value-expr = \"upper(name) = 'X'\"\n"
        },
        "ConfigError",
        ["event-filters[0] ignore-insert-value-expr", "'UPPER(name)' is not supported"],
    ),
    (
        "event-filter-unknown-column",
        {"event-filters": '[{"matcher": ["db.t"], "ignore-delete-value-expr": "nme = 1"}]'},
        "ConfigError",
        ["event-filters[0] ignore-delete-value-expr 'nme = 1': 'nme'", "no such column"],
    ),
    (
        "event-filter-string-against-number",
        {"event-filters": '[{"matcher": ["db.*"], "ignore-insert-value-expr": "name = 1"}]'},
        "ConfigError",
        ["'name = 1' is not supported", "quoted strings"],
    ),
    (
        "event-filter-event-type",
        {"event-filters": '[{"matcher": ["db.t"], "ignore-event": ["Insert"]}]'},
        "ConfigError",
        ["ignore-event 'Insert' is not an event type TiCDC supports"],
    ),
    (
        "filter-rule-pattern",
        {"filter-rules": "db"},
        "ConfigError",
        ["option 'filter-rules' pattern 1 'db': wrong table pattern", "schema.table"],
    ),
]


@pytest.mark.parametrize(
    ("options", "cls", "fragments"),
    [c[1:] for c in DRIVER_CASES],
    ids=[c[0] for c in DRIVER_CASES],
)
def test_bad_settings_fail_on_the_driver(spark, broker, case, tmp_path, options, cls, fragments):
    topic, checkpoint = case
    options = {
        k: v.replace("{bootstrap}", broker.bootstrap).replace("{topic}", topic)
        if isinstance(v, str)
        else v
        for k, v in options.items()
    }
    if "config" in options and not str(options["config"]).startswith("/no/"):
        path = tmp_path / "changefeed.toml"
        text = options["config"]
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        options["config"] = str(path)
    keyed = {} if "table-ddl" in options else KEY
    merged = {"topic": topic, **TABLE, **keyed, "checkpointLocation": str(checkpoint), **options}
    merged = {k: v for k, v in merged.items() if v != ""}
    brokers_given = "sink-uri" in merged or "kafka.bootstrap.server" in merged
    bootstrap = "" if brokers_given else broker.bootstrap
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    with pytest.raises(Exception) as failure:
        save(df, bootstrap, merged)
    assert_error(failure.value, cls, *fragments)
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_overwrite_mode_is_refused(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, {"topic": topic, **TABLE}, mode="overwrite")
    assert_error(failure.value, "ConfigError", "mode 'overwrite' is not supported", "append")
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_an_unsupported_spark_type_is_named(spark, broker, case):
    topic, checkpoint = case
    df = spark.sql("select 1L as id, interval '1' day as waited")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, {"topic": topic, **TABLE})
    assert_error(failure.value, "SchemaError", "waited")
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_complete_output_mode_is_refused(spark, broker, case, tmp_path):
    topic, checkpoint = case
    counts = spark.readStream.format("rate").option("rowsPerSecond", 1).load().groupBy().count()
    query = (
        counts.writeStream.format("ticdc")
        .outputMode("complete")
        .option("checkpointLocation", str(checkpoint))
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("database", "db")
        .option("table", "t")
        .start()
    )
    try:
        with pytest.raises(Exception) as failure:
            query.awaitTermination(120)
    finally:
        query.stop()
    assert_error(failure.value, "ConfigError", "output mode 'complete' is not supported")
    assert_nothing_committed(broker, topic, checkpoint, created=False)


# -- data values: fail in a task ------------------------------------------------------------

# (id, rows, Spark schema, extra options, error class, fragments). Every frame has `_op`
# and a bigint key `id`; the batch is one partition.
VALUE_CASES = [
    (
        "tinyint-above",
        [("c", 1, 128)],
        "v bigint",
        {"v": "tinyint"},
        "InputError",
        ["column 'v'", "128", "tinyint"],
    ),
    (
        "tinyint-below",
        [("c", 1, -129)],
        "v bigint",
        {"v": "tinyint"},
        "InputError",
        ["column 'v'", "-129"],
    ),
    (
        "tinyint-unsigned-negative",
        [("c", 1, -1)],
        "v bigint",
        {"v": "tinyint unsigned"},
        "InputError",
        ["column 'v'", "-1", "tinyint unsigned"],
    ),
    (
        "tinyint-unsigned-above",
        [("c", 1, 256)],
        "v bigint",
        {"v": "tinyint unsigned"},
        "InputError",
        ["column 'v'", "256"],
    ),
    (
        "smallint-above",
        [("c", 1, 32768)],
        "v bigint",
        {"v": "smallint"},
        "InputError",
        ["column 'v'", "32768", "smallint"],
    ),
    (
        "smallint-unsigned-above",
        [("c", 1, 65536)],
        "v bigint",
        {"v": "smallint unsigned"},
        "InputError",
        ["column 'v'", "65536"],
    ),
    (
        "mediumint-below",
        [("c", 1, -8388609)],
        "v bigint",
        {"v": "mediumint"},
        "InputError",
        ["column 'v'", "-8388609", "mediumint"],
    ),
    (
        "mediumint-unsigned-above",
        [("c", 1, 16777216)],
        "v bigint",
        {"v": "mediumint unsigned"},
        "InputError",
        ["column 'v'", "16777216"],
    ),
    (
        "int-above",
        [("c", 1, 2147483648)],
        "v bigint",
        {"v": "int"},
        "InputError",
        ["column 'v'", "2147483648", "int"],
    ),
    (
        "int-unsigned-negative",
        [("c", 1, -5)],
        "v bigint",
        {"v": "int unsigned"},
        "InputError",
        ["column 'v'", "-5"],
    ),
    (
        "bigint-unsigned-negative",
        [("c", 1, -1)],
        "v bigint",
        {"v": "bigint unsigned"},
        "InputError",
        ["column 'v'", "-1", "bigint unsigned"],
    ),
    (
        "bigint-above",
        [("c", 1, "9223372036854775808")],
        "v decimal(21,0)",
        {"v": "bigint"},
        "InputError",
        ["column 'v'", "9223372036854775808", "bigint"],
    ),
    (
        "bigint-unsigned-above",
        [("c", 1, "18446744073709551616")],
        "v decimal(21,0)",
        {"v": "bigint unsigned"},
        "InputError",
        ["column 'v'", "18446744073709551616", "bigint unsigned"],
    ),
    (
        "decimal-precision",
        [("c", 1, "12345.67")],
        "v decimal(10,2)",
        {"v": "decimal(5,2)"},
        "InputError",
        ["column 'v'", "12345.67", "decimal(5,2)"],
    ),
    (
        "varchar-length",
        [("c", 1, "abcd")],
        "v string",
        {"v": "varchar(3)"},
        "InputError",
        ["column 'v'", "abcd", "varchar(3)"],
    ),
    (
        "enum-member",
        [("c", 1, "c")],
        "v string",
        {"v": "enum('a','b')"},
        "InputError",
        ["column 'v'", "'c'"],
    ),
    (
        "set-member",
        [("c", 1, "a,z")],
        "v string",
        {"v": "set('a','b')"},
        "InputError",
        ["column 'v'", "z"],
    ),
    (
        "year-range",
        [("c", 1, 1800)],
        "v int",
        {"v": "year"},
        "InputError",
        ["column 'v'", "1800", "year"],
    ),
    (
        "timestamp-range",
        [("c", 1, "2040-01-01T00:00:00+00:00")],
        "v timestamp",
        {},
        "InputError",
        ["column 'v'", "2040-01-01", "is out of range for timestamp", "2038-01-19"],
    ),
    (
        "bit-width",
        [("c", 1, 300)],
        "v bigint",
        {"v": "bit(8)"},
        "InputError",
        ["column 'v'", "300", "is out of range for bit(8) (0..255)"],
    ),
    (
        "text-as-int",
        [("c", 1, "twelve")],
        "v string",
        {"v": "int"},
        "InputError",
        ["column 'v'", "twelve", "is not an integer"],
    ),
    (
        "date-as-int",
        [("c", 1, "2024-01-02")],
        "v date",
        {"v": "int"},
        "SchemaError",
        ["column 'v'", "date32", "int", "an integer, boolean, decimal or string column"],
    ),
    ("null-key", [("c", None, 1)], "v bigint", {}, "InputError", ["column 'id'", "NULL"]),
    (
        "unknown-op",
        [("c", 1, 1), ("x", 2, 2)],
        "v bigint",
        {},
        "InputError",
        ["column '_op'", "'x'", "INSERT"],
    ),
    ("null-op", [(None, 1, 1)], "v bigint", {}, "InputError", ["column '_op'", "NULL"]),
]


def _frame(spark: Any, rows: list, columns: str) -> Any:
    rows = [(op, key, _value(v, columns)) for op, key, v in rows]
    return spark.createDataFrame(rows, f"_op string, id bigint, {columns}").coalesce(1)


def _value(value: Any, columns: str) -> Any:
    if "decimal" in columns and isinstance(value, str):
        return Decimal(value)
    if "timestamp" in columns and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if "date" in columns and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value


@pytest.mark.parametrize(
    ("rows", "columns", "types", "cls", "fragments"),
    [c[1:] for c in VALUE_CASES],
    ids=[c[0] for c in VALUE_CASES],
)
def test_bad_values_fail_the_task(spark, broker, case, rows, columns, types, cls, fragments):
    topic, checkpoint = case
    options = {
        "topic": topic,
        **TABLE,
        "primary-key": "id",
        "checkpointLocation": str(checkpoint),
        "column-types": json.dumps(types),
    }
    with pytest.raises(Exception) as failure:
        save(_frame(spark, rows, columns), broker.bootstrap, options)
    assert_error(failure.value, cls, "db.t", *fragments)
    assert_nothing_committed(broker, topic, checkpoint)


def test_null_in_a_not_null_column(spark, broker, case):
    topic, checkpoint = case
    ddl = "CREATE TABLE t (id bigint NOT NULL, v int NOT NULL, PRIMARY KEY (id))"
    df = spark.createDataFrame([("c", 1, None)], "_op string, id bigint, v int").coalesce(1)
    options = {
        "topic": topic,
        "database": "db",
        "table-ddl": ddl,
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "InputError", "db.t", "column 'v'", "NULL")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_missing_table_name(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, "t")], "_op string, id bigint, _table string")
    options = {"topic": topic, "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(
        failure.value, "SchemaError", "no database name", "option 'database'", "'_database'"
    )
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_a_before_image_of_the_wrong_shape(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame(
        [("u", 1, 2, (1, 1))], "_op string, id bigint, v bigint, _before struct<id:bigint,w:bigint>"
    ).coalesce(1)
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "InputError", "column '_before'", "db.t", "'v'", "id, v")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_negative_commit_ts(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, -5)], "_op string, id bigint, _commit_ts bigint")
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(failure.value, "InputError", "column '_commit_ts'", "db.t", "-5", "TSO")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_commit_ts_of_the_wrong_type(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, "soon")], "_op string, id bigint, _commit_ts string")
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(failure.value, "SchemaError", "column '_commit_ts'", "bigint TSO")
    assert_nothing_committed(broker, topic, checkpoint)


def test_commit_ts_going_backwards_for_a_key(spark, broker, case):
    topic, checkpoint = case
    ts = 450_000_000_000_000_000
    df = spark.createDataFrame(
        [("c", 1, ts + 10), ("u", 1, ts)], "_op string, id bigint, _commit_ts bigint"
    ).coalesce(1)
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value,
        "InputError",
        "commit ts goes backwards",
        "id=1",
        "db.t",
        "sortWithinPartitions",
    )
    assert_nothing_committed(broker, topic, checkpoint)


# -- protocol-specific input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "fragments"),
    [
        ("debezium", ["debezium-output-old-value", "_before"]),
        ("canal-json", ["_before"]),
        ("open-protocol", ["_before", "open-output-old-value=false"]),
    ],
)
def test_an_update_without_before_image(spark, broker, case, protocol, fragments):
    topic, checkpoint = case
    df = spark.createDataFrame([("u", 1, "x")], "_op string, id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        "protocol": protocol,
        "primary-key": "id",
        "enable-tidb-extension": "true",
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "InputError", "db.t", *fragments)
    assert_nothing_committed(broker, topic, checkpoint, protocol=protocol)


@pytest.fixture(scope="module")
def auth_registry():
    with TestSchemaRegistry(user=REG_USER, password=REG_PASSWORD) as running:
        yield running


def _avro_options(topic: str, checkpoint: Path, url: str, **extra: str) -> dict[str, str]:
    return {
        "topic": topic,
        **TABLE,
        "protocol": "avro",
        "primary-key": "id",
        "schema-registry": url,
        "checkpointLocation": str(checkpoint),
        **extra,
    }


def test_avro_schema_the_registry_refuses_as_incompatible(spark, broker, registry, case, tmp_path):
    topic, checkpoint = case
    first = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    save(first, broker.bootstrap, _avro_options(topic, tmp_path / "first", registry.url))
    changed = spark.createDataFrame([(2, 5)], "id bigint, name bigint").coalesce(1)
    with pytest.raises(Exception) as failure:
        save(changed, broker.bootstrap, _avro_options(topic, checkpoint, registry.url))
    assert_error(failure.value, "RegistryError", f"{topic}-value", "409", "incompatible")
    assert_nothing_committed(broker, topic, checkpoint, protocol="avro")


def test_avro_registry_unreachable(spark, broker, case):
    topic, checkpoint = case
    url = f"http://127.0.0.1:{free_port()}"
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = _avro_options(topic, checkpoint, url, **{"schema-registry-timeout-ms": "2000"})
    started = time.monotonic()
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert time.monotonic() - started < 60
    assert_error(failure.value, "RegistryError", url)
    assert_nothing_committed(broker, topic, checkpoint, protocol="avro")


def test_avro_registry_refuses_the_credentials(spark, broker, auth_registry, case):
    topic, checkpoint = case
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = _avro_options(
        topic,
        checkpoint,
        auth_registry.url,
        **{"schema-registry-user": REG_USER, "schema-registry-password": "wrong-Pa55"},
    )
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "RegistryError", "401", "schema-registry-user")
    assert "wrong-Pa55" not in failure_text(failure.value)
    assert_nothing_committed(broker, topic, checkpoint, protocol="avro")


# -- broker states ----------------------------------------------------------------------------


def test_an_unreachable_broker_fails_within_the_bound_and_is_named(spark, case):
    topic, checkpoint = case
    closed = f"127.0.0.1:{free_port()}"
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        **KEY,
        "broker-timeout-ms": "3000",
        "checkpointLocation": str(checkpoint),
    }
    started = time.monotonic()
    with pytest.raises(Exception) as failure:
        save(df, closed, options)
    assert time.monotonic() - started < 60
    assert_error(failure.value, "DeliveryError", closed, "kafka.bootstrap.servers")
    assert SinkState(str(checkpoint)).last_watermark() is None


def test_a_missing_topic_without_auto_create(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        **KEY,
        "auto-create-topic": "false",
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value, "DeliveryError", f"topic {topic} does not exist", "auto-create-topic"
    )
    assert_nothing_committed(broker, topic, checkpoint, created=False)


# -- column names in any case (issue 13, item 1) ---------------------------------------------


def test_metadata_columns_are_matched_in_any_case(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame(
        [("c", 1, "a"), ("D", 1, "a")], "_OP string, id bigint, name string"
    ).coalesce(1)
    save(df, broker.bootstrap, {"topic": topic, **TABLE, "primary-key": "ID"})
    decoder = decoder_for("simple")
    events = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
    rows = [e for e in events if isinstance(e, DecodedRow)]
    # Before the fix `_OP` was a table column: two INSERTs carrying `_OP` as data.
    assert [(e.op, e.data or e.old) for e in rows] == [
        (Op.INSERT, {"id": 1, "name": "a"}),
        (Op.DELETE, {"id": 1, "name": "a"}),
    ]


def test_two_spellings_of_a_metadata_column_are_refused_on_the_driver(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", "d", 1)], "_op string, _OP string, id bigint")
    options = {"topic": topic, **TABLE, "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value, "SchemaError", "2 columns named '_op' in some case ('_op' and '_OP')"
    )
    assert_nothing_committed(broker, topic, checkpoint, created=False)


# -- commit ts and watermarks (issue 13, items 2-4) ---------------------------------------------


def test_a_zero_commit_ts(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, 0)], "_op string, id bigint, _commit_ts bigint")
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(failure.value, "InputError", "column '_commit_ts'", "db.t", "value 0", "TSO")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_checkpoint_location_that_is_a_file_fails_before_any_task(spark, broker, case, tmp_path):
    topic, _ = case
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, {"topic": topic, **TABLE, "checkpointLocation": str(blocker)})
    assert_error(
        failure.value,
        "ConfigError",
        f"option 'checkpointLocation' is '{blocker}'",
        f"'{blocker}/ticdc' (Not a directory)",
    )
    assert "NotADirectoryError" not in failure_text(failure.value).splitlines()[-1]
    assert_nothing_committed(broker, topic, tmp_path / "unused", created=False)


def _watermarks(broker: Any, topic: str) -> list[int]:
    decoder = decoder_for("simple")
    events = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
    return [e.commit_ts for e in events if isinstance(e, DecodedWatermark)]


def test_rows_below_an_earlier_watermark_are_refused(spark, broker, case):
    topic, checkpoint = case
    ts = 450_000_000_000_000_000
    options = {
        "topic": topic,
        **TABLE,
        "primary-key": "id",
        "partition-num": "1",
        "checkpointLocation": str(checkpoint),
    }
    frame = "_op string, id bigint, _commit_ts bigint"
    save(spark.createDataFrame([("c", 1, ts)], frame).coalesce(1), broker.bootstrap, options)
    assert _watermarks(broker, topic) == [ts]
    late = spark.createDataFrame([("c", 2, ts + 5), ("c", 3, ts - 5)], frame).coalesce(1)
    with pytest.raises(Exception) as failure:
        save(late, broker.bootstrap, options)
    assert_error(
        failure.value,
        "InputError",
        f"row of db.t with key (id=3) has commit ts {ts - 5}, at or below watermark {ts}",
        "allow-commit-ts-below-watermark",
    )
    # The consumer saw one watermark and no row after it; the state still holds it.
    assert _watermarks(broker, topic) == [ts]
    assert SinkState(str(checkpoint)).last_watermark() == ts

    # Allowed explicitly: the rows go out, no watermark goes backwards, the report says so.
    save(late, broker.bootstrap, {**options, "allow-commit-ts-below-watermark": "true"})
    assert _watermarks(broker, topic) == [ts, ts + 5]
    reports = [json.loads(p.read_text()) for p in (checkpoint / "ticdc" / "reports").iterdir()]
    last = max(reports, key=lambda r: r["commit_ts"])
    assert (last["below_watermark"], last["watermark"]) == (1, ts + 5)


def test_partition_num_above_an_existing_topic_count(spark, broker, case):
    # tiflow SetPartitionNum: "the number of partition (4) specified in sink-uri is more than
    # that of actual topic (2)". Keys would go to partitions the topic does not have.
    topic, checkpoint = case
    broker.create_topic(topic, 2)
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        **KEY,
        "partition-num": "4",
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value,
        "ConfigError",
        f"option 'partition-num' is 4, more than the 2 partitions of topic {topic}",
        "set partition-num to at most 2",
    )
    assert_nothing_committed(broker, topic, checkpoint)

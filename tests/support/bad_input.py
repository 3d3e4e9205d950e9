"""Bad input, case by case (design §6): the options and the values a user can get wrong,
each with the sink's error class and fragments of its message that name what to fix.

`tests/unit/test_bad_input.py` runs every case through the data source's own classes
without Spark (the driver's `writer()`, a task's `write()`); the integration matrix
(`tests/integration/test_bad_input_matrix.py`) runs a few of each through Spark, to prove
what Spark shows of them and that a failed write commits nothing.

    DRIVER_CASES       (id, options, error class, fragments): fail when the writer is made
    VALUE_CASES        (id, rows, columns, column-types, error class, fragments): fail in a
                       task; rows are (`_op`, `id`, value)
    case_options()     a driver case's options made concrete: topic, brokers, TOML files
    value_rows()       a value case's rows with Python values for its Spark columns
    assert_error()     the class and the fragments are in what the user sees
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

__all__ = [
    "DRIVER_CASES",
    "KEY",
    "TABLE",
    "VALUE_CASES",
    "assert_error",
    "case_options",
    "failure_text",
    "value_rows",
]

TABLE = {"database": "db", "table": "t"}
# A key for the tables whose options declare none (a table without one is refused).
KEY = {"primary-key": "id"}

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


def case_options(
    options: dict[str, Any], *, bootstrap: str, topic: str, checkpoint: Path, files: Path
) -> dict[str, str]:
    """A driver case's options as a write gets them: `{bootstrap}` and `{topic}` filled
    in, a `config` TOML text written to a file under `files`, the table and a key added
    (unless the case gives a DDL), options given as "" left out."""
    filled = {
        k: v.replace("{bootstrap}", bootstrap).replace("{topic}", topic)
        if isinstance(v, str)
        else v
        for k, v in options.items()
    }
    if "config" in filled and not str(filled["config"]).startswith("/no/"):
        path = files / "changefeed.toml"
        text = filled["config"]
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        filled["config"] = str(path)
    keyed = {} if "table-ddl" in filled else KEY
    merged = {"topic": topic, **TABLE, **keyed, "checkpointLocation": str(checkpoint), **filled}
    return {k: v for k, v in merged.items() if v != ""}


def value_rows(rows: list[tuple[Any, ...]], columns: str) -> list[tuple[Any, ...]]:
    """A value case's rows with the Python values its column (`columns`, Spark DDL) takes."""
    return [(op, key, _value(v, columns)) for op, key, v in rows]


def _value(value: Any, columns: str) -> Any:
    if "decimal" in columns and isinstance(value, str):
        return Decimal(value)
    if "timestamp" in columns and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if "date" in columns and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value


def failure_text(exc: BaseException) -> str:
    """What a user sees of a failure: its message, with what caused it (Spark wraps a
    task's Python traceback)."""
    return "\n".join(str(e) for e in (exc, exc.__cause__, exc.__context__) if e is not None)


def assert_error(exc: BaseException, cls: str, *fragments: str) -> None:
    """`exc` is the sink's error `cls` (raised here, or named in what Spark shows of it)
    and its text holds every fragment."""
    text = failure_text(exc)
    shown = "\n".join(line for line in text.splitlines() if "ticdc" in line) or text[:3000]
    classes = {c.__name__ for c in type(exc).__mro__}
    assert cls in classes or re.search(rf"\b{cls}\b", text), f"{cls} not in: {shown}"
    assert "ticdc: " in text, shown
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in: {shown}"

"""`ticdc-sink decode` against Kafka: table and JSON-lines output, partitions,
limits, following, messages of another protocol reported one by one, and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from confluent_kafka import Producer

from ticdc_sink import tso
from ticdc_sink.cli import main
from ticdc_sink.codec import protocols
from ticdc_sink.config import CodecConfig, Protocol
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import TableSchema

pytestmark = pytest.mark.integration

TABLE = parse_table_ddl("CREATE TABLE shop.items (id bigint PRIMARY KEY, name varchar(10))")
SCHEMA = TableSchema("shop", "items", TABLE.columns, TABLE.indexes, 5, 7)
TS = tso.compose(1_700_000_000_000)


def produce(broker, topic: str, protocol: Protocol, partitions: int = 2) -> None:
    broker.create_topic(topic, partitions)
    config = CodecConfig(protocol=protocol)
    encoder = protocols.build_encoder(config, SCHEMA, build_ts_ms=1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    bootstrap = encoder.encode_bootstrap()
    for partition in range(partitions):
        if bootstrap is not None:
            producer.produce(topic, bootstrap.value, bootstrap.key, partition=partition)
        for i in range(3):
            row = (partition * 10 + i, f"n{i}")
            message = encoder.encode_row(RowChange(SCHEMA, Op.INSERT, TS, row))
            producer.produce(topic, message.value, message.key, partition=partition)
    producer.flush(10)


def test_decode_prints_tables_and_json_lines(broker, topics, capsys):
    simple = topics("cli_simple")
    produce(broker, simple, Protocol.SIMPLE)
    argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", simple]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["partition", "offset", "event"]
    assert out[-1] == f"8 messages from topic {simple}"
    assert sum("INSERT shop.items" in line for line in out) == 6

    assert main([*argv, "--format", "jsonl", "--partition", "1", "--limit", "3"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["partition"], e["event"]) for e in lines] == [
        (1, "BOOTSTRAP"),
        (1, "ROW"),
        (1, "ROW"),
    ]
    assert lines[1]["data"] == {"id": 10, "name": "n0"} and lines[1]["op"] == "INSERT"


def test_messages_of_another_protocol_are_reported_one_by_one(broker, topics, capsys):
    debezium = topics("cli_debezium")
    produce(broker, debezium, Protocol.DEBEZIUM, partitions=1)
    argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", debezium]
    assert main([*argv, "--protocol", "canal-json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sum("not canal-json:" in line for line in out) == 3
    assert main([*argv, "--protocol", "debezium", "--format", "jsonl"]) == 0
    assert all("error" not in json.loads(x) for x in capsys.readouterr().out.splitlines())


def test_follow_reads_from_the_beginning_until_the_limit(broker, topics):
    follow = topics("cli_follow")
    produce(broker, follow, Protocol.SIMPLE, partitions=1)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ticdc_sink",
            "decode",
            "--bootstrap-servers",
            broker.bootstrap,
            "--topic",
            follow,
            "--follow",
            "--from-beginning",
            "--limit",
            "4",
            "--format",
            "jsonl",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 4


def test_unreachable_broker_and_missing_topic_exit_2(broker, topics, capsys):
    missing = topics("no_such_topic")
    code = main(["decode", "--bootstrap-servers", "127.0.0.1:1", "--topic", "x", "--timeout", "2"])
    assert code == 2
    err = capsys.readouterr().err
    assert "cannot reach Kafka brokers 127.0.0.1:1" in err and len(err.splitlines()) == 1
    code = main(["decode", "--bootstrap-servers", broker.bootstrap, "--topic", missing])
    assert code == 2
    assert missing in capsys.readouterr().err


def test_decode_avro_through_the_registry_and_an_unknown_protocol(broker, topics, registry, capsys):
    from ticdc_sink.config import RegistryConfig, SubjectNameStrategy
    from ticdc_sink.registry import ConfluentSchemaRegistry

    avro = topics("cli_avro")
    broker.create_topic(avro, 1)
    ids = ConfluentSchemaRegistry(RegistryConfig(url=registry.url), SubjectNameStrategy.TOPIC)
    encoder = protocols.build_encoder(
        CodecConfig(protocol=Protocol.AVRO), SCHEMA, build_ts_ms=1, topic=avro, registry=ids
    )
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for change in (
        RowChange(SCHEMA, Op.INSERT, TS, (1, "a")),
        RowChange(SCHEMA, Op.DELETE, TS, None, (1, "a")),
    ):
        message = encoder.encode_row(change)
        producer.produce(avro, message.value, message.key, partition=0)
    producer.flush(10)
    argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", avro]
    assert main([*argv, "--protocol", "avro", "--schema-registry", registry.url]) == 0
    out = capsys.readouterr().out
    assert "INSERT shop.items" in out and "data={id=1, name='a'}" in out
    assert "DELETE shop.items" in out and "old={id=1}" in out
    assert main([*argv, "--protocol", "maxwell"]) == 2
    assert "protocol 'maxwell' has no decoder" in capsys.readouterr().err
    assert main([*argv, "--protocol", "avro"]) == 2  # no registry given
    assert "needs --schema-registry URL" in capsys.readouterr().err


def test_an_avro_message_with_an_unknown_schema_id_is_reported_on_its_line(
    broker, topics, registry, capsys
):
    # Issue 13: a traceback and exit 1, where every other decoder reports the message.
    from ticdc_sink.config import RegistryConfig, SubjectNameStrategy
    from ticdc_sink.registry import ConfluentSchemaRegistry

    avro_unknown = topics("cli_avro_unknown")
    broker.create_topic(avro_unknown, 1)
    ids = ConfluentSchemaRegistry(RegistryConfig(url=registry.url), SubjectNameStrategy.TOPIC)
    encoder = protocols.build_encoder(
        CodecConfig(protocol=Protocol.AVRO),
        SCHEMA,
        build_ts_ms=1,
        topic=avro_unknown,
        registry=ids,
    )
    good = encoder.encode_row(RowChange(SCHEMA, Op.INSERT, TS, (1, "a")))
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(avro_unknown, b"\x00\x00\x00\x27\x0f\x02", None, partition=0)
    producer.produce(avro_unknown, good.value, good.key, partition=0)
    producer.flush(10)
    argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", avro_unknown]
    assert main([*argv, "-o", "protocol=avro", "--schema-registry", registry.url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split(None, 2)[2] == "not avro: ticdc: schema id 9999 is unknown to the registry"
    assert "INSERT shop.items" in out[2]


def test_a_partition_the_topic_does_not_have_is_an_error(broker, topics, capsys):
    one_partition = topics("cli_one_partition")
    produce(broker, one_partition, Protocol.SIMPLE, partitions=1)
    argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", one_partition]
    assert main([*argv, "--partition", "99"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"ticdc-sink decode: ticdc: topic {one_partition} has no partition 99; its partitions "
        "are 0\n"
    )
    assert main([*argv, "--partition", "99", "--follow", "--timeout", "5"]) == 2
    assert "has no partition 99" in capsys.readouterr().err


def test_a_closed_pipe_ends_decode_quietly(broker, topics):
    many = topics("cli_many")
    broker.create_topic(many, 1)
    config = CodecConfig(protocol=Protocol.SIMPLE)
    encoder = protocols.build_encoder(config, SCHEMA, build_ts_ms=1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(3000):  # far more output than a pipe holds
        message = encoder.encode_row(RowChange(SCHEMA, Op.INSERT, TS, (i, "n" * 40)))
        producer.produce(many, message.value, message.key, partition=0)
    producer.flush(30)
    decode = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ticdc_sink",
            "decode",
            "--bootstrap-servers",
            broker.bootstrap,
            "--topic",
            many,
            "--format",
            "jsonl",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert decode.stdout is not None and decode.stderr is not None
    first = decode.stdout.readline()  # `| head -1`
    decode.stdout.close()
    err = decode.stderr.read()
    assert decode.wait(timeout=60) == 141  # as a Unix tool stopped by SIGPIPE
    assert json.loads(first)["partition"] == 0
    assert err == b""

"""Bad input through Spark: every error names what to fix, and no watermark is sent for a
batch that failed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ticdc_sink._local_broker import free_port
from ticdc_sink.decode.simple import SimpleDecoder

pytestmark = pytest.mark.integration


def save(df: Any, bootstrap: str, mode: str = "append", **options: str) -> None:
    writer = df.write.format("ticdc").mode(mode).option("kafka.bootstrap.servers", bootstrap)
    for name, value in {"database": "db", "table": "t", **options}.items():
        writer = writer.option(name, value)
    writer.save()


def kinds(broker: Any, topic: str) -> list[str]:
    decoder = SimpleDecoder()
    return [
        type(decoder.decode_message(r.key, r.value)).__name__ for r in broker.consume_all(topic)
    ]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"mode": "overwrite"}, "mode 'overwrite' is not supported"),
        ({"protocl": "simple"}, "'protocl'"),
        ({"protocol": "open-protocol"}, "option 'protocol' is 'open-protocol'"),
        ({"sink-uri": "http://broker:9092/t"}, "sink-uri"),
        ({"topic": "bad topic {table}"}, "option 'topic'"),
        ({"partition": "hash"}, "option 'partition' is 'hash'"),
        ({"time-zone": "Mars/Olympus"}, "time-zone"),
        ({"column-types": '{"name": "varchar(-1)"}'}, "varchar(-1)"),
        ({"primary-key": "nope"}, "primary-key names nope"),
        ({"protocol": "debezium", "debezium-cluster-name": "a_b"}, "debezium-cluster-name"),
        ({"protocol": "avro", "topic": "t_{table}"}, "must contain {schema} and then {table}"),
        ({"protocol": "avro", "topic": "t_{schema}_{table}"}, "schema-registry"),
        ({"protocol": "canal-json", "debezium-disable-schema": "true"}, "applies to protocol"),
        ({"large-message-handle-option": "claim-check"}, "claim-check"),
    ],
)
def test_bad_options_fail_before_any_task_runs(spark, broker, options, fragment):
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    mode = options.pop("mode", "append")
    options.setdefault("topic", "bad_options")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, mode, **options)
    assert fragment in str(failure.value)


def test_an_unsupported_spark_type_is_named(spark, broker):
    df = spark.sql("select 1L as id, interval '1' day as waited")
    with pytest.raises(Exception, match="column 'waited'.*DayTimeIntervalType|waited"):
        save(df, broker.bootstrap, topic="bad_type")


@pytest.mark.parametrize(
    ("rows", "schema", "fragment"),
    [
        ([("c", 1, 1), ("x", 2, 2)], "_op string, id bigint, age int", "'x'"),
        ([("c", None, 1)], "_op string, id bigint, age int", "column 'id'"),
        ([("c", 1, 300)], "_op string, id bigint, age int", "300 is out of range for tinyint"),
    ],
    ids=["unknown-op", "null-key", "out-of-range"],
)
def test_bad_rows_fail_the_write_and_leave_no_watermark(spark, broker, rows, schema, fragment):
    topic = f"bad_rows_{abs(hash(fragment)) % 10_000}"
    broker.create_topic(topic, 1)
    df = spark.createDataFrame(rows, schema).coalesce(1)
    with pytest.raises(Exception) as failure:
        save(
            df,
            broker.bootstrap,
            topic=topic,
            **{"primary-key": "id", "column-types": '{"age": "tinyint"}'},
        )
    assert fragment in str(failure.value)
    assert "DecodedWatermark" not in kinds(broker, topic)


def test_an_unreachable_broker_fails_within_the_bound_and_is_named(spark):
    closed = f"127.0.0.1:{free_port()}"
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    started = time.monotonic()
    with pytest.raises(Exception) as failure:
        save(df, closed, topic="nowhere", **{"broker-timeout-ms": "3000"})
    assert closed in str(failure.value)
    assert time.monotonic() - started < 60


def test_complete_output_mode_is_refused(spark, broker, tmp_path):
    counts = spark.readStream.format("rate").option("rowsPerSecond", 1).load().groupBy().count()
    query = (
        counts.writeStream.format("ticdc")
        .outputMode("complete")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", "complete_mode")
        .option("database", "db")
        .option("table", "t")
        .start()
    )
    try:
        with pytest.raises(Exception, match="output mode 'complete' is not supported"):
            query.awaitTermination(120)
    finally:
        query.stop()

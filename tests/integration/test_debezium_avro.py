"""protocol=debezium-avro through Spark, Kafka and a real schema registry (Apicurio's
Confluent API): Confluent's own `AvroDeserializer` reads the Debezium key and envelope of
every type and of a change stream (UPDATEs with and without `debezium-output-old-value`),
the schemas are registered under `<topic>-key` and `<topic>-value`, and
`spark.read.format("ticdc")` reads the topics back into the rows written."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.support.apicurio import confluent_client
from tests.support.spark_read import read_topic, write_frame
from tests.support.tables import (
    ALL_TYPES,
    CHANGES,
    CHANGES_SCHEMA,
    all_types_frame,
    all_types_options,
)

pytestmark = pytest.mark.integration

_EPOCH = dt.datetime(1970, 1, 1)

# What Confluent's AvroDeserializer gives for the all-types row: Debezium's values
# (io.debezium.time.Date days, Timestamp milliseconds, MicroTime microseconds,
# ZonedTimestamp text in UTC; ENUM and SET by name, JSON as text), binary strings and BIT as
# bytes (BINARY(4) padded), DECIMAL exact (precise), BIGINT UNSIGNED as text (string mode).
CONFLUENT_EXPECTED = {
    "c_bigint_u": "18446744073709551615",
    "c_float": 3.140000104904175,
    "c_binary": b"\x01\x02\x00\x00",
    "c_date": (dt.date(2024, 2, 29) - _EPOCH.date()).days,
    "c_datetime": (dt.datetime(2024, 2, 29, 23, 59, 58, 123000) - _EPOCH)
    // dt.timedelta(milliseconds=1),
    "c_timestamp": "2024-03-01T01:02:03.456789Z",
    "c_time": -((838 * 60 + 59) * 60 + 59) * 1_000_000,
    "c_bit": b"\x15",
    "c_json": '{"a": null, "b": [1, 2.5, "x"]}',
}


def _options(registry: Any, **extra: str) -> dict[str, str]:
    return {"protocol": "debezium-avro", "schema-registry": registry.url, **extra}


def _confluent(
    broker: Any, registry: Any, topic: str
) -> list[tuple[Any, dict[str, Any], dict[str, Any]]]:
    """Every message of `topic` as (record, key, value), by Confluent's deserializer."""
    client = confluent_client(registry.url)
    keys, values = AvroDeserializer(client), AvroDeserializer(client)
    return [
        (
            r,
            keys(r.key, SerializationContext(topic, MessageField.KEY)),
            values(r.value, SerializationContext(topic, MessageField.VALUE)),
        )
        for r in broker.consume_all(topic)
    ]


def _subjects(registry: Any, topics: Any) -> list[str]:
    return sorted(s for s in registry.subjects() if s.startswith(topics.prefix))


@pytest.mark.parametrize("extension", ["false", "true"])
def test_a_confluent_consumer_and_spark_read_every_type_back(
    spark: Any, broker: Any, registry: Any, topics: Any, extension: str
) -> None:
    topic = topics(f"dbza_types_{extension}")
    options = _options(
        registry,
        **{
            "enable-tidb-extension": extension,
            "avro-bigint-unsigned-handling-mode": "string",
            "debezium-cluster-name": "dbserver1",
        },
    )
    write_frame(all_types_frame(spark), broker, topic, **all_types_options(), **options)

    messages = _confluent(broker, registry, topic)
    assert [key for _, key, _ in messages] == [{"id": 1}, {"id": 2}]
    full, nulls = (value for _, _, value in messages)
    assert full["op"] == nulls["op"] == "c"
    assert full["before"] is None and nulls["before"] is None
    for name, (_, given) in ALL_TYPES.items():
        assert full["after"][name] == CONFLUENT_EXPECTED.get(name, given), name
    assert isinstance(full["after"]["c_decimal"], Decimal)
    assert str(full["after"]["c_decimal"]) == "-12345678.1250"
    assert nulls["after"] == {"id": 2, **dict.fromkeys(ALL_TYPES)}
    source = full["source"]
    assert (source["db"], source["table"], source["connector"]) == ("types", "all", "TiCDC")
    assert source["name"] == source["cluster_id"] == "dbserver1"
    assert source["commit_ts"] == nulls["source"]["commit_ts"] > 0
    assert source["ts_ms"] == source["commit_ts"] >> 18
    assert _subjects(registry, topics) == [f"{topic}-key", f"{topic}-value"]

    reading = {"protocol": "debezium-avro", "schema-registry": registry.url}
    result = read_topic(spark, broker, topic, **reading, **{"time-zone": "Asia/Shanghai"})
    rows = {r["id"]: r.asDict() for r in result.collect()}
    # Simple's read is lossless (test_read.py): the rows as written.
    simple = topics(f"dbza_types_simple_{extension}")
    write_frame(all_types_frame(spark), broker, simple, **all_types_options())
    written = {r["id"]: r.asDict() for r in read_topic(spark, broker, simple).collect()}
    losses = READ_LOSSES[extension]
    assert rows[1] == written[1] | losses | {"_commit_ts": source["commit_ts"]}
    assert rows[2] == written[2] | {"_commit_ts": source["commit_ts"]}


# What `spark.read` gives back instead of the values written (by enable-tidb-extension):
# without it no `tidb_type` says the text of string mode was a BIGINT UNSIGNED.
READ_LOSSES: dict[str, dict[str, Any]] = {
    "true": {},
    "false": {"c_bigint_u": "18446744073709551615"},
}


def _expected_changes(old_value: bool) -> list[tuple[Any, ...]]:
    """CHANGES as debezium-avro carries them, as (op, commit ts, before, after): an UPDATE
    of the primary key is a DELETE and an INSERT (TiCDC's Kafka sink splits it), an
    UPDATE's before image only with `debezium-output-old-value`."""
    out = []
    for op, ts, key, name, amount, before in CHANGES:
        after = {"id": key, "name": name, "amount": amount}
        old = None if before is None else dict(zip(("id", "name", "amount"), before, strict=True))
        if op == "u" and old["id"] != key:
            out += [("d", ts, old, None), ("c", ts, None, after)]
        elif op == "d":
            out.append(("d", ts, after, None))
        else:
            out.append((op, ts, old if old_value else None, after))
    return out


@pytest.mark.parametrize("old_value", ["true", "false"])
def test_a_change_stream_reads_back_through_confluent_and_spark(
    spark: Any, broker: Any, registry: Any, topics: Any, old_value: str
) -> None:
    topic = topics(f"dbza_changes_{old_value}")
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA).repartition(2, "id")
    options = _options(registry, **{"debezium-output-old-value": old_value})
    options |= {"database": "shop", "table": "orders", "primary-key": "id"}
    options |= {"partition": "index-value", "partition-num": "3"}
    write_frame(df.sortWithinPartitions("_commit_ts"), broker, topic, **options)
    expected = _expected_changes(old_value == "true")

    messages = _confluent(broker, registry, topic)
    assert {r.partition for r, _, _ in messages} == {0, 1, 2}
    got = []
    for _, key, value in messages:
        source = value["source"]
        assert (source["db"], source["table"]) == ("shop", "orders")
        assert key == {"id": (value["after"] or value["before"])["id"]}
        got.append((value["op"], source["commit_ts"], value["before"], value["after"]))
    order = lambda c: (c[1], c[0], (c[3] or c[2])["id"])  # noqa: E731
    assert sorted(got, key=order) == sorted(expected, key=order)
    assert _subjects(registry, topics) == [f"{topic}-key", f"{topic}-value"]
    assert len(registry.schemas(f"{topic}-value")) == 1

    reading = {"protocol": "debezium-avro", "schema-registry": registry.url}
    result = read_topic(spark, broker, topic, **reading)
    assert result.rdd.getNumPartitions() == 1  # 3 small Kafka partitions: one task
    ops = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    read = sorted(
        (
            r["_op"],
            r["_commit_ts"],
            r["id"],
            r["name"],
            r["amount"],
            None if r["_before"] is None else r["_before"].asDict(),
        )
        for r in result.collect()
    )
    written = sorted(
        (ops[op], ts, *(after or before).values(), before if op == "u" else None)
        for op, ts, before, after in expected
    )
    assert read == written

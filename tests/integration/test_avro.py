"""protocol=avro through Spark, Kafka and a real schema registry (Apicurio's Confluent API,
compatibility BACKWARD as tests/conftest.py sets it): an independent Confluent consumer
reads every type back, changes replay into the same table, schemas evolve as versions,
incompatible ones fail, and the subject strategies work. Basic auth is tested on the
in-house registry (Apicurio has none without an identity server)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.support.apicurio import confluent_client
from tests.support.tables import (
    ALL_TYPES,
    CHANGES,
    CHANGES_SCHEMA,
    EXPECTED,
    all_types_frame,
    all_types_options,
    apply_changes,
    final_table,
)
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.decode import DecodedRow
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration


def write(df: Any, broker: Any, registry_url: str, **options: str) -> None:
    writer = df.write.format("ticdc").mode("append")
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "protocol": "avro",
        "schema-registry": registry_url,
        **options,
    }
    for name, value in options.items():
        writer = writer.option(name.replace("_", "-"), value)
    writer.save()


def decoded_rows(broker: Any, registry: Any, topic: str) -> list[DecodedRow]:
    client = confluent_client(registry.url)
    decoder = AvroDecoder(lambda schema_id: client.get_schema(schema_id).schema_str)
    return [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]


# What Confluent's AvroDeserializer gives for the all-types row: ENUM and SET by name,
# BIT as its big-endian bytes, BIGINT UNSIGNED as the exact decimal string (string mode).
CONFLUENT_EXPECTED = {
    **EXPECTED,
    "c_bigint_u": "18446744073709551615",
    "c_enum": "medium",
    "c_set": "a,c",
    "c_bit": b"\x15",
}


def test_a_confluent_consumer_reads_every_type_back_through_the_registry(
    spark, broker, registry, topics
):
    write(
        all_types_frame(spark),
        broker,
        registry.url,
        topic=topics("avro_{schema}_{table}"),
        enable_tidb_extension="true",
        avro_bigint_unsigned_handling_mode="string",
        **all_types_options(),
    )
    topic = topics("avro_types_all")
    records = broker.consume_all(topic)
    assert len(records) == 2
    client = confluent_client(registry.url)
    values = AvroDeserializer(client)
    keys = AvroDeserializer(client)
    rows = [values(r.value, SerializationContext(topic, MessageField.VALUE)) for r in records]
    assert [keys(r.key, SerializationContext(topic, MessageField.KEY)) for r in records] == [
        {"id": 1},
        {"id": 2},
    ]
    full, nulls = rows
    for name in ALL_TYPES:
        assert full[name] == CONFLUENT_EXPECTED.get(name, ALL_TYPES[name][1]), name
    assert isinstance(full["c_decimal"], Decimal)
    assert str(full["c_decimal"]) == "-12345678.1250"  # exact, scale kept
    assert nulls == {**dict.fromkeys(ALL_TYPES), "id": 2, **_extension(nulls)}
    assert full["_tidb_op"] == "c" and full["_tidb_commit_ts"] > 0
    mine = sorted(s for s in registry.subjects() if s.startswith(topics.prefix))
    assert mine == [f"{topic}-key", f"{topic}-value"]


def _extension(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k.startswith("_tidb_")}


def test_changes_replay_into_the_same_table_with_one_version_per_schema(
    spark, broker, registry, topics
):
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA).coalesce(1)
    write(
        df,
        broker,
        registry.url,
        topic=topics("avro_{schema}_{table}"),
        database="shop",
        table="orders",
        primary_key="id",
        partition="index-value",
        partition_num="3",
        enable_tidb_extension="true",
    )
    topic = topics("avro_shop_orders")
    rows = decoded_rows(broker, registry, topic)
    # DELETEs are tombstones: the key, no value.
    tombstones = [r for r in rows if r.op is Op.DELETE]
    assert tombstones and all(r.data is None and set(r.old) == {"id"} for r in tombstones)
    # Tombstones carry no commit ts: each key's order is its partition's offset order.
    by_key: dict[int, list[DecodedRow]] = {}
    for row in rows:
        image = row.data if row.data is not None else row.old
        by_key.setdefault(image["id"], []).append(row)
    table = final_table([r for events in by_key.values() for r in events])
    expected = apply_changes(CHANGES)
    assert table == expected
    # One table: one key and one value schema, each one version (that a task asks the
    # registry once per schema, not per row, is tests/unit/writer/test_writer.py's).
    assert len(registry.schemas(f"{topic}-key")) == len(registry.schemas(f"{topic}-value")) == 1


def test_a_changed_table_schema_becomes_a_new_version_and_an_incompatible_one_fails(
    spark, broker, registry, topics
):
    options = {"topic": topics("evolve_{schema}_{table}"), "database": "db", "table": "people"}
    topic = topics("evolve_db_people")
    write(
        spark.createDataFrame([(1, "a")], "id bigint, name string"),
        broker,
        registry.url,
        primary_key="id",
        **options,
    )
    # A new nullable column: BACKWARD compatible (readers of v2 fill the default null).
    write(
        spark.createDataFrame([(2, "b", 30)], "id bigint, name string, age int"),
        broker,
        registry.url,
        primary_key="id",
        **options,
    )
    assert len(registry.schemas(f"{topic}-value")) == 2
    assert len(registry.schemas(f"{topic}-key")) == 1
    # name changes from string to int: refused by the registry, the write fails.
    with pytest.raises(Exception) as failure:
        write(
            spark.createDataFrame([(3, 7, 31)], "id bigint, name int, age int"),
            broker,
            registry.url,
            primary_key="id",
            **options,
        )
    text = str(failure.value)
    assert f"{topic}-value" in text
    assert "incompatible" in text.lower()
    rows = decoded_rows(broker, registry, topic)
    assert [r.data["id"] for r in rows] == [1, 2]


@pytest.mark.parametrize("strategy", ["record", "TopicRecordNameStrategy"])
def test_record_subject_strategies_let_tables_share_a_topic(
    spark, broker, registry, topics, strategy
):
    topic = topics("avro_shared")
    # Record-name subjects do not name the topic: databases of this test's own keep them
    # apart from other tests' in the run's registry.
    a, b = topics("a"), topics("b")
    records = [f"default.{a}.t1", f"default.{b}.t2"]
    subjects = records if strategy == "record" else [f"{topic}-{r}" for r in records]
    df = spark.createDataFrame(
        [(a, "t1", 1, "x"), (b, "t2", 2, "y")],
        "_database string, _table string, id bigint, name string",
    )
    write(df, broker, registry.url, topic=topic, primary_key="id", subject_name_strategy=strategy)
    # Key records are named <full name>.Key: key and value get subjects of their own.
    assert set(subjects) <= set(registry.subjects())
    rows = decoded_rows(broker, registry, topic)
    assert sorted((r.database, r.table, r.data["name"]) for r in rows) == [
        (a, "t1", "x"),
        (b, "t2", "y"),
    ]


@dataclasses.dataclass
class _Auth:
    user: str = "sink"
    password: str = "s3cr3t:pa/ss"


def test_basic_auth_from_the_url_or_options_and_a_wrong_password_is_named_not_shown(
    spark, broker, topics
):
    from tests.support.registry import TestSchemaRegistry

    auth = _Auth()
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    options = {"database": "db", "table": "auth", "primary_key": "id"}
    with TestSchemaRegistry(user=auth.user, password=auth.password) as secured:
        host = secured.url.split("://", 1)[1]
        encoded = auth.password.replace(":", "%3A").replace("/", "%2F")
        write(df, broker, f"http://{auth.user}:{encoded}@{host}", topic=topics("auth_a"), **options)
        write(
            df,
            broker,
            secured.url,
            topic=topics("auth_b"),
            schema_registry_user=auth.user,
            schema_registry_password=auth.password,
            **options,
        )
        assert {topics("auth_a-value"), topics("auth_b-value")} <= set(secured.subjects())
        with pytest.raises(Exception) as failure:
            write(
                df,
                broker,
                secured.url,
                topic=topics("auth_c"),
                schema_registry_user=auth.user,
                schema_registry_password="wrong-password-123",
                **options,
            )
    text = str(failure.value)
    assert "schema-registry-password" in text or "401" in text
    assert "wrong-password-123" not in text and auth.password not in text

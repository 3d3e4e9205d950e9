"""Batch writes through Spark `local[2]` to a real broker (Kafka), read back and decoded."""

from __future__ import annotations

import zlib
from typing import Any

import pytest

from tests.support.tables import ALL_TYPES, EXPECTED, SPARK_TYPES
from ticdc_sink import tso
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedBootstrap, DecodedRow, DecodedWatermark
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration


def write(df: Any, broker: Any, **options: str) -> None:
    writer = df.write.format("ticdc").mode("append")
    writer = writer.option("kafka.bootstrap.servers", broker.bootstrap)
    for name, value in options.items():
        writer = writer.option(name.replace("_", "-"), value)
    writer.save()


def decoded(broker: Any, topic: str) -> dict[int, list[Any]]:
    """Every message of the topic, decoded, by partition in offset order."""
    decoder = SimpleDecoder()
    out: dict[int, list[Any]] = {}
    for record in broker.consume_all(topic):
        event = decoder.decode_message(record.key, record.value)
        out.setdefault(record.partition, []).append(event)
    return out


def crc_partition(parts: list[bytes], partitions: int) -> int:
    """TiCDC's PositionInertia hash, computed here independently of ticdc_sink.routing."""
    acc = 0
    for part in parts:
        acc ^= zlib.crc32(part)
    return acc % partitions


def test_changes_land_in_tidb_partitions_between_bootstrap_and_watermark(spark, broker, topics):
    ts = [tso.compose(1_700_000_000_000 + i) for i in range(6)]
    df = spark.createDataFrame(
        [
            ("c", ts[0], 1, "alice", None),
            ("c", ts[1], 2, "bob", None),
            ("c", ts[2], 3, "carol", None),
            ("u", ts[3], 2, "bobby", (2, "bob")),
            ("d", ts[4], 3, "carol", None),
            ("u", ts[5], 1, "alice", (1, "al")),
        ],
        "_op string, _commit_ts bigint, id bigint, name string, "
        "_before struct<id: bigint, name: string>",
    ).coalesce(1)
    write(
        df,
        broker,
        topic=topics("orders_{schema}_{table}"),
        partition="index-value",
        partition_num="4",
        database="shop",
        table="users",
        primary_key="id",
    )
    by_partition = decoded(broker, topics("orders_shop_users"))
    assert sorted(by_partition) == [0, 1, 2, 3]
    rows: list[tuple[int, DecodedRow]] = []
    for partition, events in by_partition.items():
        assert isinstance(events[0], DecodedBootstrap)
        assert isinstance(events[-1], DecodedWatermark)
        assert events[-1].commit_ts == ts[5]
        rows += [(partition, e) for e in events if isinstance(e, DecodedRow)]
    for partition, row in rows:
        image = row.data if row.op is not Op.DELETE else row.old
        key = str(image["id"]).encode()
        assert partition == crc_partition([b"shopusers", b"id" + key], 4), row
    ordered = sorted((r.commit_ts, r.op, r.data, r.old) for _, r in rows)
    assert ordered == [
        (ts[0], Op.INSERT, {"id": 1, "name": "alice"}, None),
        (ts[1], Op.INSERT, {"id": 2, "name": "bob"}, None),
        (ts[2], Op.INSERT, {"id": 3, "name": "carol"}, None),
        (ts[3], Op.UPDATE, {"id": 2, "name": "bobby"}, {"id": 2, "name": "bob"}),
        (ts[4], Op.DELETE, None, {"id": 3, "name": "carol"}),
        (ts[5], Op.UPDATE, {"id": 1, "name": "alice"}, {"id": 1, "name": "al"}),
    ]


def test_partition_num_below_an_existing_topic_count_is_used_as_in_ticdc(spark, broker, topics):
    # tiflow SetPartitionNum: the sink-uri topic keeps partition-num partitions in use
    # (bootstraps, rows and watermarks alike); a topic of an expression keeps its count.
    broker.create_topic(topics("existing_five"), 5)
    broker.create_topic(topics("existing_expr_t"), 5)
    df = spark.createDataFrame([(i, "x") for i in range(20)], "id bigint, name string")
    options = {"database": "db", "table": "t", "partition": "index-value", "primary_key": "id"}
    write(df, broker, topic=topics("existing_five"), partition_num="2", **options)
    by_partition = decoded(broker, topics("existing_five"))
    assert sorted(by_partition) == [0, 1]
    for partition, events in by_partition.items():
        assert isinstance(events[0], DecodedBootstrap)
        assert isinstance(events[-1], DecodedWatermark)
        for row in (e for e in events if isinstance(e, DecodedRow)):
            key = str(row.data["id"]).encode()
            assert partition == crc_partition([b"dbt", b"id" + key], 2)
    write(df, broker, topic=topics("existing_expr_{table}"), partition_num="2", **options)
    assert sorted(decoded(broker, topics("existing_expr_t"))) == [0, 1, 2, 3, 4]


def test_rows_of_several_tables_route_by_the_database_and_table_columns(spark, broker, topics):
    df = spark.createDataFrame(
        [("a", "t1", 1), ("a", "t2", 2), ("b", "t1", 3)],
        "_database string, _table string, id bigint",
    )
    topic = topics("multi_{schema}_{table}")
    write(df, broker, topic=topic, primary_key="id", partition_num="1")
    for database, table, expected in [("a", "t1", 1), ("a", "t2", 2), ("b", "t1", 3)]:
        events = decoded(broker, topics(f"multi_{database}_{table}"))[0]
        rows = [e for e in events if isinstance(e, DecodedRow)]
        assert [(r.database, r.table, r.data) for r in rows] == [
            (database, table, {"id": expected})
        ]


def test_every_mysql_type_round_trips_through_spark_and_the_broker(spark, broker, topics):
    import json

    names = ["id", *ALL_TYPES]
    ddl = ", ".join(f"{n} {SPARK_TYPES.get(n, 'string')}" for n in ALL_TYPES)
    row = [1, *(value for _, value in ALL_TYPES.values())]
    null_row = [2, *([None] * len(ALL_TYPES))]
    df = spark.createDataFrame([row, null_row], f"id bigint, {ddl}")
    column_types = {name: mysql for name, (mysql, _) in ALL_TYPES.items()}
    write(
        df.coalesce(1),
        broker,
        topic=topics("all_types"),
        database="types",
        table="all",
        primary_key="id",
        partition_num="1",
        time_zone="Asia/Shanghai",
        column_types=json.dumps(column_types),
    )
    rows = [e for e in decoded(broker, topics("all_types"))[0] if isinstance(e, DecodedRow)]
    assert [r.data["id"] for r in rows] == [1, 2]
    got = rows[0].data
    for name in names[1:]:
        expected = EXPECTED.get(name, ALL_TYPES[name][1])
        assert got[name] == expected, name
    assert rows[1].data == {"id": 2, **dict.fromkeys(ALL_TYPES)}

"""protocol=canal-json through Spark and the broker: every type round-trips, a change
stream replays into the same table, and watermarks come under the TiDB extension only."""

from __future__ import annotations

import json
from typing import Any

import pytest

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
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.decode import DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration


def write(df: Any, broker: Any, **options: str) -> None:
    writer = df.write.format("ticdc").mode("append")
    options = {"kafka.bootstrap.servers": broker.bootstrap, "protocol": "canal-json", **options}
    for name, value in options.items():
        writer = writer.option(name.replace("_", "-"), value)
    writer.save()


def decoded(broker: Any, topic: str) -> list[tuple[Any, Any]]:
    decoder = CanalJsonDecoder()
    return [(r, decoder.decode_message(r.key, r.value)) for r in broker.consume_all(topic)]


def test_every_mysql_type_round_trips(spark, broker, topics):
    write(
        all_types_frame(spark),
        broker,
        topic=topics("canal_types"),
        enable_tidb_extension="true",
        **all_types_options(),
    )
    records = decoded(broker, topics("canal_types"))
    events = [e for _, e in records]
    assert isinstance(events[-1], DecodedWatermark)
    rows = [e for e in events if isinstance(e, DecodedRow)]
    assert [r.data["id"] for r in rows] == [1, 2]
    full, nulls = rows[0].data, rows[1].data
    for name in ALL_TYPES:
        assert full[name] == EXPECTED.get(name, ALL_TYPES[name][1]), name
    assert nulls == {"id": 2, **dict.fromkeys(ALL_TYPES)}
    message = json.loads(records[0][0].value)
    assert list(message)[:5] == ["id", "database", "table", "pkNames", "isDdl"]
    assert message["pkNames"] == ["id"] and message["mysqlType"]["c_bigint_u"] == (
        "bigint unsigned"
    )
    assert records[0][0].key == b""  # canal-json rows carry an empty key, as TiCDC's


def test_a_change_stream_replays_into_the_same_table(spark, broker, topics):
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA).repartition(2, "id")
    write(
        df.sortWithinPartitions("_commit_ts"),
        broker,
        topic=topics("canal_changes"),
        database="shop",
        table="orders",
        primary_key="id",
        partition="index-value",
        partition_num="3",
        enable_tidb_extension="true",
    )
    rows = [e for _, e in decoded(broker, topics("canal_changes")) if isinstance(e, DecodedRow)]
    rows.sort(key=lambda e: e.commit_ts)
    assert final_table(rows) == apply_changes(CHANGES)


def test_no_watermark_without_the_extension(spark, broker, topics):
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    write(df, broker, topic=topics("canal_plain"), database="d", table="t", primary_key="id")
    events = [e for _, e in decoded(broker, topics("canal_plain"))]
    assert [type(e).__name__ for e in events] == ["DecodedRow"]
    assert events[0].commit_ts == 0  # canal itself carries only `es`

"""protocol=debezium through Spark and the broker: every type round-trips, a change stream
replays into the same table, watermarks under the TiDB extension, and DDL messages for a
table's first batch and for a schema change between micro-batches."""

from __future__ import annotations

import json
from pathlib import Path
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
from ticdc_sink.codec.debezium.decoder import DebeziumDecoder
from ticdc_sink.decode import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_sink.errors import DeliveryError
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration


def write(df: Any, broker: Any, **options: str) -> None:
    writer = df.write.format("ticdc").mode("append")
    options = {"kafka.bootstrap.servers": broker.bootstrap, "protocol": "debezium", **options}
    for name, value in options.items():
        writer = writer.option(name.replace("_", "-"), value)
    writer.save()


def decoded(broker: Any, topic: str, time_zone: str = "UTC") -> list[tuple[Any, Any]]:
    decoder = DebeziumDecoder(time_zone=time_zone)
    return [(r, decoder.decode_message(r.key, r.value)) for r in broker.consume_all(topic)]


def test_every_mysql_type_round_trips(spark, broker, topics):
    write(
        all_types_frame(spark),
        broker,
        topic=topics("dbz_types"),
        enable_tidb_extension="true",
        **all_types_options(),
    )
    events = [e for _, e in decoded(broker, topics("dbz_types"), "Asia/Shanghai")]
    rows = [e for e in events if isinstance(e, DecodedRow)]
    assert isinstance(events[-1], DecodedWatermark)
    assert [r.data["id"] for r in rows] == [1, 2]
    full, nulls = rows[0].data, rows[1].data
    for name in ALL_TYPES:
        assert full[name] == EXPECTED.get(name, ALL_TYPES[name][1]), name
    assert nulls == {"id": 2, **dict.fromkeys(ALL_TYPES)}
    assert rows[0].database == "types" and rows[0].table == "all"


@pytest.mark.parametrize("disable_schema", ["false", "true"])
def test_a_change_stream_replays_into_the_same_table(spark, broker, topics, disable_schema):
    topic = topics(f"dbz_changes_{disable_schema}")
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA).repartition(2, "id")
    write(
        df.sortWithinPartitions("_commit_ts"),
        broker,
        topic=topic,
        database="shop",
        table="orders",
        primary_key="id",
        partition="index-value",
        partition_num="3",
        debezium_disable_schema=disable_schema,
    )
    records = decoded(broker, topic)
    rows = sorted((e for _, e in records if isinstance(e, DecodedRow)), key=lambda e: e.commit_ts)
    if disable_schema == "true":
        assert all(not r.typed for r in rows)
        assert all(b'"schema"' not in rec.value for rec, _ in records)
    # TiCDC writes DECIMAL as a double; only `tidb_type` (the TiDB extension) tells a
    # decoder it was a decimal, so here amounts come back as floats.
    expected = {k: {**v, "amount": float(v["amount"])} for k, v in apply_changes(CHANGES).items()}
    assert final_table(rows) == expected
    # The primary-key change (3 -> 30) is a DELETE and an INSERT, as TiCDC splits it.
    assert [(r.op, (r.old or r.data)["id"]) for r in rows if 3 in ((r.old or {}).get("id"),)][
        -1
    ] == (Op.DELETE, 3)
    # Keys are the handle key, with the schema part unless it is disabled.
    key = json.loads(records[0][0].key)
    assert list(key["payload"]) == ["id"]
    assert ("schema" in key) is (disable_schema == "false")


def _run_stream(
    spark: Any, broker: Any, topic: str, source: Path, checkpoint: Path, schema: str
) -> None:
    query = (
        spark.readStream.schema(schema)
        .json(str(source))
        .writeStream.format("ticdc")
        .option("checkpointLocation", str(checkpoint))
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("protocol", "debezium")
        .option("topic", topic)
        .option("partition-num", "2")
        .option("database", "shop")
        .option("table", "items")
        .option("primary-key", "id")
        .option("enable-tidb-extension", "true")
        .option("ddl-on-first-batch", "true")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None


@pytest.mark.spark_version
def test_ddl_messages_announce_the_first_batch_and_a_schema_change(spark, broker, topics, tmp_path):
    topic = topics("dbz_ddl_shop_items")
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    (source / "a.json").write_text('{"_op": "c", "id": 1, "name": "x"}\n')
    _run_stream(spark, broker, topic, source, checkpoint, "_op string, id bigint, name string")
    (source / "b.json").write_text('{"_op": "c", "id": 2, "name": "y", "qty": 5}\n')
    # The restarted query reads with one more column: the table's schema changed.
    _run_stream(
        spark, broker, topic, source, checkpoint, "_op string, id bigint, name string, qty int"
    )
    # Same schema again: no DDL.
    (source / "c.json").write_text('{"_op": "c", "id": 3, "name": "z", "qty": 6}\n')
    _run_stream(
        spark, broker, topic, source, checkpoint, "_op string, id bigint, name string, qty int"
    )

    records = decoded(broker, topic)
    for partition in (0, 1):
        kinds = []
        for record, event in records:
            if record.partition != partition:
                continue
            if isinstance(event, DecodedDDL):
                kinds.append(event.sql.split(" (")[0].split(" ADD")[0])
            elif isinstance(event, DecodedWatermark):
                kinds.append("WATERMARK")
            else:
                kinds.append(f"ROW {event.data['id']}")
        # In every partition: the CREATE before the first batch's rows and watermark, the
        # ALTER before the second's, no DDL before the third (same schema), one DDL per
        # change even though Spark plans each micro-batch twice.
        rows = [k for k in kinds if k.startswith("ROW")]
        assert [k for k in kinds if not k.startswith("ROW")] == [
            "CREATE TABLE `items`",
            "WATERMARK",
            "ALTER TABLE `items`",
            "WATERMARK",
            "WATERMARK",
        ], kinds
        for row in rows:
            batch = int(row.split()[1])
            assert kinds.index(row) > [i for i, k in enumerate(kinds) if k != row][0]
            assert (
                kinds.index(row) < [i for i, k in enumerate(kinds) if k == "WATERMARK"][batch - 1]
            )
    ddl_events = [e for _, e in records if isinstance(e, DecodedDDL)]
    assert "ADD COLUMN `qty` int" in ddl_events[-1].sql
    assert ddl_events[0].type == "CREATE" and ddl_events[-1].type == "ALTER"


def test_an_update_without_before_names_the_column_and_option_and_sends_no_watermark(
    spark, broker, topics
):
    df = spark.createDataFrame([("c", 1, "a"), ("u", 1, "b")], "_op string, id bigint, name string")
    with pytest.raises(Exception) as failure:
        write(
            df.coalesce(1),
            broker,
            topic=topics("dbz_no_before"),
            database="d",
            table="t",
            primary_key="id",
            enable_tidb_extension="true",
        )
    text = str(failure.value)
    assert "InputError" in text and "_before" in text and "debezium-output-old-value" in text
    # The record batch is encoded whole before its first message goes out: nothing was
    # sent, not even a message that creates the topic, so there is no watermark either.
    with pytest.raises(DeliveryError, match="UNKNOWN_TOPIC_OR_PART"):
        broker.consume_all(topics("dbz_no_before"))

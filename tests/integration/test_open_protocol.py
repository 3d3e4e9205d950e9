"""protocol=open-protocol through Spark and the broker: every type round-trips, rows of a
partition share Kafka messages within max-batch-size, a change stream replays into the
same table, and DDL and resolved events come as TiCDC sends them; values compressed with
large-message-handle-compression (open-protocol, simple, canal-json, debezium) decode
back."""

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
from ticdc_sink.cli import main
from ticdc_sink.codec.compression import Compression, decompress
from ticdc_sink.codec.open_protocol.decoder import OpenProtocolDecoder
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedDDL, DecodedRow, DecodedWatermark, DecoderSettings

pytestmark = pytest.mark.integration


def write(df: Any, broker: Any, **options: str) -> None:
    writer = df.write.format("ticdc").mode("append")
    options = {"kafka.bootstrap.servers": broker.bootstrap, "protocol": "open-protocol", **options}
    for name, value in options.items():
        writer = writer.option(name.replace("_", "-"), value)
    writer.save()


def decoded(broker: Any, topic: str) -> list[tuple[Any, list[Any]]]:
    decoder = OpenProtocolDecoder()
    return [(r, decoder.decode_messages(r.key, r.value)) for r in broker.consume_all(topic)]


def test_every_mysql_type_round_trips_and_ddl_and_resolved_events_come(spark, broker, topics):
    write(
        all_types_frame(spark),
        broker,
        topic=topics("open_types"),
        ddl_on_first_batch="true",
        **all_types_options(),
    )
    records = decoded(broker, topics("open_types"))
    kinds = [[type(e) for e in events] for _, events in records]
    # The CREATE TABLE first, both rows in one message, the resolved event last.
    assert kinds == [[DecodedDDL], [DecodedRow, DecodedRow], [DecodedWatermark]]
    ddl = records[0][1][0]
    assert ddl.type == "create table" and ddl.sql.startswith("CREATE TABLE `all`")
    full, nulls = (e.data for e in records[1][1])
    for name in ALL_TYPES:
        assert full[name] == EXPECTED.get(name, ALL_TYPES[name][1]), name
    assert nulls == {"id": 2, **dict.fromkeys(ALL_TYPES)}
    assert records[2][1][0].commit_ts >= records[1][1][1].commit_ts


def test_a_change_stream_replays_in_batches_of_max_batch_size(spark, broker, topics):
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA).repartition(2, "id")
    write(
        df.sortWithinPartitions("_commit_ts"),
        broker,
        topic=topics("open_changes"),
        database="shop",
        table="orders",
        primary_key="id",
        partition="index-value",
        partition_num="3",
        max_batch_size="3",
    )
    records = decoded(broker, topics("open_changes"))
    sizes = [len(events) for _, events in records]
    rows = [e for _, events in records for e in events if isinstance(e, DecodedRow)]
    assert max(sizes) == 3 and len(records) < len(rows)
    rows.sort(key=lambda e: e.commit_ts)
    assert final_table(rows) == apply_changes(CHANGES)


def test_compressed_values_round_trip(spark, broker, topics):
    rows = [(i, "x" * 500) for i in range(4)]
    df = spark.createDataFrame(rows, "id bigint, name string").coalesce(1)
    options = {"database": "shop", "table": "lz", "primary_key": "id", "partition_num": "1"}
    write(df, broker, topic=topics("open_lz4"), large_message_handle_compression="lz4", **options)
    decoder = OpenProtocolDecoder(compression="lz4")
    records = broker.consume_all(topics("open_lz4"))
    events = [e for r in records for e in decoder.decode_messages(r.key, r.value)]
    assert [e.data for e in events if isinstance(e, DecodedRow)] == [
        {"id": i, "name": "x" * 500} for i in range(4)
    ]
    assert len(records[0].value) < 4 * 500  # the values went compressed


@pytest.mark.parametrize("protocol", ["simple", "canal-json", "debezium"])
def test_other_protocols_compress_as_well(spark, broker, topics, protocol):
    rows = [(i, "y" * 500) for i in range(3)]
    df = spark.createDataFrame(rows, "id bigint, name string").coalesce(1)
    topic = topics(f"compressed_{protocol.replace('-', '_')}")
    options = {"database": "shop", "table": "z", "primary_key": "id", "partition_num": "1"}
    write(
        df,
        broker,
        topic=topic,
        protocol=protocol,
        enable_tidb_extension="true",
        large_message_handle_compression="snappy",
        **options,
    )
    decoder = decoder_for(protocol, DecoderSettings(compression="snappy"))
    records = broker.consume_all(topic)
    events = [decoder.decode_message(r.key, r.value) for r in records]
    assert [e.data for e in events if isinstance(e, DecodedRow)] == [
        {"id": i, "name": "y" * 500} for i in range(3)
    ]
    assert isinstance(events[-1], DecodedWatermark)
    # Every value is a Snappy block holding the JSON (decode_message above took it whole).
    assert all(json.loads(decompress(Compression.SNAPPY, r.value)) for r in records)


def test_decode_prints_every_event_of_a_batched_message(spark, broker, topics, capsys):
    df = spark.createDataFrame([(i, f"n{i}") for i in range(5)], "id bigint, name string")
    options = {"database": "shop", "table": "cli", "primary_key": "id", "partition_num": "1"}
    write(df.coalesce(1), broker, topic=topics("open_cli"), **options)
    argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", topics("open_cli")]
    assert main([*argv, "--protocol", "open-protocol"]) == 0
    out = capsys.readouterr().out.splitlines()
    # One message of 5 rows (max-batch-size 16) and the resolved event: 6 lines, 2 messages.
    assert sum("INSERT shop.cli" in line for line in out) == 5
    assert sum("WATERMARK" in line for line in out) == 1
    assert out[-1] == f"2 messages from topic {topics('open_cli')}"

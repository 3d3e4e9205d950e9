"""A debezium topic written with `enable-tidb-extension=true` (pingcap/ticdc v26.3, the
default `ticdc-version`: DDL events and watermarks) read back as a watermark-consistent
stream: the rows of a batch write and of a streaming write, no transaction cut between
micro-batches; a column added mid-stream (an ALTER event to each partition) stops the
stream at the first wider row, as for canal-json. Under
`ticdc-version=8.5` the topic holds rows only, and such a stream is refused."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

from tests.support.spark_read import run_stream, stream_rows, write_frame
from tests.support.tables import CHANGES, CHANGES_SCHEMA
from ticdc_sink.codec.debezium.decoder import DebeziumDecoder
from ticdc_sink.decode import DecodedDDL, DecodedRow, DecodedWatermark

# spark_version: streaming writes and reads
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]

TABLE = {"database": "shop", "table": "items", "primary-key": "id"}
EXTENSION = {"protocol": "debezium", "enable-tidb-extension": "true"}


def _stream_write(
    spark: Any, broker: Any, topic: str, source: Path, checkpoint: Path, schema: str, **extra: str
) -> None:
    writer = spark.readStream.schema(schema).json(str(source)).writeStream.format("ticdc")
    options = {
        "checkpointLocation": str(checkpoint),
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": topic,
        "partition-num": "2",
        **TABLE,
        **EXTENSION,
        **extra,
    }
    for name, value in options.items():
        writer = writer.option(name, value)
    query = writer.trigger(availableNow=True).start()
    assert query.awaitTermination(180)
    assert query.exception() is None


def _events(broker: Any, topic: str) -> list[Any]:
    decoder = DebeziumDecoder()
    return [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]


def _kinds(broker: Any, topic: str) -> list[str]:
    kinds = []
    for event in _events(broker, topic):
        kinds.append(
            "DDL"
            if isinstance(event, DecodedDDL)
            else "WATERMARK"
            if isinstance(event, DecodedWatermark)
            else "ROW"
            if isinstance(event, DecodedRow)
            else type(event).__name__
        )
    return kinds


def test_batch_and_stream_writes_read_back_as_a_watermark_consistent_stream(
    spark: Any, broker: Any, topics: Any, tmp_path: Path
) -> None:
    topic = topics("dbz_stream_read")
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA)
    write_frame(
        df, broker, topic, **TABLE, **EXTENSION, partition="index-value", **{"partition-num": "2"}
    )
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.json").write_text(
        '{"_op": "c", "_commit_ts": 470000000000000000, "id": 100, "name": "s", "amount": 1.25}\n'
    )
    _stream_write(
        spark,
        broker,
        topic,
        source,
        tmp_path / "write",
        "_op string, _commit_ts bigint, id bigint, name string, amount decimal(10,2)",
    )
    assert {"ROW", "WATERMARK"} <= set(_kinds(broker, topic))

    batches: list[list[tuple[Any, ...]]] = []

    def collect(frame: Any, _batch_id: int) -> None:
        batches.append(
            [
                (r["_op"], r["_commit_ts"], r["id"], r["name"], Decimal(str(r["amount"])))
                for r in frame.collect()
                if r["amount"] is not None
            ]
        )

    run_stream(spark, broker.bootstrap, topic, str(tmp_path / "read"), collect, **EXTENSION)
    got = sorted(row for batch in batches for row in batch)
    ops = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    expected = []
    for op, ts, key, name, amount, before in CHANGES:
        if op == "u" and before[0] != key:  # TiCDC splits a key-changing UPDATE
            expected += [("DELETE", ts, *before), ("INSERT", ts, key, name, amount)]
        else:
            expected.append((ops[op], ts, key, name, amount))
    expected.append(("INSERT", 470000000000000000, 100, "s", Decimal("1.25")))
    assert got == sorted(expected)
    # A transaction is never cut: every commit ts lies in one micro-batch.
    where = [{row[1] for row in batch} for batch in batches]
    assert all(not (a & b) for i, a in enumerate(where) for b in where[i + 1 :])


def test_a_column_added_mid_stream_is_a_schema_change_and_v8_5_sends_no_ddl(
    spark: Any, broker: Any, topics: Any, tmp_path: Path
) -> None:
    topic = topics("dbz_stream_ddl")
    source, checkpoint = tmp_path / "in", tmp_path / "write"
    source.mkdir()
    (source / "a.json").write_text('{"_op": "c", "id": 1, "name": "x"}\n')
    narrow, wide = (
        "_op string, id bigint, name string",
        "_op string, id bigint, name string, qty int",
    )
    _stream_write(spark, broker, topic, source, checkpoint, narrow)
    (source / "b.json").write_text('{"_op": "c", "id": 2, "name": "y", "qty": 5}\n')
    _stream_write(spark, broker, topic, source, checkpoint, wide)
    assert _kinds(broker, topic).count("DDL") == 2  # to each partition, before the wider rows

    # The DDL events decode (type, statement) without a table schema, as canal-json's:
    # the first wider row stops the stream, naming both column lists, as for canal-json.
    ddl = [e for e in _events(broker, topic) if isinstance(e, DecodedDDL)]
    assert [(e.type, e.sql.split(" ADD")[0]) for e in ddl] == [("ALTER", "ALTER TABLE `items`")] * 2
    with pytest.raises(StreamingQueryException) as caught:
        stream_rows(spark, broker.bootstrap, topic, str(tmp_path / "read_a"), **EXTENSION)
    message = str(caught.value)
    assert "SchemaError" in message
    assert (
        "INSERT shop.items has columns (id, name, qty), not the read's shop.items (id, name)"
        in (message)
    )
    kept = stream_rows(
        spark,
        broker.bootstrap,
        topic,
        str(tmp_path / "read_b"),
        **EXTENSION,
        **{"schema-evolution": "ignore-new-columns"},
    )
    assert sorted(row[0] for row in kept) == [1, 2]

    # TiCDC v8.5: rows only, and a watermark-consistent stream of them is refused.
    old = topics("dbz_stream_v8_5")
    old_source = tmp_path / "old"
    old_source.mkdir()
    (old_source / "a.json").write_text('{"_op": "c", "id": 1, "name": "x"}\n')
    _stream_write(
        spark, broker, old, old_source, tmp_path / "old_write", narrow, **{"ticdc-version": "8.5"}
    )
    (old_source / "b.json").write_text('{"_op": "c", "id": 2, "name": "y", "qty": 5}\n')
    _stream_write(
        spark, broker, old, old_source, tmp_path / "old_write", wide, **{"ticdc-version": "8.5"}
    )
    assert set(_kinds(broker, old)) == {"ROW"}
    with pytest.raises(Exception, match="option ticdc-version is 8.5"):
        stream_rows(
            spark,
            broker.bootstrap,
            old,
            str(tmp_path / "read_old"),
            **EXTENSION,
            **{"ticdc-version": "8.5"},
        )

"""Structured Streaming: file source, `availableNow`, restarts from the checkpoint and a
re-run of a batch the sink had already committed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ticdc_sink.decode import DecodedRow, DecodedWatermark
from ticdc_sink.decode.simple import SimpleDecoder

pytestmark = pytest.mark.integration

TOPIC = "stream_shop_items"


def add_file(folder: Path, n: int) -> None:
    rows = [{"_op": "c", "id": n * 100 + i, "name": f"item{n}-{i}"} for i in range(3)]
    (folder / f"part-{n:03}.json").write_text("\n".join(json.dumps(r) for r in rows))


def run_available_now(spark: Any, broker: Any, source: Path, checkpoint: Path) -> None:
    stream = (
        spark.readStream.schema("_op string, id bigint, name string")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
    )
    query = (
        stream.writeStream.format("ticdc")
        .option("checkpointLocation", str(checkpoint))
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", "stream_{schema}_{table}")
        .option("partition-num", "2")
        .option("partition", "index-value")
        .option("database", "shop")
        .option("table", "items")
        .option("primary-key", "id")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None


def test_restarts_lose_nothing_replays_are_identical_and_watermarks_only_advance(
    spark, broker, tmp_path
):
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    add_file(source, 0)
    add_file(source, 1)
    run_available_now(spark, broker, source, checkpoint)  # batches 0 and 1
    add_file(source, 2)
    run_available_now(spark, broker, source, checkpoint)  # batch 2
    first = broker.consume_all(TOPIC)

    # The sink committed batch 2 (watermark sent) but Spark "crashed" before recording it:
    # the restart re-runs batch 2 from the same offsets.
    for name in ("2", ".2.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    run_available_now(spark, broker, source, checkpoint)
    records = broker.consume_all(TOPIC)

    decoder = SimpleDecoder()
    events = [(r, decoder.decode_message(r.key, r.value)) for r in records]
    rows = [(r, e) for r, e in events if isinstance(e, DecodedRow)]
    ids = sorted(e.data["id"] for _, e in rows)
    batch2 = [100 * 2 + i for i in range(3)]
    # Nothing lost; batch 2's rows are there twice (at-least-once) and nothing else is.
    assert ids == sorted([0, 1, 2, 100, 101, 102, *batch2, *batch2])

    # The re-run batch wrote byte-identical messages to the same partitions.
    replayed = records[len(first) :]
    original = {(r.partition, r.key, r.value) for r in first}
    replayed_rows = [r for r in replayed if b'"INSERT"' in r.value]
    assert len(replayed_rows) == 3
    assert all((r.partition, r.key, r.value) in original for r in replayed_rows)

    # One commit ts per batch; watermarks never go backwards in any partition.
    commit_ts_by_batch = sorted({e.commit_ts for _, e in rows})
    assert len(commit_ts_by_batch) == 3
    for partition in {r.partition for r in records}:
        marks = [
            e.commit_ts
            for r, e in events
            if r.partition == partition and isinstance(e, DecodedWatermark)
        ]
        # One per batch, in order; the re-run sent none: its watermark had been sent.
        assert marks == commit_ts_by_batch

    # One report per committed batch under the checkpoint location, for operators.
    reports = sorted((checkpoint / "ticdc" / "reports").glob("*.json"))
    assert [p.name for p in reports] == ["0.json", "1.json", "2.json"]
    last = json.loads(reports[-1].read_text())
    assert last["batch_id"] == 2 and last["rows"] == 3
    assert last["topics"][TOPIC]["messages"] >= 3 and last["bytes"] > 0
    assert last["watermark"] is None  # the re-run sent none: it had been sent

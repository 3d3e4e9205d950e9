"""Structured Streaming: file source, `availableNow`, restarts from the checkpoint and a
re-run of a batch the sink had already committed: simulated (Spark's commit log entry
deleted after a clean stop), and for real (the driver killed inside the sink's commit)."""

from __future__ import annotations

import json

import pytest

from tests.support.proxy import wait_until
from tests.support.spark_job import add_file, kill_job, run_available_now, start_job
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow, DecodedWatermark

# spark_version: the stream writers: Arrow (4.1+) or Row (4.0)
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]


def test_restarts_lose_nothing_replays_are_identical_and_watermarks_only_advance(
    spark, broker, topics, tmp_path
):
    topic = topics("stream_shop_items")
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    add_file(source, 0)
    add_file(source, 1)
    run_available_now(spark, broker.bootstrap, source, checkpoint, topic=topic)  # batches 0, 1
    add_file(source, 2)
    run_available_now(spark, broker.bootstrap, source, checkpoint, topic=topic)  # batch 2
    first = broker.consume_all(topic)

    # The sink committed batch 2 (watermark sent) but Spark "crashed" before recording it:
    # the restart re-runs batch 2 from the same offsets.
    for name in ("2", ".2.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    run_available_now(spark, broker.bootstrap, source, checkpoint, topic=topic)
    records = broker.consume_all(topic)

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
    assert last["topics"][topic]["messages"] >= 3 and last["bytes"] > 0
    assert last["watermark"] is None  # the re-run sent none: it had been sent


def test_a_driver_killed_inside_the_sinks_commit_replays_the_batch_identically(
    spark, broker, topics, tmp_path
):
    topic = topics("stream_shop_killed")
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    committed = checkpoint / "ticdc" / "reports" / "1.json"  # the commit's last step
    source.mkdir()
    add_file(source, 0)
    add_file(source, 1)
    # A driver of its own (a child process): batch 0 completes; batch 1's commit sends and
    # records its watermark, keeps its report, then hangs; the test kills the driver
    # (SIGKILL, whole process group) before Spark can write commits/1.
    job = start_job(
        [
            "--hang-after-commit",
            "1",
            "stream",
            "--bootstrap",
            broker.bootstrap,
            "--topic",
            topic,
            "--source",
            str(source),
            "--checkpoint",
            str(checkpoint),
            "--table",
            "killed",
        ],
    )
    try:
        wait_until(
            lambda: committed.exists() or job.poll() is not None, 300, what="batch 1's commit"
        )
        assert job.poll() is None, f"the job ended with {job.returncode} before the commit"
    finally:
        kill_job(job)
    watermark_before_kill = json.loads(committed.read_text())["watermark"]
    assert (checkpoint / "commits" / "0").exists()
    assert not (checkpoint / "commits" / "1").exists()
    before = broker.consume_all(topic)

    # Restarted (here, in the shared session) with one more file: batch 1 is re-run from
    # its offsets, then batch 2 runs.
    add_file(source, 2)
    run_available_now(spark, broker.bootstrap, source, checkpoint, topic=topic, table="killed")
    records = broker.consume_all(topic)
    assert set(before) <= set(records)  # what was there stays, at the same offsets

    decoder = SimpleDecoder()
    events = [(r, decoder.decode_message(r.key, r.value)) for r in records]
    rows = [(r, e) for r, e in events if isinstance(e, DecodedRow)]
    # One commit ts per micro-batch (the file source may put either file in batch 0).
    by_batch: dict[int, list[tuple[int, bytes, bytes]]] = {}
    ids_by_batch: dict[int, set[int]] = {}
    for r, e in rows:
        by_batch.setdefault(e.commit_ts, []).append((r.partition, r.key, r.value))
        ids_by_batch.setdefault(e.commit_ts, set()).add(e.data["id"])
    ts0, ts1, ts2 = sorted(by_batch)
    assert ts1 == watermark_before_kill  # the batch whose commit the kill interrupted
    # Nothing lost: every row of the three files, each batch's rows once...
    every_id = sorted(i for ids in ids_by_batch.values() for i in ids)
    assert every_id == [n * 100 + i for n in range(3) for i in range(3)]
    assert ids_by_batch[ts2] == {200, 201, 202}
    assert len(by_batch[ts0]) == len(by_batch[ts2]) == 3
    # ...except the killed batch, there twice: the re-run wrote byte-identical messages to
    # the same partitions (the batch's commit ts was kept under the checkpoint).
    assert len(by_batch[ts1]) == 6
    replayed = sorted(by_batch[ts1])
    assert replayed[0::2] == replayed[1::2]
    # Watermarks: one per batch and partition, never lower than one sent before; the
    # re-run of batch 1 sent none (its watermark went out before the kill).
    for partition in {r.partition for r in records}:
        marks = [
            e.commit_ts
            for r, e in events
            if r.partition == partition and isinstance(e, DecodedWatermark)
        ]
        assert marks == [ts0, ts1, ts2]

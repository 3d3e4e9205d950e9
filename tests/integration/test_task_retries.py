"""Task retries: Spark `local[2,3]` (three attempts per task) in a child process, writing
through the test-only data source of `tests/support/faults.py` with `fail-first-attempt`:
the first attempt of every write task fails after some of its messages were acknowledged
by the broker."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.support.spark_job import add_file, start_job
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedBootstrap, DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration

RETRIES = "local[2,3]"


def run_job(args: list[str], fail_after: int) -> None:
    job = start_job(["--master", RETRIES, "--fail-first-attempt", str(fail_after), *args])
    assert job.wait(timeout=600) == 0, "the job failed although every task had retries left"


def decode(records: list[Any]) -> list[tuple[Any, Any]]:
    decoder = SimpleDecoder()
    return [(r, decoder.decode_message(r.key, r.value)) for r in records]


def test_retried_batch_tasks_resend_identical_messages_and_one_watermark_follows(broker, topics):
    topic, rows, tasks, fail_after = topics("retried_batch"), 20_000, 4, 1000
    run_job(
        [
            "batch",
            "--bootstrap",
            broker.bootstrap,
            "--topic",
            topic,
            "--rows",
            str(rows),
            "--partitions",
            str(tasks),
        ],
        fail_after,
    )
    events = decode(broker.consume_all(topic, timeout=120))
    row_records = [(r.partition, r.key, r.value) for r, e in events if isinstance(e, DecodedRow)]
    counts = Counter(row_records)
    # Every row is there, and each has exactly one encoding: the retry re-sent the first
    # attempt's messages byte for byte, to the same partitions (same commit ts).
    ids = {e.data["id"] for _, e in events if isinstance(e, DecodedRow)}
    assert ids == set(range(rows))
    assert len(counts) == rows
    # What the first attempts sent before failing, each row now there twice: per task 3
    # BOOTSTRAPs (one per partition) and 997 rows, or 1000 rows when the task's Python
    # worker had already sent the table's BOOTSTRAPs for another task's retry (they go
    # once per worker process, then by interval and count).
    assert set(counts.values()) == {1, 2}
    twice = sum(1 for n in counts.values() if n == 2)
    assert tasks * 997 <= twice <= tasks * 1000 and (twice - tasks * 997) % 3 == 0, twice
    bootstraps = Counter(
        (r.partition, r.value) for r, e in events if isinstance(e, DecodedBootstrap)
    )
    assert len(set(bootstraps)) == 3  # identical BOOTSTRAPs from every attempt
    # One watermark per partition, sent after success, after every row of the job.
    commit_ts = {e.commit_ts for _, e in events if isinstance(e, DecodedRow)}
    assert len(commit_ts) == 1
    for partition in range(3):
        in_partition = [e for r, e in events if r.partition == partition]
        marks = [e for e in in_partition if isinstance(e, DecodedWatermark)]
        assert [m.commit_ts for m in marks] == list(commit_ts)
        assert in_partition[-1] is marks[0]


@pytest.mark.spark_version
def test_retried_stream_tasks_resend_identical_messages_and_one_watermark_per_batch(
    broker, topics, tmp_path
):
    topic = topics("stream_shop_retried")
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    add_file(source, 0, rows=20)
    add_file(source, 1, rows=20)
    run_job(
        [
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
            "retried",
        ],
        fail_after=7,  # 7 acknowledged messages of each batch's task, then the failure
    )
    events = decode(broker.consume_all(topic))
    rows = [(r, e) for r, e in events if isinstance(e, DecodedRow)]
    counts = Counter((r.partition, r.key, r.value) for r, _ in rows)
    assert {e.data["id"] for _, e in rows} == {n * 100 + i for n in (0, 1) for i in range(20)}
    assert len(counts) == 40  # one encoding per row: replays are byte-identical
    commit_ts = sorted({e.commit_ts for _, e in rows})
    assert len(commit_ts) == 2  # one per micro-batch
    # Each batch's failed first attempt had sent 5 rows after the table's 2 BOOTSTRAPs, or
    # 7 rows when its Python worker had already sent them (BOOTSTRAPs go once per worker
    # process, then by interval and count): its retry sends those rows again.
    commit_of = {(r.partition, r.key, r.value): e.commit_ts for r, e in rows}
    assert set(counts.values()) == {1, 2}
    resent = Counter(commit_of[message] for message, n in counts.items() if n == 2)
    assert sorted(resent) == commit_ts
    assert all(n in (5, 7) for n in resent.values()), resent
    for partition in (0, 1):
        marks = [
            e.commit_ts
            for r, e in events
            if r.partition == partition and isinstance(e, DecodedWatermark)
        ]
        assert marks == commit_ts  # one per batch, after its tasks succeeded

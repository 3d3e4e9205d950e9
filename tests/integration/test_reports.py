"""Reports and warnings reach the operator: a job run by `spark-submit` with Spark's default
logging, whose driver stderr the test reads (issue 13, items 13 and 19).

Spark runs the sink's planning (`writer()`, `streamWriter()`) and its commit step in Python
worker processes of its own on the driver, where Python logging is not configured; the
sink gives its logger a stderr handler there, and Spark copies the worker's stderr to the
driver's. So the per-batch report line of a batch job (which has no checkpoint location to
keep it in) and of every micro-batch is on the driver's stderr, as is the warning for a
frame shaped for Spark's Kafka sink.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.support.spark_job import add_file, kill_job, start_job

pytestmark = pytest.mark.integration

REPORT = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO ticdc_sink\.writer: ticdc batch report ")


def test_reports_and_warnings_are_on_the_drivers_stderr_under_spark_submit(
    broker, topics, tmp_path
):
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    add_file(source, 0)
    add_file(source, 1)
    job = start_job(
        [
            "--default-logging",
            "reports",
            "--bootstrap",
            broker.bootstrap,
            "--topic",
            topics("reported_batch"),
            "--source",
            str(source),
            "--checkpoint",
            str(checkpoint),
        ],
        submit=True,
        stderr=subprocess.PIPE,
    )
    try:
        _, err = job.communicate(timeout=600)
    finally:
        kill_job(job)
    stderr = err.decode(errors="replace")
    assert job.returncode == 0, stderr[-3000:]
    lines = stderr.splitlines()
    reports = [json.loads(REPORT.sub("", line)) for line in lines if REPORT.match(line)]
    batch_jobs = [r for r in reports if r["batch_id"] is None]
    micro_batches = [r for r in reports if r["batch_id"] is not None]
    # The batch job without a checkpoint location: its report is here and nowhere else.
    assert [r["rows"] for r in batch_jobs] == [100, 1]
    assert batch_jobs[0]["watermark"] == batch_jobs[0]["max_commit_ts"]
    # One line per micro-batch, the same as the file kept under the checkpoint.
    assert [(r["batch_id"], r["rows"]) for r in micro_batches] == [(0, 3), (1, 3)]
    kept = json.loads((checkpoint / "ticdc" / "reports" / "1.json").read_text())
    assert kept == micro_batches[1]
    warned = [line for line in lines if "are Kafka records, as Spark's Kafka sink" in line]
    assert len(warned) == 1
    assert (
        " WARNING ticdc_sink.input_batch: ticdc: the DataFrame's columns (key, value, topic)"
        in (warned[0])
    )

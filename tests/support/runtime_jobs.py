"""Writes run by a Spark driver of their own, for the tests of where users run the sink: a
fresh session that never calls `register` (auto-registration), a standalone cluster, and a
Spark Connect client.

    python -m tests.support.runtime_jobs --master spark://127.0.0.1:7077 STEPS
    python -m tests.support.runtime_jobs --remote sc://127.0.0.1:15002 STEPS

STEPS is a JSON list; each step is one write, and the job prints one JSON line per step,
`{"ok": true}` or `{"ok": false, "error": <exception class>, "message": <its text>}`, so a
test can assert on errors as the client sees them. Steps:

| step | does |
| --- | --- |
| `{"write": "batch", "rows": n, "partitions": p, "options": {...}}` | `batch_frame` once |
| the same with `"thread": true` | the write from a new thread with no active session |
| the same with `"thread": "activate"` | first `createDataFrame` in that thread (the |
|  | the deploying guide's fix: PySpark makes the session the thread's active one there) |
| `{"write": "stream", "source": dir, "options": {...}, "query_name": name}` | one |
|  | `availableNow` run of the file stream in dir (`add_file`), queryName optional |
| `{"probe": "executor"}` | an executor's Python: `{"ok": true, "python": sys.executable, |
|  | "ticdc_sink": the file it imports ticdc_sink from}` |

`--conf key=value` sets a session conf (e.g. `spark.sql.streaming.checkpointLocation`).
`run_job` runs one to completion with the worktree on PYTHONPATH, as `start_job` does;
`executor_python` names the interpreter of the executors' Python workers (PYSPARK_PYTHON;
by default this one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from typing import Any

from tests.support import paths
from tests.support.spark_job import batch_frame, kill_job

__all__ = ["STREAM_SCHEMA", "run_job"]

STREAM_SCHEMA = "_op string, id bigint, name string"
_ROOT = str(paths.ROOT)


def run_job(
    steps: list[dict[str, Any]],
    *,
    master: str | None = None,
    remote: str | None = None,
    conf: dict[str, str] | None = None,
    timeout: float = 600,
    executor_python: str | None = None,
) -> list[dict[str, Any]]:
    """Run the steps in a new driver process; returns one result per step."""
    args = [sys.executable, "-m", "tests.support.runtime_jobs"]
    if master:
        args += ["--master", master]
    if remote:
        args += ["--remote", remote]
    for key, value in (conf or {}).items():
        args += ["--conf", f"{key}={value}"]
    env = {
        **os.environ,
        "PYSPARK_PYTHON": executor_python or sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)
    job = subprocess.Popen(
        [*args, json.dumps(steps)],
        cwd=_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, _ = job.communicate(timeout=timeout)
    finally:
        kill_job(job)  # the driver's JVM and Python workers too, also on a time-out
    lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    assert job.returncode == 0 and len(lines) == len(steps), (job.returncode, lines)
    return lines


def _session(master: str | None, remote: str | None, conf: list[str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("ticdc-sink-runtime-job")
    if remote:
        builder = builder.remote(remote)
    else:
        builder = (
            builder.master(master or "local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
        )
    for item in conf:
        key, _, value = item.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not remote:
        spark.sparkContext.setLogLevel("ERROR")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return spark


def _batch(spark: Any, step: dict[str, Any]) -> None:
    writer = (
        batch_frame(spark, step.get("rows", 100), step.get("partitions", 2))
        .write.format("ticdc")
        .mode("append")
    )
    for key, value in step["options"].items():
        writer = writer.option(key, value)
    if not step.get("thread"):
        writer.save()
        return
    failure: list[BaseException] = []

    def save() -> None:
        try:
            if step["thread"] == "activate":
                spark.createDataFrame([(1,)], "x int")
            writer.save()
        except BaseException as exc:  # handed to the main thread
            failure.append(exc)

    thread = threading.Thread(target=save)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def _probe(spark: Any) -> dict[str, Any]:
    def where(_: Any) -> tuple[str, str]:
        import sys

        import ticdc_sink

        return sys.executable, ticdc_sink.__file__

    python, module = spark.sparkContext.parallelize([0], 1).map(where).collect()[0]
    return {"ok": True, "python": python, "ticdc_sink": module}


def _stream(spark: Any, step: dict[str, Any]) -> None:
    stream = (
        spark.readStream.schema(STREAM_SCHEMA).option("maxFilesPerTrigger", 1).json(step["source"])
    )
    writer = stream.writeStream.format("ticdc").trigger(availableNow=True)
    if step.get("query_name"):
        writer = writer.queryName(step["query_name"])
    for key, value in step["options"].items():
        writer = writer.option(key, value)
    query = writer.start()
    query.awaitTermination()
    if query.exception() is not None:
        raise query.exception()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="runtime_jobs")
    parser.add_argument("--master")
    parser.add_argument("--remote")
    parser.add_argument("--conf", action="append", default=[])
    parser.add_argument("steps")
    args = parser.parse_args(argv)
    spark = _session(args.master, args.remote, args.conf)
    try:
        for step in json.loads(args.steps):
            try:
                if "probe" in step:
                    result: dict[str, Any] = _probe(spark)
                else:
                    (_batch if step["write"] == "batch" else _stream)(spark, step)
                    result = {"ok": True}
            except Exception as exc:  # reported to the test, which asserts on it
                result = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
            print(json.dumps(result), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()

"""Peak memory of reads through `format("ticdc")`: a batch read of many messages and a
stream over many partitions keep the driver's and the workers' memory bounded, not growing
with what is read.

    python benchmarks/bench_read_memory.py --messages 1000000,10000000 --fresh-workers
    python benchmarks/bench_read_memory.py --messages 0 --stream-partitions 1000 \
        --stream-rows 200000,1000000

Apache Kafka (tests/support/kafka.py, KRaft, one node, a fresh broker per N) and Spark
`local[2]`; the topics are written by `format("ticdc")` (Simple JSON, the reference table
of bench_e2e.py, made by `spark.range` so no rows sit in driver memory). Each write and
each read runs in a process of its own (this script again, `--step`), with its own Spark
JVM and Python workers, so a read's peaks hold nothing that the write or an earlier read
left. While a read runs, a thread samples every --interval s the resident set size of its
Spark JVM (driver and executor in local mode) and of every Python process under it: the
tasks' `pyspark.worker`s and the driver-side workers Spark starts for a Python data source
(the batch planner, `pyspark.sql.worker.plan_data_source_read`; the stream reader,
`pyspark.sql.worker.python_streaming_source_runner`); and every --timeline s it notes the
JVM's and the largest task worker's, to show whether they grow during the read.

- **batch**, for each N in --messages: N rows in --partitions Kafka partitions, written
  in appends of at most --append-rows rows (a Spark job each, so the write's own tasks
  stay small), then `spark.read.format("ticdc")` to the end, materialised with
  `write.format("noop")` and counted on the way (an `Observation`). The writer's
  dispatcher is TiCDC's default (`table`): the table's N rows go to one partition and
  the others hold only watermarks, so one Spark task reads all N rows (the read's
  defaults pack the small ranges into a second task).
- **stream**, for each N in --stream-rows: a topic of --stream-partitions partitions,
  N rows written in --stream-writes appends (each append's watermark goes to every
  partition, so every partition has that many watermarks), then `readStream` with
  `maxOffsetsPerTrigger` (--max-offsets) and `Trigger.AvailableNow` to the end, into
  `noop`: micro-batch after micro-batch, cut at watermarks; once per value of
  --offsets-per-task (`0`: one task per partition range, as before ranges were packed;
  empty: the option's default), on the same topic. Per micro-batch with rows: the
  seconds it took (`triggerExecution`; and by step: `latestOffset` is the driver planning
  it, `addBatch` its tasks running) and the Spark tasks it ran (the status tracker's
  stages of the query's jobs, whose group is the query's run id).

Each read is checked: the batch read must count N rows; the stream's progress must add up
to N rows. Python workers are reused (Spark's default), as in a user's job: a worker's
peak covers every task it ran in that read. With --fresh-workers
(`spark.python.worker.reuse=false`) each task gets a new worker, forked from the daemon,
and a task worker's peak is one task's: memory that grew with what a task read would show
as a peak growing with N. The stream's rows are spread over the partitions by key
(`partition=index-value`); TiCDC's default (`table`) puts one table's rows in one
partition. One line per read, then one JSON line (--output writes it too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import _common as common  # first: puts the repo on sys.path and PYTHONPATH
from bench_memory import WorkerSampler, spark_jvm

from tests.support.lakehouse import run_to_end

TOPIC = "bench_bench_orders"  # reference_table.TOPIC_EXPRESSION for bench.orders
# The largest peaks of one kind of Python process a result lists (a stream runs thousands).
EACH = 8


def write(spark: Any, bootstrap: str, rows: int, writes: int, **extra: str) -> None:
    """`rows` rows of the reference table in `writes` appends (ids rise with commit ts)."""
    options = {**common.sink_options(bootstrap, "simple-json"), **extra}
    frame = common.reference_frame(spark, rows, 2)
    step = -(-rows // writes)
    for first in range(0, rows, step):
        part = frame.where((frame.id >= first) & (frame.id < first + step))
        part.write.format("ticdc").mode("append").options(**options).save()


def mib(value: int) -> float:
    return round(value / 2**20, 1)


def peaks(workers: WorkerSampler) -> dict[str, Any]:
    by_kind: dict[str, list[int]] = {}
    for pid, peak in workers.peaks.items():
        kind = workers.commands[pid].rsplit(" ", 1)[-1]
        by_kind.setdefault(kind, []).append(peak)
    each = {k: sorted(v, reverse=True) for k, v in sorted(by_kind.items())}
    return {
        "peak_jvm_rss_mib": mib(workers.peak_jvm),
        "peak_all_python_rss_mib": mib(workers.peak_sum),
        "peak_python_rss_mib_by_kind": {k: mib(v[0]) for k, v in each.items()},
        "python_processes_by_kind": {k: len(v) for k, v in each.items()},
        "peak_python_rss_mib_largest": {k: [mib(p) for p in v[:EACH]] for k, v in each.items()},
        # (s since the read began, JVM MiB, largest task worker MiB)
        "timeline": [[round(t), mib(jvm), mib(task)] for t, jvm, task in workers.timeline],
    }


def in_process(args: Any, step: dict[str, Any]) -> dict[str, Any]:
    """`step` run by this script in a new process (its own Spark JVM and workers), with
    this run's arguments; the JSON object it prints last."""
    spec = json.dumps({**vars(args), **step})
    done = subprocess.run(
        [sys.executable, __file__, "--step", spec], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"the {step['step']} step failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def batch_read(rows: int, args: Any) -> dict[str, Any]:
    with common.start_broker("kafka") as broker:
        broker.create_topic(TOPIC, args.partitions)
        writes = -(-rows // args.append_rows)
        print(f"batch  {rows:>11,} rows: writing in {writes} appends", flush=True)
        wrote = in_process(
            args,
            {
                "step": "write",
                "bootstrap": broker.bootstrap,
                "rows": rows,
                "writes": writes,
                "options": {},
            },
        )
        print(f"batch  {rows:>11,} rows: written in {wrote['seconds']} s; reading", flush=True)
        result = in_process(args, {"step": "batch", "bootstrap": broker.bootstrap, "rows": rows})
    return {**result, "writes": writes, "write_seconds": wrote["seconds"]}


def batch_measure(spark: Any, jvm_pid: int, args: Any) -> dict[str, Any]:
    """The timed batch read (in its step's process)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    rows = args.rows
    frame = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("topic", TOPIC)
        .load()
    )
    counted = Observation("read")
    spark.sparkContext.setJobGroup("read", "the timed batch read")
    load = os.getloadavg()[0]
    with WorkerSampler(jvm_pid, args.interval, args.timeline) as workers:
        started = time.perf_counter()
        frame.observe(counted, F.count(F.lit(1)).alias("rows")).write.format("noop").mode(
            "overwrite"
        ).save()
        seconds = time.perf_counter() - started
    if counted.get["rows"] != rows:
        raise RuntimeError(
            f"the batch read counted {counted.get['rows']} rows, {rows} were written"
        )
    return {
        "read": "batch",
        "rows": rows,
        "partitions": args.partitions,
        "fresh_workers": args.fresh_workers,
        "tasks": sum(group_tasks(spark, "read")),
        "seconds": round(seconds, 1),
        "rows_per_s": round(rows / seconds),
        "load_average_1m": [round(load, 1), round(os.getloadavg()[0], 1)],
        **peaks(workers),
    }


def stream_reads(rows: int, args: Any) -> list[dict[str, Any]]:
    """The stream over --stream-partitions partitions, once per --offsets-per-task."""
    partitions = args.stream_partitions
    results = []
    with common.start_broker("kafka") as broker:
        broker.create_topic(TOPIC, partitions)
        print(f"stream {rows:>11,} rows: writing in {args.stream_writes} appends", flush=True)
        wrote = in_process(
            args,
            {
                "step": "write",
                "bootstrap": broker.bootstrap,
                "rows": rows,
                "writes": args.stream_writes,
                "options": {"partition-num": str(partitions), "partition": "index-value"},
            },
        )
        for per_task in args.offsets_per_task.split(","):
            print(f"stream {rows:>11,} rows: reading, offsets-per-task {per_task!r}", flush=True)
            step = {"step": "stream", "bootstrap": broker.bootstrap, "rows": rows}
            result = in_process(args, {**step, "per_task": per_task.strip()})
            results.append({**result, "write_seconds": wrote["seconds"]})
    return results


def stream_measure(spark: Any, jvm_pid: int, args: Any) -> dict[str, Any]:
    """The timed stream read (in its step's process)."""
    rows = args.rows
    options = {"offsets-per-task": args.per_task} if args.per_task else {}
    stream = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("topic", TOPIC)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(args.max_offsets))
        .options(**options)
        .load()
    )
    load = os.getloadavg()[0]
    with (
        WorkerSampler(jvm_pid, args.interval, args.timeline) as workers,
        tempfile.TemporaryDirectory() as chk,
    ):
        started = time.perf_counter()
        query = run_to_end(
            lambda: (
                stream.writeStream.format("noop")
                .option("checkpointLocation", chk)
                .trigger(availableNow=True)
                .start()
            )
        )
        seconds = time.perf_counter() - started
        progress = query.recentProgress
    read = sum(p["numInputRows"] for p in progress)
    if read != rows:
        raise RuntimeError(f"the stream read {read} rows, {rows} were written")
    batch_seconds = [
        p["durationMs"]["triggerExecution"] / 1000 for p in progress if p["numInputRows"]
    ]
    # Where a micro-batch's time goes: planning it on the driver (latestOffset) and
    # running its tasks (addBatch), among Spark's other steps.
    moved = [p["durationMs"] for p in progress if p["numInputRows"]]
    step_seconds = {
        k: round(statistics.mean(d.get(k, 0) / 1000 for d in moved), 2)
        for k in sorted({k for d in moved for k in d} - {"triggerExecution"})
    }
    # A streaming query's jobs have its run id as their group.
    tasks = group_tasks(spark, str(query.runId))
    return {
        "read": "stream",
        "rows": rows,
        "partitions": args.stream_partitions,
        "writes": args.stream_writes,
        "offsets_per_task": args.per_task or "default",
        "fresh_workers": args.fresh_workers,
        "micro_batches": len(batch_seconds),
        "seconds": round(seconds, 1),
        "rows_per_s": round(rows / seconds),
        "load_average_1m": [round(load, 1), round(os.getloadavg()[0], 1)],
        "seconds_per_micro_batch": round(statistics.mean(batch_seconds), 2),
        "step_seconds_per_micro_batch": step_seconds,
        "micro_batch_seconds": [round(s, 2) for s in batch_seconds],
        "tasks_per_micro_batch": tasks,
        **peaks(workers),
    }


def group_tasks(spark: Any, group: str) -> list[int]:
    """The Spark tasks of each job of a job group, in job order (a streaming query's: one
    job per micro-batch that read rows, into noop)."""
    tracker = spark.sparkContext.statusTracker()
    counts = []
    for job in sorted(tracker.getJobIdsForGroup(group)):
        info = tracker.getJobInfo(job)
        stages = [tracker.getStageInfo(s) for s in (info.stageIds if info else [])]
        counts.append(sum(stage.numTasks for stage in stages if stage is not None))
    return counts


def run_step(args: Any) -> dict[str, Any]:
    """One write or read (`args.step`) in this process's own Spark session."""
    # A machine shared with other work: Python workers may take long to connect back.
    extra = {"spark.python.authenticate.socketTimeout": "120s"}
    if args.fresh_workers:
        extra["spark.python.worker.reuse"] = "false"
    spark = common.make_spark(args.spark_memory, extra=extra)
    try:
        if args.step == "write":
            started = time.perf_counter()
            write(spark, args.bootstrap, args.rows, args.writes, **args.options)
            return {"seconds": round(time.perf_counter() - started, 1)}
        jvm_pid = spark_jvm()
        if args.step == "batch":
            return batch_measure(spark, jvm_pid, args)
        return stream_measure(spark, jvm_pid, args)
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", default="1000000", help="batch reads: comma-separated rows")
    parser.add_argument("--partitions", type=int, default=4, help="the batch topic's partitions")
    parser.add_argument(
        "--append-rows",
        type=int,
        default=1_000_000,
        help="the batch topic is written in appends of at most this many rows",
    )
    parser.add_argument("--stream-rows", default="", help="stream reads: comma-separated rows")
    parser.add_argument("--stream-partitions", type=int, default=1000)
    parser.add_argument("--stream-writes", type=int, default=10)
    parser.add_argument("--max-offsets", type=int, default=100_000, help="maxOffsetsPerTrigger")
    parser.add_argument(
        "--offsets-per-task",
        default="0,",
        help="stream reads: comma-separated offsets-per-task, one read each (empty: default)",
    )
    parser.add_argument(
        "--fresh-workers",
        action="store_true",
        help="spark.python.worker.reuse=false: each task in a new Python worker",
    )
    parser.add_argument("--interval", type=float, default=0.2, help="sampling period, s")
    parser.add_argument(
        "--timeline", type=float, default=10.0, help="period of the RSS timeline kept, s"
    )
    parser.add_argument("--spark-memory", default="2g", help="spark.driver.memory")
    parser.add_argument("--output", help="also write the JSON results to this file")
    parser.add_argument("--step", help=argparse.SUPPRESS)  # one write or read, as JSON
    args = parser.parse_args()
    if args.step:
        print(json.dumps(run_step(argparse.Namespace(**json.loads(args.step)))), flush=True)
        return
    runs = [("batch", int(n)) for n in args.messages.split(",") if int(n or 0)]
    runs += [("stream", int(n)) for n in args.stream_rows.split(",") if n.strip()]

    if not common.available_brokers("kafka"):
        raise SystemExit("Apache Kafka's jars could not be fetched")
    results: list[dict[str, Any]] = []
    for kind, rows in runs:
        try:
            done = [batch_read(rows, args)] if kind == "batch" else stream_reads(rows, args)
        except Exception as exc:  # noqa: BLE001 (reported; the other runs still go)
            error = common.short_error(exc)
            print(f"{kind} {rows:>11,} rows FAILED: {error}", flush=True)
            results.append({"read": kind, "rows": rows, "error": error})
            continue
        for result in done:
            results.append(result)
            tasks = result.get("tasks_per_micro_batch")
            batches = (
                f"; micro-batches {result['seconds_per_micro_batch']} s and tasks {tasks}"
                f" (offsets-per-task {result['offsets_per_task']})"
                if tasks is not None
                else f"; {result['tasks']} tasks"
            )
            print(
                f"{kind:<6} {rows:>11,} rows in {result['partitions']:>5} partitions: "
                f"{result['seconds']:>7.1f} s ({result['rows_per_s']:,} rows/s); peak RSS "
                f"JVM {result['peak_jvm_rss_mib']:.0f} MiB, Python "
                f"{result['peak_python_rss_mib_by_kind']}{batches}",
                flush=True,
            )
    report = {
        "bench": "read-memory",
        "environment": common.environment(),
        "args": vars(args),
        "results": results,
    }
    common.publish(report, args.output)


if __name__ == "__main__":
    main()

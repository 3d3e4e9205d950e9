"""Peak memory of reads through `format("ticdc")`: a batch read of many messages and a
stream over many partitions keep the driver's and the workers' memory bounded, not growing
with what is read.

    python benchmarks/bench_read_memory.py --messages 1000000,10000000
    python benchmarks/bench_read_memory.py --messages 0 --stream-partitions 1000 \
        --stream-rows 200000,1000000

Apache Kafka (tests/support/kafka.py, KRaft, one node) and Spark `local[2]`; the topics are
written by `format("ticdc")` (Simple JSON, the reference table of bench_e2e.py, made by
`spark.range` so no rows sit in driver memory). While each read runs, a thread samples
every --interval s the resident set size of the Spark JVM (driver and executor in local
mode) and of every Python process under it: the tasks' `pyspark.worker`s and the
driver-side workers Spark starts for a Python data source (the batch planner,
`pyspark.sql.worker.plan_data_source_read`; the stream reader,
`pyspark.sql.worker.python_streaming_source_runner`).

- **batch**, for each N in --messages: N rows in --partitions Kafka partitions, then
  `spark.read.format("ticdc")` to the end, materialised with `write.format("noop")`.
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

Each read is checked: the batch counts N rows once before the timed read; the stream's
progress must add up to N rows. Python workers are reused (Spark's default), as in a
user's job: a worker's peak covers every task it ran, so memory that grew with what was
read would show. The stream's rows are spread over the partitions by key
(`partition=index-value`); TiCDC's default (`table`) puts one table's rows in one
partition. One line per read, then one JSON line (--output writes it too).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

import _common as common  # first: puts the repo on sys.path and PYTHONPATH
from bench_memory import WorkerSampler, spark_jvm

from tests.support.lakehouse import run_to_end

TOPIC = "bench_bench_orders"  # reference_table.TOPIC_EXPRESSION for bench.orders


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
    by_kind: dict[str, int] = {}
    for pid, peak in workers.peaks.items():
        kind = workers.commands[pid].rsplit(" ", 1)[-1]
        by_kind[kind] = max(by_kind.get(kind, 0), peak)
    return {
        "peak_jvm_rss_mib": mib(workers.peak_jvm),
        "peak_all_python_rss_mib": mib(workers.peak_sum),
        "peak_python_rss_mib_by_kind": {k: mib(v) for k, v in sorted(by_kind.items())},
    }


def batch_read(spark: Any, jvm_pid: int, rows: int, args: Any) -> dict[str, Any]:
    with common.start_broker("kafka") as broker:
        broker.create_topic(TOPIC, args.partitions)
        started = time.perf_counter()
        write(spark, broker.bootstrap, rows, 1)
        wrote = time.perf_counter() - started
        reader = (
            spark.read.format("ticdc")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topic", TOPIC)
        )
        counted = reader.load().count()
        if counted != rows:
            raise RuntimeError(f"the batch read counted {counted} rows, {rows} were written")
        with WorkerSampler(jvm_pid, args.interval) as workers:
            started = time.perf_counter()
            reader.load().write.format("noop").mode("overwrite").save()
            seconds = time.perf_counter() - started
    return {
        "read": "batch",
        "rows": rows,
        "partitions": args.partitions,
        "write_seconds": round(wrote, 1),
        "seconds": round(seconds, 1),
        "rows_per_s": round(rows / seconds),
        **peaks(workers),
    }


def stream_reads(spark: Any, jvm_pid: int, rows: int, args: Any) -> list[dict[str, Any]]:
    """The stream over --stream-partitions partitions, once per --offsets-per-task."""
    partitions = args.stream_partitions
    results = []
    with common.start_broker("kafka") as broker:
        broker.create_topic(TOPIC, partitions)
        started = time.perf_counter()
        write(
            spark,
            broker.bootstrap,
            rows,
            args.stream_writes,
            **{"partition-num": str(partitions), "partition": "index-value"},
        )
        wrote = time.perf_counter() - started
        for per_task in args.offsets_per_task.split(","):
            result = stream_read(spark, jvm_pid, broker.bootstrap, rows, per_task.strip(), args)
            results.append({**result, "write_seconds": round(wrote, 1)})
    return results


def stream_read(
    spark: Any, jvm_pid: int, bootstrap: str, rows: int, per_task: str, args: Any
) -> dict[str, Any]:
    options = {"offsets-per-task": per_task} if per_task else {}
    stream = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", TOPIC)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(args.max_offsets))
        .options(**options)
        .load()
    )
    with WorkerSampler(jvm_pid, args.interval) as workers, tempfile.TemporaryDirectory() as chk:
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
    tasks = query_tasks(spark, str(query.runId))
    return {
        "read": "stream",
        "rows": rows,
        "partitions": args.stream_partitions,
        "writes": args.stream_writes,
        "offsets_per_task": per_task or "default",
        "micro_batches": len(batch_seconds),
        "seconds": round(seconds, 1),
        "rows_per_s": round(rows / seconds),
        "seconds_per_micro_batch": round(statistics.mean(batch_seconds), 2),
        "step_seconds_per_micro_batch": step_seconds,
        "micro_batch_seconds": [round(s, 2) for s in batch_seconds],
        "tasks_per_micro_batch": tasks,
        **peaks(workers),
    }


def query_tasks(spark: Any, run_id: str) -> list[int]:
    """The Spark tasks of each job of a streaming query (its jobs' group is its run id),
    in job order: one job per micro-batch that read rows (into noop)."""
    tracker = spark.sparkContext.statusTracker()
    counts = []
    for job in sorted(tracker.getJobIdsForGroup(run_id)):
        info = tracker.getJobInfo(job)
        stages = [tracker.getStageInfo(s) for s in (info.stageIds if info else [])]
        counts.append(sum(stage.numTasks for stage in stages if stage is not None))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", default="1000000", help="batch reads: comma-separated rows")
    parser.add_argument("--partitions", type=int, default=4, help="the batch topic's partitions")
    parser.add_argument("--stream-rows", default="", help="stream reads: comma-separated rows")
    parser.add_argument("--stream-partitions", type=int, default=1000)
    parser.add_argument("--stream-writes", type=int, default=10)
    parser.add_argument("--max-offsets", type=int, default=100_000, help="maxOffsetsPerTrigger")
    parser.add_argument(
        "--offsets-per-task",
        default="0,",
        help="stream reads: comma-separated offsets-per-task, one read each (empty: default)",
    )
    parser.add_argument("--interval", type=float, default=0.2, help="sampling period, s")
    parser.add_argument("--spark-memory", default="2g", help="spark.driver.memory")
    parser.add_argument("--output", help="also write the JSON results to this file")
    args = parser.parse_args()
    runs = [("batch", int(n)) for n in args.messages.split(",") if int(n or 0)]
    runs += [("stream", int(n)) for n in args.stream_rows.split(",") if n.strip()]

    if not common.available_brokers("kafka"):
        raise SystemExit("Apache Kafka's jars could not be fetched")
    # A machine shared with other work: Python workers may take long to connect back.
    spark = common.make_spark(
        args.spark_memory, extra={"spark.python.authenticate.socketTimeout": "120s"}
    )
    results: list[dict[str, Any]] = []
    try:
        jvm_pid = spark_jvm()
        for kind, rows in runs:
            try:
                if kind == "batch":
                    done = [batch_read(spark, jvm_pid, rows, args)]
                else:
                    done = stream_reads(spark, jvm_pid, rows, args)
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
                    else ""
                )
                print(
                    f"{kind:<6} {rows:>11,} rows in {result['partitions']:>5} partitions: "
                    f"{result['seconds']:>7.1f} s ({result['rows_per_s']:,} rows/s); peak RSS "
                    f"JVM {result['peak_jvm_rss_mib']:.0f} MiB, Python "
                    f"{result['peak_python_rss_mib_by_kind']}{batches}",
                    flush=True,
                )
    finally:
        spark.stop()
    report = {
        "bench": "read-memory",
        "environment": common.environment(),
        "args": vars(args),
        "results": results,
    }
    common.publish(report, args.output)


if __name__ == "__main__":
    main()

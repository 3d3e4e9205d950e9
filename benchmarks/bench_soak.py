"""Load held over time: a streaming query writing small micro-batches of several tables
through `format("ticdc")` for many batches, to see that nothing grows with the number
of batches: per-batch time, memory, open files and the sink's checkpoint state.

    python benchmarks/bench_soak.py --batches 1000 --rows-per-batch 40 --tables 4

The source is Spark's `rate-micro-batch` (exactly --rows-per-batch rows per micro-batch
in --partitions tasks, default 1, as fast as the query runs), made into change events of
--tables tables by a `_table` column (`id % tables`), Simple JSON to a local Tansu broker,
one topic per table, with a checkpoint location in a temporary folder. Every --every
batches a sample records: the batches done, the median and the largest of the last
--every batches' `triggerExecution` time (Spark's own per-batch timing, from
`recentProgress`), the resident set size of the driver (this Python process and the
Spark JVM, which in local mode is also the executor) and of the Python processes under
the JVM (pyspark daemons and the workers they fork; the largest one and their sum, from
/proc), open file descriptors of the JVM and of those processes, and the size and file
count of `<checkpointLocation>/ticdc/`.

Prints one line per sample and one JSON line with everything; --output writes the JSON
too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from typing import Any

import _common as common  # first: puts the repo on sys.path and PYTHONPATH
from bench_memory import _descendants, _process_table, _rss, spark_jvm

from ticdc_sink._local_broker import LocalBroker

MiB = 1024 * 1024


def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _tree_size(path: str) -> tuple[int, int]:
    """(bytes, files) under `path`."""
    size = files = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                size += os.path.getsize(os.path.join(folder, name))
            except OSError:  # pruned meanwhile
                continue
            files += 1
    return size, files


def _workers(jvm: int) -> list[int]:
    """The Python processes under the JVM: the pyspark daemons and the workers they fork
    (a forked worker keeps the daemon's command line), which run the tasks and the
    driver-side data source steps (planning, commit)."""
    table = _process_table()
    return [pid for pid in _descendants(table, jvm) if table[pid][1].startswith("python")]


def sample(jvm: int, checkpoint: str, done: int, times: list[float]) -> dict[str, Any]:
    workers = _workers(jvm)
    worker_rss = [_rss(pid) for pid in workers]
    state_bytes, state_files = _tree_size(os.path.join(checkpoint, "ticdc"))
    return {
        "batches": done,
        "batch_ms_median": round(statistics.median(times), 1) if times else None,
        "batch_ms_max": round(max(times), 1) if times else None,
        "driver_python_rss_mib": round(_rss(os.getpid()) / MiB, 1),
        "jvm_rss_mib": round(_rss(jvm) / MiB, 1),
        "worker_rss_max_mib": round(max(worker_rss, default=0) / MiB, 1),
        "worker_rss_sum_mib": round(sum(worker_rss) / MiB, 1),
        "workers": len(workers),
        "jvm_fds": _fds(jvm),
        "worker_fds": sum(_fds(pid) for pid in workers),
        "state_kib": round(state_bytes / 1024, 1),
        "state_files": state_files,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--rows-per-batch", type=int, default=40)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=1, help="tasks per micro-batch")
    parser.add_argument("--every", type=int, default=100, help="batches between samples")
    parser.add_argument("--output", help="also write the JSON results to this file")
    parser.add_argument("--spark-memory", default="2g", help="spark.driver.memory")
    args = parser.parse_args()

    from pyspark.sql import functions as F

    folder = tempfile.mkdtemp(prefix="ticdc-soak-")
    checkpoint = os.path.join(folder, "chk")
    spark = common.make_spark(args.spark_memory)
    samples: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        jvm = spark_jvm()
        with LocalBroker() as broker:
            source = (
                spark.readStream.format("rate-micro-batch")
                .option("rowsPerBatch", args.rows_per_batch)
                .option("numPartitions", args.partitions)
                .load()
            )
            frame = source.select(
                F.col("value").alias("id"),
                F.concat(F.lit("name-"), F.col("value").cast("string")).alias("name"),
                (F.col("value") % 1000).cast("int").alias("qty"),
                F.lit("c").alias("_op"),
                F.concat(F.lit("t"), (F.col("value") % args.tables).cast("string")).alias("_table"),
            )
            query = (
                frame.writeStream.format("ticdc")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("topic", "soak_{schema}_{table}")
                .option("database", "soak")
                .option("primary-key", "id")
                .option("checkpointLocation", checkpoint)
                .trigger(processingTime="0 seconds")
                .start()
            )
            seen: dict[int, float] = {}
            next_sample = args.every
            try:
                while True:
                    for progress in query.recentProgress:
                        batch = progress["batchId"]
                        if batch not in seen:
                            seen[batch] = progress["durationMs"].get("triggerExecution", 0)
                    done = len(seen)
                    if done >= next_sample or done >= args.batches:
                        recent = [seen[b] for b in sorted(seen)[-args.every :]]
                        row = sample(jvm, checkpoint, done, recent)
                        row["elapsed_s"] = round(time.perf_counter() - started, 1)
                        samples.append(row)
                        print(json.dumps(row), flush=True)
                        next_sample += args.every
                    if done >= args.batches:
                        break
                    if query.exception() is not None:
                        raise RuntimeError(str(query.exception()))
                    time.sleep(1.0)
            finally:
                query.stop()
    finally:
        spark.stop()
        shutil.rmtree(folder, ignore_errors=True)
    report = {
        "bench": "soak",
        "batches": args.batches,
        "rows_per_batch": args.rows_per_batch,
        "tables": args.tables,
        "partitions": args.partitions,
        "every": args.every,
        "environment": common.environment(),
        "samples": samples,
    }
    common.publish(report, args.output)


if __name__ == "__main__":
    main()

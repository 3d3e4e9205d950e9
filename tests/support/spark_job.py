"""Spark writes run in a child process, for the tests that need a Spark driver of their own:
a master with task retries (`local[2,3]`; the shared session is `local[2]` and a JVM cannot
change its master), a driver the test can kill at a chosen moment, or a job run by
`spark-submit` with Spark's default logging, whose stderr the test reads.

    python -m tests.support.spark_job --master 'local[2,3]' batch --bootstrap B --topic T ...
    python -m tests.support.spark_job stream --bootstrap B --topic T --source DIR --checkpoint DIR
    python -m tests.support.spark_job --fail-first-attempt 7 stream ...
    spark-submit tests/support/spark_job.py --default-logging reports --bootstrap B ...

`start_job` starts one (in its own process group, with the worktree on PYTHONPATH so Spark's
Python workers import this checkout; `submit=True` through `spark-submit`), `kill_job` kills
the whole group. The stream helpers are shared with the in-process streaming tests.
`--fail-first-attempt` and `--hang-after-commit` write through the test-only data source
of `tests/support/faults.py` instead of `ticdc`, with that fault.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support import paths
from tests.support.faults import FAIL_FIRST_ATTEMPT, HANG_AFTER_COMMIT, FaultsDataSource

__all__ = [
    "add_file",
    "batch_frame",
    "kill_job",
    "run_available_now",
    "start_job",
]

_ROOT = paths.ROOT


def add_file(folder: Path, n: int, rows: int = 3) -> None:
    """Source file n of a stream: `rows` INSERTs with ids n * 100 + i."""
    records = [{"_op": "c", "id": n * 100 + i, "name": f"item{n}-{i}"} for i in range(rows)]
    (folder / f"part-{n:03}.json").write_text("\n".join(json.dumps(r) for r in records))


def run_available_now(
    spark: Any,
    bootstrap: str,
    source: Path,
    checkpoint: Path,
    *,
    topic: str,
    table: str = "items",
    faults: Mapping[str, str] | None = None,
) -> None:
    """One `availableNow` run of the file stream in `source` (a micro-batch per file) into
    `topic` (2 partitions, index-value dispatch), as table shop.`table`; with `faults`,
    through the data source of `tests/support/faults.py` with those options."""
    stream = (
        spark.readStream.schema("_op string, id bigint, name string")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
    )
    query = (
        stream.writeStream.format("ticdc_faults" if faults else "ticdc")
        .options(**(faults or {}))
        .option("checkpointLocation", str(checkpoint))
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("partition-num", "2")
        .option("partition", "index-value")
        .option("database", "shop")
        .option("table", table)
        .option("primary-key", "id")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None


def batch_frame(spark: Any, rows: int, partitions: int) -> Any:
    """`rows` INSERTs (id, name), in `partitions` Spark partitions."""
    from pyspark.sql import functions as F

    return (
        spark.range(rows, numPartitions=partitions)
        .select(F.col("id"), F.concat(F.lit("name-"), F.col("id")).alias("name"))
        .select(F.lit("c").alias("_op"), "id", "name")
    )


def start_job(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    submit: bool = False,
    stderr: int | None = None,
) -> subprocess.Popen[bytes]:
    """`python -m tests.support.spark_job *args` in a new process group; its output goes
    to the test's output (pytest shows it on failure), or its stderr to a pipe
    (`stderr=subprocess.PIPE`). `submit`: through `spark-submit`, as a user runs a job."""
    environment = {**os.environ, **(env or {})}
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(_ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    environment["PYSPARK_PYTHON"] = sys.executable
    environment["PYSPARK_DRIVER_PYTHON"] = sys.executable
    command = [sys.executable, "-m", "tests.support.spark_job"]
    if submit:
        command = [_spark_submit(), str(Path(__file__).resolve())]
    return subprocess.Popen(
        [*command, *args],
        cwd=_ROOT,
        env=environment,
        start_new_session=True,
        stderr=stderr,
    )


def _spark_submit() -> str:
    """The `spark-submit` of the installed PySpark (next to this interpreter in a venv)."""
    beside = Path(sys.executable).with_name("spark-submit")
    if beside.exists():
        return str(beside)
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")


def kill_job(job: subprocess.Popen[bytes]) -> None:
    """SIGKILL the job's process group: the Python driver, its JVM and the JVM's Python
    workers, with no chance to clean up (a crash, not a stop)."""
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    job.wait()


def _session(master: str, *, default_logging: bool = False, faults: bool = False) -> Any:
    from pyspark.sql import SparkSession

    import ticdc_sink

    spark = (
        SparkSession.builder.master(master)
        .appName("ticdc-sink-test-job")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    if not default_logging:
        spark.sparkContext.setLogLevel("ERROR")
    ticdc_sink.register(spark)
    if faults:
        spark.dataSource.register(FaultsDataSource)
    return spark


def _reports_job(spark: Any, args: argparse.Namespace) -> None:
    """What an operator of a job reads on the driver's stderr: a batch job without a
    checkpoint location, a frame shaped for Spark's Kafka sink, and a file stream."""
    (
        batch_frame(spark, 100, 2)
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("topic", args.topic)
        .option("database", "shop")
        .option("table", "reported")
        .option("primary-key", "id")
        .save()
    )
    kafka_shaped = spark.createDataFrame(
        [("k", "v", "t")], "key string, value string, topic string"
    )
    (
        kafka_shaped.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("topic", args.topic)
        .option("database", "shop")
        .option("table", "reported")
        .option("force-replicate", "true")  # a table without a key, as TiCDC writes one
        .save()
    )
    run_available_now(
        spark,
        args.bootstrap,
        args.source,
        args.checkpoint,
        topic=f"{args.topic}_stream",
        table="reported",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="spark_job")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--default-logging", action="store_true", help="keep Spark's log level (INFO)"
    )
    parser.add_argument(
        "--fail-first-attempt",
        metavar="N",
        help="attempt 0 of every write task fails after N acknowledged messages",
    )
    parser.add_argument(
        "--hang-after-commit",
        metavar="BATCH",
        help="the sink's commit of micro-batch BATCH never returns",
    )
    sub = parser.add_subparsers(dest="job", required=True)
    batch = sub.add_parser("batch", help="write batch_frame() once")
    batch.add_argument("--bootstrap", required=True)
    batch.add_argument("--topic", required=True)
    batch.add_argument("--rows", type=int, default=20_000)
    batch.add_argument("--partitions", type=int, default=4)
    stream = sub.add_parser("stream", help="one availableNow run of a file stream")
    stream.add_argument("--bootstrap", required=True)
    stream.add_argument("--topic", required=True)
    stream.add_argument("--source", type=Path, required=True)
    stream.add_argument("--checkpoint", type=Path, required=True)
    stream.add_argument("--table", default="items")
    reports = sub.add_parser("reports", help="the jobs whose reports a test reads (stderr)")
    reports.add_argument("--bootstrap", required=True)
    reports.add_argument("--topic", required=True, help="the batch jobs'; the stream's + _stream")
    reports.add_argument("--source", type=Path, required=True)
    reports.add_argument("--checkpoint", type=Path, required=True)
    args = parser.parse_args(argv)
    faults = {
        name: value
        for name, value in (
            (FAIL_FIRST_ATTEMPT, args.fail_first_attempt),
            (HANG_AFTER_COMMIT, args.hang_after_commit),
        )
        if value is not None
    }

    spark = _session(args.master, default_logging=args.default_logging, faults=bool(faults))
    try:
        if args.job == "reports":
            _reports_job(spark, args)
        elif args.job == "batch":
            (
                batch_frame(spark, args.rows, args.partitions)
                .write.format("ticdc_faults" if faults else "ticdc")
                .options(**faults)
                .mode("append")
                .option("kafka.bootstrap.servers", args.bootstrap)
                .option("topic", args.topic)
                .option("database", "shop")
                .option("table", "retried")
                .option("primary-key", "id")
                .option("partition", "index-value")
                .option("partition-num", "3")
                .save()
            )
        else:
            run_available_now(
                spark,
                args.bootstrap,
                args.source,
                args.checkpoint,
                topic=args.topic,
                table=args.table,
                faults=faults,
            )
    finally:
        spark.stop()


if __name__ == "__main__":
    main()

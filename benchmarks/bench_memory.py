"""Peak memory of the Python worker while one task (one Spark partition) writes N rows of
the reference table through `format("ticdc")`: the sink promises memory bounded by its
queue, not growing with the partition.

    python benchmarks/bench_memory.py --rows 1000000,5000000
    python benchmarks/bench_memory.py --rows 1000000,5000000 --tables 20
    python benchmarks/bench_memory.py --rows 5000000 --option kafka.queue.buffering.max.kbytes=8192

For each N in --rows: a fresh local Tansu broker, the reference table (bench_e2e.py's) made
by `spark.range(N, numPartitions=1)` (so N rows never sit in driver memory), written with
--protocol (default simple-json) in one task, while a thread samples every --interval s (0.1)
the resident set size (/proc/<pid>/statm) of every Python process under the Spark JVM:
the pyspark daemons (one per worker kind, ~46 MiB each) and the workers they fork, named
by their command line: `pyspark.worker` runs the task's `write()`,
`pyspark.sql.worker.write_into_data_source` the driver-side `writer()` (planning),
`pyspark.sql.worker.commit_data_source_write` the commit. It reports the peak RSS of the
task's worker (the largest `pyspark.worker` process), of any one Python process, and of
their sum (shared copy-on-write pages count once per process), every process's own peak,
and the write's time. `spark.python.worker.reuse=false`, so each run's task gets a fresh worker
(forked from the daemon) and one run's high-water mark does not carry into the next.
A small warm-up write runs first. Tansu keeps messages in memory: 5M Simple JSON rows are
~2.5 GB in the broker process (not counted here), freed when it stops after each run.

Prints one line per run and one JSON line with everything; --output writes the JSON too.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Any

import _common as common  # first: puts the repo on sys.path and PYTHONPATH

from ticdc_sink._local_broker import LocalBroker

PAGE = os.sysconf("SC_PAGE_SIZE")
RESCAN_S = 0.5


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command name), from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:  # gone meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        table[int(entry)] = (ppid, name)
    return table


def _descendants(table: dict[int, tuple[int, str]], root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except OSError:
        return 0


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[-120:]
    except OSError:
        return "?"


def spark_jvm() -> int:
    """The Spark JVM: the `java` process under this one (spark-submit execs it)."""
    table = _process_table()
    for pid in _descendants(table, os.getpid()):
        if table[pid][1] == "java":
            return pid
    raise RuntimeError("no java process under this one: is Spark running locally?")


class WorkerSampler:
    """Samples the RSS of the JVM and of the Python processes under it in a thread until
    stopped."""

    def __init__(self, jvm: int, interval: float, timeline_s: float | None = None) -> None:
        self.jvm = jvm
        self.interval = interval
        # Every timeline_s: (seconds since start, JVM RSS, largest task worker's RSS).
        self.timeline_s = timeline_s
        self.timeline: list[tuple[float, int, int]] = []
        self.peak_one = 0  # the largest single Python worker
        self.peak_sum = 0
        self.peak_jvm = 0  # the JVM itself
        self.samples = 0
        self.peaks: dict[int, int] = {}  # pid -> its peak RSS
        self.commands: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WorkerSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        # Scanning /proc costs ~10 ms on a busy 2-core machine; statm of a few pids ~0.1 ms.
        # So look for Python processes every RESCAN_S only, and read their RSS every time.
        pids: list[int] = []
        next_scan = 0.0
        started = next_point = time.monotonic()
        while True:
            if time.monotonic() >= next_scan:
                table = _process_table()
                pids = [
                    p for p in _descendants(table, self.jvm) if table[p][1].startswith("python")
                ]
                next_scan = time.monotonic() + RESCAN_S
            sizes = [_rss(p) for p in pids]
            for pid, size in zip(pids, sizes, strict=True):
                if pid not in self.commands:
                    self.commands[pid] = _command(pid)
                self.peaks[pid] = max(self.peaks.get(pid, 0), size)
            self.peak_one = max(self.peak_one, max(sizes, default=0))
            jvm = _rss(self.jvm)
            self.peak_jvm = max(self.peak_jvm, jvm)
            if self.timeline_s and time.monotonic() >= next_point:
                tasks = [
                    size
                    for pid, size in zip(pids, sizes, strict=True)
                    if self.commands[pid].endswith("pyspark.worker")
                ]
                self.timeline.append((time.monotonic() - started, jvm, max(tasks, default=0)))
                next_point += self.timeline_s
            self.peak_sum = max(self.peak_sum, sum(sizes))
            self.samples += 1
            if self._stop.wait(self.interval):
                return


def write(
    spark: Any, rows: int, protocol: str, bootstrap: str, registry_url: str | None, tables: int
):
    frame = common.reference_frame(spark, rows, 1)
    options = common.sink_options(bootstrap, protocol, registry_url)
    if tables:  # the rows over `tables` tables by _table, one fixed topic (bench_e2e's case)
        frame = common.with_tables(frame, tables)
        options.pop("table")
        options["topic"] = "bench_tables"
    frame.write.format("ticdc").mode("append").options(**options).save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="1000000,5000000", help="comma-separated row counts")
    parser.add_argument(
        "--protocol", default="simple-json", choices=sorted(common.PROTOCOLS), help="writer"
    )
    parser.add_argument("--interval", type=float, default=0.1, help="sampling period, s")
    parser.add_argument("--tables", type=int, default=0, help="the rows over N tables by _table")
    parser.add_argument("--output", help="also write the JSON results to this file")
    parser.add_argument("--spark-memory", default="2g", help="spark.driver.memory")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for the writer (repeatable), e.g. kafka.queue.buffering.max.kbytes=8192",
    )
    args = parser.parse_args()
    for option in args.option:
        key, sep, value = option.partition("=")
        if not sep:
            parser.error(f"--option {option!r}: use KEY=VALUE")
        common.EXTRA_OPTIONS[key.strip()] = value.strip()
    sizes = [int(n) for n in args.rows.split(",") if n.strip()]

    registry = None
    if args.protocol in common.NEEDS_REGISTRY:
        try:
            from tests.support.registry import TestSchemaRegistry
        except ImportError as exc:
            parser.exit(
                1, f"protocol {args.protocol} needs tests/support/registry.py, which fails: {exc}\n"
            )
        registry = TestSchemaRegistry().start()
    registry_url = registry.url if registry else None

    spark = common.make_spark(args.spark_memory, extra={"spark.python.worker.reuse": "false"})
    results: list[dict[str, Any]] = []
    try:
        jvm = spark_jvm()
        with LocalBroker() as broker:
            write(spark, 2_000, args.protocol, broker.bootstrap, registry_url, args.tables)
        for rows in sizes:
            try:
                with LocalBroker() as broker, WorkerSampler(jvm, args.interval) as sampler:
                    start = time.perf_counter()
                    write(spark, rows, args.protocol, broker.bootstrap, registry_url, args.tables)
                    seconds = time.perf_counter() - start
            except Exception as exc:  # noqa: BLE001 (reported; the other sizes still run)
                error = common.short_error(exc)
                print(f"{rows:>10,} rows FAILED: {error}", flush=True)
                results.append({"rows": rows, "error": error})
                continue
            task_peaks = [
                peak
                for pid, peak in sampler.peaks.items()
                if sampler.commands[pid].endswith("pyspark.worker")
            ]
            result = {
                "rows": rows,
                "seconds": round(seconds, 2),
                "rows_per_s": round(rows / seconds),
                "peak_task_worker_rss_mib": round(max(task_peaks, default=0) / 2**20, 1),
                "peak_any_python_rss_mib": round(sampler.peak_one / 2**20, 1),
                "peak_all_python_rss_mib": round(sampler.peak_sum / 2**20, 1),
                "python_processes": [
                    {
                        "pid": pid,
                        "peak_rss_mib": round(peak / 2**20, 1),
                        "command": sampler.commands[pid],
                    }
                    for pid, peak in sorted(sampler.peaks.items(), key=lambda kv: -kv[1])
                ],
                "samples": sampler.samples,
            }
            results.append(result)
            print(
                f"{rows:>10,} rows  peak RSS: task worker "
                f"{result['peak_task_worker_rss_mib']:>7.1f} MiB (all Python processes "
                f"{result['peak_all_python_rss_mib']:.1f} MiB)  "
                f"{seconds:.1f} s, {result['rows_per_s']:,} rows/s, {sampler.samples} samples",
                flush=True,
            )
    finally:
        spark.stop()
        if registry is not None:
            registry.stop()
    report = {
        "bench": "memory",
        "protocol": args.protocol,
        "partitions": 1,
        "tables": args.tables or 1,
        "options": common.EXTRA_OPTIONS,
        "environment": common.environment(),
        "results": results,
    }
    common.publish(report, args.output)


if __name__ == "__main__":
    main()

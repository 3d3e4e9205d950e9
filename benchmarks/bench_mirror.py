"""The mirror into Delta Lake: rows/s per micro-batch size, `ticdc_sink.mirror.MirrorBatch`
against a hand-written `foreachBatch` MERGE of the same rows, in one run.

    python benchmarks/bench_mirror.py --sizes 1000,10000,100000 --batches 4

Needs a PySpark that Delta supports (4.0 to 4.2; `examples/mirror_lakehouse.py`'s
`PACKAGES`); Delta's jars are fetched from Maven Central with `mvn`
(tests/support/lakehouse.py). For each size, `--batches` micro-batches of change rows are
made with `spark.range` (seeded: keys drawn from `--key-space`, 60% inserts, 30% updates,
10% deletes, commit ts rising, several changes of a key in one batch), cached and counted
before the clock starts; each batch is then applied by both, alternately, each into a
Delta table of its own created empty beforehand (`id bigint, name string, qty int, price
double`):

| name | what it is |
| --- | --- |
| `mirror` | `MirrorBatch("...", ["id"], format="delta")(batch, id)`: the batch's largest commit |
|  | ts, the recorded resolved ts (DESCRIBE HISTORY), one change per key (moves, replays, |
|  | order at one ts), the column check, one MERGE with the commit's userMetadata |
| `hand` | what users write: the latest row per key by `_commit_ts` (a window), one MERGE |
|  | (`_op = 'DELETE'` deletes, else update or insert); no replays, no key moves |

The first batch of each size is a warm-up and is not timed. Time per batch is wall clock
from the call to its return; rows/s = batch rows / time; median and best over the batches.
One JSON line per size, and `--output` appends them to a file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import environment  # sets sys.path and PYSPARK_PYTHON

from tests.support.lakehouse import lakehouse_session

HAND_MERGE = """
MERGE INTO {target} t USING {view} s ON t.id = s.id
WHEN MATCHED AND s._op = 'DELETE' THEN DELETE
WHEN MATCHED THEN UPDATE SET name = s.name, qty = s.qty, price = s.price
WHEN NOT MATCHED AND s._op != 'DELETE' THEN INSERT (id, name, qty, price)
  VALUES (s.id, s.name, s.qty, s.price)
"""


def make_batch(spark: Any, rows: int, number: int, key_space: int, seed: int) -> Any:
    from pyspark.sql import functions as F

    base = 450_000_000_000_000_000 + number * rows * 4
    pick = F.rand(seed + number)
    op = F.when(pick < 0.6, "INSERT").when(pick < 0.9, "UPDATE").otherwise("DELETE")
    return (
        spark.range(rows)
        .select(
            (F.abs(F.xxhash64(F.col("id"), F.lit(seed + number))) % key_space).alias("id"),
            F.concat(F.lit("name "), F.col("id").cast("string")).alias("name"),
            (F.col("id") % 1000).cast("int").alias("qty"),
            (F.col("id") / 7).alias("price"),
            op.alias("_op"),
            (F.lit(base) + F.col("id") * 4).alias("_commit_ts"),
            F.lit("bench").alias("_database"),
            F.lit("items").alias("_table"),
        )
        .persist()
    )


def hand_written(spark: Any, target: str) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def apply(batch: Any, batch_id: int) -> None:
        latest = (
            batch.withColumn(
                "_n",
                F.row_number().over(Window.partitionBy("id").orderBy(F.desc("_commit_ts"))),
            )
            .where("_n = 1")
            .drop("_n")
        )
        view = f"hand_{batch_id}"
        latest.createOrReplaceTempView(view)
        spark.sql(HAND_MERGE.format(target=target, view=view))
        spark.catalog.dropTempView(view)

    return apply


def timed(function: Any, batch: Any, batch_id: int) -> float:
    start = time.perf_counter()
    function(batch, batch_id)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--batches", type=int, default=4, help="timed batches per size")
    parser.add_argument("--key-space", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)

    from ticdc_sink.mirror import MirrorBatch

    work = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    spark = lakehouse_session(work)
    env = environment()
    with open("/proc/loadavg") as loadavg:
        env["loadavg_before"] = loadavg.read().split()[:3]
    lines = []
    for size in [int(s) for s in args.sizes.split(",")]:
        targets = {name: f"bench_{name}_{size}" for name in ("mirror", "hand")}
        for target in targets.values():
            spark.sql(
                f"CREATE TABLE {target} (id bigint, name string, qty int, price double) USING delta"
            )
        appliers = {
            "mirror": MirrorBatch(targets["mirror"], ["id"], format="delta"),
            "hand": hand_written(spark, targets["hand"]),
        }
        times: dict[str, list[float]] = {name: [] for name in appliers}
        for number in range(args.batches + 1):  # batch 0 warms up
            batch = make_batch(spark, size, number, args.key_space, args.seed)
            batch.count()
            order = list(appliers) if number % 2 == 0 else list(appliers)[::-1]
            for name in order:
                seconds = timed(appliers[name], batch, number)
                if number > 0:
                    times[name].append(seconds)
            batch.unpersist()
        same = sorted(spark.table(targets["mirror"]).collect()) == sorted(
            spark.table(targets["hand"]).collect()
        )
        result: dict[str, Any] = {"bench": "mirror", "batch_rows": size, "same_table": same}
        for name, spent in times.items():
            result[name] = {
                "median_rows_per_s": round(size / statistics.median(spent)),
                "best_rows_per_s": round(size / min(spent)),
                "median_s": round(statistics.median(spent), 3),
            }
        result["mirror_vs_hand"] = round(
            result["mirror"]["median_rows_per_s"] / result["hand"]["median_rows_per_s"], 2
        )
        lines.append(result)
        print(json.dumps(result), flush=True)
    with open("/proc/loadavg") as loadavg:
        env["loadavg_after"] = loadavg.read().split()[:3]
    print(json.dumps({"environment": env}))
    spark.stop()
    if args.output:
        with args.output.open("a") as out:
            for line in [*lines, {"environment": env}]:
                out.write(json.dumps(line) + "\n")
    return 0 if all(line["same_table"] for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())

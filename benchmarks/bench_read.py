"""Reading TiCDC topics: `spark.read.format("ticdc")` against a hand-rolled consumer, on
the same topic in one run.

    python benchmarks/bench_read.py --rows 500000 --repeat 3

The reference table (bench_e2e.py's: 10 columns, 70% inserts, 20% updates with `_before`,
10% deletes) is written once per encoding by `format("ticdc")` (Simple JSON, Simple Avro)
to a fresh local Tansu broker, then read --repeat times by each reader:

| name | what it is |
| --- | --- |
| `ticdc-json` | `spark.read.format("ticdc")` (Simple JSON), `local[2]`, one task per |
|  | Kafka partition, materialised with `write.format("noop")` |
| `ticdc-avro` | the same, `encoding-format=avro` |
| `baseline-json` | one Python process: a group-less `confluent_kafka.Consumer` over |
|  | every partition, `orjson.loads` per message, the DML messages' `data` values |
|  | into column lists, `pyarrow` batches of 10 000 rows (values stay strings: no |
|  | typing, no `_before`, no schema discovery) |

Spark's own Kafka source (`format("kafka")` + `from_json`), which issue 17 names as the
baseline, needs the `spark-sql-kafka-0-10` jar and its dependencies from Maven; this
machine reaches no Maven repository, so `baseline-json` stands in for it (see RESULTS.md).

The first read of each reader warms up (Python workers, imports) and is not timed. Every
read ends at offsets taken after the writes (tests.support.broker end markers, since
Tansu's high watermarks are wrong after multi-record batches), so each reader reads the
same messages. Times are wall clock from the call to its return (for ticdc: planning on the
driver, which scans each partition up to its first row, and the tasks); one JSON line at
the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from _common import DATABASE, TABLE, environment, make_spark, reference_frame, sink_options

READERS = ("ticdc-json", "ticdc-avro", "baseline-json")
_TOPIC = f"bench_{DATABASE}_{TABLE}"


def _ending(topic: str, ends: dict[int, int]) -> str:
    return json.dumps({topic: {str(p): o for p, o in ends.items()}})


def read_ticdc(spark: Any, bootstrap: str, topic: str, ends: dict[int, int], encoding: str) -> None:
    frame = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("encoding-format", encoding)
        .option("endingOffsets", _ending(topic, ends))
        .load()
    )
    frame.write.format("noop").mode("overwrite").save()


def read_baseline(bootstrap: str, topic: str, ends: dict[int, int]) -> int:
    import confluent_kafka
    import orjson
    import pyarrow as pa

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-read-baseline",
            "enable.auto.commit": "false",
        }
    )
    rows = 0
    columns: dict[str, list[Any]] = {}
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in ends])
        left = {p: end for p, end in ends.items() if end > 0}
        while left:
            for message in consumer.consume(2000, timeout=1.0):
                partition, offset = message.partition(), message.offset()
                if partition not in left or offset >= left[partition]:
                    continue
                if offset == left[partition] - 1:
                    del left[partition]
                event = orjson.loads(message.value())
                if event.get("type") not in ("INSERT", "UPDATE", "DELETE"):
                    continue
                image = event.get("data") or event.get("old") or {}
                for name, value in image.items():
                    columns.setdefault(name, []).append(value)
                rows += 1
                if rows % 10_000 == 0:
                    pa.RecordBatch.from_pydict(columns)
                    columns = {}
        if columns:
            pa.RecordBatch.from_pydict(columns)
    finally:
        consumer.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2, help="Spark partitions written")
    parser.add_argument("--readers", default=",".join(READERS))
    parser.add_argument("--spark-memory", default="4g")
    parser.add_argument("--output")
    args = parser.parse_args()
    readers = [r for r in args.readers.split(",") if r]

    from tests.support.broker import TansuBroker

    spark = make_spark(args.spark_memory)
    frame = reference_frame(spark, args.rows, args.partitions).cache()
    frame.count()
    results: dict[str, Any] = {}
    for encoding in ("json", "avro"):
        wanted = [r for r in readers if r.endswith(f"-{encoding}")]
        if not wanted:
            continue
        with TansuBroker() as broker:
            options = sink_options(broker.bootstrap, f"simple-{encoding}")
            frame.write.format("ticdc").mode("append").options(**options).save()
            ends = broker.end_offsets(_TOPIC)
            rows = args.rows  # one change per frame row (no update changes a key)
            for reader in wanted:
                times = []
                for attempt in range(args.repeat + 1):  # the first warms up, untimed
                    start = time.perf_counter()
                    if reader.startswith("ticdc"):
                        read_ticdc(spark, broker.bootstrap, _TOPIC, ends, encoding)
                    else:
                        assert read_baseline(broker.bootstrap, _TOPIC, ends) == rows
                    if attempt:
                        times.append(time.perf_counter() - start)
                results[reader] = {
                    "rows": rows,
                    "seconds": times,
                    "median_rows_per_s": round(rows / statistics.median(times)),
                    "best_rows_per_s": round(rows / min(times)),
                }
                print(f"{reader:>14}: {results[reader]}", flush=True)
    spark.stop()
    line = json.dumps({"rows": args.rows, "results": results, "environment": environment()})
    print(line)
    if args.output:
        with open(args.output, "w") as out:
            out.write(line + "\n")


if __name__ == "__main__":
    main()

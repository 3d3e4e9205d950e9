"""The task's whole write loop on one core, no Spark and no Kafka: `writer.write_batches`
over Arrow record batches of the reference table, into a producer that only counts what
it is given. This is the sink's own CPU cost per row (conversion, order check, encoding,
the send loop), the part that decides how far below the ceiling an end-to-end run lands.

    python benchmarks/bench_write.py --rows 200000 --repeat 3
    python benchmarks/bench_write.py --protocols avro --profile 25
    python benchmarks/bench_write.py --protocols simple-json --option partition=index-value
    python benchmarks/bench_write.py --protocols simple-json --tables 20

Prints one JSON line per protocol: rows/s and microseconds per row in CPU time of this
process (median and best of --repeat), and the messages and bytes written. --profile N
prints the N most expensive functions (cProfile, cumulative CPU time) of one more run.
--tables N spreads the same rows over N tables by a `_table` column (row i to table
t{i % N}, one fixed topic), as bench_e2e's `--tables` case.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import time
from typing import Any

import _common as common
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from tests.support.reference_table import input_schema, make_batches, with_commit_ts
from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.producer import PartitionStats
from ticdc_sink.writer import make_plan, write_batches

BUILD_TS_MS = 1_700_000_000_000


class CountingProducer:
    """The producer interface of `writer`, counting messages and bytes per partition."""

    def __init__(self, config: Any = None) -> None:
        self.stats: dict[tuple[str, int], list[int]] = {}

    def partition_count(self, topic: str) -> int:
        return 3

    def partition_counts(self, topics: Any) -> dict[str, int]:
        return dict.fromkeys(topics, 3)

    def topic_max_message_bytes(self, topic: str) -> int | None:
        return None

    def topics_max_message_bytes(self, topics: Any) -> dict[str, int | None]:
        return dict.fromkeys(topics)

    def _add(self, topic: str, partition: int, messages: int, size: int) -> None:
        entry = self.stats.setdefault((topic, partition), [0, 0])
        entry[0] += messages
        entry[1] += size

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        self._add(topic, partition, 1, len(key or b"") + len(value or b""))

    def send_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        values: list[Any],
        keys: list[Any] | None = None,
    ) -> None:
        if not isinstance(partition, int):  # a partition per message
            keys = [key] * len(values) if keys is None else keys
            for p, k, value in zip(partition, keys, values, strict=True):
                self.send(topic, p, k, value)
            return
        if keys is not None:
            size = sum(map(len, filter(None, values))) + sum(map(len, filter(None, keys)))
            self._add(topic, partition, len(values), size)
            return
        size = sum(map(len, filter(None, values))) + len(key or b"") * len(values)
        self._add(topic, partition, len(values), size)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    @property
    def delivered(self) -> dict[tuple[str, int], PartitionStats]:
        return {k: PartitionStats(m, b) for k, (m, b) in self.stats.items()}


class Registry:
    """Schema ids without a registry (avro)."""

    def __init__(self, *args: Any) -> None:
        self.ids: dict[tuple[str, bool], int] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        return self.ids.setdefault((schema, is_key), len(self.ids) + 1)

    def close(self) -> None:
        pass


def bench_plan(name: str, batches: list[pa.RecordBatch], tables: int = 0) -> Any:
    """The plan bench_e2e's options give for the reference table (over `tables` tables:
    one fixed topic and a `_table` column instead of the `table` option)."""
    options = common.sink_options("127.0.0.1:1", name, "http://127.0.0.1:1")
    schema = input_schema()
    if tables:
        options.pop("table")
        options["topic"] = "bench_tables"
        schema = schema.add(T.StructField("_table", T.StringType()))
    config = SinkConfig.from_options(options)
    return make_plan(config, schema, tso.compose(BUILD_TS_MS), batch_id=None)


def with_tables(batches: list[pa.RecordBatch], tables: int) -> list[pa.RecordBatch]:
    """`batches` with a `_table` column: row id i goes to table t{i % tables}."""
    names = pa.array([f"t{i}" for i in range(tables)])
    out = []
    for batch in batches:
        index = pc.cast(pc.remainder(batch.column("id"), tables), pa.int32())
        out.append(batch.append_column("_table", pc.take(names, index)))
    return out


def bench(
    name: str, batches: list[pa.RecordBatch], repeat: int, profile: int, tables: int = 0
) -> dict[str, Any]:
    plan = bench_plan(name, batches, tables)
    rows = sum(b.num_rows for b in batches)

    def run() -> Any:
        return write_batches(
            batches, plan, producer_factory=CountingProducer, registry_factory=Registry
        )

    run()  # warm-up
    seconds = []
    for _ in range(repeat):
        start = time.process_time()
        report = run()
        seconds.append(time.process_time() - start)
    if profile:
        profiler = cProfile.Profile(time.process_time)
        profiler.runcall(run)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(profile)
    median = statistics.median(seconds)
    return {
        "bench": "write",
        "protocol": name,
        "rows": rows,
        "rows_per_s": round(rows / median),
        "rows_per_s_best": round(rows / min(seconds)),
        "us_per_row": round(median / rows * 1e6, 2),
        "messages": report.messages,
        "bytes": report.bytes,
        "options": dict(common.EXTRA_OPTIONS),
        "tables": tables or 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--protocols", default=",".join(common.PROTOCOLS))
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--tables", type=int, default=0, help="the rows over N tables by _table")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for every protocol (repeatable), e.g. partition=index-value",
    )
    args = parser.parse_args()
    for option in args.option:
        key, sep, value = option.partition("=")
        if not sep:
            parser.error(f"--option {option!r}: use KEY=VALUE")
        common.EXTRA_OPTIONS[key.strip()] = value.strip()
    batches = with_commit_ts(make_batches(args.rows))
    if args.tables:
        batches = with_tables(batches, args.tables)
    for name in args.protocols.split(","):
        result = bench(name, batches, args.repeat, args.profile, args.tables)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

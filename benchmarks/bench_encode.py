"""Encoder-only throughput on one core, no Spark and no Kafka: Arrow record batches of the
reference table -> row changes -> Simple JSON messages.

    python benchmarks/bench_encode.py --rows 200000 --repeat 3

Prints one JSON line: rows/s for conversion (events.read_changes), for encoding alone, and
for both, median and best of --repeat runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import statistics
import time
from decimal import Decimal

import pyarrow as pa
from pyspark.sql import types as T

from ticdc_sink import codec, tso
from ticdc_sink.config import CodecConfig
from ticdc_sink.events import InputLayout, read_changes
from ticdc_sink.schema import build_table_schema

SPARK_SCHEMA = T.StructType(
    [
        T.StructField("_op", T.StringType()),
        T.StructField("id", T.LongType(), nullable=False),
        T.StructField("qty", T.IntegerType()),
        T.StructField("name", T.VarcharType(64)),
        T.StructField("note", T.StringType()),
        T.StructField("price", T.DoubleType()),
        T.StructField("amount", T.DecimalType(10, 2)),
        T.StructField("updated", T.TimestampNTZType()),
        T.StructField("day", T.DateType()),
        T.StructField("active", T.BooleanType()),
        T.StructField("comment", T.VarcharType(64)),
    ]
)


def make_batches(rows: int, seed: int = 7, size: int = 10_000) -> list[pa.RecordBatch]:
    rng = random.Random(seed)
    base = dt.datetime(2024, 1, 1)
    batches = []
    for start in range(0, rows, size):
        n = min(size, rows - start)
        ids = list(range(start, start + n))
        batches.append(
            pa.RecordBatch.from_pydict(
                {
                    "_op": [rng.choice("cccccccuud") for _ in ids],
                    "id": pa.array(ids, pa.int64()),
                    "qty": pa.array([rng.randint(0, 1000) for _ in ids], pa.int32()),
                    "name": [f"name-{i}" for i in ids],
                    "note": [f"a longer note for row {i} " * 2 for i in ids],
                    "price": [rng.random() * 1000 for _ in ids],
                    "amount": pa.array(
                        [Decimal(rng.randint(0, 10**8)) / 100 for _ in ids], pa.decimal128(10, 2)
                    ),
                    "updated": pa.array(
                        [base + dt.timedelta(seconds=i, microseconds=i % 1000) for i in ids],
                        pa.timestamp("us"),
                    ),
                    "day": pa.array([(base + dt.timedelta(days=i % 3000)).date() for i in ids]),
                    "active": [i % 2 == 0 for i in ids],
                    "comment": [None if i % 3 else f"c{i}" for i in ids],
                }
            )
        )
    return batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = build_table_schema(
        "bench", "orders", SPARK_SCHEMA, reserved={"_op"}, primary_key=("id",)
    )
    batches = make_batches(args.rows)
    commit_ts = tso.compose(1_700_000_000_000)
    encoder = codec.build_encoder(CodecConfig(), table, build_ts_ms=1_700_000_000_000)
    layout = InputLayout()

    def convert() -> list:
        out = []
        for batch in batches:
            out.extend(
                read_changes(
                    batch,
                    layout=layout,
                    tables=lambda d, t: table,
                    default_database="bench",
                    default_table="orders",
                    default_commit_ts=commit_ts,
                    time_zone="UTC",
                )
            )
        return out

    convert_s, encode_s = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        changes = convert()
        t1 = time.perf_counter()
        for change in changes:
            encoder.encode_row(change)
        t2 = time.perf_counter()
        convert_s.append(t1 - t0)
        encode_s.append(t2 - t1)
    total = [c + e for c, e in zip(convert_s, encode_s, strict=True)]
    rate = lambda xs: {  # noqa: E731
        "median": round(args.rows / statistics.median(xs)),
        "best": round(args.rows / min(xs)),
    }
    print(
        json.dumps(
            {
                "bench": "encode",
                "protocol": "simple-json",
                "rows": args.rows,
                "convert_rows_per_s": rate(convert_s),
                "encode_rows_per_s": rate(encode_s),
                "total_rows_per_s": rate(total),
            }
        )
    )


if __name__ == "__main__":
    main()

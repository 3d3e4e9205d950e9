"""The benchmarks' reference table, shared with the unit tests that check its batches take
each protocol's column-wise path and match the row path (so the benchmarks measure the path
users get). The benchmarks import it from here (`benchmarks/_common.py` puts the repository
on sys.path); no test imports from benchmarks/.

    SPARK_SCHEMA       `_op` and the table's ten columns, as Spark types
    COLUMN_TYPES       their MySQL types (the `column-types` option)
    make_batches()     seeded Arrow record batches: 70% INSERTs, 20% UPDATEs carrying
                       `_before` (qty one lower), 10% DELETEs, NULLs in `comment`
    with_commit_ts()   the same batches with `_commit_ts`: row i commits at BASE_TSO + i
    input_schema()     the Spark schema of `with_commit_ts`'s batches
    sink_options()     one ticdc writer's options per protocol name of PROTOCOLS
    reference_plan()   the writer's plan for `with_commit_ts`'s batches
"""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from ticdc_sink.config import SinkConfig
from ticdc_sink.writer import WritePlan, make_plan

__all__ = [
    "BASE_TSO",
    "COLUMN_TYPES",
    "DATABASE",
    "NEEDS_REGISTRY",
    "PROTOCOLS",
    "SPARK_SCHEMA",
    "TABLE",
    "TOPIC_EXPRESSION",
    "input_schema",
    "reference_plan",
    "make_batches",
    "sink_options",
    "with_commit_ts",
]

DATABASE = "bench"
TABLE = "orders"
# One expression for every ticdc writer: avro needs {schema} and {table} in it.
TOPIC_EXPRESSION = "bench_{schema}_{table}"
# 1.7e12 ms (2023-11-14) as a TiDB TSO; row i commits at BASE_TSO + i.
BASE_TSO = 1_700_000_000_000 << 18

# The MySQL types of the reference table: given through the `column-types` option, as a
# user without a DDL would.
COLUMN_TYPES = {
    "id": "bigint",
    "qty": "int",
    "name": "varchar(64)",
    "note": "text",
    "price": "double",
    "amount": "decimal(10,2)",
    "updated": "datetime(6)",
    "day": "date",
    "active": "tinyint(1)",
    "comment": "varchar(64)",
}

# name -> options on top of the common ones; NEEDS_REGISTRY writers get the registry URL.
PROTOCOLS: dict[str, dict[str, str]] = {
    "simple-json": {"protocol": "simple", "encoding-format": "json"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {"protocol": "avro"},
    "debezium": {"protocol": "debezium"},
    "debezium-no-schema": {"protocol": "debezium", "debezium-disable-schema": "true"},
    "canal-json": {"protocol": "canal-json"},
}
NEEDS_REGISTRY = frozenset({"avro"})

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
        batch = pa.RecordBatch.from_pydict(
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
        # Updates carry their old row in `_before` (qty one lower), as bench_e2e's frame.
        table_columns = batch.schema.names[1:]
        old = [
            pc.subtract(batch.column("qty"), 1) if name == "qty" else batch.column(name)
            for name in table_columns
        ]
        not_update = pc.not_equal(batch.column("_op"), "u")
        before = pa.StructArray.from_arrays(old, names=table_columns, mask=not_update)
        batches.append(batch.append_column("_before", before))
    return batches


def with_commit_ts(batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """bench_e2e's frame: row i commits at BASE_TSO + i."""
    out, start = [], 0
    for batch in batches:
        ts = pa.array(range(BASE_TSO + start, BASE_TSO + start + batch.num_rows))
        out.append(batch.append_column("_commit_ts", ts))
        start += batch.num_rows
    return out


def input_schema() -> T.StructType:
    """The Spark schema of `with_commit_ts(make_batches(...))`."""
    return T.StructType(
        [
            *SPARK_SCHEMA.fields,
            T.StructField("_before", T.StructType(SPARK_SCHEMA.fields[1:])),
            T.StructField("_commit_ts", T.LongType()),
        ]
    )


def sink_options(bootstrap: str, protocol: str, registry_url: str | None = None) -> dict[str, str]:
    """The options of one ticdc writer; producer settings are the sink's defaults for all."""
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "topic": TOPIC_EXPRESSION,
        "database": DATABASE,
        "table": TABLE,
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        **PROTOCOLS[protocol],
    }
    if protocol in NEEDS_REGISTRY:
        if registry_url is None:
            raise ValueError(f"{protocol} needs a schema registry")
        options["schema-registry"] = registry_url
    return options


def reference_plan(protocol: str, commit_ts: int, **options: str) -> WritePlan:
    """The writer's plan for `with_commit_ts`'s batches: `sink_options(protocol)` (a
    registry URL that is never called), `options` on top."""
    config = SinkConfig.from_options(
        {**sink_options("127.0.0.1:1", protocol, "http://127.0.0.1:1"), **options}
    )
    return make_plan(config, input_schema(), commit_ts, batch_id=None)

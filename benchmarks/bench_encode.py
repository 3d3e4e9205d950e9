"""Encoder-only throughput on one core, no Spark and no Kafka: Arrow record batches of the
reference table -> messages, per protocol.

    python benchmarks/bench_encode.py --rows 200000 --repeat 3
    python benchmarks/bench_encode.py --protocols simple-json,simple-json-rows

Protocols: `simple-json`, `simple-avro`, `avro` (schema ids from an in-memory lookup),
`debezium`, `debezium-no-schema`, `canal-json`, `open-protocol` (one message per event:
the writer batches after encoding), each through the writer's path
(`input_batch.read_change_batches`, then the encoder's column-wise `encode_batch`); and, named
`<protocol>-rows` (e.g. `avro-rows`), the per-row path (`ChangeBatch.to_changes`, key-changing
updates split, `encode_row` per event). Prints one JSON line per protocol: rows/s for
conversion, encoding and both, median and best of --repeat runs, CPU time of this process
(`time.process_time`) and wall time; on a shared machine the CPU figures are the steadier.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import _common  # noqa: F401  (first: puts the repo on sys.path)
import pyarrow as pa

from tests.support.reference_table import SPARK_SCHEMA, make_batches
from ticdc_sink import tso
from ticdc_sink.codec import protocols
from ticdc_sink.config import CodecConfig
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.writer import key_column_indexes, split_key_update
from ticdc_sink.writer.table import build_table_schema


class _Ids:
    """Schema ids for the avro encoder without a registry."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, bool], int] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        return self.ids.setdefault((schema, is_key), len(self.ids) + 1)


PROTOCOLS: dict[str, dict[str, str]] = {
    "simple-json": {"protocol": "simple"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {"protocol": "avro"},
    "debezium": {"protocol": "debezium"},
    "debezium-no-schema": {"protocol": "debezium", "debezium-disable-schema": "true"},
    "canal-json": {"protocol": "canal-json"},
    "open-protocol": {"protocol": "open-protocol"},
}
# The per-row path of each protocol (`encode_row` per event), for comparison.
ROW_PATHS = {f"{name}-rows": options for name, options in PROTOCOLS.items()}


def _rate(rows: int, seconds: list[float]) -> dict[str, int]:
    return {
        "median": round(rows / statistics.median(seconds)),
        "best": round(rows / min(seconds)),
    }


def bench(name: str, batches: list[pa.RecordBatch], table: Any, repeat: int) -> dict[str, Any]:
    options = {**PROTOCOLS, **ROW_PATHS}[name]
    config = CodecConfig(**{k.replace("-", "_"): v for k, v in options.items()})
    build_ts = 1_700_000_000_000
    encoder = protocols.build_encoder(
        config, table, build_ts_ms=build_ts, topic="bench_orders", registry=_Ids()
    )
    keys = key_column_indexes(table)
    kwargs = dict(
        layout=InputLayout(),
        tables=lambda d, t: table,
        default_database="bench",
        default_table="orders",
        default_commit_ts=tso.compose(build_ts),
        time_zone="UTC",
    )
    rows = sum(b.num_rows for b in batches)
    if name.endswith("-rows"):

        def convert() -> list[Any]:
            return [
                c for b in batches for g in read_change_batches(b, **kwargs) for c in g.to_changes()
            ]

        def encode(changes: list[Any]) -> None:
            encode_row = encoder.encode_row
            for change in changes:
                for event in split_key_update(change, keys):
                    encode_row(event)

    else:

        def convert() -> list[Any]:
            return [g for b in batches for g in read_change_batches(b, **kwargs)]

        def encode(groups: list[Any]) -> None:
            for group in groups:
                if encoder.encode_batch(group, keys).row_path:
                    raise RuntimeError(f"{name}: encode_batch left rows to the row path")

    encode(convert()[:1])  # warm-up: registry ids, lazy imports
    result: dict[str, Any] = {"bench": "encode", "protocol": name, "rows": rows}
    for clock_name, clock in (("cpu", time.process_time), ("wall", time.perf_counter)):
        convert_s, encode_s = [], []
        for _ in range(repeat):
            t0 = clock()
            changes = convert()
            t1 = clock()
            encode(changes)
            t2 = clock()
            convert_s.append(t1 - t0)
            encode_s.append(t2 - t1)
        total = [c + e for c, e in zip(convert_s, encode_s, strict=True)]
        result[clock_name] = {
            "convert_rows_per_s": _rate(rows, convert_s),
            "encode_rows_per_s": _rate(rows, encode_s),
            "total_rows_per_s": _rate(rows, total),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    args = parser.parse_args()
    table = build_table_schema(
        "bench", "orders", SPARK_SCHEMA, reserved={"_op"}, primary_key=("id",)
    )
    batches = make_batches(args.rows)
    for name in args.protocols.split(","):
        print(json.dumps(bench(name, batches, table, args.repeat)), flush=True)


if __name__ == "__main__":
    main()

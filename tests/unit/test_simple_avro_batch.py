"""Simple Avro column-wise (`_simple_avro_batch.AvroBatchEncoder`, a record batch at a time)
gives exactly the row path's messages (`SimpleEncoder.encode_row` per event, key-changing
UPDATEs split): same values, keys, sizes and row ends, or the same error."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_simple_json_batch import _ARROW_FIELDS, COMMIT_TS, _batches, _plan
from tests.unit.test_writer import FakeProducer
from ticdc_sink.codec._simple_avro_batch import AvroBatchEncoder
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch, InputLayout, read_change_batches
from ticdc_sink.writer import _TaskWriter, split_key_update

_AVRO = {"encoding-format": "avro"}


def _change_batches(batches: list[pa.RecordBatch], plan: Any) -> list[tuple[ChangeBatch, Any]]:
    """Each record batch as ChangeBatches, with the task's table output (encoder, keys)."""
    task = _TaskWriter(plan, FakeProducer(), 0)
    layout = InputLayout(**plan.config.input.layout_fields())
    out = []
    for batch in batches:
        for group in read_change_batches(
            batch,
            layout=layout,
            tables=task.schema_for,
            default_database=plan.tables.default_database,
            default_table=plan.tables.default_table,
            default_commit_ts=plan.commit_ts,
            time_zone=plan.config.codec.time_zone,
        ):
            out.append((group, task.output_for(group.table)))
    return out


def _outcome(run: Any) -> Any:
    try:
        return ("ok", run())
    except InputError as exc:  # same error, same words
        return ("error", type(exc), str(exc))


def _row_path(group: ChangeBatch, output: Any) -> Any:
    events = [e for c in group.to_changes() for e in split_key_update(c, output.key_indexes)]
    messages = [output.encoder.encode_row(e) for e in events]
    ends: list[int] = []
    for change in group.to_changes():
        ends.append((ends[-1] if ends else 0) + len(split_key_update(change, output.key_indexes)))
    split = len(ends) and ends[-1] != len(ends)
    return (
        [m.key for m in messages],
        [m.value for m in messages],
        [len(m.value) + 36 for m in messages],
        ends if split else None,
    )


def _batch_path(group: ChangeBatch, output: Any, plan: Any) -> Any:
    encoder = AvroBatchEncoder(
        group.table, time_zone=plan.config.codec.time_zone, build_ts_ms=plan.build_ts_ms
    )
    encoded = encoder.encode_batch(group, output.key_indexes)
    assert encoded is not None
    keys = encoded.keys if encoded.keys is not None else [encoded.key] * len(encoded.values)
    return (keys, encoded.values, encoded.sizes, encoded.row_ends)


def _check(batches: list[pa.RecordBatch], plan: Any) -> None:
    for group, output in _change_batches(batches, plan):
        expected = _outcome(lambda g=group, o=output: _row_path(g, o))
        actual = _outcome(lambda g=group, o=output: _batch_path(g, o, plan))
        assert actual == expected


@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_path_gives_the_row_path_messages(with_table: bool, data: Any) -> None:
    batches = data.draw(_batches(with_table))
    _check(batches, _plan(with_table, **_AVRO))


def test_the_benchmark_shapes_match() -> None:
    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        import bench_write
        from _common import sink_options
        from bench_encode import make_batches
    finally:
        sys.path.remove(str(bench))
    from ticdc_sink.config import SinkConfig

    batches = bench_write.with_commit_ts(make_batches(3000, size=1000))
    config = SinkConfig.from_options(sink_options("127.0.0.1:1", "simple-avro", ""))
    spark_schema = bench_write.T.StructType(
        [
            *bench_write.SPARK_SCHEMA.fields,
            bench_write.T.StructField(
                "_before", bench_write.T.StructType(bench_write.SPARK_SCHEMA.fields[1:])
            ),
            bench_write.T.StructField("_commit_ts", bench_write.T.LongType()),
        ]
    )
    plan = bench_write.make_plan(config, spark_schema, COMMIT_TS, batch_id=None)
    _check(batches, plan)


def test_edge_values_and_key_changing_updates() -> None:
    rows = 12
    big = [0, 1, -1, 63, 64, -64, -65, 2**31, -(2**31), 2**62, 2**63 - 1, -(2**63)]
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in _ARROW_FIELDS[1:] if f.name != "c_bigint"},
            "c_bigint": pa.array(big, pa.int64()),
            "_op": pa.array(["c", "u", "u", "d"] * 3),
            "_commit_ts": pa.array([COMMIT_TS + i for i in range(rows)], pa.int64()),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 4 in (1, 2) else None for i in range(rows)],
                pa.struct(_ARROW_FIELDS),
            ),
        }
    )
    _check([batch], _plan(False, **_AVRO))


def test_a_value_the_writer_refuses_raises_the_row_path_error() -> None:
    group, output = _change_batches(
        [
            pa.RecordBatch.from_pydict(
                {
                    "id": pa.array([1, 2], pa.int64()),
                    **{f.name: pa.nulls(2, f.type) for f in _ARROW_FIELDS[1:]},
                    "_op": pa.array(["c", "c"]),
                    "_commit_ts": pa.array([COMMIT_TS, COMMIT_TS], pa.int64()),
                    "_before": pa.nulls(2, pa.struct(_ARROW_FIELDS)),
                }
            )
        ],
        _plan(False, **_AVRO),
    )[0]
    names = [c.name for c in group.table.columns]
    bad = names.index("c_time")
    group.columns[bad] = [None, 12]  # not a str: the row path's writer raises
    expected = _outcome(lambda: _row_path(group, output))
    assert expected[0] == "error"
    assert _outcome(lambda: _batch_path(group, output, _plan(False, **_AVRO))) == expected

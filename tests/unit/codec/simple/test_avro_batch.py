"""Simple Avro column-wise (`simple.avro_batch.AvroBatchMarshaller`, a record batch at a time)
gives exactly the row path's messages (`SimpleEncoder.encode_row` per event, key-changing
UPDATEs split): same values, keys, sizes and row ends, or the same error."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from tests.support.batches import ARROW_FIELDS, COMMIT_TS, change_batches, write_plan
from tests.support.fake_producer import FakeProducer
from tests.support.hypothesis_profiles import examples
from tests.support.reference_table import make_batches, reference_plan, with_commit_ts
from tests.support.row_path import outcome, with_row_path
from tests.support.strategies import record_batches
from ticdc_sink.codec.simple import avro_batch
from ticdc_sink.codec.simple.avro_batch import AvroBatchMarshaller
from ticdc_sink.events import ChangeBatch
from ticdc_sink.writer import TaskWriter, split_key_update

_AVRO = {"encoding-format": "avro"}


def _with_outputs(batches: list[pa.RecordBatch], plan: Any) -> list[tuple[ChangeBatch, Any]]:
    """Each record batch as ChangeBatches, with the task's table output (encoder, keys)."""
    task = TaskWriter(plan, FakeProducer(), 0)
    return [(g, task.output_for(g.table)) for g in change_batches(batches, plan, task)]


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
    marshaller = AvroBatchMarshaller(
        group.table, time_zone=plan.config.codec.time_zone, build_ts_ms=plan.build_ts_ms
    )
    encoded = marshaller.encode_batch(group, output.key_indexes)
    rendered = not encoded.row_path
    encoded = with_row_path(encoded, output.encoder, group, output.key_indexes)
    # A value the column-wise path refuses fails the row path too (every message
    # carries every column): the row path has raised by now.
    assert rendered
    keys = encoded.keys if encoded.keys is not None else [encoded.key] * len(encoded.values)
    return (keys, encoded.values, encoded.sizes, encoded.row_ends)


def _check(batches: list[pa.RecordBatch], plan: Any) -> None:
    for group, output in _with_outputs(batches, plan):
        expected = outcome(lambda g=group, o=output: _row_path(g, o))
        actual = outcome(lambda g=group, o=output: _batch_path(g, o, plan))
        assert actual == expected


@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_path_gives_the_row_path_messages(with_table: bool, data: Any) -> None:
    batches = data.draw(record_batches(with_table))
    _check(batches, write_plan(with_table, **_AVRO))


def test_the_benchmark_shapes_match() -> None:
    batches = with_commit_ts(make_batches(3000, size=1000))
    _check(batches, reference_plan("simple-avro", COMMIT_TS))


def test_edge_values_and_key_changing_updates() -> None:
    rows = 12
    big = [0, 1, -1, 63, 64, -64, -65, 2**31, -(2**31), 2**62, 2**63 - 1, -(2**63)]
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:] if f.name != "c_bigint"},
            "c_bigint": pa.array(big, pa.int64()),
            "_op": pa.array(["c", "u", "u", "d"] * 3),
            "_commit_ts": pa.array([COMMIT_TS + i for i in range(rows)], pa.int64()),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 4 in (1, 2) else None for i in range(rows)],
                pa.struct(ARROW_FIELDS),
            ),
        }
    )
    _check([batch], write_plan(False, **_AVRO))


def test_a_value_the_writer_refuses_raises_the_row_path_error() -> None:
    group, output = _with_outputs(
        [
            pa.RecordBatch.from_pydict(
                {
                    "id": pa.array([1, 2], pa.int64()),
                    **{f.name: pa.nulls(2, f.type) for f in ARROW_FIELDS[1:]},
                    "_op": pa.array(["c", "c"]),
                    "_commit_ts": pa.array([COMMIT_TS, COMMIT_TS], pa.int64()),
                    "_before": pa.nulls(2, pa.struct(ARROW_FIELDS)),
                }
            )
        ],
        write_plan(False, **_AVRO),
    )[0]
    names = [c.name for c in group.table.columns]
    bad = names.index("c_time")
    group.columns[bad] = [None, 12]  # not a str: the row path's writer raises
    expected = outcome(lambda: _row_path(group, output))
    assert expected[0] == "error"
    assert outcome(lambda: _batch_path(group, output, write_plan(False, **_AVRO))) == expected


# Types and sizes the shared COLUMNS leave out: unsigned bigint and BIT(64) above 2^63
# (Go's int64 wrap), strings and bytes long enough for multi-byte length varints, float
# extremes, and a handle key of its own.
_WIDE: dict[str, tuple[str, pa.DataType, Any, st.SearchStrategy[Any]]] = {
    "u64": (
        "bigint unsigned",
        pa.decimal128(20, 0),
        T.DecimalType(20, 0),
        st.integers(0, 2**64 - 1).map(decimal.Decimal),
    ),
    "b64": (
        "bit(64)",
        pa.binary(),
        T.BinaryType(),
        st.integers(0, 2**64 - 1).map(lambda v: v.to_bytes(8, "big")),
    ),
    "i32": ("int", pa.int32(), T.IntegerType(), st.integers(-(2**31), 2**31 - 1)),
    "su": ("smallint unsigned", pa.int32(), T.IntegerType(), st.integers(0, 2**16 - 1)),
    "long_text": (
        "longtext",
        pa.string(),
        T.StringType(),
        st.integers(0, 9000).map(lambda n: "é" * (n // 2) + "x" * (n % 2)),
    ),
    "long_blob": (
        "longblob",
        pa.binary(),
        T.BinaryType(),
        st.integers(0, 20000).map(lambda n: bytes(range(256)) * (n // 256)),
    ),
    "f": (
        "float",
        pa.float32(),
        T.FloatType(),
        st.floats(width=32, allow_nan=False, allow_infinity=False),
    ),
    "d": (
        "double",
        pa.float64(),
        T.DoubleType(),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    "ts": (
        "timestamp",
        pa.timestamp("s", tz="UTC"),
        T.TimestampType(),
        st.datetimes(
            min_value=dt.datetime(1970, 1, 2),
            max_value=dt.datetime(2038, 1, 1),
            timezones=st.just(dt.UTC),
        ),
    ),
}
_WIDE_FIELDS = [pa.field("k", pa.string(), nullable=False)] + [
    pa.field(name, spec[1]) for name, spec in _WIDE.items()
]


def _wide_plan() -> Any:
    from ticdc_sink.config import SinkConfig
    from ticdc_sink.writer import make_plan

    table = [T.StructField("k", T.StringType(), nullable=False)]
    table += [T.StructField(name, spec[2]) for name, spec in _WIDE.items()]
    schema = T.StructType(
        [
            *table,
            T.StructField("_op", T.StringType()),
            T.StructField("_commit_ts", T.LongType()),
            T.StructField("_before", T.StructType(table)),
        ]
    )
    types = {"k": "varchar(10)", **{name: spec[0] for name, spec in _WIDE.items()}}
    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t",
        "database": "wide_db",
        "table": "wide",
        "primary-key": "k",
        "column-types": json.dumps(types),
        "time-zone": "UTC",
        "protocol": "simple",
        "encoding-format": "avro",
    }
    return make_plan(SinkConfig.from_options(options), schema, COMMIT_TS, batch_id=None)


@st.composite
def _wide_batch(draw: Any) -> pa.RecordBatch:
    def image() -> dict[str, Any]:
        row = {"k": draw(st.sampled_from(["a", "b", "é" * 3]))}
        for name, spec in _WIDE.items():
            row[name] = draw(st.none() | spec[3])
        return row

    n = draw(st.integers(1, 6))
    rows = [image() for _ in range(n)]
    ops = draw(st.lists(st.sampled_from("cud"), min_size=n, max_size=n))
    befores = [image() if op == "u" and draw(st.booleans()) else None for op in ops]
    columns: dict[str, Any] = {
        f.name: pa.array([r[f.name] for r in rows], f.type) for f in _WIDE_FIELDS
    }
    columns["_op"] = pa.array(ops)
    columns["_commit_ts"] = pa.array([COMMIT_TS + 2**62 * (i % 2) for i in range(n)], pa.int64())
    columns["_before"] = pa.array(befores, pa.struct(_WIDE_FIELDS))
    return pa.RecordBatch.from_pydict(columns)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=_wide_batch())
def test_wide_values_match(batch: pa.RecordBatch) -> None:
    _check([batch], _wide_plan())


def test_all_null_columns_and_64_bit_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every column NULL but the key in one batch, NULL keys aside (a constant per row);
    # then the 2 GiB switch to 64-bit offsets, at a threshold small enough to test.
    rows = 6
    batch = pa.RecordBatch.from_pydict(
        {
            "k": pa.array(["a", "b", "a", "b", "a", "b"]),
            **{f.name: pa.nulls(rows, f.type) for f in _WIDE_FIELDS[1:]},
            "_op": pa.array(["c", "u", "u", "d", "c", "u"]),
            "_commit_ts": pa.array([COMMIT_TS] * rows, pa.int64()),
            "_before": pa.array(
                [None, {"k": "b"}, {"k": "b"}, None, None, None], pa.struct(_WIDE_FIELDS)
            ),
        }
    )
    _check([batch], _wide_plan())
    assert avro_batch._join([b"\x02", b"\x00"], 3).to_pylist() == [b"\x02\x00"] * 3
    monkeypatch.setattr(avro_batch, "_LARGE_BYTES", 64)
    assert avro_batch._join([b"-", pa.array([b"x" * 70])], 1).type == pa.large_binary()
    _check([batch], _wide_plan())
    wide = pa.RecordBatch.from_pydict(
        {
            **{name: batch.column(name) for name in batch.schema.names if name != "long_text"},
            "long_text": pa.array(["x" * 100] * rows, pa.large_string()),
        }
    )
    _check([wide], _wide_plan())


@pytest.mark.parametrize("mysql", ["text", "varchar(20)", "blob", "timestamp", "json"])
@pytest.mark.parametrize("large", [False, True])
def test_column_entries_of_odd_arrays(mysql: str, large: bool) -> None:
    # Arrays Arrow could hand over: sliced (an offset), NULL slots holding bytes, no data
    # buffer at all; each entry as the row path's writer writes it.
    from ticdc_sink.ddl import parse_mysql_type
    from ticdc_sink.schema import Column

    column = avro_batch._Column(Column("c", parse_mysql_type(mysql)), "Asia/Shanghai")
    text = mysql != "blob"
    kinds = {(True, False): pa.string(), (True, True): pa.large_string()}
    kinds |= {(False, False): pa.binary(), (False, True): pa.large_binary()}
    kind = kinds[text, large]
    width = np.int64 if large else np.int32
    raw = b"ab\xc3\xa9xyz" + b"q" * 200
    offsets = np.array([0, 2, 4, 7, 207], width)
    validity = pa.py_buffer(np.packbits([1, 0, 1, 1], bitorder="little").tobytes())
    arrays = [
        pa.Array.from_buffers(kind, 4, [validity, pa.py_buffer(offsets), pa.py_buffer(raw)]),
        pa.array(["", None, "x" * 70, "é"] * 3, kind).slice(2, 7),
        pa.array(["", "", None], kind),
    ]
    for values in arrays:
        expected = [
            column.null if v is None else column.key + column.write(v) for v in values.to_pylist()
        ]
        parts, refused = column.parts(values)
        assert not refused
        assert avro_batch._join(parts, len(values)).to_pylist() == expected

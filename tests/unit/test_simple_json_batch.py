"""The Simple JSON fast path (column-wise, a record batch at a time) sends exactly what the
row path (`read_changes` -> `SimpleEncoder.encode_row` per row) sends: same bytes, same
partitions, same bootstraps, in the same order; the row path is the reference."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from tests.support.row_path import rows_by_table
from tests.unit.test_writer import FakeProducer
from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError, MessageTooLargeError
from ticdc_sink.events import InputLayout, read_change_batches, read_changes
from ticdc_sink.writer import TaskWriter, make_plan, write_batches

COMMIT_TS = tso.compose(1_700_000_000_000)

# column -> (MySQL type, Arrow type, Spark type, values strategy)
_TEXT = st.text(max_size=12)
_UTC = dt.UTC
COLUMNS: dict[str, tuple[str, pa.DataType, Any, st.SearchStrategy[Any]]] = {
    "c_tinyint": ("tinyint", pa.int8(), T.ByteType(), st.integers(-128, 127)),
    "c_int_u": ("int unsigned", pa.int64(), T.LongType(), st.integers(0, 2**32 - 1)),
    "c_bigint": ("bigint", pa.int64(), T.LongType(), st.integers(-(2**63), 2**63 - 1)),
    "c_bool": ("tinyint(1)", pa.bool_(), T.BooleanType(), st.booleans()),
    "c_float": (
        "float",
        pa.float32(),
        T.FloatType(),
        st.floats(width=32, allow_nan=False, allow_infinity=False),
    ),
    "c_double": (
        "double",
        pa.float64(),
        T.DoubleType(),
        st.floats(allow_nan=False, allow_infinity=False)
        | st.sampled_from([1e21, 1e-7, 1.5e20, -0.0, 1e16, 123456789012345678.0]),
    ),
    "c_decimal": (
        "decimal(12,4)",
        pa.decimal128(12, 4),
        T.DecimalType(12, 4),
        st.decimals(min_value=-(10**8) + 1, max_value=10**8 - 1, places=4),
    ),
    "c_decimal_wide": (
        "decimal(30,10)",
        pa.decimal128(30, 10),
        T.DecimalType(30, 10),
        st.decimals(min_value=-(10**6), max_value=10**6, places=10),
    ),
    "c_char": ("char(5)", pa.string(), T.StringType(), st.text("ab <", max_size=5)),
    "c_varchar": ("varchar(20)", pa.string(), T.StringType(), st.text(max_size=20)),
    "c_text": (
        "text",
        pa.string(),
        T.StringType(),
        _TEXT | st.sampled_from(['a"b\\', "<&>", "\u2028\u2029", "\x00\x1f\x7f", "é中\u2027"]),
    ),
    "c_binary": ("binary(4)", pa.binary(), T.BinaryType(), st.binary(max_size=4)),
    "c_blob": ("blob", pa.binary(), T.BinaryType(), st.binary(max_size=10)),
    "c_date": ("date", pa.date32(), T.DateType(), st.dates()),
    "c_datetime": (
        "datetime(3)",
        pa.timestamp("us"),
        T.TimestampNTZType(),
        st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    ),
    "c_timestamp": (
        "timestamp(6)",
        pa.timestamp("us", tz="UTC"),
        T.TimestampType(),
        st.datetimes(
            min_value=dt.datetime(1970, 1, 2),
            max_value=dt.datetime(2038, 1, 1),
            timezones=st.just(_UTC),
        ),
    ),
    "c_time": (
        "time(2)",
        pa.string(),
        T.StringType(),
        st.builds(
            lambda s, h, m, sec, f: f"{s}{h:02d}:{m:02d}:{sec:02d}.{f:06d}",
            st.sampled_from(["", "-"]),
            st.integers(0, 837),
            st.integers(0, 59),
            st.integers(0, 59),
            st.integers(0, 999_999),
        ),
    ),
    "c_year": ("year", pa.int32(), T.IntegerType(), st.sampled_from([0, 1901, 2000, 2155])),
    "c_bit": ("bit(5)", pa.int64(), T.LongType(), st.integers(0, 31)),
    "c_enum": (
        "enum('small','medium','large')",
        pa.string(),
        T.StringType(),
        st.sampled_from(["small", "medium", "large", "MEDIUM", ""]),
    ),
    "c_set": ("set('a','b','c')", pa.string(), T.StringType(), st.sampled_from(["", "a", "a,c"])),
    "c_json": (
        "json",
        pa.string(),
        T.StringType(),
        st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=3).map(
            json.dumps
        ),
    ),
}
COLUMN_TYPES = {"id": "bigint", **{name: spec[0] for name, spec in COLUMNS.items()}}


def _spark_schema(with_table: bool) -> T.StructType:
    table_fields = [
        T.StructField("id", T.LongType(), nullable=False),
        *(T.StructField(name, spec[2]) for name, spec in COLUMNS.items()),
    ]
    fields = [*table_fields, T.StructField("_op", T.StringType())]
    fields.append(T.StructField("_commit_ts", T.LongType()))
    fields.append(T.StructField("_before", T.StructType(table_fields)))
    if with_table:
        fields.append(T.StructField("_table", T.StringType()))
    return T.StructType(fields)


_ARROW_FIELDS = [
    pa.field("id", pa.int64(), nullable=False),
    *(pa.field(name, spec[1]) for name, spec in COLUMNS.items()),
]


@st.composite
def _images(draw: Any, ids: Any) -> dict[str, Any]:
    image = {"id": draw(ids)}
    for name, spec in COLUMNS.items():
        image[name] = draw(st.none() | spec[3])
    return image


@st.composite
def _batches(draw: Any, with_table: bool) -> list[pa.RecordBatch]:
    ids = st.integers(0, 6)
    batches = []
    ts = COMMIT_TS
    for _ in range(draw(st.integers(1, 3))):
        rows = draw(st.lists(_images(ids), min_size=1, max_size=8))
        ops = draw(st.lists(st.sampled_from("cuud"), min_size=len(rows), max_size=len(rows)))
        befores = []
        for op in ops:
            before = draw(st.none() | _images(ids)) if op == "u" else None
            befores.append(before)
        commit = []
        for _ in rows:
            ts += draw(st.integers(0, 2))
            commit.append(ts)
        columns: dict[str, Any] = {
            f.name: pa.array([r[f.name] for r in rows], f.type) for f in _ARROW_FIELDS
        }
        columns["_op"] = pa.array(ops, pa.string())
        columns["_commit_ts"] = pa.array(commit, pa.int64())
        columns["_before"] = pa.array(befores, pa.struct(_ARROW_FIELDS))
        if with_table:
            tables = draw(st.lists(st.sampled_from(["t1", "t2"]), min_size=len(rows)))
            columns["_table"] = pa.array(tables[: len(rows)], pa.string())
        batches.append(pa.RecordBatch.from_pydict(columns))
    return batches


def _plan(with_table: bool, **options: str) -> Any:
    base = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "database": "shop",
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        "time-zone": "Asia/Shanghai",
        "send-bootstrap-in-msg-count": "3",
    }
    if not with_table:
        base["table"] = "users"
    base.update(options)
    config = SinkConfig.from_options(base)
    return make_plan(config, _spark_schema(with_table), COMMIT_TS, batch_id=None)


def _reading(plan: Any, tables: Any) -> dict[str, Any]:
    """The keyword arguments the writer gives `read_changes` / `read_change_batches`."""
    return dict(
        layout=InputLayout(**plan.config.input.layout_fields()),
        tables=tables,
        default_database=plan.tables.default_database,
        default_table=plan.tables.default_table,
        default_commit_ts=plan.commit_ts,
        time_zone=plan.config.codec.time_zone,
    )


def _change_batches(batches: list[pa.RecordBatch], plan: Any, task: Any = None) -> list[Any]:
    """Every record batch as the writer reads it: ChangeBatches (per table), in order;
    tables from `task` (a TaskWriter) when given, so its outputs share their schemas."""
    tables = plan.tables.schema_for if task is None else task.schema_for
    return [g for batch in batches for g in read_change_batches(batch, **_reading(plan, tables))]


def _row_path(batches: list[pa.RecordBatch], plan: Any, registry: Any = None) -> list[Any]:
    """The reference: every row through read_changes and the per-row write loop."""
    producer = FakeProducer()
    task = TaskWriter(plan, producer, 0, registry)
    for batch in batches:
        for change in read_changes(batch, **_reading(plan, task.schema_for)):
            task.write_change(change)
    return producer.sent


def _outcome(run: Any) -> Any:
    try:
        return ("ok", run())
    except InputError as exc:  # same error, same words
        return ("error", type(exc), str(exc))


@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@pytest.mark.parametrize("partition", ["table", "index-value", "ts"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_path_sends_what_the_row_path_sends(
    with_table: bool, partition: str, data: Any
) -> None:
    batches = data.draw(_batches(with_table))
    plan = _plan(with_table, partition=partition)
    # Several tables in a record batch go table by table, each in input order.
    expected = _outcome(lambda: _row_path([rows_by_table(b) for b in batches], plan))
    producer = FakeProducer()
    actual = _outcome(
        lambda: (write_batches(batches, plan, producer_factory=producer), producer.sent)[1]
    )
    assert actual == expected


def test_the_benchmark_shapes_take_the_fast_path_and_match() -> None:
    # Inserts, updates with _before (some changing the key), deletes, nulls: enough rows to
    # cross several bootstrap intervals within one batch.
    rows = 50
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in _ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "u", "u", "d", "c"] * 10),
            "_commit_ts": pa.array([COMMIT_TS + i for i in range(rows)], pa.int64()),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 5 in (1, 2) else None for i in range(rows)],
                pa.struct(_ARROW_FIELDS),
            ),
        }
    )
    plan = _plan(False, **{"send-bootstrap-in-msg-count": "7"})
    producer = FakeProducer()
    write_batches([batch], plan, producer_factory=producer)
    assert producer.sent == _row_path([batch], plan)


def test_an_oversized_row_takes_the_large_message_policy() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2], pa.int64()),
            **{f.name: pa.nulls(2, f.type) for f in _ARROW_FIELDS[1:] if f.name != "c_text"},
            "c_text": pa.array(["short", "x" * 6000]),
            "_op": pa.array(["c", "c"]),
            "_commit_ts": pa.array([COMMIT_TS, COMMIT_TS + 1], pa.int64()),
            "_before": pa.nulls(2, pa.struct(_ARROW_FIELDS)),
        }
    )
    plan = _plan(
        False,
        **{"max-message-bytes": "5000", "large-message-handle-option": "handle-key-only"},
    )
    producer = FakeProducer()
    write_batches([batch], plan, producer_factory=producer)
    assert producer.sent == _row_path([batch], plan)
    assert b'"handleKeyOnly":true' in producer.sent[-1][3]
    strict = _plan(False, **{"max-message-bytes": "5000"})
    with pytest.raises(MessageTooLargeError):
        write_batches([batch], strict, producer_factory=FakeProducer())


def test_commit_ts_going_back_fails_as_in_the_row_path() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2, 1], pa.int64()),
            **{f.name: pa.nulls(3, f.type) for f in _ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "c", "u"]),
            "_commit_ts": pa.array([COMMIT_TS + 5, COMMIT_TS + 6, COMMIT_TS + 1], pa.int64()),
            "_before": pa.nulls(3, pa.struct(_ARROW_FIELDS)),
        }
    )
    plan = _plan(False)
    expected = _outcome(lambda: _row_path([batch], plan))
    assert expected[0] == "error"
    actual = _outcome(lambda: write_batches([batch], plan, producer_factory=FakeProducer()))
    assert actual == expected

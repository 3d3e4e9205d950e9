"""`writer.gather_record_batches`: consecutive record batches concatenated so that a frame
of many tables is split, converted and rendered in slices about as large as one table's
record batch, with every row kept in input order. (That the writer sends the same
messages as the row path whatever the gathering is `test_batch_path`'s.)"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from tests.support.fake_producer import FakeProducer
from ticdc_sink.config import SinkConfig
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.writer import gather_record_batches, make_plan, write_batches
from ticdc_sink.writer import task as task_module
from ticdc_sink.writer.bootstrap import BootstrapSchedule

LAYOUT = InputLayout()


def _batch(first: int, rows: int, tables: int = 0, **extra: pa.Array) -> pa.RecordBatch:
    """Rows first..first+rows of `id`; with `tables`, row id i in table t{i % tables}."""
    ids = list(range(first, first + rows))
    columns: dict[str, Any] = {"id": pa.array(ids, pa.int64())}
    if tables:
        columns["_table"] = pa.array([f"t{i % tables}" for i in ids])
    columns.update(extra)
    return pa.RecordBatch.from_pydict(columns)


def _ids(batches: list[pa.RecordBatch]) -> list[int]:
    return [i for b in batches for i in b.column("id").to_pylist()]


def test_batches_of_several_tables_are_gathered_to_rows_per_table_each() -> None:
    # 4 tables, 10 rows per batch: 40 rows make 10 per table.
    batches = [_batch(i * 10, 10, tables=4) for i in range(9)]
    out = list(gather_record_batches(batches, LAYOUT, rows_per_table=10))
    assert [b.num_rows for b in out] == [40, 40, 10]
    assert _ids(out) == _ids(batches)


def test_a_large_batch_of_one_table_passes_through_as_it_is() -> None:
    batches = [_batch(0, 10), _batch(10, 12)]
    out = list(gather_record_batches(batches, LAYOUT, rows_per_table=10))
    assert len(out) == 2
    assert all(a is b for a, b in zip(out, batches, strict=True))


def test_small_batches_of_one_table_are_gathered() -> None:
    # A _table column naming one table counts as one table too.
    batches = [_batch(i * 3, 3, tables=1) for i in range(5)]
    out = list(gather_record_batches(batches, LAYOUT, rows_per_table=6))
    assert [b.num_rows for b in out] == [6, 6, 3]
    assert _ids(out) == _ids(batches)


def test_the_tables_of_a_database_column_count_too() -> None:
    batches = [_batch(i * 4, 4, _database=pa.array(["a", "b", "c", "d"])) for i in range(4)]
    out = list(gather_record_batches(batches, LAYOUT, rows_per_table=2))
    assert [b.num_rows for b in out] == [8, 8]


def test_gathering_stops_at_max_rows_and_max_bytes() -> None:
    batches = [_batch(i * 10, 10, tables=10) for i in range(6)]
    by_rows = list(gather_record_batches(batches, LAYOUT, rows_per_table=100, max_rows=25))
    assert [b.num_rows for b in by_rows] == [30, 30]
    size = batches[0].nbytes
    by_bytes = list(gather_record_batches(batches, LAYOUT, rows_per_table=100, max_bytes=size))
    assert [b.num_rows for b in by_bytes] == [10] * 6
    assert _ids(by_rows) == _ids(by_bytes) == _ids(batches)


def test_a_schema_change_ends_a_gathered_batch() -> None:
    other = _batch(20, 5, tables=2, note=pa.array(["x"] * 5))
    batches = [_batch(0, 10, tables=2), _batch(10, 10, tables=2), other]
    out = list(gather_record_batches(batches, LAYOUT, rows_per_table=100))
    assert [b.num_rows for b in out] == [20, 5]
    assert out[1].schema == other.schema


def test_the_writer_renders_each_table_once_per_gathered_batch(monkeypatch: Any) -> None:
    # 20 tables over ten 100-row record batches: without gathering each table's rows are
    # converted and encoded ten times, with it once.
    calls: list[int] = []
    read = task_module.read_change_batches

    def counting(batch: pa.RecordBatch, **kwargs: Any) -> Any:
        groups = read(batch, **kwargs)
        calls.append(len(groups))
        return groups

    monkeypatch.setattr(task_module, "read_change_batches", counting)
    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "all_tables",
        "database": "shop",
        "primary-key": "id",
        "protocol": "canal-json",
    }
    schema = T.StructType(
        [T.StructField("id", T.LongType(), False), T.StructField("_table", T.StringType())]
    )
    plan = make_plan(SinkConfig.from_options(options), schema, 1 << 40, batch_id=None)
    batches = [_batch(i * 100, 100, tables=20) for i in range(10)]
    producer = FakeProducer()
    report = write_batches(batches, plan, producer_factory=producer, bootstraps=BootstrapSchedule())
    assert calls == [20]
    assert report.rows == 1000
    # Each table's rows in input order.
    by_table: dict[str, list[int]] = {}
    for _topic, _partition, _key, value in producer.sent:
        message = json.loads(value)
        by_table.setdefault(message["table"], []).append(int(message["data"][0]["id"]))
    assert sorted(by_table) == sorted(f"t{t}" for t in range(20))
    for table, ids in by_table.items():
        assert ids == [i for i in range(1000) if i % 20 == int(table[1:])]

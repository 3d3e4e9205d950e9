"""The Simple JSON fast path (column-wise, a record batch at a time) sends exactly what the
row path (`row_path.write_rows`: `SimpleEncoder.encode_row` per row) sends: same bytes, same
partitions, same bootstraps, in the same order; the row path is the reference."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.batches import ARROW_FIELDS, COMMIT_TS, write_plan
from tests.support.fake_producer import FakeProducer
from tests.support.hypothesis_profiles import examples
from tests.support.row_path import outcome, rows_by_table, write_rows
from tests.support.strategies import record_batches
from ticdc_sink.errors import MessageTooLargeError
from ticdc_sink.writer import gather_record_batches, write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule
from ticdc_sink.writer.task import GATHER_ROWS_PER_TABLE


@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@pytest.mark.parametrize("partition", ["table", "index-value", "ts"])
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_path_sends_what_the_row_path_sends(
    with_table: bool, partition: str, data: Any
) -> None:
    batches = data.draw(record_batches(with_table))
    plan = write_plan(with_table, partition=partition)
    # Record batches gathered as the writer gathers them (1: each on its own); several
    # tables in a record batch go table by table, each in input order.
    rows_per_table = data.draw(st.sampled_from([1, 5, GATHER_ROWS_PER_TABLE]))
    layout = plan.config.input.layout()
    gathered = gather_record_batches(batches, layout, rows_per_table=rows_per_table)
    expected = outcome(lambda: write_rows([rows_by_table(b) for b in gathered], plan))
    producer = FakeProducer()
    actual = outcome(
        lambda: (
            write_batches(
                batches,
                plan,
                producer_factory=producer,
                bootstraps=BootstrapSchedule(),
                rows_per_table=rows_per_table,
            ),
            producer.sent,
        )[1]
    )
    assert actual == expected


def test_the_benchmark_shapes_take_the_fast_path_and_match() -> None:
    # Inserts, updates with _before (some changing the key), deletes, nulls: enough rows to
    # cross several bootstrap intervals within one batch.
    rows = 50
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "u", "u", "d", "c"] * 10),
            "_commit_ts": pa.array([COMMIT_TS + i for i in range(rows)], pa.int64()),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 5 in (1, 2) else None for i in range(rows)],
                pa.struct(ARROW_FIELDS),
            ),
        }
    )
    plan = write_plan(False, **{"send-bootstrap-in-msg-count": "7"})
    producer = FakeProducer()
    write_batches([batch], plan, producer_factory=producer)
    assert producer.sent == write_rows([batch], plan)


def test_an_oversized_row_takes_the_large_message_policy() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2], pa.int64()),
            **{f.name: pa.nulls(2, f.type) for f in ARROW_FIELDS[1:] if f.name != "c_text"},
            "c_text": pa.array(["short", "x" * 6000]),
            "_op": pa.array(["c", "c"]),
            "_commit_ts": pa.array([COMMIT_TS, COMMIT_TS + 1], pa.int64()),
            "_before": pa.nulls(2, pa.struct(ARROW_FIELDS)),
        }
    )
    plan = write_plan(
        False,
        **{"max-message-bytes": "5000", "large-message-handle-option": "handle-key-only"},
    )
    producer = FakeProducer()
    write_batches([batch], plan, producer_factory=producer)
    assert producer.sent == write_rows([batch], plan)
    assert b'"handleKeyOnly":true' in producer.sent[-1][3]
    strict = write_plan(False, **{"max-message-bytes": "5000"})
    with pytest.raises(MessageTooLargeError):
        write_batches([batch], strict, producer_factory=FakeProducer())


def test_commit_ts_going_back_fails_as_in_the_row_path() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2, 1], pa.int64()),
            **{f.name: pa.nulls(3, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "c", "u"]),
            "_commit_ts": pa.array([COMMIT_TS + 5, COMMIT_TS + 6, COMMIT_TS + 1], pa.int64()),
            "_before": pa.nulls(3, pa.struct(ARROW_FIELDS)),
        }
    )
    plan = write_plan(False)
    expected = outcome(lambda: write_rows([batch], plan))
    assert expected[0] == "error"
    actual = outcome(lambda: write_batches([batch], plan, producer_factory=FakeProducer()))
    assert actual == expected

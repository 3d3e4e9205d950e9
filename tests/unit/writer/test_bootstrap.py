"""BOOTSTRAP messages per Python worker process (`writer/bootstrap.py`): sent when a table
is first written or its schema changes, then by `send-bootstrap-interval-in-sec` and
`send-bootstrap-in-msg-count` across tasks, as TiCDC sends them per changefeed; not again
in every task of every micro-batch."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.fake_producer import FakeProducer
from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError
from ticdc_sink.writer import TablePlan, WritePlan, write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule
from ticdc_sink.writer.table import build_table_schema

COMMIT_TS = tso.compose(1_700_000_000_000)


class Clock:
    """A clock the test moves: no sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _plan(*columns: str, **options: str) -> WritePlan:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    config = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t_{schema}_{table}",
            "database": "shop",
            "table": "users",
            "primary-key": "id",
            **options,
        }
    )
    spark_schema = StructType(
        [StructField("_op", StringType()), StructField("id", LongType())]
        + [StructField(c, StringType()) for c in columns]
    )
    template = build_table_schema(
        "shop", "users", spark_schema, reserved={"_op"}, primary_key=("id",)
    )
    return WritePlan(
        config=config,
        tables=TablePlan(template, default_database="shop", default_table="users"),
        commit_ts=COMMIT_TS,
        build_ts_ms=tso.physical_ms(COMMIT_TS),
    )


def _rows(n: int, *columns: str) -> pa.RecordBatch:
    ids = pa.array(range(n), pa.int64())
    return pa.RecordBatch.from_pydict(
        {"_op": ["c"] * n, "id": ids, **{c: ["x"] * n for c in columns}}
    )


def _kinds(producer: FakeProducer) -> str:
    return "".join(v["type"][0] for v in producer.values())


def test_a_second_task_in_the_same_worker_sends_no_bootstrap() -> None:
    # The default schedule is the process's, as Spark's reused Python workers run it.
    first, second = FakeProducer(partitions=2), FakeProducer(partitions=2)
    write_batches([_rows(2)], _plan(), producer_factory=first)
    write_batches([_rows(2)], _plan(), producer_factory=second)
    assert _kinds(first) == "BBII"
    assert _kinds(second) == "II"


def test_a_schema_change_sends_a_bootstrap_at_once() -> None:
    schedule = BootstrapSchedule(clock=Clock())
    first, second, third = FakeProducer(1), FakeProducer(1), FakeProducer(1)
    write_batches([_rows(1)], _plan(), producer_factory=first, bootstraps=schedule)
    write_batches([_rows(1, "name")], _plan("name"), producer_factory=second, bootstraps=schedule)
    write_batches([_rows(1)], _plan(), producer_factory=third, bootstraps=schedule)
    assert (_kinds(first), _kinds(second), _kinds(third)) == ("BI", "BI", "I")
    columns = [c["name"] for c in second.values()[0]["tableSchema"]["columns"]]
    assert columns == ["id", "name"]


def test_the_interval_counts_across_tasks() -> None:
    clock = Clock()
    schedule = BootstrapSchedule(clock=clock)
    plan = _plan(**{"send-bootstrap-interval-in-sec": "120"})
    producers = [FakeProducer(1) for _ in range(3)]
    write_batches([_rows(1)], plan, producer_factory=producers[0], bootstraps=schedule)
    clock.now += 119
    write_batches([_rows(1)], plan, producer_factory=producers[1], bootstraps=schedule)
    clock.now += 1
    write_batches([_rows(1)], plan, producer_factory=producers[2], bootstraps=schedule)
    assert [_kinds(p) for p in producers] == ["BI", "I", "BI"]


def test_the_message_count_counts_across_tasks() -> None:
    schedule = BootstrapSchedule(clock=Clock())
    plan = _plan(**{"send-bootstrap-in-msg-count": "3"})
    first, second = FakeProducer(1), FakeProducer(1)
    write_batches([_rows(2)], plan, producer_factory=first, bootstraps=schedule)
    write_batches([_rows(3)], plan, producer_factory=second, bootstraps=schedule)
    assert (_kinds(first), _kinds(second)) == ("BII", "IBII")


def test_another_topic_or_partition_count_gets_its_own_bootstrap() -> None:
    schedule = BootstrapSchedule(clock=Clock())
    sent = []
    for plan, partitions in [(_plan(), 1), (_plan(topic="other"), 1), (_plan(), 2)]:
        producer = FakeProducer(partitions)
        write_batches([_rows(1)], plan, producer_factory=producer, bootstraps=schedule)
        sent.append(_kinds(producer))
    assert sent == ["BI", "BI", "BBI"]


def test_a_failed_task_leaves_the_schedule_so_its_retry_sends_the_bootstrap() -> None:
    schedule = BootstrapSchedule(clock=Clock())
    failed, retry = FakeProducer(1), FakeProducer(1)
    bad = pa.RecordBatch.from_pydict({"_op": ["x"], "id": pa.array([9], pa.int64())})
    with pytest.raises(InputError):
        # Record batches not gathered: the first is sent before the second fails.
        write_batches(
            [_rows(1), bad],
            _plan(),
            producer_factory=failed,
            bootstraps=schedule,
            rows_per_table=1,
        )
    assert _kinds(failed) == "BI"
    write_batches([_rows(1)], _plan(), producer_factory=retry, bootstraps=schedule)
    assert _kinds(retry) == "BI"


def test_the_schedule_forgets_the_least_recently_used_beyond_its_capacity() -> None:
    schedule = BootstrapSchedule(capacity=2)
    schedule.record({b"a": (1.0, 0), b"b": (2.0, 0)})
    assert schedule.last(b"a") == (1.0, 0)  # now the most recently used
    schedule.record({b"c": (3.0, 0)})
    assert len(schedule) == 2
    assert schedule.last(b"b") is None
    assert schedule.last(b"a") == (1.0, 0)
    assert schedule.last(b"c") == (3.0, 0)

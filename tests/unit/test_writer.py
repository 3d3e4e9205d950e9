"""The write loop and the commit step without Spark or a broker: a fake producer records
what would have been sent."""

from __future__ import annotations

from typing import Any

import orjson
import pyarrow as pa
import pytest

from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.producer import PartitionStats
from ticdc_sink.schema import build_table_schema
from ticdc_sink.writer import (
    TablePlan,
    WritePlan,
    emit_watermark,
    key_column_indexes,
    split_key_update,
    write_batches,
)

COMMIT_TS = tso.compose(1_700_000_000_000)


class FakeProducer:
    """Records sends; every message counts as delivered at flush."""

    def __init__(self, partitions: int = 3) -> None:
        self.partitions = partitions
        self.sent: list[tuple[str, int, bytes | None, bytes | None]] = []
        self.flushed = self.closed = False

    def __call__(self, config: Any) -> FakeProducer:
        return self

    def partition_count(self, topic: str) -> int:
        return self.partitions

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        assert not self.flushed
        self.sent.append((topic, partition, key, value))

    def flush(self) -> None:
        self.flushed = True

    def close(self) -> None:
        self.closed = True

    @property
    def delivered(self) -> dict[tuple[str, int], PartitionStats]:
        stats: dict[tuple[str, int], PartitionStats] = {}
        for topic, partition, key, value in self.sent:
            old = stats.get((topic, partition), PartitionStats(0, 0))
            size = len(key or b"") + len(value or b"")
            stats[(topic, partition)] = PartitionStats(old.messages + 1, old.bytes + size)
        return stats

    def values(self) -> list[dict[str, Any]]:
        return [orjson.loads(v) for _, _, _, v in self.sent]


def _plan(**options: str) -> WritePlan:
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
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    spark_schema = StructType(
        [
            StructField("_op", StringType()),
            StructField("id", LongType()),
            StructField("name", StringType()),
        ]
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


def _batch(ops: list[str], ids: list[int], names: list[str | None]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"_op": ops, "id": pa.array(ids, pa.int64()), "name": names})


def test_rows_follow_a_bootstrap_on_every_partition_and_are_acknowledged() -> None:
    producer = FakeProducer(partitions=3)
    report = write_batches(
        [_batch(["c", "c", "d"], [1, 2, 1], ["a", "b", "a"])],
        _plan(),
        producer_factory=producer,
    )
    kinds = [v["type"] for v in producer.values()]
    assert kinds == ["BOOTSTRAP"] * 3 + ["INSERT", "INSERT", "DELETE"]
    assert [p for _, p, _, _ in producer.sent[:3]] == [0, 1, 2]
    assert {t for t, _, _, _ in producer.sent} == {"t_shop_users"}
    assert all(key == b"" for _, _, key, _ in producer.sent)
    assert producer.flushed and producer.closed
    assert report.rows == 3
    assert report.messages == 6
    assert report.max_commit_ts == COMMIT_TS
    assert report.topics == {"t_shop_users": 3}


def test_default_dispatcher_sends_a_table_to_one_partition() -> None:
    producer = FakeProducer(partitions=3)
    write_batches(
        [_batch(["c"] * 5, [1, 2, 3, 4, 5], ["x"] * 5)], _plan(), producer_factory=producer
    )
    assert len({p for _, p, _, v in producer.sent if b"INSERT" in v}) == 1


def test_bootstraps_repeat_every_send_bootstrap_in_msg_count_rows() -> None:
    producer = FakeProducer(partitions=1)
    plan = _plan(**{"send-bootstrap-in-msg-count": "2"})
    write_batches([_batch(["c"] * 5, [1, 2, 3, 4, 5], ["x"] * 5)], plan, producer_factory=producer)
    kinds = [v["type"][0] for v in producer.values()]
    assert "".join(kinds) == "BIIBIIBI"


def test_bootstraps_can_be_turned_off() -> None:
    producer = FakeProducer(partitions=1)
    plan = _plan(**{"send-bootstrap-in-msg-count": "0"})
    write_batches([_batch(["c"], [1], ["x"])], plan, producer_factory=producer)
    assert [v["type"] for v in producer.values()] == ["INSERT"]


def test_replays_send_the_same_bytes() -> None:
    first, second = FakeProducer(), FakeProducer()
    batch = _batch(["c", "u", "d"], [1, 1, 1], ["a", "b", "b"])
    write_batches([batch], _plan(), producer_factory=first)
    write_batches([batch], _plan(), producer_factory=second)
    assert first.sent == second.sent


def test_an_update_that_changes_the_key_is_split_into_delete_and_insert() -> None:
    schema = _plan().tables.template
    change = RowChange(schema, Op.UPDATE, COMMIT_TS, row=(2, "a"), before=(1, "a"))
    delete, insert = split_key_update(change, key_column_indexes(schema))
    assert (delete.op, delete.row, delete.before) == (Op.DELETE, None, (1, "a"))
    assert (insert.op, insert.row, insert.before) == (Op.INSERT, (2, "a"), None)
    same_key = RowChange(schema, Op.UPDATE, COMMIT_TS, row=(1, "b"), before=(1, "a"))
    assert split_key_update(same_key, key_column_indexes(schema)) == (same_key,)


def test_commit_ts_going_backwards_for_a_key_fails() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "_op": ["c", "u"],
            "id": pa.array([1, 1], pa.int64()),
            "name": ["a", "b"],
            "_commit_ts": pa.array([COMMIT_TS + 10, COMMIT_TS], pa.int64()),
        }
    )
    plan = _plan()
    template = plan.tables.template
    with pytest.raises(InputError, match="commit ts goes backwards for key \\(id=1\\)"):
        write_batches([batch], plan, producer_factory=FakeProducer())
    assert template.database == "shop"


def test_watermark_goes_to_every_partition_of_every_touched_topic() -> None:
    producer = FakeProducer(partitions=2)
    report = write_batches([_batch(["c"], [1], ["a"])], _plan(), producer_factory=FakeProducer(2))
    sent = emit_watermark(
        _plan().config, [report, None], last_sent=None, build_ts_ms=1, producer_factory=producer
    )
    assert sent == COMMIT_TS
    assert [(t, p, k) for t, p, k, _ in producer.sent] == [
        ("t_shop_users", 0, None),
        ("t_shop_users", 1, None),
    ]
    assert producer.values()[0] == {
        "version": 1,
        "type": "WATERMARK",
        "commitTs": COMMIT_TS,
        "buildTs": 1,
    }


def test_watermark_never_goes_backwards() -> None:
    report = write_batches([_batch(["c"], [1], ["a"])], _plan(), producer_factory=FakeProducer())
    producer = FakeProducer()
    for last in (COMMIT_TS, COMMIT_TS + 1):
        assert (
            emit_watermark(
                _plan().config, [report], last_sent=last, build_ts_ms=1, producer_factory=producer
            )
            is None
        )
    assert producer.sent == []


def test_no_watermark_when_nothing_was_written() -> None:
    producer = FakeProducer()
    report = write_batches([], _plan(), producer_factory=FakeProducer())
    assert (
        emit_watermark(
            _plan().config, [report], last_sent=None, build_ts_ms=1, producer_factory=producer
        )
        is None
    )
    assert producer.sent == []


def test_batch_report_sums_tasks_per_topic() -> None:
    from ticdc_sink.writer import TaskReport, batch_report

    def task(pid: int, ts: int, counts: dict[str, tuple[int, int]]) -> TaskReport:
        return TaskReport(
            partition_id=pid,
            topics=dict.fromkeys(counts, 3),
            partitions=frozenset((t, 0) for t in counts),
            max_commit_ts=ts,
            rows=sum(m for m, _ in counts.values()),
            messages=sum(m for m, _ in counts.values()),
            bytes=sum(b for _, b in counts.values()),
            topic_messages={t: m for t, (m, _) in counts.items()},
            topic_bytes={t: b for t, (_, b) in counts.items()},
        )

    report = batch_report(
        [task(0, 5, {"a": (2, 20), "b": (1, 7)}), None, task(1, 9, {"a": (3, 30)})],
        batch_id=4,
        commit_ts=11,
        watermark=9,
        seconds=1.23456,
    )
    assert report == {
        "batch_id": 4,
        "commit_ts": 11,
        "tasks": 2,
        "rows": 6,
        "messages": 6,
        "bytes": 57,
        "topics": {"a": {"messages": 5, "bytes": 50}, "b": {"messages": 1, "bytes": 7}},
        "diverted": 0,
        "max_commit_ts": 9,
        "watermark": 9,
        "seconds": 1.235,
    }


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (
            {"partition": "columns", "partition-columns": "nope"},
            "option 'partition-columns' names column 'nope', which table shop.users",
        ),
        (
            {"partition": "index-value", "index": "nope"},
            "option 'index' is 'nope', which does not exist in table shop.users",
        ),
    ],
)
def test_partition_options_the_table_cannot_satisfy_fail_in_the_plan(options, fragment) -> None:
    """On the driver, before any task: the dispatcher is built once in make_plan."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from ticdc_sink.errors import ConfigError
    from ticdc_sink.writer import make_plan

    config = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t",
            "database": "shop",
            "table": "users",
            "primary-key": "id",
            **options,
        }
    )
    spark_schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    with pytest.raises(ConfigError, match=fragment):
        make_plan(config, spark_schema, COMMIT_TS, batch_id=None)
    ok = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t",
            "database": "shop",
            "table": "users",
            "partition": "columns",
            "partition-columns": "NAME",
        }
    )
    assert make_plan(ok, spark_schema, COMMIT_TS, batch_id=None).tables.named_table is not None

"""The write loop and the commit step without Spark or a broker: a fake producer records
what would have been sent."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pytest

from tests.support.fake_producer import FakeProducer
from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError, InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.state import SinkState, WatermarkRecord
from ticdc_sink.writer import (
    TablePlan,
    TaskReport,
    WritePlan,
    commit_batch,
    key_column_indexes,
    split_key_update,
    write_batches,
)
from ticdc_sink.writer.bootstrap import BootstrapSchedule
from ticdc_sink.writer.table import build_table_schema

COMMIT_TS = tso.compose(1_700_000_000_000)


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


def test_bootstraps_go_to_partition_0_only_when_not_to_all_partitions() -> None:
    producer = FakeProducer(partitions=16)
    plan = _plan(**{"send-bootstrap-to-all-partition": "false"})
    write_batches([_batch(["c"], [1], ["x"])], plan, producer_factory=producer)
    assert [v["type"] for v in producer.values()] == ["BOOTSTRAP", "INSERT"]
    assert producer.sent[0][1] == 0


def test_a_record_batch_of_new_tables_looks_their_topics_up_at_once() -> None:
    producer = FakeProducer(partitions=16)
    plan = _plan()
    plan = attrs.evolve(plan, tables=attrs.evolve(plan.tables, default_table=None))
    names = [f"t{i % 40}" for i in range(200)]
    record = pa.RecordBatch.from_pydict(
        {"_op": ["c"] * 200, "id": pa.array(range(200), pa.int64()), "name": names, "_table": names}
    )
    report = write_batches([record, record], plan, producer_factory=producer)
    topics = sorted(f"t_shop_t{i}" for i in range(40))
    assert producer.lookups == [topics]  # one lookup for the 40 topics, none later
    assert producer.flushes == 1
    bootstraps = [t for (t, _, _, v) in producer.sent if b"BOOTSTRAP" in v]
    assert len(bootstraps) == 40 * 16
    assert report.rows == 400


def test_a_watermark_fans_out_with_one_lookup_one_flush_in_partition_order() -> None:
    producer = FakeProducer(partitions=16)
    plan = _plan()
    topics = [f"topic_{i}" for i in range(200)]
    reports = [
        TaskReport(
            partition_id=0,
            topics=dict.fromkeys(topics[:120], 16),
            partitions=frozenset(),
            max_commit_ts=COMMIT_TS,
            rows=1,
            messages=1,
            bytes=1,
        ),
        TaskReport(
            partition_id=1,
            topics=dict.fromkeys(topics[80:], 16),
            partitions=frozenset(),
            max_commit_ts=COMMIT_TS,
            rows=1,
            messages=1,
            bytes=1,
        ),
    ]
    commit_batch(plan, reports, state=None, producer_factory=producer)
    assert producer.lookups == [sorted(topics)]
    assert producer.flushes == 1
    assert len(producer.sent) == 200 * 16
    assert [(t, p) for t, p, _, _ in producer.sent] == [
        (t, p) for t in sorted(topics) for p in range(16)
    ]
    assert {v for *_, v in producer.sent} == {producer.sent[0][3]}
    assert producer.values()[0]["type"] == "WATERMARK"


def test_an_avro_task_asks_the_registry_once_per_schema_not_per_row() -> None:
    # The in-house registry counts requests (a real one cannot): 300 rows of one table in
    # three record batches register one key and one value schema, each once.
    from tests.support.registry import TestSchemaRegistry

    with TestSchemaRegistry() as server:
        plan = _plan(protocol="avro", **{"schema-registry": server.url})
        batches = [_batch(["c"] * 100, list(range(n, n + 100)), ["x"] * 100) for n in (0, 100, 200)]
        report = write_batches(batches, plan, producer_factory=FakeProducer(partitions=3))
        assert report.rows == 300
        assert server.count("POST", "/subjects/{subject}/versions") == 2
        assert server.count() == 2


def test_replays_send_the_same_bytes() -> None:
    # A re-run in another worker process: its own bootstrap schedule.
    first, second = FakeProducer(), FakeProducer()
    batch = _batch(["c", "u", "d"], [1, 1, 1], ["a", "b", "b"])
    write_batches([batch], _plan(), producer_factory=first, bootstraps=BootstrapSchedule())
    write_batches([batch], _plan(), producer_factory=second, bootstraps=BootstrapSchedule())
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
    plan = attrs.evolve(_plan(), build_ts_ms=1)
    summary = commit_batch(plan, [report, None], state=None, producer_factory=producer)
    assert summary["watermark"] == COMMIT_TS
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


def test_watermark_never_goes_backwards(tmp_path: Path) -> None:
    report = write_batches([_batch(["c"], [1], ["a"])], _plan(), producer_factory=FakeProducer())
    producer = FakeProducer()
    for last in (COMMIT_TS, COMMIT_TS + 1):
        state = SinkState(str(tmp_path / str(last)))
        state.record_watermark(last, None)
        state.confirm_watermark(last)
        assert (
            commit_batch(_plan(), [report], state=state, producer_factory=producer)["watermark"]
            is None
        )
        assert state.last_watermark() == last
    assert producer.sent == []


def test_no_watermark_when_nothing_was_written() -> None:
    producer = FakeProducer()
    report = write_batches([], _plan(), producer_factory=FakeProducer())
    assert (
        commit_batch(_plan(), [report], state=None, producer_factory=producer)["watermark"] is None
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
            filtered=pid + 1,
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
        "below_watermark": 0,
        "filtered": 3,
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
            "primary-key": "id",
        }
    )
    assert make_plan(ok, spark_schema, COMMIT_TS, batch_id=None).tables.named_table is not None


# -- rows below an earlier watermark, and the commit step's state -------------------------


def _with_commit_ts(ids: list[int], ts: list[int], **extra: list) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "_op": ["c"] * len(ids),
            "id": pa.array(ids, pa.int64()),
            "name": ["n"] * len(ids),
            "_commit_ts": pa.array(ts, pa.int64()),
            **extra,
        }
    )


@pytest.mark.parametrize("tables", [["users", "users"], ["users", "orders"]])
def test_rows_at_or_below_an_earlier_watermark_are_refused(tables: list[str]) -> None:
    # One table: the column-wise path; two tables interleaved: the row path.
    floor = COMMIT_TS
    plan = attrs.evolve(_plan(), watermark_floor=floor)
    batch = _with_commit_ts([1, 2], [floor + 1, floor], _table=tables)
    producer = FakeProducer()
    with pytest.raises(InputError) as caught:
        write_batches([batch], plan, producer_factory=producer)
    message = str(caught.value)
    assert message.startswith(
        f"ticdc: row of shop.{tables[1]} with key (id=2) has commit ts {floor}, at or below "
        f"watermark {floor} that an earlier batch sent"
    )
    assert "allow-commit-ts-below-watermark=true" in message
    assert (caught.value.table, caught.value.column) == (f"shop.{tables[1]}", "_commit_ts")
    assert not any(b"INSERT" in (v or b"") for *_, v in producer.sent[1:])
    # Above the floor, and without a floor, the same rows go through.
    above = _with_commit_ts([1, 2], [floor + 1, floor + 2], _table=tables)
    assert write_batches([above], plan, producer_factory=FakeProducer()).rows == 2
    assert write_batches([batch], _plan(), producer_factory=FakeProducer()).rows == 2


def test_the_watermark_check_holds_for_tsos_above_two_to_the_63() -> None:
    floor = (1 << 63) + 5
    plan = attrs.evolve(_plan(), watermark_floor=floor)
    for kind, values in ((pa.uint64(), [floor + 1, floor]), (pa.int64(), [7, 9])):
        batch = pa.RecordBatch.from_pydict(
            {
                "_op": ["c", "c"],
                "id": pa.array([1, 2], pa.int64()),
                "name": ["a", "b"],
                "_commit_ts": pa.array(values, kind),
            }
        )
        key = 2 if kind == pa.uint64() else 1
        with pytest.raises(
            InputError, match=f"key \\(id={key}\\) has commit ts {values[key - 1]},"
        ):
            write_batches([batch], plan, producer_factory=FakeProducer())


def test_rows_below_the_watermark_are_sent_and_counted_when_allowed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plan = attrs.evolve(
        _plan(**{"allow-commit-ts-below-watermark": "true"}), watermark_floor=COMMIT_TS
    )
    batch = _with_commit_ts([1, 2, 3], [COMMIT_TS - 5, COMMIT_TS, COMMIT_TS + 1])
    report = write_batches([batch], plan, producer_factory=FakeProducer())
    assert (report.rows, report.below_watermark) == (3, 2)
    with caplog.at_level(logging.INFO, logger="ticdc_sink.writer"):
        summary = commit_batch(plan, [report], state=None, producer_factory=FakeProducer())
    assert summary["below_watermark"] == 2 and summary["watermark"] == COMMIT_TS + 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "ticdc commit: 2 rows had a commit ts at or below an earlier watermark and were sent "
        "(allow-commit-ts-below-watermark); consumers read them after that watermark"
    ]


def test_a_batch_entirely_below_the_watermark_says_so_at_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = SinkState(str(tmp_path))
    state.record_watermark(COMMIT_TS, None)
    state.confirm_watermark(COMMIT_TS)
    plan = attrs.evolve(
        _plan(**{"allow-commit-ts-below-watermark": "true"}), watermark_floor=COMMIT_TS
    )
    report = write_batches(
        [_with_commit_ts([1], [COMMIT_TS - 1])], plan, producer_factory=FakeProducer()
    )
    producer = FakeProducer()
    with caplog.at_level(logging.INFO, logger="ticdc_sink.writer"):
        summary = commit_batch(plan, [report], state=state, producer_factory=producer)
    assert summary["watermark"] is None and producer.sent == []
    assert f"no watermark: the batch's max commit ts {COMMIT_TS - 1} is not above the last " in (
        "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    )


def test_a_state_that_cannot_be_written_at_commit_fails_before_the_watermark(
    tmp_path: Path,
) -> None:
    state = SinkState(str(tmp_path / "chk"))
    state.check_writable()
    report = write_batches([_batch(["c"], [1], ["a"])], _plan(), producer_factory=FakeProducer())
    # Between planning and commit the folder became unwritable: a file where it was.
    (tmp_path / "chk" / "ticdc").rmdir()
    (tmp_path / "chk" / "ticdc").write_text("in the way")
    producer = FakeProducer()
    with pytest.raises(ConfigError, match="option 'checkpointLocation' is .*cannot create"):
        commit_batch(_plan(), [report], state=state, producer_factory=producer)
    assert producer.sent == []  # no watermark for the failed batch


class _Unconfirmed(SinkState):
    """A state whose writes after the watermark was sent fail."""

    def confirm_watermark(self, ts: int) -> None:
        raise ConfigError("option 'checkpointLocation' is 'x', where the sink cannot write")

    def record_report(self, name: str, line: str) -> str:
        raise ConfigError("option 'checkpointLocation' is 'x', where the sink cannot write")


def test_what_fails_after_the_watermark_was_sent_does_not_fail_the_batch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = _Unconfirmed(str(tmp_path))
    report = write_batches([_batch(["c"], [1], ["a"])], _plan(), producer_factory=FakeProducer())
    producer = FakeProducer(partitions=1)
    with caplog.at_level(logging.INFO, logger="ticdc_sink.writer"):
        summary = commit_batch(_plan(), [report], state=state, producer_factory=producer)
    assert summary["watermark"] == COMMIT_TS and len(producer.sent) == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings[0].startswith(f"ticdc commit: watermark {COMMIT_TS} sent, but ticdc: ")
    assert warnings[1].startswith("ticdc batch report not kept: ticdc: ")
    assert state.watermark_record() == WatermarkRecord(COMMIT_TS, None, None, sent=False)


def test_a_re_run_sends_its_watermark_again_only_if_it_was_not_acknowledged(
    tmp_path: Path,
) -> None:
    plan = attrs.evolve(_plan(), batch_id=4)
    report = write_batches([_batch(["c"], [1], ["a"])], plan, producer_factory=FakeProducer())
    state = SinkState(str(tmp_path))
    state.record_watermark(COMMIT_TS, 4)  # the first run recorded it, then its send failed
    again = FakeProducer(partitions=2)
    assert commit_batch(plan, [report], state=state, producer_factory=again)["watermark"] == (
        COMMIT_TS
    )
    assert len(again.sent) == 2 and state.watermark_record().sent
    once_more = FakeProducer(partitions=2)
    assert (
        commit_batch(plan, [report], state=state, producer_factory=once_more)["watermark"] is None
    )
    assert once_more.sent == []
    assert state.watermark_record() == WatermarkRecord(COMMIT_TS, 4, None, sent=True)


def test_report_seconds_run_from_planning_the_batch(tmp_path: Path) -> None:
    # Spark plans a micro-batch's writer again for its commit: the tasks carry the time
    # the batch was first planned, and the report measures from there.
    report = write_batches([_batch(["c"], [1], ["a"])], _plan(), producer_factory=FakeProducer())
    planned_for_commit = attrs.evolve(_plan(), planned_at=time.time())
    earlier = attrs.evolve(report, planned_at=planned_for_commit.planned_at - 100)
    summary = commit_batch(
        planned_for_commit, [earlier], state=None, producer_factory=FakeProducer()
    )
    assert summary["seconds"] >= 100


def test_filtered_rows_are_dropped_and_counted() -> None:
    producer = FakeProducer(partitions=1)
    plan = _plan(
        **{
            "filter-rules": "shop.*",
            "event-filters": (
                '[{"matcher": ["shop.users"], "ignore-event": ["delete"], '
                '"ignore-insert-value-expr": "name = \'spam\'"}]'
            ),
        }
    )
    report = write_batches(
        [_batch(["c", "c", "d", "c"], [1, 2, 3, 4], ["a", "spam", "b", None])],
        plan,
        producer_factory=producer,
    )
    assert report.rows == 2 and report.filtered == 2
    rows = [v for v in producer.values() if v["type"] != "BOOTSTRAP"]
    assert [(v["type"], v["data"]["name"]) for v in rows] == [("INSERT", "a"), ("INSERT", None)]


def test_an_untranslatable_event_filter_fails_on_the_driver() -> None:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from ticdc_sink.errors import ConfigError
    from ticdc_sink.writer import make_plan

    config = _plan(
        **{"event-filters": '[{"matcher": ["shop.users"], "ignore-insert-value-expr": "name = 1"}]'}
    ).config
    spark_schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    arrow = pa.schema([("id", pa.int64()), ("name", pa.string())])
    with pytest.raises(ConfigError, match="event-filters\\[0\\] ignore-insert-value-expr"):
        make_plan(config, spark_schema, COMMIT_TS, batch_id=None, arrow_schema=arrow)


@pytest.mark.parametrize(
    ("options", "idempotence"),
    [({}, "false"), ({"kafka.enable.idempotence": "true"}, "true")],
    ids=["default", "asked for"],
)
def test_the_watermark_fan_out_skips_the_idempotent_producer_unless_asked(
    options: dict[str, str], idempotence: str
) -> None:
    from ticdc_sink.writer.commit import send_watermark

    plan = _plan(**options)
    producer = FakeProducer(partitions=2)
    configs = []

    def factory(config: Any) -> FakeProducer:
        configs.append(config)
        return producer

    send_watermark(plan.config, COMMIT_TS, ["a", "b"], build_ts_ms=0, producer_factory=factory)
    (config,) = configs
    assert config.producer_config()["enable.idempotence"] == idempotence
    assert config.producer_config()["acks"] == "all"
    assert [(t, p) for t, p, _, _ in producer.sent] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]


@pytest.mark.parametrize("tables", [1, 2])
def test_open_protocol_rows_of_a_partition_share_messages(tables: int) -> None:
    from ticdc_sink.codec.open_protocol.decoder import OpenProtocolDecoder

    producer = FakeProducer(partitions=2)
    plan = _plan(protocol="open-protocol", **{"max-batch-size": "2", "partition": "index-value"})
    ids = list(range(7))
    batch = _batch(["c"] * 7, ids, [f"n{i}" for i in ids])
    if tables == 2:  # the writer sends a batch's tables one after the other
        batch = batch.append_column("_table", pa.array(["users", "users2"] * 3 + ["users"]))
    report = write_batches([batch], plan, producer_factory=producer)
    decoder = OpenProtocolDecoder()
    per_table: dict[tuple[int, str], list[int]] = {}
    for _, partition, key, value in producer.sent:
        events = decoder.decode_messages(key, value)
        assert 1 <= len(events) <= 2
        for e in events:
            per_table.setdefault((partition, e.table), []).append(e.data["id"])
    # Every row once, each table's in input order within a partition; fewer messages
    # than rows.
    assert sorted(i for p in per_table.values() for i in p) == ids
    assert all(p == sorted(p) for p in per_table.values())
    assert report.rows == 7 and report.messages == len(producer.sent) < 7
    assert producer.flushed

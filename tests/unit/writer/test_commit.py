"""The driver's steps around a batch's tasks (`writer.commit`) that the data source took
part in before: the DDL announced before the rows (`announce_schema`) and the abort step's
warning (`abort_batch`); without Spark or a broker."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from tests.support.fake_producer import FakeProducer
from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.schema import table_schema_to_json
from ticdc_sink.state import SinkState
from ticdc_sink.writer import TablePlan, TaskReport, WritePlan
from ticdc_sink.writer.commit import abort_batch, announce_schema
from ticdc_sink.writer.table import build_table_schema

COMMIT_TS = tso.compose(1_700_000_000_000)
USERS = build_table_schema(
    "shop",
    "users",
    StructType([StructField("id", LongType()), StructField("name", StringType())]),
    reserved=set(),
    primary_key=("id",),
)


def plan(batch_id: int | None = None, **options: str) -> WritePlan:
    config = SinkConfig.from_options(
        {"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t_{schema}_{table}", **options}
    )
    return WritePlan(
        config=config,
        tables=TablePlan(USERS, default_database="shop", default_table="users"),
        commit_ts=COMMIT_TS,
        build_ts_ms=tso.physical_ms(COMMIT_TS),
        batch_id=batch_id,
    )


def test_without_a_checkpoint_the_first_batch_ddl_goes_out_every_time() -> None:
    for _ in range(2):
        producer = FakeProducer(partitions=3)
        announce_schema(plan(**{"ddl-on-first-batch": "true"}), None, producer_factory=producer)
        assert [p for _, p, _, _ in producer.sent] == [0, 1, 2]
        assert {v["type"] for v in producer.values()} == {"CREATE"}


def test_a_protocol_without_ddl_or_an_unchanged_table_sends_nothing(tmp_path: Path) -> None:
    producer = FakeProducer()
    announce_schema(plan(protocol="canal-json"), None, producer_factory=producer)
    state = SinkState(str(tmp_path))
    state.record_table_schema("shop", "users", table_schema_to_json(USERS))
    announce_schema(plan(**{"ddl-on-first-batch": "true"}), state, producer_factory=producer)
    assert producer.sent == []


def test_a_micro_batchs_ddl_is_recorded_and_not_sent_again(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    first, second = FakeProducer(), FakeProducer()
    options = {"ddl-on-first-batch": "true"}
    announce_schema(plan(batch_id=4, **options), state, producer_factory=first)
    announce_schema(plan(batch_id=4, **options), state, producer_factory=second)
    assert first.sent and second.sent == []
    assert state.ddl_sent_for_batch(4)


def test_the_abort_step_says_what_stays_sent(caplog: pytest.LogCaptureFixture) -> None:
    report = TaskReport(0, {}, frozenset(), 0, 0, 0, 0)
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.writer"):
        abort_batch([report, None, report])
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith("ticdc write aborted: 2 of 3 tasks reported success; ")
    assert "no watermark was sent for this batch" in message

"""A batch read's plan over several topics in memory: every partition of every topic
listed or matched, offsets JSON per topic, `_topic` telling the topics' rows apart, and
one table across the topics."""

from __future__ import annotations

import pytest

from tests.support.read_log import FakeTopicLog, simple_messages, table
from ticdc_sink.errors import ConfigError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import ReadPlan, plan_read
from ticdc_sink.read.scan import read_range

USERS = table("users")
ORDERS = table("orders", {"amount": "decimal(10,2)"})


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", **options})


def _inserts(first: int, count: int) -> list:
    return [(Op.INSERT, 10 + i, (i, f"u{i}"), None) for i in range(first, first + count)]


def _log() -> FakeTopicLog:
    return FakeTopicLog.of_topics(
        {
            "tidb_a": {0: simple_messages(USERS, _inserts(0, 2)), 1: simple_messages(USERS, [])},
            "tidb_b": {0: simple_messages(USERS, _inserts(10, 3), watermark=50)},
            "other": {0: simple_messages(ORDERS, [(Op.INSERT, 9, (1, "1.00"), None)])},
        }
    )


def _rows(plan: ReadPlan, log: FakeTopicLog) -> list[dict]:
    rows = []
    for offsets in plan.ranges:
        # As the Spark reader's tasks: each reads its range with its topic's config.
        config = plan.config.for_topic(offsets.topic)
        for batch in read_range(config, plan.table, plan.known, offsets, log=log):
            rows += batch.to_pylist()
    return rows


def test_a_list_of_topics_plans_every_partition_of_each() -> None:
    log = _log()
    plan = plan_read(_config(topic="tidb_a,tidb_b", **{"kafka-columns": "true"}), log)
    assert plan.topics == ("tidb_a", "tidb_b")
    assert plan.ranges == (
        OffsetRange("tidb_a", 0, 0, 3),
        OffsetRange("tidb_a", 1, 0, 1),
        OffsetRange("tidb_b", 0, 0, 5),
    )
    rows = _rows(plan, log)
    assert sorted((r["_topic"], r["id"]) for r in rows) == [
        ("tidb_a", 0),
        ("tidb_a", 1),
        ("tidb_b", 10),
        ("tidb_b", 11),
        ("tidb_b", 12),
    ]


def test_a_pattern_reads_the_topics_whose_whole_name_matches() -> None:
    log = _log()
    plan = plan_read(_config(topicPattern="tidb_.", startingOffsets="latest"), log)
    assert plan.topics == ("tidb_a", "tidb_b")
    assert all(r.empty for r in plan.ranges) and plan.table.table == "users"
    with pytest.raises(ConfigError, match="have: other, tidb_a, tidb_b"):
        plan_read(_config(topicPattern="tidb"), log)


def test_offsets_json_names_each_topic() -> None:
    log = _log()
    starting = '{"tidb_a": {"0": 2, "1": -2}, "tidb_b": {"0": -1}}'
    plan = plan_read(_config(topic="tidb_a,tidb_b", startingOffsets=starting), log)
    assert [r.start for r in plan.ranges] == [2, 0, 5]
    assert [r["id"] for r in _rows(plan, log)] == [1]
    with pytest.raises(ConfigError, match="leaves out topic tidb_b"):
        plan_read(_config(topic="tidb_a,tidb_b", startingOffsets='{"tidb_a": {"0": 2}}'), log)


def test_tables_with_different_columns_across_topics_are_listed() -> None:
    log = _log()
    with pytest.raises(SchemaError, match=r"topics tidb_a, other have different columns .*"):
        plan_read(_config(topic="tidb_a,other"), log)
    plan = plan_read(_config(topic="tidb_a,other", table="orders"), log)
    assert [str(r["amount"]) for r in _rows(plan, log)] == ["1.00"]

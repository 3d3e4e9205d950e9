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
from ticdc_sink.read.plan import ReadPlan, plan_read, plan_stream_start, stream_config
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


# --- a stream given no starting option ------------------------------------------------------

WIDER = table("users", {"name": "varchar(20)", "email": "varchar(40)"}, version=2)


def _evolved_log() -> FakeTopicLog:
    """users with two columns, then (a later schema version) with three."""
    older = simple_messages(USERS, _inserts(0, 2), watermark=20)
    newer = simple_messages(WIDER, [(Op.INSERT, 30, (5, "u5", "e5"), None)], watermark=40)
    return FakeTopicLog({0: older + newer})


def test_a_stream_without_a_starting_option_is_planned_from_the_end() -> None:
    log = FakeTopicLog({0: simple_messages(USERS, _inserts(0, 2), watermark=20)})
    planned = plan_read(_config(topic="t"), log)  # as Spark's schema(): from earliest
    assert planned.ranges == (OffsetRange("t", 0, 0, 4),)
    stream = plan_stream_start(planned, log)
    assert stream.config.starting_offsets == "latest"
    assert stream.ranges == (OffsetRange("t", 0, 4, 4),) and stream.table == planned.table


def test_a_stream_whose_table_changed_since_the_earliest_offset_is_refused() -> None:
    log = _evolved_log()
    planned = plan_read(_config(topic="t"), log)
    assert [c.name for c in planned.table.columns] == ["id", "name"]
    with pytest.raises(ConfigError, match="column email added") as raised:
        plan_stream_start(planned, log)
    assert raised.value.option == "startingOffsets"
    # Either explicit start is consistent: Spark's schema is the start's table.
    for start, columns in (("latest", ["id", "name", "email"]), ("earliest", ["id", "name"])):
        explicit = plan_read(_config(topic="t", startingOffsets=start), log)
        assert plan_stream_start(explicit, log) is explicit
        assert [c.name for c in explicit.table.columns] == columns


def test_a_stream_with_a_user_schema_is_planned_from_the_end_once() -> None:
    log = _evolved_log()
    plan = plan_read(stream_config(_config(topic="t")), log)
    assert plan.config.starting_offsets == "latest"
    assert plan_stream_start(plan, log) is plan
    assert [c.name for c in plan.table.columns] == ["id", "name", "email"]

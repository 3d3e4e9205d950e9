"""Micro-batch planning for streaming reads (`read.stream`), over topics in memory: cuts
at watermarks that never split a commit ts, in one topic or across several,
`maxOffsetsPerTrigger` as a soft limit, partitions and topics that appear or vanish,
offsets that go back (a topic recreated) or are deleted as data loss (failOnDataLoss), a
checkpoint of other topics, which partitions and protocols carry watermarks (the writer's
partition-num and enable-tidb-extension) and a partition that holds the stream back,
`consistency=none` shares a limit like Spark's Kafka source, counts of rows and replays,
the offsets' JSON, and a schema change that stops the stream with an error saying how to
restart."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from tests.support.read_log import (
    WATERMARK,
    FakeTopicLog,
    records,
    simple_messages,
    simple_stream,
    table,
)
from ticdc_sink.errors import ConfigError, DecodeError, DeliveryError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange, parse_offsets
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.replay import replay_filter
from ticdc_sink.read.scan import read_range
from ticdc_sink.read.stream import (
    StreamOffset,
    StreamScan,
    check_consistency,
    follow_partitions,
    plan_offsets_cut,
    plan_start,
)
from ticdc_sink.schema import TableSchema

USERS = table("users")
Key = tuple[str, int]
PARTITIONS: tuple[Key, ...] = (("t", 0), ("t", 1), ("t", 2))
# Two topics (of the same table, as a writer with a partition dispatcher per topic, or two
# changefeeds, write them): a cut must be consistent across both.
TWO_TOPICS: tuple[Key, ...] = (("a", 0), ("a", 1), ("b", 0))
FOUR: tuple[Key, ...] = (("t", 0), ("t", 1), ("t", 2), ("t", 3))
Items = dict[Key, list[Any]]


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t", **options})


def _t(offsets: dict[int, int]) -> dict[Key, int]:
    """Offsets of topic t's partitions."""
    return {("t", p): o for p, o in offsets.items()}


def _scan(log: FakeTopicLog, config: ReadConfig | None = None) -> StreamScan:
    config = config or _config()
    plan = plan_read(config, log)
    return StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]


def _start(offsets: dict[Key, int] | None = None) -> StreamOffset:
    offsets = offsets or dict.fromkeys(PARTITIONS, 0)
    return StreamOffset(offsets, dict.fromkeys(offsets, 0))


@st.composite
def transactions(draw: Any, partitions: tuple[Key, ...] = PARTITIONS) -> Items:
    """Each partition's items, BOOTSTRAP first: transactions with rising commit ts, each
    with rows in random partitions, and after some of them a watermark sent to every
    partition of every topic (as TiCDC and the sink send them)."""
    items: Items = {p: [("bootstrap",)] for p in partitions}
    key = 0
    for i in range(draw(st.integers(1, 12))):
        ts = 100 + 10 * i
        for partition in draw(st.lists(st.sampled_from(partitions), min_size=1, max_size=5)):
            key += 1
            items[partition].append((Op.INSERT, ts, (key, "x")))
        if draw(st.booleans()):
            for partition in partitions:
                items[partition].append((WATERMARK, ts))
    return items


def _log(items: Items | dict[int, list[Any]]) -> FakeTopicLog:
    """The items of each partition (int: of topic t) after a BOOTSTRAP."""
    topics: dict[str, dict[int, list[Any]]] = {}
    for key, found in items.items():
        topic, p = key if isinstance(key, tuple) else ("t", key)
        entries = simple_messages(USERS, []) + simple_stream(USERS, found[1:])
        topics.setdefault(topic, {})[p] = entries
    return FakeTopicLog.of_topics(topics)


def _append(log: FakeTopicLog, key: Key, items: list[Any], schema: TableSchema = USERS) -> None:
    """Items of `schema` arriving in a partition (a new one: after a BOOTSTRAP)."""
    found = log.records.get(key)
    if found is None:
        found = log.records[key] = records(key[1], simple_messages(schema, []))
    found += [
        r._replace(offset=len(found) + i)
        for i, r in enumerate(records(key[1], simple_stream(schema, items)))
    ]


@pytest.mark.parametrize("partitions", [PARTITIONS, TWO_TOPICS], ids=["one-topic", "two-topics"])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    limit=st.none() | st.integers(1, 30),
    arrived=st.lists(st.integers(0, 60), min_size=3, max_size=3),
)
def test_every_cut_ends_at_a_watermark_keeps_commit_ts_whole_and_limits_softly(
    partitions: tuple[Key, ...], data: Any, limit: int | None, arrived: list[int]
) -> None:
    items = data.draw(transactions(partitions))
    log = _log(items)
    topics = ",".join(sorted({t for t, _ in partitions}))
    scan = _scan(log, _config(topic=topics))
    batch_of: dict[tuple[Key, int], int] = {}  # (partition, offset) of a row -> its batch
    start = _start(dict.fromkeys(partitions, 0))
    batches = 0
    # First what has arrived so far in each partition, then everything.
    everything = {p: len(items[p]) for p in partitions}
    for ends in (
        {p: min(n, everything[p]) for p, n in zip(partitions, arrived, strict=True)},
        everything,
    ):
        while True:
            cut = scan.plan(start, ends, limit)
            if cut.end == start:
                break
            batches += 1
            size = start.size_to(cut.end)
            assert limit is None or size <= limit or cut.end == scan.plan(start, ends, 1).end
            rows = 0
            for p in partitions:
                first, end = start.offsets[p], cut.end.offsets[p]
                if end > first:
                    assert items[p][end - 1][0] == WATERMARK  # ends just after a watermark
                    assert items[p][end - 1][1] <= (cut.resolved_ts or 0)
                    assert cut.end.resolved[p] == cut.resolved_ts
                for offset in range(first, end):
                    if isinstance(items[p][offset][0], Op):
                        batch_of[(p, offset)] = batches
                        rows += 1
            assert (cut.rows, cut.dropped) == (rows, 0)
            start = cut.end
            scan.forget_before(start)
    # Every commit ts is in one batch, or (after the last watermark) in none.
    where: dict[int, set[int | None]] = {}
    for p in partitions:
        for offset, item in enumerate(items[p]):
            if isinstance(item[0], Op):
                where.setdefault(item[1], set()).add(batch_of.get((p, offset)))
    assert all(len(found) == 1 for found in where.values()), where
    # Everything up to the last watermark was read.
    last = max((item[1] for item in items[partitions[0]] if item[0] == WATERMARK), default=0)
    assert all(None not in found for ts, found in where.items() if ts <= last)


@pytest.mark.parametrize("consistency", ["watermark", "none"])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), limit=st.integers(1, 30))
def test_a_scan_bounded_by_the_limit_places_the_cut_a_scan_of_everything_places(
    consistency: str, data: Any, limit: int
) -> None:
    # Under maxOffsetsPerTrigger the driver reads only what placing the next cut needs;
    # a driver that had read everything already (an index of the whole backlog) places
    # the same cuts.
    items = data.draw(transactions())
    log = _log(items)
    ends = {p: len(items[p]) for p in PARTITIONS}
    bounded = _scan(log, _config(consistency=consistency))
    full = _scan(log, _config(consistency=consistency))
    start = _start()
    while True:
        full.plan(start, ends, None)  # the whole backlog read
        cut = bounded.plan(start, ends, limit)
        same = full.plan(start, ends, limit)
        assert (cut.end, cut.resolved_ts, cut.rows, cut.dropped) == (
            same.end,
            same.resolved_ts,
            same.rows,
            same.dropped,
        )
        if cut.end == start:
            break
        start = cut.end
        for scan in (bounded, full):
            scan.forget_before(start)


def test_under_a_limit_the_driver_reads_a_backlog_only_as_far_as_the_next_cut() -> None:
    # 4 partitions, 200 transactions of a row in each, a watermark to every partition
    # after each: 401 offsets per partition (a BOOTSTRAP first).
    per_partition: dict[Key, list[Any]] = {p: [("bootstrap",)] for p in FOUR}
    for i in range(200):
        for key, p in enumerate(FOUR):
            per_partition[p] += [(Op.INSERT, 100 + i, (4 * i + key, "x")), (WATERMARK, 100 + i)]
    log = _log(per_partition)
    ends = dict.fromkeys(FOUR, 401)
    start = _start(dict.fromkeys(FOUR, 0))
    scan = _scan(log)
    assert scan.plan(start, ends, None).end.offsets == ends  # no limit: everything
    assert sum(scan.index[p].scanned for p in FOUR) == 4 * 401
    # Each partition's share of 40 offsets is read (10); under watermark consistency the
    # cut ends at the last watermark in it (offset 8), and whether the next one fits is
    # seen by reading on by twice the mean distance between watermarks (2 * (10 // 4)).
    for options, cut_at, read in [({}, 9, 14), ({"consistency": "none"}, 10, 10)]:
        scan = _scan(log, _config(**options))
        cut = scan.plan(start, ends, 40)
        assert cut.end.offsets == dict.fromkeys(FOUR, cut_at)
        assert [scan.index[p].scanned for p in FOUR] == [read] * 4
        scan.forget_before(cut.end)
        after = scan.plan(cut.end, ends, 40)
        assert after.end.offsets == dict.fromkeys(FOUR, cut_at + 10)
        # From the new start: the share and a few offsets past it.
        assert all(scan.index[p].scanned - cut_at <= 10 + 5 for p in FOUR)


def test_consistency_none_shares_a_limit_in_proportion_as_sparks_kafka_source() -> None:
    start = _start(_t({0: 0, 1: 10, 2: 5}))
    assert plan_offsets_cut(start, _t({0: 100, 1: 10, 2: 5}), None) == _t({0: 100, 1: 10, 2: 5})
    # 90 wanted of 100 and 0.5 of 1 (a share below one offset rounds up).
    assert plan_offsets_cut(start, _t({0: 100, 1: 11, 2: 5}), 90) == _t({0: 89, 1: 11, 2: 5})
    log = _log({p: [("bootstrap",), (Op.INSERT, 10, (p[1], "x"))] for p in PARTITIONS})
    cut = _scan(log, _config(consistency="none")).plan(_start(), dict.fromkeys(PARTITIONS, 2), 4)
    assert cut.end.offsets == _t({0: 1, 1: 1, 2: 1}) and cut.resolved_ts is None


def test_the_offset_is_sparks_kafka_json_plus_each_partitions_resolved_ts() -> None:
    offset = StreamOffset({("t", 0): 5, ("t", 1): 7, ("u", 0): 2}, {("t", 0): 100, ("u", 0): 9})
    assert offset.to_json() == {
        "t": {"0": 5, "1": 7},
        "u": {"0": 2},
        "ticdc:resolved-ts": {"t": {"0": 100, "1": 0}, "u": {"0": 9}},
    }
    assert offset.kafka_json() == {"t": {"0": 5, "1": 7}, "u": {"0": 2}}
    again = StreamOffset.from_json(offset.to_json())
    assert again.offsets == offset.offsets and again.resolved == {**offset.resolved, ("t", 1): 0}
    with pytest.raises(ConfigError, match="the checkpoint is another query's"):
        StreamOffset.from_json({"t": {"0": 5}})  # Spark's Kafka source's offset


def test_replayed_rows_are_counted_and_the_resolved_ts_travels_with_the_offset() -> None:
    once = [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]
    again = [(Op.INSERT, 10, (1, "a")), (Op.INSERT, 11, (2, "b")), (WATERMARK, 11)]
    log = _log({0: [("bootstrap",), *once, *again]})
    scan = _scan(log)
    start = _start(_t({0: 0}))
    first = scan.plan(start, _t({0: 3}), None)
    assert (first.end.offsets, first.end.resolved, first.rows, first.dropped) == (
        _t({0: 3}),
        _t({0: 10}),
        1,
        0,
    )
    # A fresh driver (a restart) starting from the checkpointed offset drops the replay.
    second = _scan(log).plan(StreamOffset.from_json(first.end.to_json()), _t({0: 6}), None)
    assert (second.end.offsets, second.resolved_ts, second.rows, second.dropped) == (
        _t({0: 6}),
        11,
        1,
        1,
    )


WIDER = table("users", {"name": "varchar(20)", "age": "int"}, version=2)


def _evolving() -> FakeTopicLog:
    before = [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]
    after = [(Op.INSERT, 11, (2, "b", 30)), (WATERMARK, 11)]
    values = simple_messages(USERS, []) + simple_stream(USERS, before)
    values += simple_messages(WIDER, []) + simple_stream(WIDER, after)
    return FakeTopicLog({0: values})


def test_a_column_added_mid_stream_stops_the_stream_before_it_with_how_to_restart() -> None:
    log = _evolving()
    scan = _scan(log, _config(startingoffsets='{"t": {"0": 0}}'))
    first = scan.plan(_start(_t({0: 0})), _t({0: 6}), None)
    assert first.end.offsets == _t({0: 3})  # the rows before the change
    with pytest.raises(SchemaError) as caught:
        scan.plan(first.end, _t({0: 6}), None)
    message = str(caught.value)
    assert "table db.users changed at topic t partition 0 offset 3: column age added (int" in (
        message
    )
    assert """startingOffsets '{"t":{"0":3}}'""" in message
    assert "schema-evolution=ignore-new-columns" in message


def test_ignore_new_columns_reads_on_without_them() -> None:
    log = _evolving()
    config = _config(**{"schema-evolution": "ignore-new-columns"})
    scan = _scan(log, config)
    cut = scan.plan(_start(_t({0: 0})), _t({0: 6}), None)
    assert (cut.end.offsets, cut.rows) == (_t({0: 6}), 2)
    table = plan_read(config, log).table
    batches = read_range(config, table, scan.tables, OffsetRange("t", 0, 0, 6), log=log)
    rows = [row for batch in batches for row in batch.to_pylist()]
    assert [(r["id"], r["name"]) for r in rows] == [(1, "a"), (2, "b")]
    assert "age" not in rows[1]


def test_rows_of_a_version_declared_before_the_stream_started_are_a_change_too() -> None:
    # The stream's columns come from the first rows (v1); it starts after v2's BOOTSTRAP.
    log = _evolving()
    scan = _scan(log)
    with pytest.raises(SchemaError, match="partition 0 offset 4: column age added"):
        scan.plan(_start(_t({0: 4})), _t({0: 6}), None)
    assert OffsetRange("t", 0, 0, 4) in log.reads  # the schemas were looked up before it
    config = _config(**{"schema-evolution": "ignore-new-columns"})
    scan = _scan(log, config)
    cut = scan.plan(_start(_t({0: 4})), _t({0: 6}), None)
    assert (cut.end.offsets, cut.rows) == (_t({0: 6}), 1)
    assert {t.version for t in scan.tables} == {1, 2}  # what the tasks will decode with


@pytest.mark.parametrize("evolution", ["fail", "ignore-new-columns"])
def test_a_stream_from_latest_has_the_columns_last_in_the_log_whatever_the_versions(
    evolution: str,
) -> None:
    # The sink's versions are hashes of the schema: here the newer one is the lower.
    older = table("users", version=5)
    newer = table("users", {"name": "varchar(20)", "age": "int"}, version=3)
    values = simple_messages(older, [(Op.INSERT, 10, (1, "a"), None)], watermark=10)
    log = FakeTopicLog({0: values + simple_messages(newer, [])})
    config = _config(startingoffsets="latest", **{"schema-evolution": evolution})
    plan = plan_read(config, log)
    scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
    start = scan.initial_offset()
    _append(log, ("t", 0), [(Op.INSERT, 20, (2, "b", 30)), (WATERMARK, 20)], newer)
    cut = scan.next_cut(start, None, None)
    assert (cut.end.offsets, cut.rows) == (_t({0: 6}), 1)
    batches = read_range(config, plan.table, scan.tables, OffsetRange("t", 0, 4, 6), log=log)
    rows = [row for batch in batches for row in batch.to_pylist()]
    assert [(r["id"], r["name"], r["age"]) for r in rows] == [(2, "b", 30)]


def test_a_row_whose_schema_the_stream_never_met_fails_its_batch_naming_where() -> None:
    # As TiCDC's consumer, a row may come before its BOOTSTRAP; one whose schema is in no
    # message the stream read is never typed by guess (or dropped): its task fails.
    log = _log({0: [("bootstrap",), (Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]})
    config = _config(startingoffsets="earliest")
    scan = _scan(log, config)
    stray = table("users", version=9)
    _append(log, ("t", 0), [(Op.INSERT, 20, (2, "b")), (WATERMARK, 20)], stray)
    cut = scan.plan(_start(_t({0: 0})), _t({0: 5}), None)
    assert (cut.end.offsets, cut.rows) == (_t({0: 5}), 2)
    batches = read_range(config, scan.table, scan.tables, OffsetRange("t", 0, 0, 5), log=log)
    with pytest.raises(DecodeError) as caught:
        list(batches)
    assert str(caught.value).startswith(
        "ticdc: topic t partition 0 offset 3: no schema of db.users version 9 came before this row"
    )
    assert "set option startingOffsets" in str(caught.value)


def test_a_cut_across_topics_stops_at_the_watermark_every_topic_has_reached() -> None:
    # Topic a is resolved to 30, topic b only to 20: the batch ends at 20 in both, so it
    # holds a's ts-30 row in neither topic's batch until b reaches 30 too.
    log = _log(
        {
            ("a", 0): [("bootstrap",), (Op.INSERT, 20, (1, "x")), (WATERMARK, 20)]
            + [(Op.INSERT, 30, (2, "x")), (WATERMARK, 30)],
            ("b", 0): [("bootstrap",), (Op.INSERT, 20, (3, "x")), (WATERMARK, 20)]
            + [(Op.INSERT, 30, (4, "x"))],
        }
    )
    scan = _scan(log, _config(topic="a,b"))
    start = _start({("a", 0): 0, ("b", 0): 0})
    cut = scan.plan(start, {("a", 0): 5, ("b", 0): 4}, None)
    assert (cut.end.offsets, cut.resolved_ts, cut.rows) == ({("a", 0): 3, ("b", 0): 3}, 20, 2)
    assert scan.plan(cut.end, {("a", 0): 5, ("b", 0): 4}, None).end == cut.end  # b waits
    _append(log, ("b", 0), [(WATERMARK, 30)])
    later = scan.next_cut(cut.end, None, None)
    assert (later.end.offsets, later.resolved_ts, later.rows) == ({("a", 0): 5, ("b", 0): 5}, 30, 2)


def test_the_first_offset_covers_every_partition_of_every_topic() -> None:
    bounds = {("a", 0): (2, 9), ("b", 0): (0, 4), ("b", 1): (1, 1)}
    start = plan_start(bounds, "latest")  # the default, as Spark's Kafka source
    assert start.offsets == {("a", 0): 9, ("b", 0): 4, ("b", 1): 1}
    spec = parse_offsets(
        '{"a": {"0": -2}, "b": {"0": 3, "1": -1}}', option="startingOffsets", topics=("a", "b")
    )
    start = plan_start(bounds, spec)
    assert start.offsets == {("a", 0): 2, ("b", 0): 3, ("b", 1): 1}
    assert set(start.resolved.values()) == {0}


def test_a_stream_started_by_timestamp_starts_each_partition_at_its_first_message_then() -> None:
    items = {
        p: [(Op.INSERT, 10 + p, (p, "a")), (WATERMARK, 20), (Op.INSERT, 30, (9, "b"))]
        for p in range(2)
    }
    log = _log(items)
    for key, found in log.records.items():  # message timestamps 1000, 1010, ... per offset
        log.records[key] = [r._replace(timestamp=1000 + 10 * r.offset) for r in found]
    scan = _scan(log, _config(startingtimestamp="1015", startingoffsets="earliest"))
    assert scan.initial_offset().offsets == _t({0: 2, 1: 2})  # the timestamp wins
    assert log.times_asked[-1] == {("t", 0): 1015, ("t", 1): 1015}
    by_partition = '{"t": {"0": 1000, "1": 1020}}'
    scan = _scan(log, _config(startingoffsetsbytimestamp=by_partition))
    assert scan.initial_offset().offsets == _t({0: 0, 1: 2})
    # Past every message: an error naming the option, topic and partition, or latest.
    with pytest.raises(ConfigError, match="startingTimestamp: partition 0 of topic t has no"):
        _scan(log, _config(startingtimestamp="5000", startingoffsets="earliest"))
    latest = _config(startingtimestamp="5000", startingoffsetsbytimestampstrategy="latest")
    ends = {key: len(found) for key, found in log.records.items()}
    assert _scan(log, latest).initial_offset().offsets == ends


def test_partitions_that_appear_are_read_from_their_earliest_offset() -> None:
    start = StreamOffset({("a", 0): 5}, {("a", 0): 40})
    assert follow_partitions(start, {("a", 0): (0, 9)}) == (start, [])
    grown, lost = follow_partitions(start, {("a", 0): (0, 9), ("a", 1): (3, 7), ("c", 0): (0, 2)})
    assert grown.offsets == {("a", 0): 5, ("a", 1): 3, ("c", 0): 0}
    assert grown.resolved == {("a", 0): 40, ("a", 1): 0, ("c", 0): 0}
    assert lost == []


def test_a_partition_that_is_gone_fails_the_stream_naming_it() -> None:
    start = StreamOffset({("a", 0): 5, ("b", 1): 2}, {})
    bounds = {("a", 0): (0, 9), ("b", 0): (0, 9)}
    with pytest.raises(DeliveryError, match="partition 1 of topic b is gone .* at offset 2"):
        follow_partitions(start, bounds)
    followed, lost = follow_partitions(start, bounds, fail_on_data_loss=False)
    assert followed.offsets == {("a", 0): 5, ("b", 0): 0}
    assert lost == [
        "partition 1 of topic b is gone from the brokers (the topic was deleted, or has fewer "
        "partitions now) while the stream was at offset 2; its unread messages are lost; "
        "failOnDataLoss=false: the partition is no longer read"
    ]


def test_offsets_that_go_back_or_were_deleted_are_data_loss_as_sparks_failondataloss() -> None:
    start = StreamOffset({("t", 0): 8, ("t", 1): 3}, {("t", 0): 50, ("t", 1): 50})
    recreated = {("t", 0): (0, 5), ("t", 1): (0, 9), ("t", 2): (0, 4)}
    with pytest.raises(DeliveryError) as caught:
        follow_partitions(start, recreated)
    assert str(caught.value).startswith(
        "ticdc: partition 0 of topic t ends at offset 5, below the stream's offset 8: the "
        "topic was deleted and recreated"
    )
    assert "failOnDataLoss=false" in str(caught.value)
    followed, lost = follow_partitions(start, recreated, fail_on_data_loss=False)
    # Read again from the recreated partition's start, with no watermark known there.
    assert followed.offsets == {("t", 0): 0, ("t", 1): 3, ("t", 2): 0}
    assert followed.resolved == {("t", 0): 0, ("t", 1): 50, ("t", 2): 0}
    assert lost[0].endswith("failOnDataLoss=false: reading it again from its earliest offset, 0")
    retained = {("t", 0): (10, 12), ("t", 1): (0, 9)}
    with pytest.raises(DeliveryError, match=r"begins at offset 10, past the stream's offset 8"):
        follow_partitions(start, retained)
    followed, lost = follow_partitions(start, retained, fail_on_data_loss=False)
    assert followed.offsets == {("t", 0): 10, ("t", 1): 3}
    assert followed.resolved == start.resolved  # the watermarks before still hold
    assert "offsets 8..9 were deleted" in lost[0]


def _recreate(log: FakeTopicLog, key: Key, items: list[Any]) -> None:
    """The partition's topic deleted and created again: these items from offset 0."""
    log.records[key] = records(key[1], simple_messages(USERS, []) + simple_stream(USERS, items))


def test_a_topic_recreated_under_the_stream_fails_it_naming_the_offsets() -> None:
    log = _log({0: _marked(10, 1), 1: _marked(10, 2)})
    scan = _scan(log)
    first = scan.next_cut(_start(_t({0: 0, 1: 0})), None, None)
    assert first.end.offsets == _t({0: 3, 1: 3})
    # Deleted and created again with one more partition; its first messages are fewer
    # than the stream's offsets (today's bug: nothing read, then offsets 0..2 skipped).
    for p in (0, 1, 2):
        _recreate(log, ("t", p), [(Op.INSERT, 20, (10 + p, "n"))])
    with pytest.raises(DeliveryError) as caught:
        scan.next_cut(first.end, None, None)
    assert str(caught.value).startswith(
        "ticdc: partition 0 of topic t ends at offset 2, below the stream's offset 3"
    )
    # Spark 4.0/4.1 plan a batch from a start they do not pass: the tasks' ranges check.
    below = StreamOffset(_t({0: 2, 1: 2, 2: 2}), {})
    with pytest.raises(DeliveryError, match="partition 0 of topic t ends at offset 2"):
        scan.ranges(first.end, below)


def test_with_fail_on_data_loss_false_a_recreated_topic_is_read_from_its_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    more = [(Op.INSERT, 15, (5, "x")), (WATERMARK, 15)]
    log = _log({0: _marked(10, 1) + more, 1: _marked(10, 2) + more[1:]})
    config = _config(failOnDataLoss="false")
    scan = _scan(log, config)
    first = scan.next_cut(_start(_t({0: 0, 1: 0})), None, None)
    assert first.end.offsets == _t({0: 5, 1: 4})
    for p in (0, 1, 2):
        _recreate(log, ("t", p), [(Op.INSERT, 20, (10 + p, "n")), (WATERMARK, 20)])
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.read.stream"):
        cut = scan.next_cut(first.end, None, None)
    assert (cut.end.offsets, cut.rows, cut.resolved_ts) == (_t({0: 3, 1: 3, 2: 3}), 3, 20)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2 and all("failOnDataLoss=false" in w for w in warnings)
    # Spark passes the batch's recorded start (the old offsets): the ranges start over.
    ranges = scan.ranges(first.end, cut.end)
    assert [r for r, _ in ranges] == [OffsetRange("t", p, 0, 3) for p in (0, 1, 2)]
    assert {resolved for _, resolved in ranges} == {0}
    table = plan_read(config, log).table
    read = [
        row["id"]
        for offsets, _ in ranges
        for batch in read_range(config, table, scan.tables, offsets, log=log)
        for row in batch.to_pylist()
    ]
    assert sorted(read) == [10, 11, 12]


def test_a_checkpoint_of_other_topics_says_so_naming_both() -> None:
    log = _log({("a", 0): _marked(10, 1), ("b", 0): _marked(10, 2)})
    scan = _scan(log, _config(topic="b"))
    checkpoint = StreamOffset({("a", 0): 3}, {("a", 0): 10})
    with pytest.raises(ConfigError) as caught:
        scan.next_cut(checkpoint, None, None)
    assert str(caught.value).startswith(
        "ticdc: the stream's checkpoint belongs to a query of other topics: it holds offsets "
        "of topic a, and this query reads topic b, not topic a (which the brokers have); "
        "give this query its own checkpointLocation, or read topic a again"
    )
    assert caught.value.option == "checkpointLocation"
    # Spark 4.0/4.1: the batch from the checkpoint's start to an end of topic b.
    with pytest.raises(ConfigError, match="checkpoint belongs to a query of other topics"):
        scan.ranges(checkpoint, StreamOffset({("b", 0): 3}, {}))
    # A topic that is gone is still gone.
    del log.records["a", 0]
    with pytest.raises(DeliveryError, match="partition 0 of topic a is gone from the brokers"):
        scan.next_cut(checkpoint, None, None)


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({}, None),
        ({"protocol": "open-protocol"}, None),
        ({"protocol": "debezium"}, "enable-tidb-extension=true"),
        ({"protocol": "canal-json"}, "enable-tidb-extension=true"),
        ({"protocol": "debezium", "enable-tidb-extension": "true"}, None),
        (
            {"protocol": "debezium", "enable-tidb-extension": "true", "ticdc-version": "26.3"},
            None,
        ),
        (
            {"protocol": "debezium", "enable-tidb-extension": "true", "ticdc-version": "8.5"},
            "from TiCDC v26.3 on and option ticdc-version is 8.5",
        ),
        ({"protocol": "debezium", "ticdc-version": "8.5"}, "or ticdc-version=26.3"),
        ({"protocol": "canal-json", "enable-tidb-extension": "true", "ticdc-version": "8.5"}, None),
        ({"protocol": "canal-json", "consistency": "none"}, None),
        ({"protocol": "avro", "schema-registry": "http://r:1"}, "carries no watermarks"),
    ],
)
def test_a_stream_that_would_wait_for_watermarks_that_never_come_is_refused(
    options: dict[str, str], refused: str | None
) -> None:
    config = _config(**options)
    if refused is None:
        check_consistency(config)
        return
    with pytest.raises(ConfigError, match=refused) as caught:
        check_consistency(config)
    assert caught.value.option == "consistency"
    assert "set option consistency=none" in str(caught.value)


def test_a_partition_without_watermarks_holding_the_stream_back_is_named_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A sink-written topic of 3 partitions written with partition-num=2: partition 2
    # never gets a row nor a watermark.
    marked = [("bootstrap",), (Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]
    log = _log({0: marked, 1: marked[:1] + [(WATERMARK, 10)]})
    log.records["t", 2] = []
    scan = _scan(log)
    start = _start(_t({0: 0, 1: 0, 2: 0}))
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.read.stream"):
        assert scan.next_cut(start, None, None).end == start
        assert caplog.records == []  # one watermark passed: it may still come
        _append(log, ("t", 0), [(Op.INSERT, 20, (2, "b")), (WATERMARK, 20)])
        _append(log, ("t", 1), [(WATERMARK, 20)])
        assert scan.next_cut(start, None, None).end == start
        assert scan.next_cut(start, None, None).end == start
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith(
        "ticdc: partition 2 of topic t has had no watermark since the stream started"
    )
    assert "set option partition-num to the writer's" in warning
    assert "consistency=none" in warning
    # With the writer's partition-num the stream moves; partition 2 is read as far as
    # it goes (nothing TiCDC wrote is there).
    scan = _scan(log, _config(**{"partition-num": "2"}))
    cut = scan.next_cut(start, None, None)
    assert (cut.end.offsets, cut.rows, cut.resolved_ts) == (_t({0: 5, 1: 3, 2: 0}), 2, 20)
    _append(log, ("t", 2), [(Op.INSERT, 25, (3, "c"))])
    _append(log, ("t", 0), [(WATERMARK, 30)])
    _append(log, ("t", 1), [(WATERMARK, 30)])
    later = scan.next_cut(cut.end, None, None)
    assert (later.end.offsets, later.rows) == (_t({0: 6, 1: 4, 2: 1}), 1)


def _marked(ts: int, key: int) -> list[Any]:
    return [("bootstrap",), (Op.INSERT, ts, (key, "x")), (WATERMARK, ts)]


def test_a_partition_added_mid_stream_is_read_from_its_earliest_offset() -> None:
    log = _log({("t", 0): _marked(10, 1)})
    scan = _scan(log)
    first = scan.next_cut(scan.initial_offset(), None, None)
    assert first.end == scan.initial_offset()  # startingOffsets=latest: nothing new yet
    start = _start(_t({0: 0}))
    cut = scan.next_cut(start, None, None)
    assert cut.end.offsets == _t({0: 3})
    _append(log, ("t", 1), _marked(20, 2)[1:])
    _append(log, ("t", 0), [(WATERMARK, 20)])
    grown = scan.next_cut(cut.end, None, None)
    assert (grown.end.offsets, grown.rows, grown.resolved_ts) == (_t({0: 4, 1: 3}), 1, 20)
    # The tasks read the new partition from its start, though Spark's start lacks it.
    assert scan.ranges(cut.end, grown.end) == [
        (OffsetRange("t", 0, 3, 4), 10),
        (OffsetRange("t", 1, 0, 3), 0),
    ]
    # A partition that appears during a Trigger.AvailableNow run (not in its target)
    # waits for the next run; one in the target joins.
    assert _scan(log).next_cut(cut.end, _t({0: 4}), None).end.offsets == _t({0: 4})
    joined = _scan(log).next_cut(cut.end, _t({0: 4, 1: 3}), None)
    assert joined.end.offsets == _t({0: 4, 1: 3})


def test_a_topic_that_comes_to_match_the_pattern_joins_the_stream() -> None:
    log = _log({("tidb_a", 0): _marked(10, 1), ("other", 0): _marked(10, 9)})
    scan = _scan(log, _config(topic="", topicPattern="tidb_.*"))
    start = StreamOffset({("tidb_a", 0): 0}, {})
    assert scan.initial_offset().offsets == {("tidb_a", 0): 3}
    assert scan.next_cut(start, None, None).end.offsets == {("tidb_a", 0): 3}
    _append(log, ("tidb_b", 0), _marked(10, 2)[1:])
    read = scan.next_cut(start, None, None)
    assert read.end.offsets == {("tidb_a", 0): 3, ("tidb_b", 0): 3} and read.rows == 2
    del log.records["tidb_b", 0]
    with pytest.raises(DeliveryError, match="partition 0 of topic tidb_b is gone"):
        scan.next_cut(read.end, None, None)


def _rows_read(scan: StreamScan, log: FakeTopicLog, parts: list[Any]) -> list[Any]:
    config = scan.config
    return sorted(
        (offsets.topic, offsets.partition, row["id"], row["_commit_ts"])
        for offsets, resolved_ts in parts
        for batch in read_range(
            config,
            scan.table,
            scan.tables,
            offsets,
            log=log,
            replays=replay_filter(config, resolved_ts),
        )
        for row in batch.to_pylist()
    )


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), replays=st.sampled_from(["drop", "keep"]), split=st.none() | st.just(6))
def test_a_part_without_rows_gets_no_task_and_the_rows_read_are_the_same(
    data: Any, replays: str, split: int | None
) -> None:
    # TiCDC sends every watermark to every partition: most parts of a stream over many
    # partitions hold watermarks only. Those get no task; the others read what all would.
    items = data.draw(transactions())
    log = _log(items)
    options = {"replays": replays} | ({"minPartitions": str(split)} if split else {})
    scan = _scan(log, _config(**options))
    start = _start()
    ends = {p: len(items[p]) for p in PARTITIONS}
    while (cut := scan.plan(start, ends, None)).end != start:
        every = scan.ranges(start, cut.end)
        kept = scan.parts(start, cut.end)
        assert _rows_read(scan, log, kept) == _rows_read(scan, log, every)
        for offsets, _ in kept:
            held = items[(offsets.topic, offsets.partition)][offsets.start : offsets.end]
            assert any(isinstance(item[0], Op) for item in held), offsets
        start = cut.end


def test_parts_with_only_watermarks_get_a_task_under_on_bad_message_skip() -> None:
    # A message the driver skipped as bad is reported by the task that meets it, so under
    # skip every part is read.
    rows = {0: [("bootstrap",), (Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]}
    idle = {p: [("bootstrap",), (WATERMARK, 10)] for p in (1, 2)}
    log = _log(rows | idle)
    for options, read in (({}, [0]), ({"on-bad-message": "skip"}, [0, 1, 2])):
        scan = _scan(log, _config(**options))
        cut = scan.plan(_start(), _t({0: 3, 1: 2, 2: 2}), None)
        assert [o.partition for o, _ in scan.parts(_start(), cut.end)] == read

"""Micro-batch planning for streaming reads (`read.stream`), over topics in memory: cuts
at watermarks that never split a commit ts, `maxOffsetsPerTrigger` as a soft limit,
`consistency=none` shares a limit like Spark's Kafka source, counts of rows and replays,
the offsets' JSON, and a schema change that stops the stream with an error saying how to
restart."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.read_log import (
    WATERMARK,
    FakeTopicLog,
    simple_messages,
    simple_stream,
    table,
)
from ticdc_sink.errors import ConfigError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range
from ticdc_sink.read.stream import StreamOffset, StreamScan, plan_offsets_cut

USERS = table("users")
PARTITIONS = (0, 1, 2)
Items = dict[int, list[Any]]


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t", **options})


def _scan(log: FakeTopicLog, config: ReadConfig | None = None) -> StreamScan:
    config = config or _config()
    plan = plan_read(config, log)
    return StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]


def _start(offsets: dict[int, int] | None = None) -> StreamOffset:
    offsets = offsets or dict.fromkeys(PARTITIONS, 0)
    return StreamOffset("t", offsets, dict.fromkeys(offsets, 0))


@st.composite
def transactions(draw: Any) -> Items:
    """Each partition's items, BOOTSTRAP first: transactions with rising commit ts, each
    with rows in random partitions, and after some of them a watermark sent to every
    partition (as TiCDC and the sink send them)."""
    items: Items = {p: [("bootstrap",)] for p in PARTITIONS}
    key = 0
    for i in range(draw(st.integers(1, 12))):
        ts = 100 + 10 * i
        for partition in draw(st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=5)):
            key += 1
            items[partition].append((Op.INSERT, ts, (key, "x")))
        if draw(st.booleans()):
            for partition in PARTITIONS:
                items[partition].append((WATERMARK, ts))
    return items


def _log(items: Items) -> FakeTopicLog:
    return FakeTopicLog(
        {
            p: simple_messages(USERS, []) + simple_stream(USERS, found[1:])
            for p, found in items.items()
        }
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=transactions(),
    limit=st.none() | st.integers(1, 30),
    arrived=st.lists(st.integers(0, 60), min_size=3, max_size=3),
)
def test_every_cut_ends_at_a_watermark_keeps_commit_ts_whole_and_limits_softly(
    items: Items, limit: int | None, arrived: list[int]
) -> None:
    log = _log(items)
    scan = _scan(log)
    batch_of: dict[tuple[int, int], int] = {}  # (partition, offset) of a row -> its batch
    start = _start()
    batches = 0
    # First what has arrived so far in each partition, then everything.
    everything = {p: len(items[p]) for p in PARTITIONS}
    for ends in ({p: min(arrived[p], everything[p]) for p in PARTITIONS}, everything):
        while True:
            cut = scan.plan(start, ends, limit)
            if cut.end == start:
                break
            batches += 1
            size = start.size_to(cut.end)
            assert limit is None or size <= limit or cut.end == scan.plan(start, ends, 1).end
            rows = 0
            for p in PARTITIONS:
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
    for p in PARTITIONS:
        for offset, item in enumerate(items[p]):
            if isinstance(item[0], Op):
                where.setdefault(item[1], set()).add(batch_of.get((p, offset)))
    assert all(len(found) == 1 for found in where.values()), where
    # Everything up to the last watermark was read.
    last = max((item[1] for item in items[0] if item[0] == WATERMARK), default=0)
    assert all(None not in found for ts, found in where.items() if ts <= last)


def test_consistency_none_shares_a_limit_in_proportion_as_sparks_kafka_source() -> None:
    start = _start({0: 0, 1: 10, 2: 5})
    assert plan_offsets_cut(start, {0: 100, 1: 10, 2: 5}, None) == {0: 100, 1: 10, 2: 5}
    # 90 wanted of 100 and 0.5 of 1 (a share below one offset rounds up).
    assert plan_offsets_cut(start, {0: 100, 1: 11, 2: 5}, 90) == {0: 89, 1: 11, 2: 5}
    log = _log({p: [("bootstrap",), (Op.INSERT, 10, (p, "x"))] for p in PARTITIONS})
    cut = _scan(log, _config(consistency="none")).plan(_start(), dict.fromkeys(PARTITIONS, 2), 4)
    assert cut.end.offsets == {0: 1, 1: 1, 2: 1} and cut.resolved_ts is None


def test_the_offset_is_sparks_kafka_json_plus_each_partitions_resolved_ts() -> None:
    offset = StreamOffset("t", {0: 5, 1: 7}, {0: 100, 1: 0})
    assert offset.to_json() == {"t": {"0": 5, "1": 7}, "ticdc:resolved-ts": {"0": 100, "1": 0}}
    assert StreamOffset.from_json(offset.to_json(), "t") == offset
    # A start from startingOffsets (no resolved ts known yet)
    assert StreamOffset.from_json({"t": {"0": 5}}, "t") == StreamOffset("t", {0: 5}, {0: 0})
    with pytest.raises(ConfigError, match="holds no offsets of topic u"):
        StreamOffset.from_json(offset.to_json(), "u")


def test_replayed_rows_are_counted_and_the_resolved_ts_travels_with_the_offset() -> None:
    once = [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]
    again = [(Op.INSERT, 10, (1, "a")), (Op.INSERT, 11, (2, "b")), (WATERMARK, 11)]
    log = _log({0: [("bootstrap",), *once, *again]})
    scan = _scan(log)
    start = _start({0: 0})
    first = scan.plan(start, {0: 3}, None)
    assert (first.end.offsets, first.end.resolved, first.rows, first.dropped) == (
        {0: 3},
        {0: 10},
        1,
        0,
    )
    # A fresh driver (a restart) starting from the checkpointed offset drops the replay.
    second = _scan(log).plan(StreamOffset.from_json(first.end.to_json(), "t"), {0: 6}, None)
    assert (second.end.offsets, second.resolved_ts, second.rows, second.dropped) == (
        {0: 6},
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
    first = scan.plan(_start({0: 0}), {0: 6}, None)
    assert first.end.offsets == {0: 3}  # the rows before the change
    with pytest.raises(SchemaError) as caught:
        scan.plan(first.end, {0: 6}, None)
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
    cut = scan.plan(_start({0: 0}), {0: 6}, None)
    assert (cut.end.offsets, cut.rows) == ({0: 6}, 2)
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
        scan.plan(_start({0: 4}), {0: 6}, None)
    assert OffsetRange("t", 0, 0, 4) in log.reads  # the schemas were looked up before it
    config = _config(**{"schema-evolution": "ignore-new-columns"})
    scan = _scan(log, config)
    cut = scan.plan(_start({0: 4}), {0: 6}, None)
    assert (cut.end.offsets, cut.rows) == ({0: 6}, 1)
    assert {t.version for t in scan.tables} == {1, 2}  # what the tasks will decode with

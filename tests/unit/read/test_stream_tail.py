"""`driver-scan=watermarks`: the stream's driver reads watermarks back from each
partition's end (`read.stream.StreamScan._tail_cut`) and places the cuts a scan of every
message places, reading a few messages per partition."""

from __future__ import annotations

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
from ticdc_sink.errors import SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_parts
from ticdc_sink.read.stream import StreamOffset, StreamScan, refuse_changes

USERS = table("users")
Key = tuple[str, int]
PARTITIONS: tuple[Key, ...] = (("t", 0), ("t", 1), ("t", 2))
Items = dict[Key, list[Any]]


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t", **options})


def _scan(log: FakeTopicLog, config: ReadConfig) -> StreamScan:
    plan = plan_read(config, log)
    return StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]


def _log(items: Items) -> FakeTopicLog:
    """The items of each partition after a BOOTSTRAP."""
    entries = {
        p: simple_messages(USERS, []) + simple_stream(USERS, found)
        for (_, p), found in items.items()
    }
    return FakeTopicLog.of_topics({"t": entries})


@st.composite
def topics(draw: Any, marked: int) -> Items:
    """Transactions with rising commit ts, each with rows in random partitions, and after
    some of them a watermark to each of the first `marked` partitions (the others are
    those from the writer's partition-num on: no watermark)."""
    items: Items = {p: [] for p in PARTITIONS}
    key = 0
    for i in range(draw(st.integers(1, 20))):
        ts = 100 + 10 * i
        for partition in draw(st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=6)):
            key += 1
            items[partition].append((Op.INSERT, ts, (key, "x")))
        if draw(st.booleans()):
            for partition in PARTITIONS[:marked]:
                items[partition].append((WATERMARK, ts))
    return items


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    consistency=st.sampled_from(["watermark", "none"]),
    limit=st.none() | st.integers(1, 40),
    marked=st.sampled_from([3, 2]),
)
def test_the_back_scan_places_the_cuts_a_scan_of_every_message_places(
    data: Any, consistency: str, limit: int | None, marked: int
) -> None:
    # The topic grows between triggers, or an availableNow run's target stops short of
    # its end: each plan reads to ends drawn at or after the last ones.
    items = data.draw(topics(marked))
    log = _log(items)
    options = {"consistency": consistency}
    if marked < len(PARTITIONS):
        options["partition-num"] = str(marked)
    tail = _scan(log, _config(**options, **{"driver-scan": "watermarks"}))
    full = _scan(log, _config(**options))
    start = StreamOffset(dict.fromkeys(PARTITIONS, 0), dict.fromkeys(PARTITIONS, 0))
    ends = dict.fromkeys(PARTITIONS, 0)
    last = {p: len(found) + 1 for p, found in items.items()}  # a BOOTSTRAP first
    marks = {
        p: [o + 2 for o, item in enumerate(found) if item[0] == WATERMARK]
        for p, found in items.items()
    }
    growing = data.draw(st.integers(0, 4))
    while True:
        if growing:
            growing -= 1
            # Anywhere, or just after a watermark (where partitions' resolved ts differ).
            ends = {
                p: data.draw(
                    st.integers(ends[p], last[p])
                    | st.sampled_from([o for o in marks[p] if o >= ends[p]] or [last[p]])
                )
                for p in PARTITIONS
            }
        else:
            ends = last
        cut = tail.plan(start, ends, limit)
        same = full.plan(start, ends, limit)
        assert (cut.end, cut.resolved_ts) == (same.end, same.resolved_ts)
        assert (cut.rows, cut.dropped) == (None, None)
        if cut.end == start and not growing:
            break
        start = cut.end
        for scan in (tail, full):
            scan.forget_before(start)


def _steady(partitions: int, transactions: int, rows: int) -> FakeTopicLog:
    """`transactions` of `rows` rows in each partition, a watermark to each after each."""
    items: Items = {("t", p): [] for p in range(partitions)}
    key = 0
    for i in range(transactions):
        for found in items.values():
            for _ in range(rows):
                key += 1
                found.append((Op.INSERT, 100 + i, (key, "x")))
            found.append((WATERMARK, 100 + i))
    return _log(items)


def test_the_driver_reads_back_only_to_the_watermarks_it_needs_not_the_batch() -> None:
    # 2 partitions of 100 transactions of 50 rows, a watermark after each: 5,101 offsets
    # each. A batch of everything (10,200 messages) ends at the last watermarks.
    log = _steady(2, 100, 50)
    keys = [("t", 0), ("t", 1)]
    ends = dict.fromkeys(keys, 5101)
    start = StreamOffset(dict.fromkeys(keys, 0), dict.fromkeys(keys, 0))
    scan = _scan(log, _config(**{"driver-scan": "watermarks"}))
    cut = scan.plan(start, ends, None)
    assert cut.end.offsets == ends and cut.resolved_ts == 199
    assert cut.fetched == 2 * 64 and cut.decoded == 2 * 2  # a chunk each: 2 watermarks
    # Rows arrive, no watermark yet: each partition is read back to the last batch's end
    # (one chunk, which stops at what the last plan read), and the batch waits.
    for (_, p), found in log.records.items():
        more = records(p, simple_stream(USERS, [(Op.INSERT, 300, (p, "y"))] * 25))
        found += [r._replace(offset=5101 + i) for i, r in enumerate(more)]
    after = scan.plan(cut.end, dict.fromkeys(keys, 5126), None)
    assert after.end == cut.end and after.fetched == 2 * 25 and after.decoded == 0
    # Its watermark arrives: the driver reads it alone (below is what it read before).
    for (_, p), found in log.records.items():
        found += [
            r._replace(offset=5126) for r in records(p, simple_stream(USERS, [(WATERMARK, 300)]))
        ]
    cut = scan.plan(cut.end, dict.fromkeys(keys, 5127), None)
    assert cut.end.offsets == dict.fromkeys(keys, 5127) and cut.resolved_ts == 300
    assert cut.fetched == 2


@pytest.mark.parametrize("needed", [449, 521, 1000, 2100])
def test_the_back_scan_reads_at_most_about_half_again_as_far_as_it_needs(needed: int) -> None:
    # One partition: a BOOTSTRAP, 3,000 rows, a watermark (offset 3,001), 3,000 rows. The
    # batch ends `needed` offsets after that watermark, which the cut needs: the chunks
    # (64 offsets, growing by half) read at most about 1.5 times that far back, and never
    # twice (doubling chunks read 960 offsets for 449).
    log = _steady(1, 2, 3000)
    key = ("t", 0)
    start = StreamOffset({key: 0}, {key: 0})
    end = 3001 + needed
    cut = _scan(log, _config(**{"driver-scan": "watermarks"})).plan(start, {key: end}, None)
    assert cut.end.offsets == {key: 3002} and cut.resolved_ts == 100
    assert needed <= cut.fetched <= 1.7 * needed


def test_under_consistency_none_the_driver_reads_back_to_the_last_watermark_or_nothing() -> None:
    log = _steady(2, 100, 50)
    keys = [("t", 0), ("t", 1)]
    start = StreamOffset(dict.fromkeys(keys, 0), dict.fromkeys(keys, 0))
    ends = dict.fromkeys(keys, 5060)  # 10 rows after ts 198's watermark (offset 5049)
    cut = _scan(log, _config(consistency="none", **{"driver-scan": "watermarks"})).plan(
        start, ends, None
    )
    assert cut.end.offsets == ends and set(cut.end.resolved.values()) == {198}
    assert cut.fetched == 2 * 64
    # The replay rule needs no resolved ts with replays=keep: offsets alone.
    kept = _scan(log, _config(consistency="none", replays="keep", **{"driver-scan": "watermarks"}))
    cut = kept.plan(start, ends, None)
    assert cut.end.offsets == ends and cut.fetched == 0


WIDER = table("users", {"name": "varchar(20)", "age": "int"}, version=2)


def _evolving() -> FakeTopicLog:
    """users(id, name): a row at ts 10, then a BOOTSTRAP of users with `age` added (offset
    3) and a row at ts 11 (offset 4), each transaction followed by its watermark."""
    before = [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]
    after = [(Op.INSERT, 11, (2, "b", 30)), (WATERMARK, 11)]
    values = simple_messages(USERS, []) + simple_stream(USERS, before)
    values += simple_messages(WIDER, []) + simple_stream(WIDER, after)
    return FakeTopicLog({0: values})


def _read(scan: StreamScan, log: FakeTopicLog, start: StreamOffset, end: StreamOffset) -> list[Any]:
    """The rows of the micro-batch `start`..`end` as its tasks read them."""
    changes = refuse_changes(scan.table, start.kafka_json()) if scan.config.tail_scan else None
    return [
        (row["id"], row["_commit_ts"])
        for task in scan.tasks(start, end)
        for batch in read_parts(
            scan.config, scan.table, scan.tables, task, log=log, changes=changes
        )
        for row in batch.to_pylist()
    ]


def test_a_task_that_meets_a_column_added_fails_the_batch_naming_it_and_the_batchs_start() -> None:
    log = _evolving()
    tail = _scan(log, _config(startingoffsets="earliest", **{"driver-scan": "watermarks"}))
    start = StreamOffset({("t", 0): 0}, {("t", 0): 0})
    cut = tail.plan(start, {("t", 0): 6}, None)
    assert cut.end.offsets == {("t", 0): 6}  # the driver does not see the change
    with pytest.raises(SchemaError) as caught:
        _read(tail, log, start, cut.end)
    message = str(caught.value)
    # As the driver says it under driver-scan=all, with the batch's start to restart at.
    assert message.startswith(
        "ticdc: table db.users changed at topic t partition 0 offset 3: column age added (int); a "
        "streaming query keeps the columns it started with, so it stops before the change. "
    )
    assert """startingOffsets '{"t":{"0":0}}' and option driver-scan=all""" in message
    assert "schema-evolution=ignore-new-columns" in message

    # The batch delivered nothing. A query from its start with driver-scan=all reads the
    # rows before the change and stops there, naming where the new schema starts; a query
    # from there reads the rest: every row once.
    full = _scan(log, _config(startingoffsets='{"t": {"0": 0}}'))
    first = full.plan(start, {("t", 0): 6}, None)
    rows = _read(full, log, start, first.end)
    with pytest.raises(SchemaError, match="""startingOffsets '\\{"t":\\{"0":3\\}\\}' to read"""):
        full.plan(first.end, {("t", 0): 6}, None)
    wider = _scan(log, _config(startingoffsets='{"t": {"0": 3}}', **{"driver-scan": "watermarks"}))
    restart = StreamOffset({("t", 0): 3}, {("t", 0): 0})
    last = wider.plan(restart, {("t", 0): 6}, None)
    rows += _read(wider, log, restart, last.end)
    assert rows == [(1, 10), (2, 11)]


def test_a_task_meets_a_change_at_the_first_row_of_a_version_whose_schema_it_did_not_meet() -> None:
    # The batch starts after the BOOTSTRAP of version 2 (the driver found it when the
    # query started): the task fails at the row.
    log = _evolving()
    tail = _scan(log, _config(startingoffsets="earliest", **{"driver-scan": "watermarks"}))
    start = StreamOffset({("t", 0): 4}, {("t", 0): 10})
    cut = tail.plan(start, {("t", 0): 6}, None)
    with pytest.raises(SchemaError, match="partition 0 offset 4: column age added"):
        _read(tail, log, start, cut.end)


def test_with_ignore_new_columns_the_tasks_read_on_without_them() -> None:
    log = _evolving()
    options = {"driver-scan": "watermarks", "schema-evolution": "ignore-new-columns"}
    tail = _scan(log, _config(startingoffsets="earliest", **options))
    start = StreamOffset({("t", 0): 0}, {("t", 0): 0})
    cut = tail.plan(start, {("t", 0): 6}, None)
    assert _read(tail, log, start, cut.end) == [(1, 10), (2, 11)]


def test_a_task_looks_up_a_version_whose_schema_came_in_an_earlier_batch() -> None:
    # Version 3 of users has the stream's columns (an index added, say); its BOOTSTRAP
    # came before the batch, and neither the task nor the driver met it: the task reads
    # the partition's schema messages before its range once, as the driver does under
    # driver-scan=all, and reads on.
    same = table("users", version=3)
    values = simple_messages(USERS, []) + simple_stream(USERS, [(Op.INSERT, 10, (1, "a"))])
    values += simple_messages(same, []) + simple_stream(same, [(Op.INSERT, 11, (2, "b"))])
    log = FakeTopicLog({0: [*values, *simple_stream(same, [(WATERMARK, 11)])]})
    tail = _scan(log, _config(startingoffsets="earliest", **{"driver-scan": "watermarks"}))
    start = StreamOffset({("t", 0): 3}, {("t", 0): 0})
    cut = tail.plan(start, {("t", 0): 5}, None)
    assert cut.end.offsets == {("t", 0): 5}
    assert _read(tail, log, start, cut.end) == [(2, 11)]
    assert OffsetRange("t", 0, 0, 3) in log.reads

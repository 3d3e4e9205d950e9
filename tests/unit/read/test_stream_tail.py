"""`driver-scan=watermarks`: the stream's driver reads watermarks back from each
partition's end (`read.stream.StreamScan._tail_cut`) and places the cuts a scan of every
message places, reading a few messages per partition."""

from __future__ import annotations

from typing import Any

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
from ticdc_sink.events import Op
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.stream import StreamOffset, StreamScan

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
    limit=st.none() | st.none() | st.integers(1, 40),
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
    assert cut.fetched == 2 * 16 and cut.decoded == 2  # a chunk each, its watermark decoded
    # Rows arrive, no watermark yet: each partition is read back to the last batch's end
    # (a chunk of 16, then the 9 offsets left), and the batch waits.
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


def test_under_consistency_none_the_driver_reads_back_to_the_last_watermark_or_nothing() -> None:
    log = _steady(2, 100, 50)
    keys = [("t", 0), ("t", 1)]
    start = StreamOffset(dict.fromkeys(keys, 0), dict.fromkeys(keys, 0))
    ends = dict.fromkeys(keys, 5060)  # 10 rows after ts 198's watermark (offset 5049)
    cut = _scan(log, _config(consistency="none", **{"driver-scan": "watermarks"})).plan(
        start, ends, None
    )
    assert cut.end.offsets == ends and set(cut.end.resolved.values()) == {198}
    assert cut.fetched == 2 * 16
    # The replay rule needs no resolved ts with replays=keep: offsets alone.
    kept = _scan(log, _config(consistency="none", replays="keep", **{"driver-scan": "watermarks"}))
    cut = kept.plan(start, ends, None)
    assert cut.end.offsets == ends and cut.fetched == 0

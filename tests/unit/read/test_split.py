"""`minPartitions` (`read.split`): Spark's part counts and cuts, cuts moved to just after
a watermark that raised the resolved ts, and a read split into any parts (batch and
stream) giving the rows of the unsplit read, replays dropped alike; `offsets-per-task`:
small parts packed into tasks (every offset once, in order, within the bound, at least
`minPartitions` tasks) whose reads give the rows of one task per range, batch and
stream; and `minOffsetsPerTrigger`'s wait (`stream.TriggerDelay`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import (
    WATERMARK,
    FakeTopicLog,
    protocol_messages,
    simple_messages,
    simple_stream,
    table,
)
from ticdc_sink.codec.choices import EncodingFormat
from ticdc_sink.config import CodecConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.events import Op
from ticdc_sink.read import plan as plan_module
from ticdc_sink.read.decoding import SchemaLookup, decode_events
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import find_boundaries, plan_parts, plan_read, plan_tasks
from ticdc_sink.read.replay import replay_filter
from ticdc_sink.read.scan import read_parts, read_range
from ticdc_sink.read.split import Part, Task, pack_bound, pack_parts, part_counts, split_ranges
from ticdc_sink.read.stream import StreamScan, TriggerDelay
from ticdc_sink.schema import TableSchema
from ticdc_sink.ticdc_version import TiCDCVersion

USERS = table("users")
_OPTIONS = {
    "kafka.bootstrap.servers": "unused:1",
    "topic": "t",
    "kafka-columns": "true",
    "startingoffsets": "earliest",
}


def test_part_counts_are_sparks() -> None:
    assert part_counts([10, 20], None) == [1, 1]
    assert part_counts([10, 20], 2) == [1, 1]
    assert part_counts([100], 4) == [4]
    # A small range is left out of the share the large ones divide.
    assert part_counts([1, 10_000], 3) == [1, 2]
    assert part_counts([30, 10, 60], 10) == [3, 1, 6]


def test_without_boundaries_ranges_are_cut_as_spark_cuts_them() -> None:
    parts = split_ranges([(OffsetRange("t", 0, 0, 10), 7)], 4, None)
    assert [(r.start, r.end, ts) for r, ts in parts] == [
        (0, 2, 7),
        (2, 4, 7),
        (4, 7, 7),
        (7, 10, 7),
    ]


def test_cuts_move_to_the_nearest_boundary_and_carry_its_resolved_ts() -> None:
    ranges = [(OffsetRange("t", 0, 0, 100), 5), (OffsetRange("t", 1, 0, 100), 5)]
    boundaries = {("t", 0): [(20, 11), (40, 12), (90, 13)], ("t", 1): [(100, 14)]}
    parts = split_ranges(ranges, 6, boundaries)
    # Spark's cuts of partition 0 are at 33 and 66; the nearest boundaries are 40 and 90.
    # Partition 1's only boundary is its end: the range stays whole.
    assert [(r.partition, r.start, r.end, ts) for r, ts in parts] == [
        (0, 0, 40, 5),
        (0, 40, 90, 12),
        (0, 90, 100, 13),
        (1, 0, 100, 5),
    ]


# --- a split read gives the rows of the whole one ----------------------------------------


#: Simple's encodings: the read options and the writer's codec of each.
_ENCODINGS = {
    "json": ({}, CodecConfig()),
    "avro": ({"encoding-format": "avro"}, CodecConfig(encoding_format=EncodingFormat.AVRO)),
}


def _topic(data: Any, encoding: str = "json") -> FakeTopicLog:
    """Transactions with rising commit ts in one partition, watermarks now and then, and
    at any point a retry (the last rows sent again) or a restart (everything since an
    earlier point sent again, watermarks too); Simple messages in `encoding`."""
    items: list[Any] = []
    ts, key = 100, 0
    for _ in range(data.draw(st.integers(1, 10), label="transactions")):
        ts += 10
        for _ in range(data.draw(st.integers(1, 3), label="rows")):
            key += 1
            items.append((Op.INSERT, ts, (key, "x")))
        if data.draw(st.booleans(), label="replay"):
            back = data.draw(st.integers(0, len(items)), label="back")
            items += items[back:]
        if data.draw(st.booleans(), label="watermark"):
            items.append((WATERMARK, ts))
    items.append((WATERMARK, ts))
    codec = _ENCODINGS[encoding][1]
    values = simple_messages(USERS, [], codec=codec) + simple_stream(USERS, items, codec=codec)
    return FakeTopicLog({0: values})


def _read(
    log: FakeTopicLog,
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    parts: list[Part],
    schema_for_id: SchemaLookup | None = None,
) -> list[tuple]:
    rows = []
    for offsets, resolved_ts in parts:
        batches = read_range(
            config,
            output,
            known,
            offsets,
            log=log,
            replays=replay_filter(config, resolved_ts),
            schema_for_id=schema_for_id,
        )
        rows += [(r["_offset"], r["id"], r["_commit_ts"]) for b in batches for r in b.to_pylist()]
    return rows


_CONFIGS = st.sampled_from(
    [{}, {"consistency": "none"}, {"replays": "keep"}, {"consistency": "none", "replays": "keep"}]
)


@pytest.mark.parametrize("encoding", sorted(_ENCODINGS))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), extra=_CONFIGS, min_partitions=st.integers(1, 8))
def test_a_batch_read_split_for_min_partitions_gives_the_unsplit_rows(
    encoding: str, data: Any, extra: dict[str, str], min_partitions: int
) -> None:
    log = _topic(data, encoding)
    extra = {**extra, **_ENCODINGS[encoding][0]}
    whole = ReadConfig.from_options({**_OPTIONS, **extra})
    plan = plan_read(whole, log)
    expected = _read(log, whole, plan.table, plan.known, [(r, 0) for r in plan.ranges])
    config = ReadConfig.from_options({**_OPTIONS, **extra, "minPartitions": str(min_partitions)})
    split_plan = plan_read(config, log)
    parts, known = plan_parts(split_plan, log)
    assert len(parts) <= max(min_partitions, 1) + 1
    assert _read(log, config, split_plan.table, known, parts) == expected
    if config.keep_replays or not config.watermark_consistency:  # Spark's cuts exactly
        assert len(parts) == min(min_partitions, plan.ranges[0].end)


@pytest.mark.parametrize("encoding", sorted(_ENCODINGS))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), extra=_CONFIGS)
def test_any_split_at_watermark_boundaries_gives_the_unsplit_rows(
    encoding: str, data: Any, extra: dict[str, str]
) -> None:
    log = _topic(data, encoding)
    config = ReadConfig.from_options({**_OPTIONS, **extra, **_ENCODINGS[encoding][0]})
    plan = plan_read(config, log)
    [whole] = plan.ranges
    expected = _read(log, config, plan.table, plan.known, [(whole, 0)])
    found, _ = find_boundaries(config, plan.known, whole, log)  # type: ignore[arg-type]
    chosen = data.draw(st.lists(st.sampled_from(found), unique=True) if found else st.just([]))
    parts: list[Part] = []
    begin, carried = whole.start, 0
    for start, ts in sorted(b for b in chosen if b[0] < whole.end):
        parts.append((OffsetRange("t", 0, begin, start), carried))
        begin, carried = start, ts
    parts.append((OffsetRange("t", 0, begin, whole.end), carried))
    assert _read(log, config, plan.table, plan.known, parts) == expected


def test_without_watermark_consistency_a_cut_anywhere_carries_the_last_resolved_ts() -> None:
    ranges = [(OffsetRange("t", 0, 0, 100), 5)]
    boundaries = {("t", 0): [(20, 11), (40, 12), (90, 13)]}
    parts = split_ranges(ranges, 4, boundaries, anywhere=True)
    assert [(r.start, r.end, ts) for r, ts in parts] == [
        (0, 25, 5),
        (25, 50, 11),
        (50, 75, 12),
        (75, 100, 12),
    ]


# Writers that send no watermarks, as the read's options describe them.
_SILENT_WRITERS = {
    "canal-json": {"protocol": "canal-json"},
    "debezium": {"protocol": "debezium"},
    "debezium-v8.5": {
        "protocol": "debezium",
        "ticdc-version": "8.5",
        "enable-tidb-extension": "true",
    },
    "avro": {"protocol": "avro"},
    "avro-tidb-extension": {"protocol": "avro", "enable-tidb-extension": "true"},
}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    writer=st.sampled_from(sorted(_SILENT_WRITERS)),
    consistency=st.sampled_from(["watermark", "none"]),
    min_partitions=st.integers(2, 6),
)
def test_a_split_of_a_topic_without_watermarks_reads_nothing_on_the_driver(
    data: Any, writer: str, consistency: str, min_partitions: int
) -> None:
    # The resolved ts stays 0 and no row is compared with another (their decoders know
    # no table's key): a part starts at Spark's cut with nothing from before it, and the
    # split read gives the whole one's rows, re-sent rows alike.
    options = _SILENT_WRITERS[writer]
    codec = CodecConfig(
        protocol=options["protocol"],
        enable_tidb_extension=options.get("enable-tidb-extension") == "true",
        ticdc_version=TiCDCVersion(options.get("ticdc-version", "26.3")),
    )
    changes: list[tuple[Op, int, tuple | None, tuple | None]] = []
    for n in range(data.draw(st.integers(2, 12), label="rows")):
        changes.append((Op.INSERT, (100 + n) << 18, (n, f"r{n}"), None))
        if data.draw(st.booleans(), label="re-sent"):
            changes += changes[data.draw(st.integers(0, len(changes) - 1), label="since") :]
    registry = FakeRegistry()
    log = FakeTopicLog({0: protocol_messages(codec, USERS, changes, registry=registry)})
    given_options = {**_OPTIONS, **options, "consistency": consistency}
    if options["protocol"] == "avro":
        given_options["schema-registry"] = "http://unused:1"
    lookup = registry.schema_text
    whole = ReadConfig.from_options(given_options)
    plan = plan_read(whole, log, schema_for_id=lookup)
    expected = _read(log, whole, plan.table, plan.known, [(r, 0) for r in plan.ranges], lookup)
    config = ReadConfig.from_options({**given_options, "minPartitions": str(min_partitions)})
    split_plan = plan_read(config, log, schema_for_id=lookup)
    log.reads.clear()
    parts, known = plan_parts(split_plan, log, schema_for_id=lookup)
    assert log.reads == []
    assert len(parts) == min(min_partitions, len(changes))
    assert _read(log, config, split_plan.table, known, parts, lookup) == expected


@pytest.mark.parametrize("encoding", sorted(_ENCODINGS))
def test_the_driver_pass_of_a_split_decodes_no_row(
    encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pass wants the watermarks and schema messages: it fetches every message and
    # decodes those alone, the BOOTSTRAP and the three watermarks here.
    items: list[Any] = []
    for ts in (10, 20, 30):
        items += [(Op.INSERT, ts, (n, "x")) for n in range(50)] + [(WATERMARK, ts)]
    options, codec = _ENCODINGS[encoding]
    values = simple_messages(USERS, [], codec=codec) + simple_stream(USERS, items, codec=codec)
    log = FakeTopicLog({0: values})
    config = ReadConfig.from_options({**_OPTIONS, **options, "minPartitions": "3"})
    plan = plan_read(config, log)
    decoded: list[int] = []

    def counted(decoder: Any, record: Any, *args: Any) -> Any:
        decoded.append(record.offset)
        return decode_events(decoder, record, *args)

    monkeypatch.setattr(plan_module, "decode_events", counted)
    parts, _ = plan_parts(plan, log)
    assert decoded == [0, 51, 102, 153]
    assert [(r.start, ts) for r, ts in parts] == [(0, 0), (52, 10), (103, 20)]


def test_a_split_elsewhere_than_after_a_watermark_would_keep_replays() -> None:
    # Why cuts wait for a watermark: the part after a replay of rows below the resolved
    # ts would keep them, not knowing the watermark before its start.
    items = [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10), (Op.INSERT, 10, (1, "a"))]
    log = FakeTopicLog({0: simple_messages(USERS, []) + simple_stream(USERS, items)})
    config = ReadConfig.from_options({**_OPTIONS, "minPartitions": "2"})
    plan = plan_read(config, log)
    whole = plan.ranges[0]
    assert [row[1] for row in _read(log, config, plan.table, plan.known, [(whole, 0)])] == [1]
    cut = whole.end - 1
    naive = [(OffsetRange("t", 0, 0, cut), 0), (OffsetRange("t", 0, cut, whole.end), 0)]
    assert [row[1] for row in _read(log, config, plan.table, plan.known, naive)] == [1, 1]
    parts, known = plan_parts(plan, log)
    assert [(r.start, ts) for r, ts in parts] == [(0, 0), (cut, 10)]
    assert [row[1] for row in _read(log, config, plan.table, known, parts)] == [1]


def test_a_part_after_a_schema_message_gets_its_schema() -> None:
    # A schema message (a DDL that keeps the columns: version 2) before the watermark
    # where the read is cut: the part after it has not read it, the driver's scan has.
    again = table("users", version=2)
    values = simple_messages(USERS, []) + simple_stream(USERS, [(Op.INSERT, 10, (1, "a"))])
    values += simple_messages(again, []) + simple_stream(USERS, [(WATERMARK, 10)])
    values += simple_stream(again, [(Op.INSERT, 20, (2, "b")), (WATERMARK, 20)])
    log = FakeTopicLog({0: values})
    config = ReadConfig.from_options({**_OPTIONS, "minPartitions": "2"})
    plan = plan_read(config, log)
    parts, known = plan_parts(plan, log)
    assert len(parts) == 2
    assert 2 in {t.version for t in known} - {t.version for t in plan.known}
    rows = _read(log, config, plan.table, known, parts)
    assert rows == _read(log, config, plan.table, plan.known, [(plan.ranges[0], 0)])
    assert [row[1] for row in rows] == [1, 2]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), extra=_CONFIGS, min_partitions=st.integers(1, 8))
def test_a_stream_split_for_min_partitions_gives_the_unsplit_rows(
    data: Any, extra: dict[str, str], min_partitions: int
) -> None:
    log = _topic(data)

    def stream(options: dict[str, str]) -> list[tuple]:
        config = ReadConfig.from_options(options)
        plan = plan_read(config, log)
        scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
        start, rows = scan.initial_offset(), []
        while (cut := scan.next_cut(start, None, None)).end != start:
            rows += _read(log, config, plan.table, scan.tables, scan.parts(start, cut.end))
            start = cut.end
        return rows

    whole = stream({**_OPTIONS, **extra})
    assert stream({**_OPTIONS, **extra, "minPartitions": str(min_partitions)}) == whole


# --- offsets-per-task: small parts packed into tasks ------------------------------------


@st.composite
def _parts(draw: Any) -> list[Part]:
    """Parts as a read plans them: per partition (of one or two topics) in offset order,
    contiguous where a range was split, each with a resolved ts."""
    parts: list[Part] = []
    for topic in draw(st.sampled_from([("t",), ("a", "b")])):
        for partition in range(draw(st.integers(0, 6))):
            start = draw(st.integers(0, 100))
            for size in draw(st.lists(st.integers(1, 60), max_size=4)):
                parts.append((OffsetRange(topic, partition, start, start + size), start))
                start += size
    return parts


def _size(task: Task) -> int:
    return sum(r.end - r.start for r, _ in task)


@settings(max_examples=examples(200))
@given(
    parts=_parts(),
    per_task=st.integers(0, 150),
    min_partitions=st.none() | st.integers(1, 12),
)
def test_packed_tasks_read_every_offset_once_in_order_within_the_bound(
    parts: list[Part], per_task: int, min_partitions: int | None
) -> None:
    tasks = pack_parts(parts, per_task, min_partitions)
    # Every part once, in the order planned: each offset read once, a partition's in order.
    assert [part for task in tasks for part in task] == parts
    for task in tasks:
        assert task
        for (a, _), (b, _) in zip(task, task[1:], strict=False):
            if (a.topic, a.partition) == (b.topic, b.partition):
                assert a.end <= b.start
    bound = pack_bound([r.end - r.start for r, _ in parts], per_task, min_partitions)
    assert bound <= per_task
    # No task over the bound but a part alone.
    assert all(_size(task) <= bound for task in tasks if len(task) > 1)
    if min_partitions is not None:  # minPartitions still asks for at least that many
        assert len(tasks) >= min(min_partitions, len(parts))
    else:  # packed as far as the bound lets: the next task's first part would not fit
        for task, after in zip(tasks, tasks[1:], strict=False):
            assert _size(task) + _size(after[:1]) > bound


def test_packing_keeps_large_ranges_alone_and_min_partitions_tasks() -> None:
    ranges = [(OffsetRange("t", p, 0, size), 0) for p, size in enumerate([5, 5, 50, 5, 5, 5])]
    sizes = [[_size(task) for task in tasks] for tasks in (pack_parts(ranges, 20),)]
    assert sizes == [[10, 50, 15]]
    assert [len(task) for task in pack_parts(ranges, 0)] == [1] * 6
    # minPartitions=4: the bound is 75 // 4 = 18, and four tasks at least.
    assert [_size(task) for task in pack_parts(ranges, 20, 4)] == [10, 50, 10, 5]
    assert len(pack_parts(ranges, 1000, 5)) == 5


def test_offsets_per_task_is_a_read_option_of_zero_or_more() -> None:
    assert ReadConfig.from_options(_OPTIONS).offsets_per_task == 10_000
    assert ReadConfig.from_options({**_OPTIONS, "offsets-per-task": "0"}).offsets_per_task == 0
    with pytest.raises(ConfigError, match=r"^ticdc: option offsets-per-task is 'many'"):
        ReadConfig.from_options({**_OPTIONS, "offsets-per-task": "many"})


def _partitions(data: Any, count: int) -> FakeTopicLog:
    """`count` partitions written as TiCDC writes them: transactions with rising commit
    ts, rows in any partition, now and then a watermark to every partition, a retry of a
    partition's last rows, and at the end a last watermark everywhere."""
    items: dict[int, list[Any]] = {p: [] for p in range(count)}
    ts, key = 100, 0
    for _ in range(data.draw(st.integers(1, 12), label="transactions")):
        ts += 10
        for p in data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=4)):
            key += 1
            items[p].append((Op.INSERT, ts, (key, "x")))
        if data.draw(st.booleans(), label="retry"):
            p = data.draw(st.integers(0, count - 1), label="retried")
            items[p] += items[p][data.draw(st.integers(0, len(items[p])), label="back") :]
        if data.draw(st.booleans(), label="watermark"):
            for found in items.values():
                found.append((WATERMARK, ts))
    boot = simple_messages(USERS, [])
    return FakeTopicLog(
        {p: boot + simple_stream(USERS, found + [(WATERMARK, ts)]) for p, found in items.items()}
    )


def _read_tasks(
    log: FakeTopicLog,
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    tasks: list[Task],
) -> list[tuple]:
    return sorted(
        (r["_partition"], r["_offset"], r["id"], r["_commit_ts"])
        for task in tasks
        for batch in read_parts(config, output, known, task, log=log)  # type: ignore[arg-type]
        for r in batch.to_pylist()
    )


_PACKING = st.fixed_dictionaries(
    {"offsets-per-task": st.integers(0, 40).map(str)},
    optional={"minPartitions": st.integers(1, 8).map(str)},
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), extra=_CONFIGS, packing=_PACKING, count=st.integers(1, 5))
def test_a_batch_read_of_packed_tasks_gives_the_rows_of_a_task_per_range(
    data: Any, extra: dict[str, str], packing: dict[str, str], count: int
) -> None:
    log = _partitions(data, count)
    alone = ReadConfig.from_options({**_OPTIONS, **extra, "offsets-per-task": "0"})
    plan = plan_read(alone, log)
    expected = _read_tasks(log, alone, plan.table, plan.known, [((r, 0),) for r in plan.ranges])
    config = ReadConfig.from_options({**_OPTIONS, **extra, **packing})
    packed = plan_read(config, log)
    tasks, known = plan_tasks(packed, log)
    assert _read_tasks(log, config, packed.table, known, tasks) == expected
    if config.offsets_per_task and "minPartitions" not in packing:
        assert len(tasks) <= len(plan.ranges)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    extra=_CONFIGS,
    packing=_PACKING,
    count=st.integers(1, 5),
    limit=st.none() | st.integers(1, 30),
)
def test_a_stream_of_packed_tasks_gives_the_rows_and_cuts_of_a_task_per_range(
    data: Any, extra: dict[str, str], packing: dict[str, str], count: int, limit: int | None
) -> None:
    log = _partitions(data, count)

    def stream(options: dict[str, str]) -> list[tuple[Any, list[tuple]]]:
        config = ReadConfig.from_options(options)
        plan = plan_read(config, log)
        scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
        start, batches = scan.initial_offset(), []
        while (cut := scan.next_cut(start, None, limit)).end != start:
            tasks = scan.tasks(start, cut.end)
            batches.append((cut.end, _read_tasks(log, config, plan.table, scan.tables, tasks)))
            start = cut.end
            scan.forget_before(start)
        return batches

    alone = stream({**_OPTIONS, **extra, "offsets-per-task": "0"})
    assert stream({**_OPTIONS, **extra, **packing}) == alone


# --- minOffsetsPerTrigger ----------------------------------------------------------------


def test_a_micro_batch_waits_for_min_offsets_until_the_delay_passes() -> None:
    now = [1000.0]
    wait = TriggerDelay(10, 60.0, clock=lambda: now[0])
    assert not wait.holds(0)  # the first trigger goes, as Spark's, and starts the clock
    assert wait.holds(9)
    assert not wait.holds(10)
    wait.moved()
    now[0] += 59
    assert wait.holds(3)
    now[0] += 1
    assert not wait.holds(3)  # maxTriggerDelay passed


def test_a_stream_scan_holds_a_cut_while_too_few_offsets_are_new() -> None:
    items = [(Op.INSERT, 10, (1, "a")), (WATERMARK, 10)]
    log = FakeTopicLog({0: simple_messages(USERS, []) + simple_stream(USERS, items)})
    config = ReadConfig.from_options(_OPTIONS)
    plan = plan_read(config, log)
    scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
    start = scan.initial_offset()
    now = [0.0]
    wait = TriggerDelay(100, 60.0, clock=lambda: now[0])
    assert scan.next_cut(start, None, None, wait).end != start  # the first goes
    assert scan.next_cut(start, None, None, wait).end == start  # 3 offsets < 100
    assert scan.latest == {("t", 0): 3}
    now[0] = 60.0
    assert scan.next_cut(start, None, None, wait).end != start
    # Trigger.AvailableNow's end: no wait.
    assert scan.next_cut(start, {("t", 0): 3}, None, wait).end != start


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15m", 900.0), ("30s", 30.0), ("250", 0.25), ("2h", 7200.0), ("1min", 60.0)],
)
def test_max_trigger_delay_reads_sparks_time_strings(text: str, seconds: float) -> None:
    config = ReadConfig.from_options(
        {**_OPTIONS, "minOffsetsPerTrigger": "5", "maxTriggerDelay": text}
    )
    assert (config.min_offsets_per_trigger, config.max_trigger_delay_s) == (5, seconds)
    assert config.max_trigger_delay_given


def test_the_new_options_refuse_bad_values_naming_the_option() -> None:
    defaults = ReadConfig.from_options(_OPTIONS)
    assert defaults.min_partitions is None and defaults.max_trigger_delay_s == 900.0
    for option, value in [
        ("maxTriggerDelay", "soon"),
        ("maxTriggerDelay", "5 weeks"),
        ("minOffsetsPerTrigger", "0"),
        ("minPartitions", "-1"),
    ]:
        with pytest.raises(ConfigError, match=rf"^ticdc: option {option.lower()} is '{value}'"):
            ReadConfig.from_options({**_OPTIONS, option: value})


def test_a_task_of_many_small_parts_hands_spark_a_few_batches_of_every_row_in_order() -> None:
    # Each range's rows came out as a batch of their own: a task of a thousand ranges of a
    # few rows gave Spark a thousand batches, each a round trip to the JVM.
    boot = simple_messages(USERS, [])
    log = FakeTopicLog(
        {
            p: boot + simple_stream(USERS, [(Op.INSERT, 100, (10 * p + i, "x")) for i in range(3)])
            for p in range(200)
        }
    )
    config = ReadConfig.from_options(_OPTIONS)
    plan = plan_read(config, log)
    task = tuple((r, 0) for r in plan.ranges)
    batches = list(read_parts(config, plan.table, plan.known, task, log=log))  # type: ignore[arg-type]
    assert [b.num_rows for b in batches] == [600]
    assert [r["id"] for b in batches for r in b.to_pylist()] == [
        10 * p + i for p in range(200) for i in range(3)
    ]
    assert len({b.schema for b in batches}) == 1


def test_a_task_joins_its_ranges_batches_until_batch_rows_are_held() -> None:
    boot = simple_messages(USERS, [])
    rows = 4_000
    log = FakeTopicLog(
        {
            p: boot
            + simple_stream(USERS, [(Op.INSERT, 100, (rows * p + i, "x")) for i in range(rows)])
            for p in range(4)
        }
    )
    config = ReadConfig.from_options(_OPTIONS)
    plan = plan_read(config, log)
    task = tuple((r, 0) for r in plan.ranges)
    sizes = [b.num_rows for b in read_parts(config, plan.table, plan.known, task, log=log)]  # type: ignore[arg-type]
    assert sum(sizes) == 4 * rows
    # Held across ranges and cut where one range of all these rows is cut: at BATCH_ROWS
    # (10,000), then the rest.
    assert sizes == [10_000, 6_000]

"""TiCDC's duplicate rule (`read.replay`): a row at or below the partition's resolved ts
is a replay, dropped and counted, in the filter and in a task's read of a range, also
when the range starts after the watermark (the resolved ts carried in)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.column_path import read_outcome
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
from ticdc_sink.codec.protocols import build_encoder
from ticdc_sink.codec.simple.avro_values import (
    NON_NULL,
    NULL,
    dml_heads,
    dml_times,
    encode_long,
    encode_string,
    value_writer,
)
from ticdc_sink.config import CodecConfig
from ticdc_sink.decode import DecodedRow, DecodedWatermark
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.replay import ReplayFilter, has_row_key, replay_filter
from ticdc_sink.read.scan import read_range
from ticdc_sink.read.stream import StreamScan
from ticdc_sink.schema import Index

USERS = table("users")
_OPTIONS = {"kafka.bootstrap.servers": "unused:1", "topic": "t", "kafka-columns": "true"}
CONFIG = ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t"})


def test_rows_at_or_below_the_resolved_ts_are_dropped_and_counted() -> None:
    replays = ReplayFilter(5)
    assert [replays.admit(_row(ts)) for ts in (5, 6)] == [False, True]
    replays.see_watermark(DecodedWatermark(commit_ts=20))
    replays.see_watermark(DecodedWatermark(commit_ts=15))  # a replayed watermark: no way back
    assert replays.resolved_ts == 20
    assert [replays.admit(_row(ts)) for ts in (20, 19, 21)] == [False, False, True]
    assert (replays.rows, replays.dropped) == (2, 3)


def _row(commit_ts: int) -> DecodedRow:
    return DecodedRow("db", "users", 7, Op.INSERT, commit_ts, 1, {"id": 1}, None)


def _partition() -> list[bytes | None]:
    # BOOTSTRAP, rows at 10 and 11, watermark 11, row 12, watermark 12, then TiCDC replays
    # from ts 10: rows 10, 11, 12 again, watermark 12 again, and goes on with row 13.
    items = [
        (Op.INSERT, 10, (1, "a")),
        (Op.INSERT, 11, (2, "b")),
        (WATERMARK, 11),
        (Op.INSERT, 12, (3, "c")),
        (WATERMARK, 12),
        (Op.INSERT, 10, (1, "a")),
        (Op.INSERT, 11, (2, "b")),
        (Op.INSERT, 12, (3, "c")),
        (WATERMARK, 12),
        (Op.INSERT, 13, (4, "d")),
        (WATERMARK, 13),
    ]
    return simple_messages(USERS, []) + simple_stream(USERS, items)


def _ids(offsets: OffsetRange, replays: ReplayFilter) -> list[int]:
    log = FakeTopicLog({0: _partition()})
    plan = plan_read(CONFIG, log)
    batches = read_range(CONFIG, plan.table, plan.known, offsets, log=log, replays=replays)
    return [row["id"] for batch in batches for row in batch.to_pylist()]


def test_a_read_drops_the_replayed_rows() -> None:
    replays = ReplayFilter()
    assert _ids(OffsetRange("t", 0, 0, 12), replays) == [1, 2, 3, 4]
    assert (replays.rows, replays.dropped, replays.resolved_ts) == (4, 3, 13)


def test_a_range_starting_after_a_watermark_gets_its_resolved_ts_carried_in() -> None:
    # Offsets 6..11: the replay and row 13; the last watermark before them was 12.
    assert _ids(OffsetRange("t", 0, 6, 12), ReplayFilter(12)) == [4]
    assert _ids(OffsetRange("t", 0, 6, 12), ReplayFilter()) == [1, 2, 3, 4]


def test_under_watermark_consistency_a_row_resent_past_the_watermark_is_dropped_too() -> None:
    # TiCDC sent row 12 past watermark 11, restarted, and sent it again: TiCDC's rule
    # keeps both (12 > 11); the same change since the resolved ts rose is a replay.
    replays = ReplayFilter(11, identical=True)
    assert [replays.admit(_row(ts), keyed=True) for ts in (12, 12, 13)] == [True, False, True]
    assert replays.see_watermark(DecodedWatermark(commit_ts=13))
    assert not replays.see_watermark(DecodedWatermark(commit_ts=12))
    assert (replays.rows, replays.dropped) == (2, 1)
    plain = ReplayFilter(11)
    assert [plain.admit(_row(12), keyed=True), plain.admit(_row(12), keyed=True)] == [True] * 2
    # A table without a row key may hold identical rows: both are kept.
    keyless = ReplayFilter(11, identical=True)
    assert [keyless.admit(_row(12)), keyless.admit(_row(12))] == [True, True]


def test_a_row_resent_with_its_columns_in_another_order_is_the_same_change() -> None:
    # Simple Avro's images are Go maps, written in a random order each time.
    first = attrs.evolve(_row(12), data={"id": 1, "name": "x"})
    resent = attrs.evolve(first, data={"name": "x", "id": 1})
    replays = ReplayFilter(11, identical=True)
    assert [replays.admit(first, keyed=True), replays.admit(resent, keyed=True)] == [True, False]
    # Past what orjson writes (an int beyond 64 bits), by name too.
    huge = attrs.evolve(first, data={"id": 1 << 70, "name": "x"})
    huge_resent = attrs.evolve(first, data={"name": "x", "id": 1 << 70})
    beyond = ReplayFilter(11, identical=True)
    assert [beyond.admit(huge, keyed=True), beyond.admit(huge_resent, keyed=True)] == [True, False]


@pytest.mark.parametrize("columnwise", [True, False])
def test_a_simple_avro_row_resent_in_another_map_order_is_dropped(columnwise: bool) -> None:
    # As TiCDC re-sends it after a changefeed restart: the same INSERT, its `data` map's
    # entries in another order (goavro ranges over a Go map).
    users = attrs.evolve(USERS, columns=USERS.columns[:2])
    writers = [value_writer(column, "UTC") for column in users.columns]

    def insert(order: list[int]) -> bytes:
        values = (7, "x")
        entries = [encode_string(users.columns[i].name) + writers[i](values[i]) for i in order]
        image = NON_NULL + encode_long(len(entries)) + b"".join(entries) + b"\x00"
        head = dml_heads(users)[Op.INSERT] + encode_long(100) + dml_times(users, 1)
        return head + NULL * 3 + image + NULL

    encoder = build_encoder(CodecConfig(encoding_format=EncodingFormat.AVRO), users, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap().value
    config = ReadConfig.from_options({**_OPTIONS, "encoding-format": "avro"})
    for resent, expected in (([0, 1], 1), ([1, 0], 1)):
        log = FakeTopicLog({0: [bootstrap, insert([0, 1]), insert(resent)]})
        read, _ = read_outcome(config, log, columnwise=columnwise, replays=replay_filter(config))
        assert read.num_rows == expected


def test_a_row_key_is_a_primary_key_or_a_unique_index_over_not_null_columns() -> None:
    email = table("users", {"email": "varchar(50)"})
    no_key = attrs.evolve(email, indexes=())
    unique = attrs.evolve(no_key, indexes=(Index("email", ("email",), unique=True),))
    required = attrs.evolve(
        unique, columns=tuple(attrs.evolve(c, nullable=False) for c in unique.columns)
    )
    assert has_row_key(email) and has_row_key(required)
    assert not has_row_key(no_key) and not has_row_key(unique) and not has_row_key(None)


# --- batch and stream reads apply the one rule -------------------------------------------


def _batch_rows(log: FakeTopicLog, config: ReadConfig, *, columnwise: bool = True) -> list[dict]:
    plan = plan_read(config, log)
    rows = []
    for offsets in plan.ranges:
        replays = replay_filter(config)
        rows += [
            row
            for batch in read_range(
                config,
                plan.table,
                plan.known,
                offsets,
                log=log,
                replays=replays,
                columnwise=columnwise,
            )
            for row in batch.to_pylist()
        ]
    return rows


def _stream_rows(log: FakeTopicLog, config: ReadConfig) -> list[dict]:
    """Every micro-batch of a stream from the earliest offsets, as the tasks read them."""
    plan = plan_read(config, log)
    scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
    start = scan.initial_offset()
    rows: list[dict] = []
    while (cut := scan.next_cut(start, None, None)).end != start:
        for offsets, resolved_ts in scan.ranges(start, cut.end):
            replays = replay_filter(config, resolved_ts)
            batches = read_range(config, plan.table, scan.tables, offsets, log=log, replays=replays)
            rows += [row for batch in batches for row in batch.to_pylist()]
        start = cut.end
    return rows


def _by_partition(rows: list[dict]) -> list[tuple]:
    return sorted((r["_partition"], r["_offset"], r["id"], r["_commit_ts"]) for r in rows)


def _retried_write() -> FakeTopicLog:
    # Five rows written at ts 10 across two partitions; a failed task's rows (ids 1, 2 in
    # partition 0, id 4 in partition 1) sent again by its retry, byte for byte, before
    # the driver's watermark 10; then TiCDC restarting replays ts 10 after watermark 10.
    p0 = [(Op.INSERT, 10, (1, "a")), (Op.INSERT, 10, (2, "b")), (Op.INSERT, 10, (3, "c"))]
    p1 = [(Op.INSERT, 10, (4, "d")), (Op.INSERT, 10, (5, "e"))]
    mark = [(WATERMARK, 10)]
    return FakeTopicLog(
        {
            0: simple_messages(USERS, []) + simple_stream(USERS, p0 + p0[:2] + mark + p0[:1]),
            1: simple_messages(USERS, []) + simple_stream(USERS, p1 + p1[:1] + mark),
        }
    )


def test_a_batch_read_drops_replays_as_a_stream_does_and_replays_keep_keeps_them(
    caplog,
) -> None:
    config = ReadConfig.from_options({**_OPTIONS, "startingoffsets": "earliest"})
    log = _retried_write()
    with caplog.at_level("INFO", logger="ticdc_sink.read.scan"):
        batch = _batch_rows(log, config)
    assert sorted(r["id"] for r in batch) == [1, 2, 3, 4, 5]
    assert _by_partition(batch) == _by_partition(_stream_rows(log, config))
    assert _by_partition(_batch_rows(log, config, columnwise=False)) == _by_partition(batch)
    logged = [r.getMessage() for r in caplog.records]
    assert any("partition 0 offsets 0..7 dropped 3 row(s)" in m and "kept 3" in m for m in logged)
    assert any("partition 1 offsets 0..4 dropped 1 row(s)" in m for m in logged)
    assert all("replays=keep keeps every row" in m for m in logged)
    raw = ReadConfig.from_options({**_OPTIONS, "replays": "keep"})
    assert sorted(r["id"] for r in _batch_rows(log, raw)) == [1, 1, 1, 2, 2, 3, 4, 4, 5]


def test_without_watermark_consistency_only_ticdcs_rule_drops_in_batch_and_stream() -> None:
    config = ReadConfig.from_options({**_OPTIONS, "consistency": "none"})
    log = _retried_write()
    batch = _batch_rows(log, config)
    # The retried rows came before watermark 10, so TiCDC's rule keeps them; the replay
    # after it is dropped.
    assert sorted(r["id"] for r in batch) == [1, 1, 2, 2, 3, 4, 4, 5]
    assert replay_filter(ReadConfig.from_options({**_OPTIONS, "replays": "keep"})) is None


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_and_stream_reads_of_any_replaying_topic_give_the_same_rows(data: Any) -> None:
    # Transactions with rising commit ts in two partitions, watermarks to both, and at any
    # point a retry (the last rows sent again) or a restart (everything since an earlier
    # watermark sent again); the topic ends with a watermark so the stream reads it all.
    items: dict[int, list[Any]] = {0: [], 1: []}
    key = 0
    ts = 100
    for _ in range(data.draw(st.integers(1, 8), label="transactions")):
        ts += 10
        for partition in data.draw(st.lists(st.sampled_from([0, 1]), min_size=1, max_size=4)):
            key += 1
            items[partition].append((Op.INSERT, ts, (key, "x")))
        for partition in (0, 1):
            if data.draw(st.booleans(), label="replay"):
                sent = items[partition]
                back = data.draw(st.integers(0, len(sent)), label="back")
                items[partition] = sent + sent[back:]
        if data.draw(st.booleans(), label="watermark"):
            for partition in (0, 1):
                items[partition].append((WATERMARK, ts))
    for partition in (0, 1):
        items[partition].append((WATERMARK, ts))
    log = FakeTopicLog(
        {p: simple_messages(USERS, []) + simple_stream(USERS, found) for p, found in items.items()}
    )
    config = ReadConfig.from_options({**_OPTIONS, "startingoffsets": "earliest"})
    batch = _by_partition(_batch_rows(log, config))
    assert batch == _by_partition(_stream_rows(log, config))
    assert batch == _by_partition(_batch_rows(log, config, columnwise=False))


def test_the_identical_row_rule_remembers_a_bounded_window_and_says_so(caplog) -> None:
    replays = ReplayFilter(0, identical=True, window=2)
    rows = [
        _row(10),
        attrs.evolve(_row(10), data={"id": 2}),
        attrs.evolve(_row(10), data={"id": 3}),
    ]
    assert [replays.admit(r, keyed=True) for r in [*rows, *rows]] == [True] * 3 + [False] * 2 + [
        True
    ]
    assert (replays.rows, replays.dropped, replays.unremembered) == (4, 2, 2)
    log = FakeTopicLog({0: _partition()})
    plan = plan_read(CONFIG, log)
    bounded = ReplayFilter(identical=True, window=1)
    with caplog.at_level("WARNING", logger="ticdc_sink.read.scan"):
        list(
            read_range(
                CONFIG, plan.table, plan.known, OffsetRange("t", 0, 0, 4), log=log, replays=bounded
            )
        )
    [warning] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "partition 0 offsets 0..3 met more than 1 rows since a watermark" in warning


def test_rows_without_a_commit_ts_are_never_replays() -> None:
    # canal-json without enable-tidb-extension carries no commit ts (0), nor do avro's
    # tombstones: two DELETEs of one key are then two changes, not a replay.
    codec = CodecConfig(protocol="canal-json")
    changes = [
        (Op.INSERT, 10, (1, "a"), None),
        (Op.DELETE, 11, None, (1, "a")),
        (Op.INSERT, 12, (1, "a"), None),
        (Op.DELETE, 13, None, (1, "a")),
    ]
    log = FakeTopicLog({0: protocol_messages(codec, USERS, changes)})
    config = ReadConfig.from_options({**_OPTIONS, "protocol": "canal-json"})
    rows = _batch_rows(log, config)
    assert [(r["_op"], r["_commit_ts"]) for r in rows] == [
        ("INSERT", 0),
        ("DELETE", 0),
        ("INSERT", 0),
        ("DELETE", 0),
    ]


@settings(max_examples=examples(200), deadline=None)
@given(
    resolved_ts=st.integers(0, 20),
    commit_ts=st.lists(st.integers(0, 30), max_size=30),
)
def test_a_runs_commit_ts_are_admitted_as_each_alone(
    resolved_ts: int, commit_ts: list[int]
) -> None:
    # The column-wise runs ask of their rows at once what the row path asks of each.
    one_by_one, at_once = ReplayFilter(resolved_ts), ReplayFilter(resolved_ts)
    expected = [one_by_one.admit_commit_ts(ts) for ts in commit_ts]
    assert at_once.admit_commit_ts_each(commit_ts) == expected
    assert (at_once.rows, at_once.dropped) == (one_by_one.rows, one_by_one.dropped)

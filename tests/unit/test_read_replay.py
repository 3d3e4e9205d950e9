"""TiCDC's duplicate rule (`read.replay`): a row at or below the partition's resolved ts
is a replay, dropped and counted, in the filter and in a task's read of a range, also
when the range starts after the watermark (the resolved ts carried in)."""

from __future__ import annotations

import attrs

from tests.support.read_log import WATERMARK, FakeTopicLog, simple_messages, simple_stream, table
from ticdc_sink.decode import DecodedRow, DecodedWatermark
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.replay import ReplayFilter, has_row_key
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import Index

USERS = table("users")
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


def test_a_row_key_is_a_primary_key_or_a_unique_index_over_not_null_columns() -> None:
    email = table("users", {"email": "varchar(50)"})
    no_key = attrs.evolve(email, indexes=())
    unique = attrs.evolve(no_key, indexes=(Index("email", ("email",), unique=True),))
    required = attrs.evolve(
        unique, columns=tuple(attrs.evolve(c, nullable=False) for c in unique.columns)
    )
    assert has_row_key(email) and has_row_key(required)
    assert not has_row_key(no_key) and not has_row_key(unique) and not has_row_key(None)

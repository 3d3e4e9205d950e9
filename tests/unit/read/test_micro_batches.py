"""A streaming read's micro-batches across the query (`read.micro_batches.MicroBatches`),
as the data source's stream reader hands Spark's calls to it, without Spark or a broker:
the topic is a `FakeTopicLog`; the tasks read what each micro-batch's tasks would. Also
the read-limit options (`read.options.read_limits`) and the planned micro-batch's log line
(`read.stream.log_cut`)."""

from __future__ import annotations

import logging

import pytest

from tests.support.read_log import (
    WATERMARK,
    FakeTopicLog,
    records,
    simple_messages,
    simple_stream,
    table,
)
from ticdc_sink.events import Op
from ticdc_sink.read.micro_batches import MicroBatches
from ticdc_sink.read.options import ReadConfig, read_limits
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_parts
from ticdc_sink.read.stream import StreamOffset

USERS = table("users")
OPTIONS = {"kafka.bootstrap.servers": "unused:1", "topic": "t", "startingoffsets": "earliest"}


def batches(log: FakeTopicLog, **options: str) -> MicroBatches:
    plan = plan_read(ReadConfig.from_options({**OPTIONS, **options}), log)  # type: ignore[arg-type]
    return MicroBatches(plan, open_log=lambda config: log)  # type: ignore[arg-type,return-value]


def ids(micro: MicroBatches, start: StreamOffset, end: StreamOffset) -> list[int]:
    """The ids of the rows the micro-batch's tasks read."""
    tasks, known = micro.tasks(start, end)
    plan = micro.plan
    log = micro.scan().log
    found = []
    for task in tasks:
        for batch in read_parts(plan.config, plan.table, known, task, log=log):
            found += batch.column("id").to_pylist()
    return found


def stream(*items: tuple) -> FakeTopicLog:
    return FakeTopicLog({0: simple_messages(USERS, []) + simple_stream(USERS, list(items))})


def append(log: FakeTopicLog, *items: tuple) -> None:
    """More messages at the end of partition 0."""
    values = [r.value for r in log.records[("t", 0)]] + simple_stream(USERS, list(items))
    log.records[("t", 0)] = records(0, values)


def test_each_micro_batch_starts_where_the_last_ended() -> None:
    # PySpark < 4.2 asks for the next end without a start.
    log = stream(
        (Op.INSERT, 10, (1, "a")),
        (WATERMARK, 10),
        (Op.INSERT, 20, (2, "b")),
        (WATERMARK, 20),
    )
    micro = batches(log)
    assert micro.reported_latest() is None  # nothing planned yet
    start = micro.initial_offset()
    first = micro.next_cut(None).end
    assert ids(micro, start, first) == [1, 2]
    assert micro.reported_latest() == {"t": {"0": 5}}
    assert micro.next_cut(None).end == first  # nothing new: an empty micro-batch
    append(log, (Op.INSERT, 30, (3, "c")), (WATERMARK, 30))
    second = micro.next_cut(None).end
    assert ids(micro, first, second) == [3]
    # Spark names a start (4.2+, or a restart through `partitions`): it wins.
    assert micro.next_cut(start).end == second


def test_a_cap_and_trigger_available_now_end_where_they_say() -> None:
    log = stream(
        (Op.INSERT, 10, (1, "a")),
        (WATERMARK, 10),
        (Op.INSERT, 20, (2, "b")),
        (WATERMARK, 20),
    )
    micro = batches(log)
    start = micro.initial_offset()
    capped = micro.next_cut(start, cap=3).end
    assert ids(micro, start, capped) == [1]
    micro.prepare_available_now()  # the partitions' ends now: read to there, then stop
    append(log, (Op.INSERT, 30, (3, "c")), (WATERMARK, 30))  # after it: not read
    rest = micro.next_cut(capped).end
    assert ids(micro, capped, rest) == [2]
    assert micro.next_cut(rest).end == rest


def test_min_offsets_wait_unless_everything_is_asked_for() -> None:
    log = stream((Op.INSERT, 10, (1, "a")), (WATERMARK, 10))
    micro = batches(log, minOffsetsPerTrigger="100", maxTriggerDelay="1h")
    start = micro.initial_offset()
    assert micro.next_cut(start).end != start  # the first trigger goes, as Spark's
    held = micro.next_cut(start)
    assert held.end == start  # 3 offsets < 100, and the delay has not passed
    assert micro.next_cut(start, everything=True).end != start  # Trigger.Once


def test_commit_and_stop_let_the_scan_go() -> None:
    log = stream((Op.INSERT, 10, (1, "a")), (WATERMARK, 10))
    opened: list[FakeTopicLog] = []

    def open_log(config: ReadConfig) -> FakeTopicLog:
        opened.append(log)
        return log

    plan = plan_read(ReadConfig.from_options(OPTIONS), log)  # type: ignore[arg-type]
    micro = MicroBatches(plan, open_log=open_log)  # type: ignore[arg-type]
    micro.commit(StreamOffset({}, {}))  # before any scan: nothing to forget
    micro.stop()
    assert opened == []  # the scan is made on first use only
    end = micro.next_cut(micro.initial_offset()).end
    micro.commit(end)
    micro.stop()
    assert opened == [log]
    assert micro.reported_latest() is None  # a stopped reader reports nothing
    assert micro.next_cut(end).end == end  # a new scan on the next use
    assert opened == [log, log]


def test_a_micro_batch_that_moves_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    micro = batches(stream((Op.INSERT, 10, (1, "a")), (WATERMARK, 10)))
    start = micro.initial_offset()
    with caplog.at_level(logging.INFO, logger="ticdc_sink.read.stream"):
        end = micro.next_cut(start).end
        micro.next_cut(end)  # an empty one: no line
    (line,) = [r.getMessage() for r in caplog.records]
    assert line == (
        "ticdc: micro-batch of topic t planned up to {'t': {'0': 3}}: resolved ts 10, 1 rows, "
        "0 replayed rows dropped"
    )


@pytest.mark.parametrize(
    ("options", "limits"),
    [
        ({}, {}),
        ({"maxOffsetsPerTrigger": "5"}, {"maxOffsetsPerTrigger": 5}),
        ({"minOffsetsPerTrigger": "5"}, {"minOffsetsPerTrigger": 5}),
        (
            {"minOffsetsPerTrigger": "5", "maxTriggerDelay": "30s"},
            {"minOffsetsPerTrigger": 5, "maxTriggerDelay": 30.0},
        ),
    ],
)
def test_the_read_limit_options_given(options: dict[str, str], limits: dict[str, object]) -> None:
    assert read_limits(ReadConfig.from_options({**OPTIONS, **options})) == limits

"""The streaming driver's scan reads row messages by the decoders' peeks (`decode.peek`):
it plans the same micro-batches (ends, resolved ts, rows and replays counted, minPartitions
parts) as when it decodes every message whole, over streams with replays (rows re-sent
below the resolved ts, and identical rows re-sent after the last watermark), for each
protocol with a peek; and of the messages it reads it decodes whole only those that are
not rows. A row whose values do not decode is the task's to meet: it fails naming the
offset, or skips it with on-bad-message=skip."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog, protocol_messages, table
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.codec.choices import EncodingFormat
from ticdc_sink.codec.debezium.decoder import DebeziumDecoder
from ticdc_sink.codec.protocols import build_encoder
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.config import CodecConfig
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range
from ticdc_sink.read.stream import Cut, StreamOffset, StreamScan

USERS = table("users")
PARTITIONS = (0, 1)
#: The protocols with a peek; simple-avro: Simple with encoding-format avro.
PROTOCOLS = ["simple", "simple-avro", "canal-json", "debezium"]
DECODERS = {
    "simple": SimpleDecoder,
    "simple-avro": SimpleDecoder,
    "canal-json": CanalJsonDecoder,
    "debezium": DebeziumDecoder,
}


def _codec(protocol: str) -> CodecConfig:
    if protocol == "simple-avro":
        return CodecConfig(protocol="simple", encoding_format=EncodingFormat.AVRO)
    return CodecConfig(protocol=protocol, enable_tidb_extension=protocol != "simple")


def _messages(protocol: str, items: list[Any], bootstrap: bool = True) -> list[Any]:
    """One partition's records: a BOOTSTRAP (Simple's), then each item, a change or a
    watermark ("w", ts)."""
    codec = _codec(protocol)
    out: list[Any] = []
    first = build_encoder(codec, USERS, build_ts_ms=1, topic="t").encode_bootstrap()
    if bootstrap and first is not None:
        out.append((first.key, first.value))
    for item in items:
        if item[0] == "w":
            out += protocol_messages(codec, USERS, [], watermark=item[1])
        else:
            out += protocol_messages(codec, USERS, [item])
    return out


@st.composite
def streams(draw: Any) -> dict[int, list[Any]]:
    """Each partition's items: transactions with rising commit ts and a watermark to every
    partition after some; now and then a partition re-sends its last items (a TiCDC
    restart: rows at or below the resolved ts, and identical rows after the last
    watermark)."""
    items: dict[int, list[Any]] = {p: [] for p in PARTITIONS}
    key = 0
    for i in range(draw(st.integers(1, 10))):
        ts = 100 + 10 * i
        for p in draw(st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=4)):
            key += 1
            op = draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE]))
            row = (key % 5, f"v{key}")
            new = None if op is Op.DELETE else row
            items[p].append((op, ts, new, None if op is Op.INSERT else row))
        if draw(st.booleans()):
            for p in PARTITIONS:
                items[p].append(("w", ts))
        if draw(st.booleans()):
            p = draw(st.sampled_from(PARTITIONS))
            items[p] += items[p][-draw(st.integers(1, 4)) :]
    return items


def _config(protocol: str, **options: str) -> ReadConfig:
    if protocol == "simple-avro":
        options = {"encoding-format": "avro", **options}
        protocol = "simple"
    return ReadConfig.from_options(
        {
            "kafka.bootstrap.servers": "unused:1",
            "topic": "t",
            "protocol": protocol,
            "enable-tidb-extension": str(protocol != "simple").lower(),
            "startingoffsets": "earliest",
            **options,
        }
    )


def _plan_all(
    config: ReadConfig, log: FakeTopicLog, ends: list[dict[int, int]], limit: int | None
) -> tuple[list[Any], list[Cut]]:
    plan = plan_read(config, log)
    scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
    start = StreamOffset(dict.fromkeys((("t", p) for p in PARTITIONS), 0), {})
    start = StreamOffset(start.offsets, dict.fromkeys(start.offsets, 0))
    planned, cuts = [], []
    for end in ends:
        while True:
            cut = scan.plan(start, {("t", p): o for p, o in end.items()}, limit)
            cuts.append(cut)
            if cut.end == start:
                break
            parts = scan.parts(start, cut.end)
            planned.append((cut.end, cut.resolved_ts, cut.rows, cut.dropped, parts))
            start = cut.end
            scan.forget_before(start)
    return planned, cuts


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=streams(),
    limit=st.none() | st.integers(1, 20),
    consistency=st.sampled_from(["watermark", "none"]),
    replays=st.sampled_from(["drop", "keep"]),
    arrived=st.lists(st.integers(0, 40), min_size=2, max_size=2),
)
def test_the_scan_plans_as_a_scan_that_decodes_every_message(
    protocol: str,
    items: dict[int, list[Any]],
    limit: int | None,
    consistency: str,
    replays: str,
    arrived: list[int],
) -> None:
    log = FakeTopicLog({p: _messages(protocol, found) for p, found in items.items()})
    config = _config(protocol, consistency=consistency, replays=replays, minpartitions="5")
    everything = {p: len(log.records[("t", p)]) for p in PARTITIONS}
    ends = [{p: min(n, everything[p]) for p, n in zip(PARTITIONS, arrived, strict=True)}]
    planned, cuts = _plan_all(config, log, [*ends, everything], limit)
    rows = sum(isinstance(i[0], Op) for found in items.values() for i in found)
    with pytest.MonkeyPatch.context() as patched:
        patched.delattr(DECODERS[protocol], "peek_row")
        whole, whole_cuts = _plan_all(config, log, [*ends, everything], limit)
    assert planned == whole
    # Each message read once; decoded whole: the watermarks and the BOOTSTRAP, no row.
    messages = sum(everything.values())
    assert sum(c.fetched for c in cuts) == sum(c.fetched for c in whole_cuts) == messages
    assert sum(c.decoded for c in whole_cuts) == messages
    assert sum(c.decoded for c in cuts) == messages - rows


def test_a_watermark_every_thousand_rows_is_planned_decoding_one_message_in_a_thousand(
    caplog: pytest.LogCaptureFixture,
) -> None:
    items: list[Any] = []
    for i in range(3):
        items += [(Op.INSERT, 100 + i, (n, "x"), None) for n in range(1000)]
        items.append(("w", 100 + i))
    log = FakeTopicLog({0: _messages("simple", items)})
    config = _config("simple")
    plan = plan_read(config, log)
    scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
    start = StreamOffset({("t", 0): 0}, {("t", 0): 0})
    with caplog.at_level(logging.DEBUG, logger="ticdc_sink.read.stream"):
        cut = scan.plan(start, {("t", 0): len(log.records[("t", 0)])}, None)
    assert (cut.rows, cut.fetched, cut.decoded) == (3000, 3004, 4)  # a BOOTSTRAP, 3 marks
    assert "3000 rows: 3004 messages read, 4 decoded whole" in caplog.text


@pytest.mark.parametrize("skip", [False, True])
def test_a_row_the_peek_reads_and_the_decode_refuses_fails_its_task_or_is_skipped(
    skip: bool,
) -> None:
    # The driver no longer types rows: a value its column refuses is found by the task.
    good = _messages("simple", [(Op.INSERT, 10, (1, "a"), None)])
    bad = good[-1][1].replace(b'"id":"1"', b'"id":"one"')
    log = FakeTopicLog({0: [*good, bad, *_messages("simple", [("w", 10)], bootstrap=False)]})
    config = _config("simple", **({"on-bad-message": "skip"} if skip else {}))
    plan = plan_read(config, log)
    scan = StreamScan(config, plan.table, plan.known, log)  # type: ignore[arg-type]
    cut = scan.plan(StreamOffset({("t", 0): 0}, {("t", 0): 0}), {("t", 0): 4}, None)
    assert cut.end.offsets == {("t", 0): 4} and cut.decoded == 2
    offsets = OffsetRange("t", 0, 0, 4)
    read = read_range(config, plan.table, scan.tables, offsets, log=log, replays=None)
    if not skip:
        with pytest.raises(DecodeError, match="topic t partition 0 offset 2"):
            list(read)
    else:
        assert sum(b.num_rows for b in read) == 1

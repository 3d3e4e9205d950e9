"""A task of packed ranges (`read.scan.read_parts`) gives exactly what its ranges read one
by one give (`read_range`, each with a decoder, builder and replay filter of its own):
the same rows and schema, or the same error, for every protocol, on the column-wise and
the row path and with its small ranges by the row path (as a task reads them), though
the task builds once what its ranges share. What a partition teaches its read stays in
it: a schema from its BOOTSTRAP, its replay filter's resolved ts and rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
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
from ticdc_sink.codec.protocols import build_encoder, decoder_for, protocol_specs
from ticdc_sink.codec.spec import ProtocolSpec
from ticdc_sink.config import CodecConfig
from ticdc_sink.decode import DecoderSettings
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.read import scan
from ticdc_sink.read.decoding import range_decoder
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.replay import replay_filter
from ticdc_sink.read.rows import arrow_schema
from ticdc_sink.read.scan import read_parts, read_range
from ticdc_sink.read.split import Part
from ticdc_sink.schema import TableSchema

USERS = table("users")
ITEMS = table("items", {"name": "varchar(20)", "amount": "decimal(10,2)", "flag": "tinyint"})
_OPTIONS = {"kafka.bootstrap.servers": "unused:1", "topic": "t", "kafka-columns": "true"}
#: protocol -> its read options and its writer's codec config
_PROTOCOLS: dict[str, tuple[dict[str, str], CodecConfig]] = {
    "simple-json": ({"protocol": "simple"}, CodecConfig()),
    "simple-avro": (
        {"protocol": "simple", "encoding-format": "avro"},
        CodecConfig(encoding_format=EncodingFormat.AVRO),
    ),
    "canal-json": (
        {"protocol": "canal-json", "enable-tidb-extension": "true"},
        CodecConfig(protocol="canal-json", enable_tidb_extension=True),
    ),
    "debezium": (
        {"protocol": "debezium", "enable-tidb-extension": "true"},
        CodecConfig(protocol="debezium", enable_tidb_extension=True),
    ),
    "open-protocol": ({"protocol": "open-protocol"}, CodecConfig(protocol="open-protocol")),
    "avro": (
        {"protocol": "avro", "schema-registry": "http://unused:1", "enable-tidb-extension": "true"},
        CodecConfig(protocol="avro", enable_tidb_extension=True),
    ),
}


def _one_by_one(
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    parts: list[Part],
    log: FakeTopicLog,
    **kwargs: Any,
) -> Any:
    """The rows of `parts`, each range read alone as a task of its own reads it (its
    topic's config, a replay filter of its own): a table, or the error's type and text."""

    def batches() -> Iterator[pa.RecordBatch]:
        for offsets, resolved_ts in parts:
            yield from read_range(
                config.for_topic(offsets.topic),
                output,
                known,
                offsets,
                log=log,
                replays=replay_filter(config, resolved_ts),
                **kwargs,
            )

    return _outcome(config, output, batches)


def _packed(
    config: ReadConfig,
    output: TableSchema,
    known: tuple[TableSchema, ...],
    parts: list[Part],
    log: FakeTopicLog,
    **kwargs: Any,
) -> Any:
    return _outcome(
        config,
        output,
        lambda: read_parts(config, output, known, tuple(parts), log=log, **kwargs),  # type: ignore[arg-type]
    )


def _outcome(
    config: ReadConfig, output: TableSchema, read: Callable[[], Iterator[pa.RecordBatch]]
) -> Any:
    """`read`'s batches as a table, or its error's type and text."""
    try:
        batches = list(read())
    except Exception as exc:  # noqa: BLE001 (compared)
        return type(exc), str(exc)
    return _table(config, output, batches)


def _table(config: ReadConfig, output: TableSchema, batches: list[pa.RecordBatch]) -> pa.Table:
    schema = arrow_schema(output, kafka_columns=config.kafka_columns, headers=False)
    for batch in batches:
        assert batch.schema.equals(schema, check_metadata=True)
    return pa.Table.from_batches(batches, schema)


def _same(left: Any, right: Any) -> None:
    if isinstance(left, pa.Table) and isinstance(right, pa.Table):
        assert left.equals(right, check_metadata=True)
    else:
        assert left == right


def _changes(data: st.DataObject, first_key: int, ts: int, least: int) -> list[tuple]:
    """At least `least` changes of ITEMS from commit ts `ts` on, those first INSERTs (an
    avro DELETE carries no schema to find)."""
    changes: list[tuple] = []
    for key in range(first_key, first_key + data.draw(st.integers(least, 4), label="rows")):
        row = (key, f"n{key}", f"{key}.25", key % 100)
        op = Op.INSERT if len(changes) < least else data.draw(st.sampled_from(Op), label="op")
        if op is Op.INSERT:
            changes.append((op, ts, row, None))
        elif op is Op.UPDATE:
            changes.append((op, ts, row, (key, "old", "0.50", None)))
        else:
            changes.append((op, ts, None, row))
        ts += data.draw(st.integers(0, 1), label="next ts")
    return changes


#: How a packed task reads its ranges -> read_parts' `columnwise`, and the offsets from
#: which a range is read column-wise (`scan.COLUMNWISE_OFFSETS`).
_PATHS = {
    "column-wise": (True, 0),
    "small ranges by rows": (True, scan.COLUMNWISE_OFFSETS),
    "row path": (False, 0),
}


@pytest.mark.parametrize("protocol", sorted(_PROTOCOLS))
@pytest.mark.parametrize("path", sorted(_PATHS))
@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), count=st.integers(1, 4))
def test_a_packed_task_reads_what_its_ranges_read_alone(
    protocol: str, path: str, data: st.DataObject, count: int, monkeypatch: Any
) -> None:
    columnwise, from_offsets = _PATHS[path]
    monkeypatch.setattr(scan, "COLUMNWISE_OFFSETS", from_offsets)
    options, codec = _PROTOCOLS[protocol]
    registry = FakeRegistry()
    partitions: dict[int, list[Any]] = {}
    key = 0
    for partition in range(count):
        changes = _changes(data, key, 100 + partition, least=int(partition == 0))
        key += len(changes)
        # A replay now and then: TiCDC sends a partition's last rows again.
        if changes and data.draw(st.booleans(), label="replay"):
            changes += changes[data.draw(st.integers(0, len(changes) - 1), label="back") :]
        if codec.protocol == "simple":  # its schema in a BOOTSTRAP before the rows
            boot = build_encoder(codec, ITEMS, build_ts_ms=1).encode_bootstrap()
            assert boot is not None
            entries = [(None, boot.value), *protocol_messages(codec, ITEMS, changes, watermark=200)]
        else:
            entries = protocol_messages(codec, ITEMS, changes, watermark=200, registry=registry)
        partitions[partition] = entries
    log = FakeTopicLog(partitions)
    config = ReadConfig.from_options({**_OPTIONS, **options})
    lookup = registry.schema_text
    plan = plan_read(config, log, schema_for_id=lookup)
    # Any cut of each range: the parts of split ranges, with any resolved ts before them.
    parts: list[Part] = []
    for offsets in plan.ranges:
        cut = data.draw(st.integers(offsets.start, offsets.end), label="cut")
        ts = data.draw(st.sampled_from([0, 100, 150]), label="resolved ts")
        for start, end in ((offsets.start, cut), (cut, offsets.end)):
            if start < end:
                parts.append((OffsetRange(offsets.topic, offsets.partition, start, end), ts))
    parts = data.draw(st.permutations(parts), label="order")
    kwargs = {"schema_for_id": lookup, "columnwise": columnwise}
    expected = _one_by_one(config, plan.table, plan.known, parts, log, **kwargs)
    _same(_packed(config, plan.table, plan.known, parts, log, **kwargs), expected)


def _bootstrap_elsewhere() -> FakeTopicLog:
    """Partition 0 holds a BOOTSTRAP of users version 2 and a row of it; partition 1 a row
    of version 2 without its BOOTSTRAP (sent before the read's start)."""
    v2 = table("users", version=2)
    return FakeTopicLog(
        {
            0: simple_messages(v2, []) + simple_stream(v2, [(Op.INSERT, 10, (1, "a"))]),
            1: simple_stream(v2, [(Op.INSERT, 11, (2, "b"))]),
        }
    )


@pytest.mark.parametrize("columnwise", [True, False], ids=["column-wise", "row path"])
def test_a_schema_one_partition_teaches_stays_out_of_the_next_ones_read(
    columnwise: bool,
) -> None:
    log = _bootstrap_elsewhere()
    config = ReadConfig.from_options(_OPTIONS)
    output = plan_read(config, log).table  # version 2, from partition 0's BOOTSTRAP
    known = ()  # as a driver that did not read partition 0's BOOTSTRAP
    parts: list[Part] = [(OffsetRange("t", 0, 0, 2), 0), (OffsetRange("t", 1, 0, 1), 0)]
    alone = _one_by_one(config, output, known, parts, log, columnwise=columnwise)
    assert alone[0] is DecodeError
    assert alone[1].startswith(
        "ticdc: topic t partition 1 offset 0: no schema of db.users version 2 came before"
    )
    assert _packed(config, output, known, parts, log, columnwise=columnwise) == alone
    # Partition 1 first: the same error; partition 0 alone reads its row.
    assert _packed(config, output, known, parts[::-1], log, columnwise=columnwise) == alone
    first = _packed(config, output, known, parts[:1], log, columnwise=columnwise)
    assert first.column("id").to_pylist() == [1]


@pytest.mark.parametrize("columnwise", [True, False], ids=["column-wise", "row path"])
def test_each_partition_keeps_its_own_replay_filter(columnwise: bool) -> None:
    # Partition 0 met watermark 20: its row at 15 is a replay. Partition 1 met none, and
    # its row at 15 is new; its row identical to partition 0's at 30 is new there too.
    same = (Op.INSERT, 30, (9, "same"))
    log = FakeTopicLog(
        {
            0: simple_messages(USERS, [])
            + simple_stream(USERS, [(WATERMARK, 20), (Op.INSERT, 15, (1, "old")), same]),
            1: simple_messages(USERS, [])
            + simple_stream(USERS, [(Op.INSERT, 15, (2, "new")), same, same]),
        }
    )
    config = ReadConfig.from_options(_OPTIONS)
    plan = plan_read(config, log)
    parts: list[Part] = [(r, 0) for r in plan.ranges]
    packed = _packed(config, plan.table, plan.known, parts, log, columnwise=columnwise)
    assert packed.column("id").to_pylist() == [9, 2, 9]  # partition 1's own replay dropped
    _same(packed, _one_by_one(config, plan.table, plan.known, parts, log, columnwise=columnwise))
    # A part of partition 0 after its watermark starts with the resolved ts before it.
    later: list[Part] = [(OffsetRange("t", 0, 2, 4), 20), parts[1]]
    assert _packed(config, plan.table, plan.known, later, log).column("id").to_pylist() == [
        9,
        2,
        9,
    ]


def test_a_task_over_two_topics_reads_each_range_with_its_topics_config() -> None:
    boot = simple_messages(USERS, [])
    log = FakeTopicLog.of_topics(
        {
            "a": {0: boot + simple_stream(USERS, [(Op.INSERT, 10, (1, "x"))])},
            "b": {0: boot + simple_stream(USERS, [(Op.INSERT, 10, (2, "y"))])},
        }
    )
    config = ReadConfig.from_options({**_OPTIONS, "topic": "a,b"})
    plan = plan_read(config, log)
    parts: list[Part] = [(r, 0) for r in plan.ranges]
    packed = _packed(config, plan.table, plan.known, parts, log)
    assert packed.select(["_topic", "id"]).to_pylist() == [
        {"_topic": "a", "id": 1},
        {"_topic": "b", "id": 2},
    ]
    _same(packed, _one_by_one(config, plan.table, plan.known, parts, log))


@pytest.mark.parametrize("spec", protocol_specs(), ids=lambda spec: spec.name)
def test_a_range_copies_a_decoder_that_learns_tables_and_shares_any_other(
    spec: ProtocolSpec,
) -> None:
    prepared = decoder_for(spec.name, DecoderSettings(schema_for_id=FakeRegistry().schema_text))
    decoder = range_decoder(prepared)
    if not hasattr(prepared, "add_table"):
        assert decoder is prepared
        return
    # A copy knows what the prepared decoder knows; what it learns stays its own.
    prepared.add_table(USERS)  # type: ignore[attr-defined]
    first, second = range_decoder(prepared), range_decoder(prepared)
    first.add_table(table("items"))  # type: ignore[attr-defined]
    for copied in (first, second):
        assert copied.table("db", "users", 1) == USERS  # type: ignore[attr-defined]
    assert first.table("db", "items", 1) is not None  # type: ignore[attr-defined]
    assert second.table("db", "items", 1) is None  # type: ignore[attr-defined]
    assert prepared.table("db", "items", 1) is None  # type: ignore[attr-defined]

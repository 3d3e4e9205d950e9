"""The column-wise read of avro (Confluent) topics (`codec.avro.read_columns.AvroRun`, runs of
records in `read_range`) gives exactly what the row path gives (`read_range(...,
columnwise=False)`: `AvroDecoder.decode_message` per record): the same Arrow table and
batch sizes, or the same error naming topic, partition and offset, the same messages
skipped under `on-bad-message=skip`; over tables of every MySQL type the avro writer
supports, written with and without the TiDB extension, before values, row checksums, each
decimal and unsigned-bigint mode, with tombstones, bad and altered messages and a schema
of other columns among them; read in consume calls of any number of messages, with the
replays below a resolved ts dropped."""

from __future__ import annotations

import logging
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.column_path import assert_same_outcome, read_outcome, with_headers
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog
from tests.support.schemas import ALL_TYPES_TABLE
from tests.support.strategies import all_types_rows
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.codec.avro.read_columns import AvroRun
from ticdc_sink.codec.protocols import build_encoder
from ticdc_sink.config import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CodecConfig,
    IntegrityCheckLevel,
)
from ticdc_sink.events import Op, RowChange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.read.replay import ReplayFilter, replay_filter
from ticdc_sink.schema import TableSchema

Entry = tuple[bytes | None, bytes | None]


@st.composite
def tables(draw: Any) -> TableSchema:
    """`ALL_TYPES_TABLE` or a table of some of its columns (always the key `id`)."""
    others = [c for c in ALL_TYPES_TABLE.columns if c.name != "id"]
    chosen = draw(st.lists(st.sampled_from(others), unique_by=lambda c: c.name, max_size=8))
    keep = {"id", *(c.name for c in (others if draw(st.booleans()) else chosen))}
    columns = tuple(c for c in ALL_TYPES_TABLE.columns if c.name in keep)
    return attrs.evolve(ALL_TYPES_TABLE, columns=columns)


@st.composite
def codecs(draw: Any, table: TableSchema) -> CodecConfig:
    extension = draw(st.booleans())
    codec = CodecConfig(
        protocol="avro",
        enable_tidb_extension=extension,
        avro_include_before_value=draw(st.booleans()),
        avro_decimal_handling_mode=draw(st.sampled_from(list(AvroDecimalHandling))),
        avro_bigint_unsigned_handling_mode=draw(st.sampled_from(list(AvroBigintUnsignedHandling))),
    )
    if extension and "v" not in table.column_names and draw(st.booleans()):
        codec = attrs.evolve(  # TiCDC writes checksums with both modes string only
            codec,
            integrity_check_level=IntegrityCheckLevel.CORRECTNESS,
            avro_decimal_handling_mode=AvroDecimalHandling.STRING,
            avro_bigint_unsigned_handling_mode=AvroBigintUnsignedHandling.STRING,
        )
    return codec


def _altered(data: Any, entry: Entry) -> Entry:
    """A record with a byte of its key or value changed, cut short, or grown by one."""
    key, value = entry
    which = data.draw(st.sampled_from(["key", "value"] if key and value else ["value"]))
    body = bytearray((key if which == "key" else value) or b"\x00")
    how = data.draw(st.sampled_from(["byte", "short", "long", "id"]))
    if how == "byte":
        at = data.draw(st.integers(0, len(body) - 1))
        body[at] = data.draw(st.integers(0, 255))
    elif how == "short":
        del body[-1]
    elif how == "long":
        body.append(data.draw(st.integers(0, 255)))
    else:
        body[1:5] = data.draw(st.integers(0, 9)).to_bytes(4, "big")
    altered = bytes(body)
    return (altered, value) if which == "key" else (key, altered)


def _stream(data: Any, registry: FakeRegistry) -> list[Entry]:
    """A partition of avro records: rows of a table, tombstones among them, then now and
    then a bad or altered record, or a row of the same table with a column less."""
    table = data.draw(tables())
    codec = data.draw(codecs(table))
    encoder = build_encoder(codec, table, build_ts_ms=1, topic="t", registry=registry)
    rows = all_types_rows(table)
    entries: list[Entry] = []
    ts = 100
    for _ in range(data.draw(st.integers(1, 30))):
        ts += data.draw(st.integers(0, 2))
        kind = data.draw(st.sampled_from(["row"] * 16 + ["bad", "altered", "narrower"]))
        if kind == "bad":
            entries.append(data.draw(st.sampled_from([(None, None), (b"k", b"v"), (None, b"")])))
            continue
        op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE]))
        row = data.draw(rows)
        before = None
        if op is Op.UPDATE:  # with before values an UPDATE must have its old row
            before = data.draw(rows if codec.avro_include_before_value else st.none() | rows)
        if op is Op.DELETE:
            row, before = None, row
        writer, schema = encoder, table
        if kind == "narrower" and len(table.columns) > 1:
            schema = attrs.evolve(table, columns=table.columns[:-1])
            writer = build_encoder(codec, schema, build_ts_ms=1, topic="t", registry=registry)
            row = None if row is None else row[:-1]
            before = None if before is None else before[:-1]
        message = writer.encode_row(RowChange(schema, op, ts, row, before))
        entry = (message.key, message.value)
        entries.append(_altered(data, entry) if kind == "altered" else entry)
    return entries


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options(
        {
            "kafka.bootstrap.servers": "unused:1",
            "topic": "t",
            "protocol": "avro",
            "schema-registry": "http://unused:1",
            **options,
        }
    )


@pytest.mark.parametrize("skip", [False, True], ids=["fail", "on-bad-message=skip"])
@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_column_wise_read_gives_what_the_row_path_gives(
    skip: bool, data: Any, caplog: pytest.LogCaptureFixture
) -> None:
    registry = FakeRegistry()
    entries = _stream(data, registry)
    options = {}
    if data.draw(st.booleans()):
        options["kafka-columns"] = "true"
    if data.draw(st.booleans()):
        options["includeHeaders"] = "true"
    if skip:
        options["on-bad-message"] = "skip"
    config = _config(**options)
    batch_rows = data.draw(st.sampled_from([1, 3, 10_000]))
    chunk = data.draw(st.sampled_from([1, 2, 5, 500]))  # messages a consume call gives
    resolved_ts = data.draw(st.sampled_from([0, 105, 120]))  # the rows' commit ts: 100..
    outcomes, logs = [], []
    for columnwise in (False, True):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="ticdc_sink"):
            log = with_headers(FakeTopicLog({0: list(entries)}))
            log.chunk = chunk
            outcomes.append(
                read_outcome(
                    config,
                    log,
                    schema_for_id=registry.schema_text,
                    batch_rows=batch_rows,
                    columnwise=columnwise,
                    replays=replay_filter(config, resolved_ts),
                )
            )
        logs.append([r.getMessage() for r in caplog.records])
    assert_same_outcome(*outcomes)
    assert logs[0] == logs[1]  # the skipped messages: how many, and the first


def _run(codec: CodecConfig, table: TableSchema, changes: list[RowChange]) -> AvroRun:
    registry = FakeRegistry()
    encoder = build_encoder(codec, table, build_ts_ms=1, topic="t", registry=registry)
    decoder = AvroDecoder(registry.schema_text)
    run = AvroRun(
        decoder.writer_schema, table, selected=lambda d, t: True, kafka_columns=False, topic="t"
    )
    messages = [encoder.encode_row(change) for change in changes]
    records = [Record(0, offset, m.key, m.value, None) for offset, m in enumerate(messages)]
    assert run.extend(records, 0, len(records)) == len(records)  # every record fits
    return run


@pytest.mark.parametrize("decimal", list(AvroDecimalHandling))
@pytest.mark.parametrize("unsigned", list(AvroBigintUnsignedHandling))
@pytest.mark.parametrize("before", [False, True], ids=["", "before-value"])
def test_writer_rows_of_every_type_are_read_column_wise(
    decimal: AvroDecimalHandling, unsigned: AvroBigintUnsignedHandling, before: bool
) -> None:
    # Guards the test above: without runs it would compare the row path with itself.
    codec = CodecConfig(
        protocol="avro",
        enable_tidb_extension=True,
        avro_include_before_value=before,
        avro_decimal_handling_mode=decimal,
        avro_bigint_unsigned_handling_mode=unsigned,
    )
    row = (1, -1, 255, 7, 9, -5, 6, -(1 << 63), (1 << 64) - 1, 1.5, 2.25, "12.50000", "7")
    row += (5, "vc", "tx", b"bn", b"bl", 2, 5, '{"a": 1}', "2024-01-02", "2024-01-02 03:04:05.678")
    row += ("2024-01-02 03:04:05", "-12:00:00", 2024, "[1,2,3]")
    changes = [
        RowChange(ALL_TYPES_TABLE, Op.INSERT, 10, row, None),
        RowChange(ALL_TYPES_TABLE, Op.UPDATE, 11, row, row),
        RowChange(ALL_TYPES_TABLE, Op.DELETE, 12, None, row),
    ]
    records, batch = _run(codec, ALL_TYPES_TABLE, changes).take()
    assert batch is not None and batch.num_rows == 3 and records == []
    got = batch.to_pylist()
    assert [r["_op"] for r in got] == ["INSERT", "UPDATE", "DELETE"]
    assert [r["_commit_ts"] for r in got] == [10, 11, 0 if not before else 12]
    assert got[0]["biu"] == (1 << 64) - 1 and got[0]["e"] == "b" and got[0]["s"] == "a,c"
    assert (got[1]["_before"] is not None) == before
    assert got[2]["id"] == 1


def test_a_checksum_leaves_the_run_to_the_row_path() -> None:
    codec = CodecConfig(
        protocol="avro",
        enable_tidb_extension=True,
        integrity_check_level=IntegrityCheckLevel.CORRECTNESS,
        avro_decimal_handling_mode=AvroDecimalHandling.STRING,
        avro_bigint_unsigned_handling_mode=AvroBigintUnsignedHandling.STRING,
    )
    table = attrs.evolve(ALL_TYPES_TABLE, columns=ALL_TYPES_TABLE.columns[:3])
    run = _run(codec, table, [RowChange(table, Op.INSERT, 10, (1, 2, 3), None)])
    records, batch = run.take()
    # The run's records back, as the row path takes them.
    assert batch is None and [(type(r), r.offset) for r in records] == [(Record, 0)]


def test_replays_are_dropped_by_commit_ts() -> None:
    codec = CodecConfig(protocol="avro", enable_tidb_extension=True)
    table = attrs.evolve(ALL_TYPES_TABLE, columns=ALL_TYPES_TABLE.columns[:3])
    changes = [RowChange(table, Op.INSERT, ts, (ts, 2, 3), None) for ts in (10, 11, 12)]
    replays = ReplayFilter(11, identical=True)
    _, batch = _run(codec, table, changes).take(replays.admit_commit_ts_each)
    assert batch is not None and batch.column("_commit_ts").to_pylist() == [12]
    assert (replays.rows, replays.dropped) == (1, 2)

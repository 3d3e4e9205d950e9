"""The column-wise read of canal-json topics (`codec.canal_json.read_columns.CanalJsonRun`,
runs of records in `read_range`) gives exactly what the row path gives (`read_range(...,
columnwise=False)`: `CanalJsonDecoder.decode_message` per record): the same Arrow table
and batch sizes, or the same error naming topic, partition and offset, the same messages
skipped under `on-bad-message=skip`, the same replays dropped; over tables of every MySQL
type, written with and without the TiDB extension, content-compatible,
only-output-updated-columns and handle-key-only DELETEs, with watermarks, DDL, bad
messages, values and type entries changed, and rows of other columns among them; read
in consume calls of any number of messages."""

from __future__ import annotations

import logging
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.column_path import assert_same_outcome, read_outcome, with_headers
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog
from tests.support.schemas import ALL_TYPES_TABLE
from tests.support.strategies import all_types_rows
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.codec.canal_json.read_columns import CanalJsonRun
from ticdc_sink.codec.compression import Compression
from ticdc_sink.codec.config import CodecConfig
from ticdc_sink.codec.protocols import build_encoder, encode_watermark
from ticdc_sink.events import Op, RowChange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.read.replay import ReplayFilter
from ticdc_sink.read.scan import RecordRunDecoder
from ticdc_sink.schema import TableSchema

Entry = tuple[bytes | None, bytes | None]
# Values no column takes as they are, or takes only one by one: other JSON types, number
# texts Go never writes (Arrow alone would take some), out of range, DECIMAL texts whose
# Decimal prints otherwise, a character beyond ISO-8859-1.
ODD_VALUES: list[Any] = ["x", "0x10", "+1", " 1", "1e2", "99999999999999999999999", "", "-0"]
ODD_VALUES += ["007.50", "0.0000001", "1E5", "-0.00", "1.5", "3.4e39", "nan", "\u0100"]
ODD_VALUES += [7, 1.5, True, [], {"a": 1}]


@st.composite
def tables(draw: Any) -> TableSchema:
    """`ALL_TYPES_TABLE` or a table of some of its columns (always the key `id`)."""
    others = [c for c in ALL_TYPES_TABLE.columns if c.name != "id"]
    chosen = draw(st.lists(st.sampled_from(others), unique_by=lambda c: c.name, max_size=8))
    keep = {"id", *(c.name for c in (others if draw(st.booleans()) else chosen))}
    columns = tuple(c for c in ALL_TYPES_TABLE.columns if c.name in keep)
    return attrs.evolve(ALL_TYPES_TABLE, columns=columns)


@st.composite
def codecs(draw: Any) -> CodecConfig:
    return CodecConfig(
        protocol="canal-json",
        enable_tidb_extension=draw(st.booleans()),
        content_compatible=draw(st.booleans()),
        only_output_updated_columns=draw(st.booleans()),
        delete_only_output_handle_key_columns=draw(st.integers(0, 4)) == 0,
    )


def _changed(data: Any, value: bytes) -> bytes:
    """A row message with a value, a type entry or an image changed."""
    message = orjson.loads(value)
    how = data.draw(st.sampled_from(["value", "value", "type", "old", "kind", "bytes"]))
    image = message["data"][0]
    name = data.draw(st.sampled_from(sorted(image)))
    if how == "value":
        image[name] = data.draw(st.sampled_from(ODD_VALUES))
    elif how == "type":
        entries = message[data.draw(st.sampled_from(["mysqlType", "sqlType"]))] or {}
        entries[name] = data.draw(st.sampled_from([None, 5, "x", "varchar", "decimal", "bit"]))
        if entries[name] is None:
            del entries[name]
    elif how == "old":
        message["old"] = data.draw(st.sampled_from([None, [], [{"zz": "1"}], [{name: "1"}]]))
    elif how == "kind":
        message["type"] = data.draw(st.sampled_from(["INSERT", "UPDATE", "DELETE", "QUERY"]))
    else:
        return value[: data.draw(st.integers(0, len(value) - 1))]
    return orjson.dumps(message)


def _stream(data: Any) -> list[Entry]:
    """A partition of canal-json messages: rows of a table with watermarks and DDL among
    them, now and then a bad or changed message, or a row of the table with a column less."""
    table = data.draw(tables())
    codec = data.draw(codecs())
    encoder = build_encoder(codec, table, build_ts_ms=1, topic="t")
    rows = all_types_rows(table)
    entries: list[Entry] = []
    ts = 100
    for _ in range(data.draw(st.integers(1, 30))):
        ts += data.draw(st.integers(0, 2))
        kind = data.draw(
            st.sampled_from(["row"] * 14 + ["watermark", "bad", "changed", "narrower"])
        )
        if kind == "bad":
            entries.append(data.draw(st.sampled_from([(None, None), (None, b"v"), (None, b"")])))
            continue
        if kind == "watermark":
            mark = encode_watermark(codec, ts, build_ts_ms=1)
            if mark is not None:
                entries.append((mark.key, mark.value))
            continue
        op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE]))
        row, before = data.draw(rows), data.draw(rows)
        if op is Op.INSERT:
            before = None
        elif op is Op.DELETE:
            row = None
        writer, schema = encoder, table
        if kind == "narrower" and len(table.columns) > 1:
            schema = attrs.evolve(table, columns=table.columns[:-1])
            writer = build_encoder(codec, schema, build_ts_ms=1, topic="t")
            row = None if row is None else row[:-1]
            before = None if before is None else before[:-1]
        message = writer.encode_row(RowChange(schema, op, ts, row, before))
        assert message.value is not None
        value = _changed(data, message.value) if kind == "changed" else message.value
        entries.append((message.key, value))
    return entries


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options(
        {"kafka.bootstrap.servers": "unused:1", "topic": "t", "protocol": "canal-json", **options}
    )


@pytest.mark.parametrize("skip", [False, True], ids=["fail", "on-bad-message=skip"])
@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_column_wise_read_gives_what_the_row_path_gives(
    skip: bool, data: Any, caplog: pytest.LogCaptureFixture
) -> None:
    entries = _stream(data)
    options = {}
    if data.draw(st.booleans()):
        options["kafka-columns"] = "true"
    if data.draw(st.booleans()):
        options["includeHeaders"] = "true"
    if data.draw(st.booleans()):
        options["replays"] = "keep"
    if skip:
        options["on-bad-message"] = "skip"
    config = _config(**options)
    batch_rows = data.draw(st.sampled_from([1, 3, 10_000]))
    chunk = data.draw(st.sampled_from([1, 2, 5, 500]))  # messages a consume call gives
    outcomes, logs = [], []
    for columnwise in (False, True):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="ticdc_sink"):
            log = with_headers(FakeTopicLog({0: list(entries)}))
            log.chunk = chunk
            outcomes.append(read_outcome(config, log, batch_rows=batch_rows, columnwise=columnwise))
        logs.append([r.getMessage() for r in caplog.records])
    assert_same_outcome(*outcomes)
    assert logs[0] == logs[1]  # the skipped messages and replays: how many, and the first


def _run(codec: CodecConfig, table: TableSchema, changes: list[RowChange]) -> CanalJsonRun:
    encoder = build_encoder(codec, table, build_ts_ms=1, topic="t")
    run = CanalJsonRun(
        table,
        compression=Compression.NONE,
        selected=lambda d, t: True,
        kafka_columns=False,
        topic="t",
    )
    for offset, change in enumerate(changes):
        message = encoder.encode_row(change)
        record = Record(0, offset, message.key, message.value, None)
        assert run.fits(record)
        run.add(record)
    return run


ROW = (1, -1, 255, 7, 9, -5, 6, -(1 << 63), (1 << 64) - 1, 1.5, 2.25, "12.50000", "7")
ROW += (5, "vc", "tx", b"bn", b"bl", 2, 5, '{"a": 1}', "2024-01-02", "2024-01-02 03:04:05.678")
ROW += ("2024-01-02 03:04:05", "-12:00:00", 2024, "[1,2,3]")


@pytest.mark.parametrize("content_compatible", [False, True], ids=["", "content-compatible"])
def test_writer_rows_of_every_type_are_read_column_wise(content_compatible: bool) -> None:
    # Guards the test above: without runs it would compare the row path with itself.
    codec = CodecConfig(
        protocol="canal-json", enable_tidb_extension=True, content_compatible=content_compatible
    )
    decoder = CanalJsonDecoder()
    table = decoder.row_table(
        None,
        build_encoder(codec, ALL_TYPES_TABLE, build_ts_ms=1, topic="t")
        .encode_row(RowChange(ALL_TYPES_TABLE, Op.INSERT, 10, ROW, None))
        .value,
    )
    assert table is not None
    changes = [
        RowChange(ALL_TYPES_TABLE, Op.INSERT, 10, ROW, None),
        RowChange(ALL_TYPES_TABLE, Op.UPDATE, 11, ROW, ROW),
        RowChange(ALL_TYPES_TABLE, Op.DELETE, 12, None, ROW),
    ]
    records, batch = _run(codec, table, changes).take()
    assert batch is not None and batch.num_rows == 3 and records == []
    got = batch.to_pylist()
    assert [r["_op"] for r in got] == ["INSERT", "UPDATE", "DELETE"]
    assert [r["_commit_ts"] for r in got] == [10, 11, 12]
    assert got[1]["_before"] is not None and got[2]["id"] == 1


def test_the_decoder_offers_its_run() -> None:
    assert isinstance(CanalJsonDecoder(), RecordRunDecoder)


def test_replays_are_dropped_by_commit_ts() -> None:
    codec = CodecConfig(protocol="canal-json", enable_tidb_extension=True)
    table = attrs.evolve(ALL_TYPES_TABLE, columns=ALL_TYPES_TABLE.columns[:3])
    changes = [RowChange(table, Op.INSERT, ts, (ts, 2, 3), None) for ts in (10, 11, 12)]
    replays = ReplayFilter(11, identical=True)
    _, batch = _run(codec, table, changes).take(replays.admit_commit_ts_each)
    assert batch is not None and batch.column("_commit_ts").to_pylist() == [12]
    assert (replays.rows, replays.dropped) == (1, 2)

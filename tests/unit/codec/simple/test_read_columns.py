"""The column-wise read of Simple rows, JSON and Avro (`SimpleRun` of
`codec/simple/read_columns.py`, runs of plain rows in `read_range`) gives exactly what the
row path gives (`read_range(..., columnwise=False)`, a `DecodedRow` per message): the same
Arrow table (values, nulls, types, field metadata) and the same batch sizes, or the same
error naming topic, partition and offset, the same messages skipped under
`on-bad-message=skip`, and row checksum mismatches still caught; over tables of every
MySQL type the writer supports and INSERT/UPDATE/DELETE streams with watermarks, DDL and
bad messages among them."""

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
from ticdc_sink.codec.protocols import build_encoder, decoder_for, encode_ddl, encode_watermark
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.config import CodecConfig, EncodingFormat, IntegrityCheckLevel
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.replay import replay_filter
from ticdc_sink.read.scan import ColumnwiseDecoder
from ticdc_sink.schema import TableSchema

PLAIN = CodecConfig()
CHECKED = CodecConfig(integrity_check_level=IntegrityCheckLevel.CORRECTNESS)
# Raw JSON values that no column takes as they are: wrong JSON types, numbers in forms
# Go never writes (Arrow alone would take "0x10"), out of range, not base64.
ODD_VALUES = ["x", "0x10", "+1", " 1", "1e2", "99999999999999999999999", "", 7, 1.5, True, []]


@st.composite
def tables(draw: Any) -> TableSchema:
    """`ALL_TYPES_TABLE` or a table of some of its columns (always the key `id`)."""
    others = [c for c in ALL_TYPES_TABLE.columns if c.name != "id"]
    chosen = draw(st.lists(st.sampled_from(others), unique_by=lambda c: c.name, max_size=8))
    keep = {"id", *(c.name for c in (others if draw(st.booleans()) else chosen))}
    columns = tuple(c for c in ALL_TYPES_TABLE.columns if c.name in keep)
    return attrs.evolve(ALL_TYPES_TABLE, columns=columns)


def _tampered(value: bytes, data: Any) -> bytes:
    """A row message with one value replaced by an odd one."""
    message = orjson.loads(value)
    image = message.get("data") or message.get("old")
    name = data.draw(st.sampled_from(sorted(image)))
    image[name] = data.draw(st.sampled_from(ODD_VALUES))
    return orjson.dumps(message)


def _stream(data: Any, table: TableSchema, encoding: str) -> list[bytes | None]:
    """A partition: BOOTSTRAP, then rows with watermarks, DDL (a new schema version of the
    same columns), checksummed rows and bad messages among them."""
    checkable = "v" not in table.column_names  # the checksum covers no VECTOR
    plain = attrs.evolve(PLAIN, encoding_format=EncodingFormat(encoding))
    checked = attrs.evolve(CHECKED, encoding_format=EncodingFormat(encoding))
    codec = data.draw(st.sampled_from([plain, checked] if checkable else [plain]))
    encoder = build_encoder(codec, table, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None
    values: list[bytes | None] = [bootstrap.value]
    ts = 100
    rows = all_types_rows(table)
    for _ in range(data.draw(st.integers(0, 30))):
        ts += data.draw(st.integers(0, 2))
        kind = data.draw(
            st.sampled_from(["row"] * 16 + ["watermark", "ddl", "checked", "bad", "odd"])
        )
        if kind == "watermark":
            mark = encode_watermark(plain, ts, build_ts_ms=1)
            assert mark is not None
            values.append(mark.value)
            continue
        if kind == "ddl":
            table = attrs.evolve(table, version=table.version + 1)
            values.append(
                encode_ddl(plain, table, None, "ALTER", commit_ts=ts, build_ts_ms=1).value
            )
            encoder = build_encoder(codec, table, build_ts_ms=1)
            continue
        if kind == "bad":
            values.append(data.draw(st.sampled_from([b"not json", None, b"[]", b'{"version":1}'])))
            continue
        op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE]))
        row = data.draw(rows)
        before = data.draw(st.none() | rows) if op is Op.UPDATE else None
        if op is Op.DELETE:
            row, before = None, row
        with_checksum = kind == "checked" and checkable
        row_encoder = build_encoder(checked, table, build_ts_ms=1) if with_checksum else encoder
        value = row_encoder.encode_row(RowChange(table, op, ts, row, before)).value
        if kind == "odd":
            value = _tampered(value, data) if encoding == "json" else value[:-1]
        values.append(value)
    return values


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t", **options})


def _both_ways(
    config: ReadConfig,
    log: FakeTopicLog,
    caplog: pytest.LogCaptureFixture,
    *,
    level: int = logging.WARNING,
    batch_rows: int = 10_000,
) -> tuple[list[Any], list[list[str]]]:
    """The outcome of reading `log` by the row path, then column-wise (each range with a
    replay filter, as a task reads it), and what each logged at `level` or above."""
    outcomes, logs = [], []
    for columnwise in (False, True):
        caplog.clear()
        with caplog.at_level(level, logger="ticdc_sink"):
            outcomes.append(
                read_outcome(
                    config,
                    log,
                    batch_rows=batch_rows,
                    columnwise=columnwise,
                    replays=replay_filter(config),
                )
            )
        logs.append([r.getMessage() for r in caplog.records])
    return outcomes, logs


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("skip", [False, True], ids=["fail", "on-bad-message=skip"])
@settings(
    max_examples=examples(60),
    deadline=None,
    # caplog is cleared before each read
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_column_wise_read_gives_what_the_row_path_gives(
    encoding: str, skip: bool, data: Any, caplog: pytest.LogCaptureFixture
) -> None:
    table = data.draw(tables())
    values = _stream(data, table, encoding)
    options = {"encoding-format": encoding}
    if data.draw(st.booleans()):
        options["kafka-columns"] = "true"
    if data.draw(st.booleans()):
        options["includeHeaders"] = "true"
    if skip:
        options["on-bad-message"] = "skip"
    config = _config(**options)
    batch_rows = data.draw(st.sampled_from([1, 3, 10_000]))
    outcomes, logs = _both_ways(
        config, with_headers(FakeTopicLog({0: values})), caplog, batch_rows=batch_rows
    )
    assert_same_outcome(*outcomes)
    assert logs[0] == logs[1]  # the skipped messages: how many, and the first


@pytest.mark.parametrize("skip", [False, True], ids=["fail", "on-bad-message=skip"])
def test_a_replay_whose_values_do_not_decode_is_a_bad_message_as_on_the_row_path(
    skip: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # The column-wise read drops a replay before typing its values; the row path decodes
    # first. A replayed row (commit ts at the watermark) with a value its column refuses
    # fails both reads at its offset, or is skipped by both and counted as a bad message,
    # not as a replay (found by the test above: 6 messages skipped against 5).
    encoder = build_encoder(PLAIN, ALL_TYPES_TABLE, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None
    key_only = (1,) + (None,) * (len(ALL_TYPES_TABLE.columns) - 1)
    row = encoder.encode_row(RowChange(ALL_TYPES_TABLE, Op.INSERT, 10, key_only, None))
    message = orjson.loads(row.value)
    message["data"]["id"] = "one"
    mark = encode_watermark(PLAIN, 10, build_ts_ms=1)
    assert mark is not None
    values = [bootstrap.value, row.value, mark.value, orjson.dumps(message), row.value]
    config = _config(**({"on-bad-message": "skip"} if skip else {}))
    outcomes, logs = _both_ways(config, FakeTopicLog({0: values}), caplog, level=logging.INFO)
    assert_same_outcome(*outcomes)
    assert logs[0] == logs[1]
    if skip:
        assert outcomes[1][0].num_rows == 1
        assert "skipped 1 message(s)" in " ".join(logs[1])
        assert "dropped 1 row(s) TiCDC replayed" in " ".join(logs[1])  # offset 4 alone
    else:
        assert outcomes[1][0] is DecodeError and "offset 3" in outcomes[1][1]


@pytest.mark.parametrize(("encoding", "raw_id"), [("json", "1"), ("avro", 1)])
def test_writer_rows_are_plain_unless_they_carry_a_checksum(encoding: str, raw_id: Any) -> None:
    # Guards the test above: without plain rows it would compare the row path with itself.
    table = attrs.evolve(ALL_TYPES_TABLE, columns=ALL_TYPES_TABLE.columns[:-1])  # no VECTOR
    row = tuple({"id": 1, "dec0": "0"}.get(c.name) for c in table.columns)
    change = RowChange(table, Op.INSERT, 5, row, None)
    decoder = SimpleDecoder(encoding_format=encoding)
    decoder.add_table(table)
    codec = attrs.evolve(PLAIN, encoding_format=EncodingFormat(encoding))
    plain = decoder.plain_row(build_encoder(codec, table, build_ts_ms=1).encode_row(change).value)
    assert plain is not None
    assert (plain.op, plain.commit_ts, plain.old) == ("INSERT", 5, None)
    assert plain.data is not None and plain.data["id"] == raw_id and plain.data["ti"] is None
    checked = attrs.evolve(CHECKED, encoding_format=EncodingFormat(encoding))
    value = build_encoder(checked, table, build_ts_ms=1).encode_row(change).value
    assert decoder.plain_row(value) is None


def test_a_checksum_mismatch_is_caught() -> None:
    table = attrs.evolve(ALL_TYPES_TABLE, columns=ALL_TYPES_TABLE.columns[:3])
    encoder = build_encoder(CHECKED, table, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None
    rows = [
        encoder.encode_row(RowChange(table, Op.INSERT, 10 + i, (i, 1, 2), None)).value
        for i in range(3)
    ]
    message = orjson.loads(rows[1])
    message["data"]["ti"] = "2"
    values = [bootstrap.value, rows[0], orjson.dumps(message), rows[2]]
    error = read_outcome(_config(), FakeTopicLog({0: values}))
    assert error[0] is DecodeError
    assert error[1].startswith("ticdc: topic t partition 0 offset 2: INSERT db.t key id=1")
    assert "current row checksum mismatch" in error[1]


def _plain_message() -> tuple[SimpleDecoder, dict[str, Any]]:
    table = attrs.evolve(ALL_TYPES_TABLE, columns=ALL_TYPES_TABLE.columns[:3])
    decoder = SimpleDecoder()
    decoder.add_table(table)
    encoder = build_encoder(PLAIN, table, build_ts_ms=1)
    change = RowChange(table, Op.UPDATE, 9, (1, 2, 3), (1, 2, 4))
    return decoder, orjson.loads(encoder.encode_row(change).value)


@pytest.mark.parametrize(
    "change",
    [
        {"schemaVersion": 99},  # no schema of this version yet
        {"version": 2},
        {"type": "WATERMARK"},
        {"type": "INSERT"},  # an INSERT with an old image
        {"data": None},
        {"old": [1]},
        {"commitTs": True},
        {"database": 1},
        {"handleKeyOnly": True},
        {"claimCheckLocation": "file:///tmp/x"},
        {"checksum": {"version": 0, "corrupted": False, "current": 1, "previous": 0}},
    ],
)
def test_messages_with_more_to_them_than_values_are_not_plain(change: dict[str, Any]) -> None:
    decoder, message = _plain_message()
    assert decoder.plain_row(orjson.dumps(message)) is not None
    assert decoder.plain_row(orjson.dumps({**message, **change})) is None


def test_values_that_are_not_json_or_not_an_object_are_not_plain() -> None:
    decoder, _ = _plain_message()
    assert [decoder.plain_row(v) for v in (None, b"", b"{", b"[1]", b"1")] == [None] * 5
    assert SimpleDecoder(encoding_format="avro").plain_row(b"{}") is None


def test_only_the_simple_decoder_offers_the_column_wise_read() -> None:
    # read_range takes the column-wise path by this trait, not by the decoder's class.
    assert isinstance(SimpleDecoder(), ColumnwiseDecoder)
    assert isinstance(SimpleDecoder(encoding_format="avro"), ColumnwiseDecoder)
    for protocol in ("canal-json", "debezium", "open-protocol"):
        assert not isinstance(decoder_for(protocol), ColumnwiseDecoder)

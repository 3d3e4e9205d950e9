"""Simple Avro's column-wise read (`SimpleRun` over an Avro decoder's plain rows) takes a
column whose values the row path's parser only type-checks whole, and leaves the run to
the row path when a value has another Python type than the parser takes (an Avro union
branch TiCDC does not write for the column); and a whole read gives the row path's table
for DML messages as TiCDC's goavro writes them (maps in any key order, every column type,
null and absent columns, UPDATE with and without old, DELETE, text not UTF-8, replays,
watermarks, every compression)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.column_path import assert_same_outcome, read_outcome
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog
from tests.support.schemas import ALL_TYPES_TABLE
from tests.support.strategies import all_types_rows, all_types_tables
from ticdc_sink.codec.choices import EncodingFormat
from ticdc_sink.codec.compression import Compression, compress
from ticdc_sink.codec.config import CodecConfig
from ticdc_sink.codec.protocols import build_encoder, encode_watermark
from ticdc_sink.codec.simple.avro_values import (
    NON_NULL,
    NULL,
    dml_heads,
    dml_times,
    encode_long,
    encode_string,
    value_writer,
)
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.codec.simple.read_columns import SimpleRun
from ticdc_sink.decode import PlainRow
from ticdc_sink.events import Op
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.read.replay import replay_filter
from ticdc_sink.schema import TableSchema

# A value of each column's type as the reader gives it, and one of another type.
CASES = [
    ("i", -5, "-5"),
    ("i", 7, True),
    ("bi", 1 << 40, 1.0),
    ("f", 1.5, 2),
    ("d", 2.25, "2.25"),
    ("vc", "text", b"text"),
    ("dt", "2024-01-02", 20240102),
    ("bn", b"\x00\xff", "bytes"),
]


def _take(name: str, value: Any) -> Any:
    table = attrs.evolve(
        ALL_TYPES_TABLE, columns=tuple(c for c in ALL_TYPES_TABLE.columns if c.name in ("id", name))
    )
    run = SimpleRun(SimpleDecoder(encoding_format="avro"), table, kafka_columns=False, topic="t")
    for offset, data in enumerate([{"id": 1, name: value}, {"id": 2, name: None}]):
        run.add(
            PlainRow("INSERT", 10, "db", "t", 1, data, None), Record(0, offset, None, b"", None)
        )
    return run.take()[1]


@pytest.mark.parametrize(("name", "good", "other"), CASES)
def test_a_column_of_its_types_is_taken_and_one_of_others_is_left(
    name: str, good: Any, other: Any
) -> None:
    batch = _take(name, good)
    assert batch is not None
    assert batch.column(name).to_pylist() == [good, None]
    assert _take(name, other) is None  # the row path decides


# --- whole reads: the column-wise path against the row path ---------------------------------


def _image(data: Any, table: TableSchema, row: tuple[Any, ...], *, odd: bool = True) -> bytes:
    """A `data` or `old` map as TiCDC's goavro writes it: in any key order, each value in
    its column's branch; with `odd`, some columns left out (absent), a text sometimes not
    UTF-8."""
    entries = []
    for column, value in zip(table.columns, row, strict=True):
        if odd and data.draw(st.integers(0, 9)) == 0:
            continue  # absent
        if odd and value is not None and column.name in ("vc", "tx") and data.draw(st.booleans()):
            value = data.draw(st.sampled_from([b"\xff", b"ok\xc3", "caf\u00e9".encode()]))
        written = NULL if value is None else value_writer(column, "UTC")(value)
        entries.append(encode_string(column.name) + written)
    entries = data.draw(st.permutations(entries))
    if not entries:
        return NON_NULL + b"\x00"
    return NON_NULL + encode_long(len(entries)) + b"".join(entries) + b"\x00"


def _dml(data: Any, table: TableSchema, commit_ts: int, *, odd: bool = True) -> bytes:
    op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE]))
    rows = all_types_rows(table)
    new = _image(data, table, data.draw(rows), odd=odd) if op is not Op.DELETE else NULL
    old = NULL
    if op is Op.DELETE or (op is Op.UPDATE and data.draw(st.booleans())):
        old = _image(data, table, data.draw(rows), odd=odd)
    head = dml_heads(table)[op] + encode_long(commit_ts) + dml_times(table, 1)
    return head + NULL * 3 + new + old  # no claim check, handleKeyOnly or checksum


@pytest.mark.parametrize("compression", ["none", "snappy", "lz4"])
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_any_map_order_absent_columns_and_text_not_utf8_read_as_the_row_path(
    compression: str, data: Any
) -> None:
    table = data.draw(all_types_tables(6))
    codec = CodecConfig(encoding_format=EncodingFormat.AVRO)
    bootstrap = build_encoder(codec, table, build_ts_ms=1).encode_bootstrap()
    assert bootstrap is not None and bootstrap.value is not None
    values = [bootstrap.value]
    ts = 100
    for _ in range(data.draw(st.integers(1, 25))):
        ts += data.draw(st.integers(0, 1))
        kind = data.draw(st.sampled_from(["row"] * 8 + ["again", "watermark"]))
        if kind == "watermark":
            mark = encode_watermark(codec, ts, build_ts_ms=1)
            assert mark is not None and mark.value is not None
            values.append(mark.value)
        elif kind == "again" and len(values) > 1:  # a replay, byte for byte
            values.append(data.draw(st.sampled_from(values[1:])))
        else:
            values.append(_dml(data, table, ts))
    kind = Compression(compression)
    values = [compress(kind, v) for v in values]
    options = {
        "kafka.bootstrap.servers": "unused:1",
        "topic": "t",
        "encoding-format": "avro",
        "large-message-handle-compression": compression,
        "kafka-columns": "true",
    }
    if data.draw(st.booleans()):
        options["replays"] = "keep"
    config = ReadConfig.from_options(options)
    batch_rows = data.draw(st.sampled_from([2, 10_000]))
    outcomes = [
        read_outcome(
            config,
            FakeTopicLog({0: values}),
            batch_rows=batch_rows,
            columnwise=columnwise,
            replays=replay_filter(config),  # as a task reads: one partition, one range
        )
        for columnwise in (False, True)
    ]
    assert_same_outcome(*outcomes)


@settings(max_examples=examples(30), deadline=None)
@given(data=st.data())
def test_maps_in_any_key_order_of_every_type_are_taken_column_wise(data: Any) -> None:
    # Guards the test above: such rows are read column-wise, not all left to the row path.
    table = data.draw(all_types_tables(6))
    decoder = SimpleDecoder(encoding_format="avro")
    decoder.add_table(table)
    run = SimpleRun(decoder, table, kafka_columns=False, topic="t")
    for offset in range(data.draw(st.integers(1, 5))):
        plain = decoder.plain_row(_dml(data, table, 10, odd=False))
        assert plain is not None
        run.add(plain, Record(0, offset, None, b"", None))
    assert run.take()[1] is not None

"""Simple protocol decoding: the doc's messages, schemas from BOOTSTRAP/DDL, typed values,
rows before their schema, errors, and encoder -> decoder round trips."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_sink.codec import build_encoder, encode_watermark
from ticdc_sink.codec._mysql import to_float32
from ticdc_sink.config import CodecConfig
from ticdc_sink.decode import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedRow,
    DecodedWatermark,
    SimpleDecoder,
    decoder_for,
)
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import Column, Index, TableSchema, parse_mysql_type

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "simple"
USER_VERSION = 447984074911121426


def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.value.json").read_bytes()


def test_watermark() -> None:
    event = SimpleDecoder().decode_message(None, golden("watermark"))
    assert event == DecodedWatermark(commit_ts=447984124732375041, build_ts=1708923816911)
    assert event.describe() == "WATERMARK commitTs=447984124732375041"


def test_bootstrap_gives_the_table_and_reencodes_to_the_same_bytes() -> None:
    decoder = SimpleDecoder()
    event = decoder.decode_message(b"", golden("bootstrap"))
    assert isinstance(event, DecodedBootstrap)
    table = event.table
    assert (table.database, table.table, table.table_id, table.version) == (
        "simple",
        "new_user",
        148,
        USER_VERSION,
    )
    assert [c.name for c in table.columns] == ["id", "name", "age", "score"]
    assert table.primary_key == ("id",) and table.pk_is_handle
    assert decoder.table("simple", "new_user", USER_VERSION) == table
    again = build_encoder(CodecConfig(), table, build_ts_ms=1708924603278).encode_bootstrap()
    assert again is not None and again.value == golden("bootstrap")


def test_dml_before_its_schema_keeps_raw_values_and_resolves_later() -> None:
    decoder = SimpleDecoder()
    row = decoder.decode_message(b"", golden("insert"))
    assert isinstance(row, DecodedRow)
    assert not row.typed
    assert row.data == {"age": "25", "id": "1", "name": "John Doe", "score": "90.5"}
    assert "no schema yet" in row.describe()
    # The doc's DDL message holds the table before (preTableSchema, the DML's version)
    # and after the ALTER.
    ddl = decoder.decode_message(b"", golden("ddl_alter"))
    assert isinstance(ddl, DecodedDDL)
    assert ddl.type == "ALTER" and ddl.sql.startswith("ALTER TABLE `user` ADD COLUMN")
    assert ddl.table is not None and ddl.pre_table is not None
    assert ddl.table.column("createTime").type.base == "timestamp"
    typed = decoder.resolve(row)
    assert typed.typed
    assert typed.data == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}
    assert list(typed.data) == ["id", "name", "age", "score"]  # table column order
    assert decoder.decode_message(b"", golden("insert")) == typed


def test_update_and_delete_after_the_schema() -> None:
    decoder = SimpleDecoder()
    decoder.decode_message(b"", golden("ddl_alter"))
    update = decoder.decode_message(b"", golden("update"))
    assert update == DecodedRow(
        database="simple",
        table="user",
        table_id=148,
        op=Op.UPDATE,
        commit_ts=447984099186180098,
        schema_version=USER_VERSION,
        data={"id": 1, "name": "John Doe", "age": 25, "score": 95.0},
        old={"id": 1, "name": "John Doe", "age": 25, "score": 90.5},
        build_ts=1708923719184,
    )
    delete = decoder.decode_message(b"", golden("delete"))
    assert isinstance(delete, DecodedRow)
    assert delete.op is Op.DELETE and delete.data is None
    assert delete.old == {"id": 1, "name": "John Doe", "age": 25, "score": 95.0}
    assert delete.describe().startswith("DELETE simple.user commitTs=447984114259722243 old=")


def test_a_different_schema_version_is_not_used() -> None:
    decoder = SimpleDecoder()
    decoder.decode_message(b"", golden("bootstrap"))  # new_user, not user
    row = decoder.decode_message(b"", golden("insert"))
    assert isinstance(row, DecodedRow) and not row.typed


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, "no value"),
        (b"\x16\x00\x00", "not JSON"),
        (b"[1]", "JSON list"),
        (b'{"version":2,"type":"WATERMARK","commitTs":1}', "version is 2"),
        (b'{"version":1,"type":"NOPE","commitTs":1}', "type is 'NOPE'"),
        (b'{"version":1,"type":"WATERMARK"}', "'commitTs' is None"),
        (b'{"version":1,"type":"INSERT","commitTs":1,"data":[1]}', "data is not a JSON object"),
        (b'{"version":1,"type":"BOOTSTRAP","commitTs":0}', "tableSchema is not a JSON object"),
    ],
)
def test_malformed_messages_are_decode_errors(value: bytes | None, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        SimpleDecoder().decode_message(b"", value)


def _with_user_schema() -> SimpleDecoder:
    decoder = SimpleDecoder()
    decoder.decode_message(b"", golden("ddl_alter"))
    return decoder


def _insert(data: dict[str, Any]) -> bytes:
    message = json.loads(golden("insert"))
    message["data"] = data
    return json.dumps(message).encode()


def test_a_value_that_does_not_parse_names_the_column() -> None:
    decoder = _with_user_schema()
    with pytest.raises(DecodeError, match="column age: 'x' is not an integer"):
        decoder.decode_message(b"", _insert({"id": "1", "age": "x"}))
    with pytest.raises(DecodeError, match="column id: expected a JSON string"):
        decoder.decode_message(b"", _insert({"id": 1}))


def test_a_column_unknown_to_the_schema_is_an_error() -> None:
    with pytest.raises(DecodeError, match="columns zzz are not in the table schema"):
        _with_user_schema().decode_message(b"", _insert({"id": "1", "zzz": "1"}))


def test_missing_columns_are_skipped_as_tidb_does_for_generated_ones() -> None:
    row = _with_user_schema().decode_message(b"", _insert({"id": "1"}))
    assert isinstance(row, DecodedRow) and row.data == {"id": 1}


def test_decoder_for() -> None:
    assert isinstance(decoder_for("simple"), SimpleDecoder)
    assert isinstance(decoder_for("SIMPLE"), SimpleDecoder)
    with pytest.raises(DecodeError, match="'canal-json' has no decoder yet"):
        decoder_for("canal-json")


def test_the_schema_cache_is_bounded() -> None:
    decoder = SimpleDecoder(max_tables=2)
    columns = (Column("a", parse_mysql_type("int")),)
    for version in (1, 2, 3):
        decoder.add_table(TableSchema("d", "t", columns, version=version))
    assert decoder.table("d", "t", 1) is None
    assert decoder.table("d", "t", 3) is not None


# --- round trips ------------------------------------------------------------------------


def _text(draw: st.DrawFn) -> str:
    return draw(st.text(st.characters(exclude_categories=("Cs",)), max_size=12))


_INT_RANGES = {
    "tinyint": 8,
    "smallint": 16,
    "mediumint": 24,
    "int": 32,
    "bigint": 64,
}


@st.composite
def _column_and_value(draw: st.DrawFn) -> tuple[str, Any, Any]:
    """(MySQL type, mounter value, expected decoded value)."""
    kind = draw(
        st.sampled_from(
            [*_INT_RANGES, "year", "float", "double", "decimal", "date", "datetime"]
            + ["timestamp", "time", "enum", "set", "bit", "json", "varchar", "varbinary"]
        )
    )
    if kind in _INT_RANGES:
        bits = _INT_RANGES[kind]
        if draw(st.booleans()):
            v = draw(st.integers(0, 2**bits - 1))
            return f"{kind} unsigned", v, v
        v = draw(st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
        return kind, v, v
    if kind == "year":
        v = draw(st.sampled_from([0]) | st.integers(1901, 2155))
        return kind, v, v
    if kind == "float":
        v = draw(st.floats(width=32, allow_nan=False, allow_infinity=False))
        return kind, v, to_float32(v)
    if kind == "double":
        v = draw(st.floats(allow_nan=False, allow_infinity=False))
        return kind, v, v
    if kind == "decimal":
        scale = draw(st.integers(0, 6))
        unscaled = draw(st.integers(-(10**12) + 1, 10**12 - 1))
        text = str(Decimal(unscaled).scaleb(-scale).quantize(Decimal(1).scaleb(-scale)))
        return f"decimal(18,{scale})", text, Decimal(text)
    if kind == "date":
        v = draw(st.dates()).isoformat()
        return kind, v, v
    if kind in ("datetime", "timestamp"):
        moment = draw(st.datetimes(min_value=dt.datetime(1000, 1, 1)))
        v = moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:23]
        return f"{kind}(3)", v, v
    if kind == "time":
        hours = draw(st.integers(-838, 838))
        v = f"{'-' if hours < 0 else ''}{abs(hours):02d}:{draw(st.integers(0, 59)):02d}:00"
        return kind, v, v
    if kind == "enum":
        v = draw(st.integers(0, 3))
        return "enum('a','b','c')", v, v
    if kind == "set":
        v = draw(st.integers(0, 7))
        return "set('a','b','c')", v, v
    if kind == "bit":
        v = draw(st.integers(0, 2**64 - 1))
        return "bit(64)", v, v
    if kind == "json":
        v = json.dumps({"k": _text(draw)}, separators=(", ", ": "))
        return kind, v, v
    if kind == "varchar":
        v = _text(draw)
        return "varchar(64)", v, v
    v = draw(st.binary(max_size=16))
    return "varbinary(16)", v, v


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_column_and_value(), min_size=1, max_size=8),
    st.sampled_from(list(Op)),
    st.integers(0, 2**64 - 1),
    st.data(),
)
def test_encoder_to_decoder_round_trip(
    columns: list[tuple[str, Any, Any]], op: Op, commit_ts: int, data: st.DataObject
) -> None:
    table = TableSchema(
        "db",
        "t<&>",
        tuple(
            Column(f"c{i}", parse_mysql_type(t), column_id=i + 1)
            for i, (t, _, _) in enumerate(columns)
        ),
        indexes=(Index("c0", ("c0",), unique=True),),
        table_id=data.draw(st.integers(1, 2**40)),
        version=data.draw(st.integers(1, 2**62)),
    )
    nulls = [data.draw(st.booleans()) for _ in columns]
    row = tuple(None if null else v for null, (_, v, _) in zip(nulls, columns, strict=True))
    expected = {
        f"c{i}": None if null else e
        for i, (null, (_, _, e)) in enumerate(zip(nulls, columns, strict=True))
    }
    change = RowChange(
        table,
        op,
        commit_ts,
        row=None if op is Op.DELETE else row,
        before=None if op is Op.INSERT else row,
    )
    encoder = build_encoder(CodecConfig(), table, build_ts_ms=42)
    decoder = SimpleDecoder()
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None
    decoded_table = decoder.decode_message(bootstrap.key, bootstrap.value)
    assert isinstance(decoded_table, DecodedBootstrap)
    # The decoded schema encodes to the same bootstrap bytes.
    again = build_encoder(CodecConfig(), decoded_table.table, build_ts_ms=42).encode_bootstrap()
    assert again is not None and again.value == bootstrap.value

    message = encoder.encode_row(change)
    event = decoder.decode_message(message.key, message.value)
    assert isinstance(event, DecodedRow) and event.typed
    assert (event.database, event.table, event.table_id) == ("db", "t<&>", table.table_id)
    assert (event.op, event.commit_ts, event.schema_version) == (op, commit_ts, table.version)
    assert event.build_ts == 42
    assert event.data == (None if op is Op.DELETE else expected)
    assert event.old == (None if op is Op.INSERT else expected)

    mark = encode_watermark(CodecConfig(), commit_ts, build_ts_ms=42)
    assert mark is not None
    assert decoder.decode_message(mark.key, mark.value) == DecodedWatermark(commit_ts, 42)

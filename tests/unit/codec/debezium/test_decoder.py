"""Debezium decoding: TiCDC's golden messages, typed values from the field schemas, raw
values without schema, DDL and watermark events, and an encode -> decode round trip over
every MySQL type."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.hypothesis_profiles import examples
from ticdc_sink.codec.debezium import DebeziumEncoder, encode_watermark
from ticdc_sink.codec.debezium.decoder import DebeziumDecoder
from ticdc_sink.config import CodecConfig, Protocol
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.decode import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = paths.GOLDEN / "debezium"


def golden_bytes(name: str) -> bytes:
    return json.dumps(json.loads((GOLDEN / name).read_text())).encode()


def test_doc_update_example() -> None:
    event = DebeziumDecoder().decode_message(
        golden_bytes("doc_update.key.json"), golden_bytes("doc_update.value.json")
    )
    assert event == DecodedRow(
        database="test",
        table="table1",
        table_id=0,
        op=Op.UPDATE,
        commit_ts=1,
        schema_version=0,
        data={"tiny": 1},
        old={"tiny": 2},
        build_ts=1701326309000,
    )


@pytest.mark.parametrize(
    ("case", "op", "data", "old", "typed"),
    [
        ("tiflow_insert_schema", Op.INSERT, {"tiny": 1}, None, True),
        ("tiflow_insert_noschema", Op.INSERT, {"tiny": 1}, None, False),
        ("tiflow_delete_schema", Op.DELETE, None, {"tiny": 2}, True),
        ("tiflow_update_no_old_value_noschema", Op.UPDATE, {"tiny": 1}, None, False),
    ],
)
def test_tiflow_rows(case: str, op: Op, data: Any, old: Any, typed: bool) -> None:
    event = DebeziumDecoder().decode_message(None, golden_bytes(f"{case}.value.json"))
    assert isinstance(event, DecodedRow)
    assert (event.op, event.data, event.old, event.typed) == (op, data, old, typed)


def test_watermark_and_ddl() -> None:
    decoder = DebeziumDecoder()
    event = decoder.decode_message(None, golden_bytes("doc_watermark.value.json"))
    assert event == DecodedWatermark(commit_ts=3, build_ts=1701326309000)
    ddl = decoder.decode_message(None, golden_bytes("doc_ddl_rename.value.json"))
    assert ddl == DecodedDDL(
        type="ALTER",
        sql="RENAME TABLE test.table1 to test.table2",
        commit_ts=1,
        build_ts=1701326309000,
    )
    message = encode_watermark(
        CodecConfig(protocol=Protocol.DEBEZIUM, enable_tidb_extension=True), 99, build_ts_ms=5
    )
    assert message is not None
    assert decoder.decode_message(message.key, message.value) == DecodedWatermark(99, 5)


def test_datatype_golden_typed_values() -> None:
    # Real Debezium's output from tiflow testdata (no tidb_type: binary stays base64 text).
    event = DebeziumDecoder().decode_message(None, golden_bytes("tiflow_datatype.dbz.json"))
    assert isinstance(event, DecodedRow) and event.data is not None
    data = event.data
    assert data["col_d_2023"] == "2023-11-30"
    assert data["col_d_1000"] == "1000-01-01"
    assert data["col_d_0000"] is None
    assert data["col_dt_fsp_1"] == "2023-11-30 12:34:56.1"
    assert data["col_dt_fsp_4"] == "2023-11-30 12:34:56.1235"
    assert data["col_t_neg"] == "-12:34:56.123456"
    assert data["col_ts_fsp_5"] == "2023-11-30 12:34:56.12346"
    assert data["col_bit_1"] == 1 and data["col_bit_60"] == 16
    assert data["col_enum"] == 1 and data["col_enum_invalid"] == 0
    assert data["col_set"] == 3 and data["col_set_invalid"] == 0
    assert data["col_varbinary"] == "Zm9v"
    assert data["col_bigint_unsigned"] == -1  # no tidb_type: cannot be unwrapped
    assert data["col_decimal"] == 12345.12345


def test_errors() -> None:
    decoder = DebeziumDecoder()
    with pytest.raises(DecodeError, match="no value"):
        decoder.decode_message(b"{}", None)
    with pytest.raises(DecodeError, match="not JSON"):
        decoder.decode_message(None, b"{")
    with pytest.raises(DecodeError, match="no payload.source"):
        decoder.decode_message(None, b'{"payload":{}}')
    with pytest.raises(DecodeError, match="payload.op"):
        decoder.decode_message(None, b'{"payload":{"source":{},"op":"x"}}')
    with pytest.raises(DecodeError, match="time zone"):
        DebeziumDecoder("Mars/Olympus")


@pytest.mark.parametrize("name", [None, "", 7])
def test_a_field_schema_without_a_column_name_is_a_decode_error(name: Any) -> None:
    value = json.loads((GOLDEN / "tiflow_insert_schema.value.json").read_text())
    after = next(f for f in value["schema"]["fields"] if f["field"] == "after")
    after["fields"][0]["field"] = name
    with pytest.raises(DecodeError, match="a column name is a non-empty string"):
        DebeziumDecoder().row_table(None, json.dumps(value).encode())


def test_a_field_schema_naming_a_column_twice_is_a_decode_error() -> None:
    value = json.loads((GOLDEN / "tiflow_insert_schema.value.json").read_text())
    after = next(f for f in value["schema"]["fields"] if f["field"] == "after")
    after["fields"].append(dict(after["fields"][0]))
    with pytest.raises(DecodeError, match="twice"):
        DebeziumDecoder().row_table(None, json.dumps(value).encode())


# --- round trip over every MySQL type -------------------------------------------------------

TYPES = {
    "ti": "tinyint",
    "tiu": "tinyint unsigned",
    "si": "smallint",
    "siu": "smallint unsigned",
    "mi": "mediumint",
    "miu": "mediumint unsigned",
    "i": "int",
    "iu": "int unsigned",
    "bi": "bigint",
    "biu": "bigint unsigned",
    "f": "float",
    "db": "double",
    "dec": "decimal(15,4)",
    "d": "date",
    "dt0": "datetime",
    "dt3": "datetime(3)",
    "dt6": "datetime(6)",
    "ts0": "timestamp",
    "ts4": "timestamp(4)",
    "t0": "time",
    "t6": "time(6)",
    "y": "year",
    "b1": "bit(1)",
    "b13": "bit(13)",
    "b64": "bit(64)",
    "e": "enum('a','b,c','d''e')",
    "s": "set('x','y','z')",
    "vc": "varchar(64)",
    "tx": "text",
    "vb": "varbinary(64)",
    "bl": "blob",
    "j": "json",
}
TABLE = TableSchema(
    "db",
    "all_types",
    (Column("id", parse_mysql_type("int"), nullable=False),)
    + tuple(Column(name, parse_mysql_type(text)) for name, text in TYPES.items()),
    indexes=(Index("PRIMARY", ("id",), unique=True, primary=True),),
)
ZONE = "Asia/Shanghai"


def _int_range(bits: int, unsigned: bool) -> st.SearchStrategy[int]:
    if unsigned:
        return st.integers(0, 2**bits - 1)
    return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _frac(fsp: int) -> st.SearchStrategy[str]:
    if fsp == 0:
        return st.just("")
    return st.integers(0, 10**fsp - 1).map(lambda n: "." + str(n).zfill(fsp))


_dates = st.dates(min_value=__import__("datetime").date(1000, 1, 1)).map(lambda d: d.isoformat())


def _datetimes(fsp: int, low: int = 1000, high: int = 9999) -> st.SearchStrategy[str]:
    import datetime as dt

    return st.tuples(
        st.datetimes(min_value=dt.datetime(low, 1, 1), max_value=dt.datetime(high, 12, 31)),
        _frac(fsp),
    ).map(lambda p: p[0].strftime("%Y-%m-%d %H:%M:%S").zfill(19) + p[1])


def _times(fsp: int) -> st.SearchStrategy[str]:
    return st.tuples(
        st.sampled_from(["", "-"]), st.integers(0, 838), st.integers(0, 59), st.integers(0, 59)
    ).flatmap(lambda p: _frac(fsp).map(lambda f: f"{p[0]}{p[1]:02d}:{p[2]:02d}:{p[3]:02d}{f}"))


VALUES: dict[str, st.SearchStrategy[Any]] = {
    "ti": _int_range(8, False),
    "tiu": _int_range(8, True),
    "si": _int_range(16, False),
    "siu": _int_range(16, True),
    "mi": _int_range(24, False),
    "miu": _int_range(24, True),
    "i": _int_range(32, False),
    "iu": _int_range(32, True),
    "bi": _int_range(64, False),
    "biu": _int_range(64, True),
    "f": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "db": st.floats(allow_nan=False, allow_infinity=False),
    "dec": st.decimals(
        min_value=-(10**11) + 1, max_value=10**11 - 1, places=4, allow_nan=False
    ).map(str),
    "d": _dates,
    "dt0": _datetimes(0),
    "dt3": _datetimes(3),
    "dt6": _datetimes(6),
    "ts0": _datetimes(0, 1971, 2037),
    "ts4": _datetimes(4, 1971, 2037),
    "t0": _times(0),
    "t6": _times(6),
    "y": st.sampled_from([0]) | st.integers(1901, 2155),
    "b1": st.integers(0, 1),
    "b13": st.integers(0, 2**13 - 1),
    "b64": st.integers(0, 2**64 - 1),
    "e": st.integers(0, 3),
    "s": st.integers(0, 7),
    "vc": st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
    "tx": st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
    "vb": st.binary(max_size=20),
    "bl": st.binary(max_size=20),
    "j": st.sampled_from(['{"a": 1}', "[1, 2, 3]", '"<x>"', "null"]),
}


def _expected(name: str, value: Any) -> Any:
    """The mounter value as the decoder can give it back (see its docstring)."""
    if value is None:
        return None
    kind = TYPES[name]
    if name == "dec":
        return Decimal(value)
    if name == "f":
        return to_float32(value)
    if kind.startswith(("datetime", "time(", "time")) and not kind.startswith("timestamp"):
        main, _, frac = value.partition(".")
        frac = frac.rstrip("0")
        text = main + ("." + frac if frac else "")
        return "00:00:00" + text[9:] if text.startswith("-00:00:00") and not frac else text
    return value


ROWS = st.fixed_dictionaries({name: st.none() | strategy for name, strategy in VALUES.items()})


@settings(max_examples=examples(150), deadline=None)
@given(ROWS, ROWS)
def test_round_trip_every_type(row: dict[str, Any], old: dict[str, Any]) -> None:
    config = CodecConfig(protocol=Protocol.DEBEZIUM, enable_tidb_extension=True, time_zone=ZONE)
    encoder = DebeziumEncoder(config, TABLE, build_ts_ms=1)
    values = (1, *(row[name] for name in TYPES))
    before = (1, *(old[name] for name in TYPES))
    message = encoder.encode_row(RowChange(TABLE, Op.UPDATE, 5 << 18, values, before))
    event = DebeziumDecoder(ZONE).decode_message(message.key, message.value)
    assert isinstance(event, DecodedRow)
    assert event.op is Op.UPDATE and event.commit_ts == 5 << 18 and event.typed
    assert (event.database, event.table) == ("db", "all_types")
    for image, source in ((event.data, row), (event.old, old)):
        assert image is not None
        assert image["id"] == 1
        for name, value in source.items():
            # Decimal compares numerically: 1.5000 == 1.5 (15 digits survive the double).
            assert image[name] == _expected(name, value), name


@settings(max_examples=examples(30), deadline=None)
@given(ROWS)
def test_without_schema_values_are_raw(row: dict[str, Any]) -> None:
    config = CodecConfig(protocol=Protocol.DEBEZIUM, debezium_disable_schema=True)
    encoder = DebeziumEncoder(config, TABLE, build_ts_ms=1)
    message = encoder.encode_row(
        RowChange(TABLE, Op.DELETE, 7, None, (1, *(row[n] for n in TYPES)))
    )
    event = DebeziumDecoder().decode_message(message.key, message.value)
    assert isinstance(event, DecodedRow)
    assert event.op is Op.DELETE and event.data is None and not event.typed
    # Raw means as orjson reads the JSON (a whole number above 2^64 becomes a float).
    assert event.old == orjson.loads(message.value or b"")["payload"]["before"]

"""canal-json decoding: the TiCDC doc examples, typing by mysqlType / sqlType, errors, and
an encode -> decode round trip over every MySQL type."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.hypothesis_profiles import examples
from ticdc_sink.codec.canal_json import CanalJsonEncoder
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder, parser_for
from ticdc_sink.config import CodecConfig, Protocol
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.decode import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = paths.GOLDEN / "canal_json"
COMMIT_TS = 429918007904436226
TP_INT_NEW = {
    "id": 2,
    "c_tinyint": 0,
    "c_smallint": 32767,
    "c_mediumint": 8388607,
    "c_int": 0,
    "c_bigint": 9223372036854775807,
}
TP_INT_OLD = TP_INT_NEW | {"c_tinyint": 127, "c_int": 2147483647}


def decode(name: str) -> Any:
    return CanalJsonDecoder().decode_message(b"", (GOLDEN / f"{name}.value.json").read_bytes())


def test_insert_example() -> None:
    row = decode("insert_tp_int")
    assert row == DecodedRow(
        database="test",
        table="tp_int",
        table_id=0,
        op=Op.INSERT,
        commit_ts=COMMIT_TS,
        schema_version=0,
        data=TP_INT_OLD,
        old=None,
        build_ts=1639633142960,
    )
    assert list(row.data) == list(TP_INT_OLD)  # column order kept


def test_key_order_does_not_matter() -> None:
    # TiCDC writes mysqlType in Go's random map order; the docs print every map sorted and
    # `data` before `old`.
    message = json.loads((GOLDEN / "update_tp_int.value.json").read_bytes())
    shuffled = {k: message[k] for k in sorted(message, reverse=True)}
    for name in ("sqlType", "mysqlType"):
        shuffled[name] = dict(sorted(message[name].items()))
    row = CanalJsonDecoder().decode_message(b"", json.dumps(shuffled).encode())
    assert row == decode("update_tp_int")


def test_update_examples() -> None:
    full = decode("update_tp_int")
    assert (full.op, full.data, full.old, full.commit_ts) == (Op.UPDATE, TP_INT_NEW, TP_INT_OLD, 0)
    # Only the changed old values on the wire: the others come from the new image.
    only = decode("update_tp_int_only_updated")
    assert only.old == TP_INT_OLD
    assert list(only.old) == list(TP_INT_OLD)


def test_delete_example_carries_the_row_as_old() -> None:
    row = decode("delete_tp_int")
    assert (row.op, row.data, row.old) == (Op.DELETE, None, TP_INT_NEW)


@pytest.mark.parametrize("name", ["insert_t_types", "insert_t_types_content_compatible"])
def test_types_example(name: str) -> None:
    assert decode(name).data == {
        "id": 1,
        "c_decimal": Decimal("123.4560"),
        "c_char": "abc",
        "c_varchar": "abc",
        "c_binary": b"abc" + b"\0" * 13,
        "c_varbinary": b"abc",
        "c_enum": 1,
        "c_set": 3,
        "c_bit": 65,
    }


def test_watermark_example() -> None:
    assert decode("watermark") == DecodedWatermark(commit_ts=COMMIT_TS, build_ts=1640007050284)


def test_ddl_example() -> None:
    assert decode("ddl_query") == DecodedDDL(
        type="QUERY",
        sql="drop database if exists test",
        commit_ts=COMMIT_TS,
        build_ts=1639633095489,
    )


def test_large_message_markers() -> None:
    value = {
        "id": 0,
        "database": "d",
        "table": "t",
        "pkNames": ["id"],
        "isDdl": False,
        "type": "INSERT",
        "es": 1,
        "ts": 2,
        "sql": "",
        "sqlType": {"id": 4},
        "mysqlType": {"id": "int"},
        "old": None,
        "data": [{"id": "1"}],
        "_tidb": {"commitTs": 5, "onlyHandleKey": True},
    }
    row = CanalJsonDecoder().decode_message(b"", json.dumps(value).encode())
    assert row.handle_key_only and row.data == {"id": 1}
    value["_tidb"] = {"commitTs": 5, "claimCheckLocation": "s3://b/x.json"}
    row = CanalJsonDecoder().decode_message(None, json.dumps(value).encode())
    assert row.claim_check_location == "s3://b/x.json" and not row.handle_key_only


@pytest.mark.parametrize(
    ("mysql_type", "sql_type", "text", "value"),
    [
        ("int unsigned", 4, "4294967295", 4294967295),
        ("bigint unsigned", 3, "18446744073709551615", 18446744073709551615),
        ("float", 7, "3.14", to_float32(3.14)),
        ("double unsigned zerofill", 8, "2.5", 2.5),
        ("decimal(10,2)", 3, "-1.50", Decimal("-1.50")),
        ("varchar(10)", 12, "ÿ", "ÿ"),
        ("varbinary(10)", 2004, "ÿ\x00", b"\xff\x00"),
        ("mediumblob", 2004, "", b""),
        ("year(4)", 12, "2020", 2020),
        ("set('a','b')", -7, "3", 3),
        ("datetime(3)", 93, "2020-01-02 03:04:05.120", "2020-01-02 03:04:05.120"),
        (None, -5, "12", 12),
        (None, 2004, "ÿ", b"\xff"),
        (None, 3, "12", Decimal(12)),
        (None, 12, "x", "x"),
        ("geometry", 2004, "x", "x"),  # unknown names are kept as text
        ("enum('binary','blob')", 4, "2", 2),  # not binary: only the base name counts
        ("TINYBLOB", 2004, "a", b"a"),
    ],
)
def test_values_are_typed(mysql_type: str | None, sql_type: int, text: str, value: Any) -> None:
    assert parser_for(mysql_type, sql_type)(text) == value


def _dml(**changes: Any) -> bytes:
    message = {
        "id": 0,
        "database": "d",
        "table": "t",
        "pkNames": [],
        "isDdl": False,
        "type": "INSERT",
        "es": 0,
        "ts": 0,
        "sql": "",
        "sqlType": {"a": 4},
        "mysqlType": {"a": "int"},
        "old": None,
        "data": [{"a": "1"}],
    }
    message.update(changes)
    return json.dumps(message).encode()


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, "has no value"),
        (b"{", "not JSON"),
        (b"[1]", "JSON list"),
        (_dml(type="NOPE"), "type is 'NOPE'"),
        (_dml(data=[{"a": 1}]), "canal-json values are strings"),
        (_dml(data=[{"a": "x"}]), "column a .int.: 'x' is not an integer"),
        (_dml(data=[{"a": " 1"}]), "is not an integer"),
        (_dml(mysqlType={}, sqlType={}), "no mysqlType or sqlType entry"),
        (_dml(data=None), "'data' is null"),
        (_dml(data={"a": "1"}), "not a list of one JSON object"),
        (_dml(type="UPDATE"), "'old' is null"),
        (_dml(mysqlType={"a": "varbinary(3)"}, data=[{"a": "中"}]), "above U\\+00FF"),
        (_dml(_tidb={"commitTs": "1"}), "_tidb.commitTs"),
        (_dml(database=None), "must be strings"),
    ],
)
def test_bad_messages(value: bytes | None, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        CanalJsonDecoder().decode_message(b"", value)


# --- encode -> decode round trip over every MySQL type ---------------------------------


def _datetime_text(fsp: int) -> st.SearchStrategy[str]:
    def text(value: dt.datetime) -> str:
        base = value.strftime("%Y-%m-%d %H:%M:%S")
        return base + (f".{value.microsecond:06d}"[: fsp + 1] if fsp else "")

    return st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)).map(text)


def _time_text(fsp: int) -> st.SearchStrategy[str]:
    def text(args: tuple[bool, int, int, int, int]) -> str:
        negative, hours, minutes, seconds, micros = args
        body = f"{hours:02d}:{minutes:02d}:{seconds:02d}"
        if fsp:
            body += f".{micros:06d}"[: fsp + 1]
        return ("-" if negative else "") + body

    return st.tuples(
        st.booleans(),
        st.integers(0, 838),
        st.integers(0, 59),
        st.integers(0, 59),
        st.integers(0, 999999),
    ).map(text)


def _decimal_text(precision: int, scale: int) -> st.SearchStrategy[str]:
    limit = 10**precision - 1
    return st.integers(-limit, limit).map(
        lambda n: str(Decimal(n).scaleb(-scale)) if scale else str(n)
    )


def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


# type text -> (strategy of mounter values, value the decoder returns for a mounter value)
def _same(value: Any) -> Any:
    return value


TYPES: dict[str, tuple[st.SearchStrategy[Any], Any]] = {
    "tinyint": (_ints(-128, 127), _same),
    "tinyint unsigned": (_ints(0, 255), _same),
    "tinyint(1)": (_ints(-128, 127), _same),
    "smallint": (_ints(-(2**15), 2**15 - 1), _same),
    "smallint unsigned zerofill": (_ints(0, 2**16 - 1), _same),
    "mediumint": (_ints(-(2**23), 2**23 - 1), _same),
    "mediumint unsigned": (_ints(0, 2**24 - 1), _same),
    "int": (_ints(-(2**31), 2**31 - 1), _same),
    "int unsigned": (_ints(0, 2**32 - 1), _same),
    "bigint": (_ints(-(2**63), 2**63 - 1), _same),
    "bigint unsigned": (_ints(0, 2**64 - 1), _same),
    "year": (st.one_of(st.just(0), _ints(1901, 2155)), _same),
    "bit(1)": (_ints(0, 1), _same),
    "bit(64)": (_ints(0, 2**64 - 1), _same),
    "float": (st.floats(width=32, allow_nan=False, allow_infinity=False), to_float32),
    "float unsigned": (st.floats(min_value=0, width=32, allow_infinity=False), to_float32),
    "double": (st.floats(allow_nan=False, allow_infinity=False), _same),
    "decimal(10,4)": (_decimal_text(10, 4), Decimal),
    "decimal(65,30)": (_decimal_text(65, 30), Decimal),
    "decimal(5,0) unsigned": (_decimal_text(5, 0).map(lambda t: t.lstrip("-")), Decimal),
    "date": (st.dates().map(lambda d: d.strftime("%Y-%m-%d").rjust(10, "0")), _same),
    "datetime": (_datetime_text(0), _same),
    "datetime(6)": (_datetime_text(6), _same),
    "timestamp(3)": (_datetime_text(3), _same),
    "time": (_time_text(0), _same),
    "time(2)": (_time_text(2), _same),
    "char(10)": (st.text(max_size=10), _same),
    "varchar(255)": (st.text(), _same),
    "tinytext": (st.text(), _same),
    "text": (st.text(), _same),
    "mediumtext": (st.text(), _same),
    "longtext": (st.text(), _same),
    "binary(4)": (st.binary(min_size=4, max_size=4), _same),
    "varbinary(16)": (st.binary(max_size=16), _same),
    "tinyblob": (st.binary(), _same),
    "blob": (st.binary(), _same),
    "mediumblob": (st.binary(), _same),
    "longblob": (st.binary(), _same),
    "enum('a','b','c')": (_ints(0, 3), _same),
    "set('a','b','c')": (_ints(0, 7), _same),
    "json": (st.text(), _same),
    "vector(3)": (
        st.lists(st.integers(-9, 9), min_size=3, max_size=3).map(
            lambda v: "[" + ",".join(map(str, v)) + "]"
        ),
        _same,
    ),
}
NAMES = [f"c{i}" for i in range(len(TYPES))]
ALL_TYPES = TableSchema(
    database="db<1>",
    table="all types",
    columns=(
        Column("id", parse_mysql_type("bigint"), nullable=False),
        *(Column(name, parse_mysql_type(text)) for name, text in zip(NAMES, TYPES, strict=True)),
    ),
    indexes=(Index("PRIMARY", ("id",), unique=True, primary=True),),
)


VALUES = st.tuples(*(st.none() | strategy for strategy, _ in TYPES.values()))


def images(key: int) -> st.SearchStrategy[tuple[Any, ...]]:
    return VALUES.map(lambda values: (key, *values))


def _expected(image: tuple[Any, ...]) -> dict[str, Any]:
    result = {"id": image[0]}
    for name, value, (_, convert) in zip(NAMES, image[1:], TYPES.values(), strict=True):
        result[name] = None if value is None else convert(value)
    return result


@settings(max_examples=examples(40), deadline=None)
@given(
    key=st.integers(0, 2**63 - 1),
    data=st.data(),
    op=st.sampled_from(list(Op)),
    commit_ts=st.integers(0, 2**63 - 1),
    options=st.fixed_dictionaries(
        {
            "enable_tidb_extension": st.booleans(),
            "content_compatible": st.booleans(),
            "only_output_updated_columns": st.booleans(),
            "delete_only_output_handle_key_columns": st.booleans(),
        }
    ),
)
def test_round_trip_every_type(
    key: int, data: st.DataObject, op: Op, commit_ts: int, options: dict[str, bool]
) -> None:
    config = attrs.evolve(CodecConfig(protocol=Protocol.CANAL_JSON), **options)
    row = data.draw(images(key))
    before = data.draw(images(key))
    if op is Op.INSERT:
        change = RowChange(ALL_TYPES, op, commit_ts, row)
    elif op is Op.DELETE:
        change = RowChange(ALL_TYPES, op, commit_ts, None, before=before)
    else:
        change = RowChange(ALL_TYPES, op, commit_ts, row, before=before)
    message = CanalJsonEncoder(config, ALL_TYPES, build_ts_ms=7).encode_row(change)
    decoded = CanalJsonDecoder().decode_message(message.key, message.value)
    assert isinstance(decoded, DecodedRow)
    assert (decoded.database, decoded.table, decoded.op) == ("db<1>", "all types", op)
    assert decoded.commit_ts == (commit_ts if options["enable_tidb_extension"] else 0)
    assert decoded.build_ts == 7
    assert decoded.data == (None if op is Op.DELETE else _expected(row))
    if op is Op.INSERT:
        assert decoded.old is None
    elif op is Op.DELETE and options["delete_only_output_handle_key_columns"]:
        assert decoded.old == {"id": key}
    elif op is Op.DELETE:
        assert decoded.old == _expected(before)
    else:
        assert decoded.old == _expected(before)

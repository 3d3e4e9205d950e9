"""Decoded rows -> Arrow in the writer's input contract: types, `mysql_type` metadata, and
the round trip encoder -> Kafka bytes -> reader -> the writer's own input conversion, which
gives back the changes that were encoded (every MySQL type, every op)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog, simple_messages, table
from tests.support.row_path import read_changes
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import SchemaError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.rows import arrow_schema, fit_batch
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import TableSchema

CONFIG_OPTIONS = {"kafka.bootstrap.servers": "unused:1", "topic": "t"}

ALL_TYPES = {
    "c_tinyint": ("tinyint", -128, pa.int32()),
    "c_int_u": ("int unsigned", 4294967295, pa.int64()),
    "c_bigint": ("bigint", -(2**63), pa.int64()),
    "c_bigint_u": ("bigint unsigned", 2**64 - 1, pa.decimal128(20, 0)),
    "c_float": ("float", 1.5, pa.float32()),
    "c_double": ("double", 2.718281828459045, pa.float64()),
    "c_decimal": ("decimal(12,4)", "-12345678.1250", pa.decimal128(12, 4)),
    "c_decimal_wide": ("decimal(65,2)", "1" * 63 + ".25", pa.string()),
    "c_char": ("char(5)", "ab", pa.string()),
    "c_binary": ("varbinary(4)", b"\x00\xff", pa.binary()),
    "c_date": ("date", "0000-00-00", pa.string()),
    "c_datetime": ("datetime(3)", "2024-02-29 23:59:58.123", pa.string()),
    "c_timestamp": ("timestamp(6)", "2024-03-01 09:02:03.456789", pa.string()),
    "c_time": ("time", "-838:59:59", pa.string()),
    "c_year": ("year", 2155, pa.int32()),
    "c_bit": ("bit(5)", 21, pa.int64()),
    "c_bit64": ("bit(64)", 2**64 - 1, pa.decimal128(20, 0)),
    "c_enum": ("enum('small','medium','large')", 2, pa.string()),
    "c_set": ("set('a','b','c')", 5, pa.string()),
    "c_json": ("json", '{"a": null, "b": [1, 2.5, "x"]}', pa.string()),
}


def _read(schema: TableSchema, values: list[bytes | None], **options: str) -> pa.Table:
    config = ReadConfig.from_options({**CONFIG_OPTIONS, **options})
    log = FakeTopicLog({0: values})
    plan = plan_read(config, log)
    batches = list(read_range(config, plan.table, plan.known, plan.ranges[0], log=log))
    return pa.Table.from_batches(
        batches, arrow_schema(plan.table, kafka_columns=config.kafka_columns)
    )


def _written_back(schema: TableSchema, result: pa.Table) -> list[RowChange]:
    """What the writer makes of the read's output: its own input conversion."""
    changes: list[RowChange] = []
    for batch in result.to_batches():
        changes += list(
            read_changes(
                batch,
                layout=InputLayout(),
                tables=lambda database, name: schema,
                default_database=None,
                default_table=None,
                default_commit_ts=1,
                time_zone="UTC",
            )
        )
    return changes


def test_every_type_keeps_its_value_and_mysql_type() -> None:
    schema = table(columns={n: t for n, (t, _, _) in ALL_TYPES.items()})
    row = (1, *(v for _, v, _ in ALL_TYPES.values()))
    values = simple_messages(schema, [(Op.INSERT, 100, row, None)], watermark=100)
    result = _read(schema, values)
    for name, (mysql, _, arrow) in ALL_TYPES.items():
        field = result.schema.field(name)
        assert field.type == arrow, name
        declared, carried = (
            parse_mysql_type(mysql),
            parse_mysql_type(field.metadata[b"mysql_type"].decode()),
        )
        assert (carried.base, carried.unsigned, carried.elements, carried.scale, carried.fsp) == (
            declared.base,
            declared.unsigned,
            declared.elements,
            declared.scale,
            declared.fsp,
        ), name
    got = result.to_pylist()[0]
    assert got["c_enum"] == "medium" and got["c_set"] == "a,c"
    assert got["c_bigint_u"] == Decimal(2**64 - 1) and got["c_decimal"] == Decimal("-12345678.125")
    assert got["c_date"] == "0000-00-00" and got["c_time"] == "-838:59:59"
    assert (got["_op"], got["_commit_ts"], got["_before"]) == ("INSERT", 100, None)
    assert (got["_database"], got["_table"]) == ("db", "t")
    assert _written_back(schema, result) == [RowChange(schema, Op.INSERT, 100, row)]


def test_ops_and_before_images_and_kafka_columns() -> None:
    schema = table()
    changes = [
        (Op.INSERT, 10, (1, "a"), None),
        (Op.UPDATE, 11, (1, "b"), (1, "a")),
        (Op.DELETE, 12, None, (1, "b")),
    ]
    result = _read(schema, simple_messages(schema, changes), **{"kafka-columns": "true"})
    rows = result.to_pylist()
    assert [(r["_op"], r["_commit_ts"], r["id"], r["name"]) for r in rows] == [
        ("INSERT", 10, 1, "a"),
        ("UPDATE", 11, 1, "b"),
        ("DELETE", 12, 1, "b"),  # a DELETE's table columns are the deleted row
    ]
    assert [r["_before"] for r in rows] == [None, {"id": 1, "name": "a"}, None]
    assert [(r["_topic"], r["_partition"], r["_offset"]) for r in rows] == [
        ("t", 0, 1),
        ("t", 0, 2),
        ("t", 0, 3),
    ]
    assert _written_back(schema, result) == [
        RowChange(schema, op, ts, row, before) for op, ts, row, before in changes
    ]


def test_fit_batch_takes_a_users_columns_casts_and_fills_nulls() -> None:
    schema = table()
    result = _read(schema, simple_messages(schema, [(Op.INSERT, 10, (1, "a"), None)]))
    wanted = pa.schema([("NAME", pa.string()), ("id", pa.string()), ("extra", pa.int32())])
    fitted = fit_batch(result.to_batches()[0], wanted)
    assert fitted.to_pylist() == [{"NAME": "a", "id": "1", "extra": None}]
    with pytest.raises(SchemaError, match="column name is read as string") as caught:
        fit_batch(result.to_batches()[0], pa.schema([("name", pa.int64())]))
    assert caught.value.column == "name"


# --- the decode path, property-based -----------------------------------------------------

_INTS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_ASCII = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=10)


@st.composite
def column_values(draw: st.DrawFn) -> tuple[str, st.SearchStrategy[Any]]:
    """A MySQL type and a strategy of its mounter values (ticdc_sink.events)."""
    kind = draw(
        st.sampled_from(
            [*_INTS, "year", "float", "double", "decimal", "date"]
            + ["datetime", "timestamp", "time", "enum", "set", "bit"]
            + ["json", "varchar", "varbinary"]
        )
    )
    if kind in _INTS:
        bits = _INTS[kind]
        if draw(st.booleans()):
            return f"{kind} unsigned", st.integers(0, 2**bits - 1)
        return kind, st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    simple: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
        "year": ("year", st.sampled_from([0]) | st.integers(1901, 2155)),
        "float": ("float", st.floats(width=32, allow_nan=False, allow_infinity=False)),
        "double": ("double", st.floats(allow_nan=False, allow_infinity=False)),
        "decimal": (
            "decimal(18,3)",
            st.integers(-(10**15) + 1, 10**15 - 1).map(lambda n: str(Decimal(n).scaleb(-3))),
        ),
        "date": ("date", st.dates(dt.date(1000, 1, 1)).map(dt.date.isoformat)),
        "datetime": (
            "datetime(3)",
            st.datetimes(dt.datetime(1000, 1, 1)).map(lambda d: d.isoformat(" ", "milliseconds")),
        ),
        "timestamp": (
            "timestamp(3)",
            st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 1)).map(
                lambda d: d.isoformat(" ", "milliseconds")
            ),
        ),
        "time": (
            "time",
            st.integers(-838, 838).map(lambda h: f"{'-' if h < 0 else ''}{abs(h):02d}:59:00"),
        ),
        "enum": ("enum('a','b','c')", st.integers(1, 3)),
        "set": ("set('a','b','c')", st.integers(0, 7)),
        "bit": ("bit(64)", st.integers(0, 2**64 - 1)),
        "json": ("json", _ASCII.map(lambda s: json.dumps({"k": s}, separators=(", ", ": ")))),
        "varchar": ("varchar(64)", st.text(st.characters(exclude_categories=("Cs",)), max_size=12)),
        "varbinary": ("varbinary(16)", st.binary(max_size=16)),
    }
    return simple[kind]


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(column_values(), min_size=1, max_size=6), st.data())
def test_decode_to_rows_round_trips_through_the_writers_input(
    columns: list[tuple[str, st.SearchStrategy[Any]]], data: st.DataObject
) -> None:
    schema = table(columns={f"c{i}": mysql for i, (mysql, _) in enumerate(columns)})

    def image(key: int) -> tuple[Any, ...]:
        return (key, *(data.draw(st.none() | values) for _, values in columns))

    changes = []
    for key in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(Op))
        row, before = image(key), image(key)
        changes.append(
            (
                op,
                1000 + key,
                None if op is Op.DELETE else row,
                None if op is Op.INSERT else before,
            )
        )
    result = _read(schema, simple_messages(schema, changes, watermark=2000))
    assert _written_back(schema, result) == [
        RowChange(schema, op, ts, row, before) for op, ts, row, before in changes
    ]

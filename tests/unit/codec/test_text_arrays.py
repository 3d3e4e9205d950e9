"""The Arrow casts of value text (`codec.text_arrays`) give what the parsers give one
value at a time, or are refused (never another value): integers, floats, float32s,
DECIMALs (as numbers and as their text), ENUM members, over Go's forms and others."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.column_path import assert_same_outcome, read_outcome
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog, simple_messages, table
from ticdc_sink.codec.text_arrays import (
    DECIMAL,
    INTEGER,
    NUMBER,
    decimal_texts,
    decimals,
    enum_members,
    float32s,
    matches,
)
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.gotext import to_float32
from ticdc_sink.read.options import ReadConfig

_DIGITS = st.text("0123456789", min_size=1, max_size=25)
_TEXTS = st.one_of(
    st.builds(lambda s, i: f"{s}{i}", st.sampled_from(["", "-"]), _DIGITS),
    st.builds(lambda s, i, f: f"{s}{i}.{f}", st.sampled_from(["", "-"]), _DIGITS, _DIGITS),
    st.builds(
        lambda m, e: f"{m}e{e}",
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(-400, 400),
    ),
    st.floats().map(repr),
    st.sampled_from(
        [
            "0.0000001",
            "-0.0000000",
            "0.000000",
            "007.50",
            "-0",
            "1E5",
            " 1",
            "0x10",
            "+1",
            "",
            "nan",
            "inf",
            "3.4e39",
            "1_000",
        ]
    ),
    st.text(max_size=8),
)


def _texts() -> st.SearchStrategy[list[str | None]]:
    return st.lists(st.none() | _TEXTS, min_size=1, max_size=6)


def _parsed(parse: Any, values: list[str | None]) -> list[Any] | None:
    """The parser's values, or None where it refuses one."""
    try:
        return [None if v is None else parse(v) for v in values]
    except (ValueError, ArithmeticError):
        return None


@settings(max_examples=examples(500), deadline=None)
@given(values=_texts())
def test_integers_cast_as_int_parses(values: list[str | None]) -> None:
    strings = pa.array(values, pa.string())
    if not matches(strings, INTEGER):
        return
    try:
        got = strings.cast(pa.int64()).to_pylist()
    except pa.ArrowException:
        return
    assert got == _parsed(int, values)


@settings(max_examples=examples(500), deadline=None)
@given(values=_texts())
def test_floats_cast_as_float_and_float32_parse(values: list[str | None]) -> None:
    strings = pa.array(values, pa.string())
    if not matches(strings, NUMBER):
        return
    try:
        doubles = strings.cast(pa.float64()).to_pylist()
    except pa.ArrowException:
        return
    assert doubles == _parsed(float, values)
    try:
        floats = float32s(strings).to_pylist()
    except (OverflowError, pa.ArrowException):
        assert _parsed(lambda v: to_float32(float(v)), values) is None
        return
    assert floats == _parsed(lambda v: to_float32(float(v)), values)


@settings(max_examples=examples(500), deadline=None)
@given(values=_texts(), precision=st.integers(1, 38), data=st.data())
def test_decimals_cast_as_decimal_parses_or_are_refused(
    values: list[str | None], precision: int, data: Any
) -> None:
    scale = data.draw(st.integers(0, precision))
    strings = pa.array(values, pa.string())
    if not matches(strings, DECIMAL):
        return
    kind = pa.decimal128(precision, scale)
    try:
        got = decimals(strings, kind)
    except pa.ArrowException:
        got = None
    try:
        expected = pa.array(_parsed(Decimal, values), kind)
    except pa.ArrowException:
        expected = None
    if got is not None:  # refused (None): typed one by one instead
        assert expected is not None and got.equals(expected)


@settings(max_examples=examples(500), deadline=None)
@given(values=_texts())
def test_decimal_texts_are_the_text_decimal_prints(values: list[str | None]) -> None:
    strings = pa.array(values, pa.string())
    if not matches(strings, DECIMAL):
        return
    got = decimal_texts(strings)
    if got is not None:
        assert got.to_pylist() == [None if v is None else str(Decimal(v)) for v in values]


def test_decimal_texts_refuse_what_decimal_prints_otherwise() -> None:
    for text in ("0.0000001", "007.50", "00"):
        assert str(Decimal(text)) != text
        assert decimal_texts(pa.array([text])) is None
    assert decimal_texts(pa.array(["-0.00", "12.50", None])) is not None


@settings(max_examples=examples(300), deadline=None)
@given(values=_texts(), elements=st.lists(st.text(max_size=3), min_size=1, max_size=4))
def test_enum_members_are_the_converter_s(values: list[str | None], elements: list[str]) -> None:
    strings = pa.array(values, pa.string())
    if not matches(strings, INTEGER):
        return
    try:
        got = enum_members(strings, pa.array(["", *elements])).to_pylist()
    except pa.ArrowException:
        return
    member = [
        None if v is None else (elements[int(v) - 1] if 0 < int(v) <= len(elements) else "")
        for v in values
    ]
    assert got == member


def test_a_decimal_beyond_its_digits_is_not_cast() -> None:
    # pyarrow's cast of this text to decimal(38, 30) overflows silently (30613268.158...).
    kind = pa.decimal128(38, 30)
    assert decimals(pa.array(["711178002.0"]), kind) is None
    assert decimals(pa.array(["0.5", None]), kind) is not None


def test_simple_json_reads_a_decimal_beyond_its_digits_as_the_row_path_does() -> None:
    schema = table("t", {"d": "decimal(38,30)"})
    # a table's first row takes the row path; the rows after it, the column-wise one
    rows = [(Op.INSERT, 5, (i, "0.5"), None) for i in range(3)]
    values = simple_messages(schema, rows)
    message = orjson.loads(values[3] or b"")
    message["data"]["d"] = "711178002.0"  # pyarrow casts it as 30613268.1581...
    log = FakeTopicLog({0: [*values[:3], orjson.dumps(message)]})
    config = ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t"})
    row_path = read_outcome(config, log, columnwise=False)
    assert row_path[0] is DecodeError  # the value does not fit decimal(38, 30)
    assert_same_outcome(read_outcome(config, log, columnwise=True), row_path)

"""Go's and TiDB's text rules (`ticdc_sink.gotext`): strconv float formatting, the float
text of Go's JSON writers, Go strings and each JSON writer's string escaping."""

from __future__ import annotations

import math
import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_sink.codec.gojson import dumps
from ticdc_sink.gotext import (
    easyjson_quote,
    format_float,
    format_float_exp,
    go_string,
    json_float,
    json_quote,
    jsoniter_float,
    jsoniter_quote,
    tidb_json_quote,
    to_float32,
)

# --- Go float formatting ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "bits", "expected"),
    [
        (3.14, 32, "3.14"),
        (3.14, 64, "3.14"),
        (to_float32(3.14), 64, "3.140000104904175"),
        (95.0, 32, "95"),
        (90.5, 32, "90.5"),
        (12345.123, 32, "12345.123"),
        (16777217.0, 32, "16777216"),
        (0.1, 32, "0.1"),
        (1e-7, 64, "0.0000001"),
        (1e21, 64, "1000000000000000000000"),
        (-0.0, 64, "-0"),
        (-0.0, 32, "-0"),
        (0.0, 64, "0"),
        (3.4028234663852886e38, 32, "340282350000000000000000000000000000000"),
        # a shorter rounding would overflow float32
        (3.4025001647762064e38, 32, "340250020000000000000000000000000000000"),
        (2.0**-20, 32, "0.0000009536743"),  # a power of two: uneven float32 gaps
        (16777217.0, 64, "16777217"),
        (1e-45, 32, "0.000000000000000000000000000000000000000000001"),
        (5e-324, 64, "0." + "0" * 323 + "5"),
        (-1.5, 64, "-1.5"),
        (123456789.0, 32, "123456790"),
    ],
)
def test_format_float_matches_go_formatfloat_f(value: float, bits: int, expected: str) -> None:
    assert format_float(value, bits) == expected


@pytest.mark.parametrize(
    ("value", "bits", "expected"),
    [
        (1e-7, 64, "1e-7"),  # Go's JSON drops the exponent's leading zero
        (1.5e-10, 64, "1.5e-10"),
        (1e21, 64, "1e+21"),
        (1e20, 64, "100000000000000000000"),
        (1e-6, 64, "0.000001"),
        (9.99e-7, 64, "9.99e-7"),
        (-0.0, 64, "-0"),
        (3.14, 32, "3.14"),
        (1e-6, 32, "0.000001"),
        (1e21, 32, "1e+21"),
        (123456789e20, 64, "1.23456789e+28"),
        (1e-300, 64, "1e-300"),
    ],
)
def test_json_float_is_go_encoding_json(value: float, bits: int, expected: str) -> None:
    assert json_float(value, bits) == expected


def test_format_float_exp_keeps_two_exponent_digits() -> None:
    assert format_float_exp(1e-7) == "1e-07"
    assert format_float_exp(1.5e21) == "1.5e+21"
    assert format_float_exp(0.0) == "0e+00"


def test_go_float_refuses_nan_and_infinity() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            json_float(bad)
        with pytest.raises(ValueError):
            format_float(bad)


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def test_float32_text_reads_back_as_the_same_float32() -> None:
    rng = random.Random(20240601)
    for _ in range(3000):
        value = _f32(rng.getrandbits(32))
        if math.isfinite(value):
            assert to_float32(float(format_float(value, 32))) == value


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_float32_formatting_agrees_with_numpy_dragon4(bits: int) -> None:
    np = pytest.importorskip("numpy")
    value = _f32(bits)
    if math.isfinite(value):
        expected = np.format_float_positional(np.float32(value), unique=True, trim="-")
        assert format_float(value, 32) == expected


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_float64_formatting_agrees_with_numpy_dragon4(bits: int) -> None:
    np = pytest.importorskip("numpy")
    value = _f64(bits)
    if math.isfinite(value):
        expected = np.format_float_positional(np.float64(value), unique=True, trim="-")
        assert format_float(value, 64) == expected


# --- jsoniter (Debezium) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (1e-7, "1e-07"),
        (1.5e-10, "1.5e-10"),
        (1e21, "1e+21"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.000001, "0.000001"),
        (-2.5, "-2.5"),
    ],
)
def test_jsoniter_float64(value: float, text: str) -> None:
    assert jsoniter_float(value) == text


def test_jsoniter_float32() -> None:
    assert jsoniter_float(12345.12345, 32) == "12345.123"
    assert jsoniter_float(3.14, 32) == "3.14"
    assert jsoniter_float(1e-7, 32) == "1e-07"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_jsoniter_float64_reads_back(value: float) -> None:
    assert float(jsoniter_float(value)) == value


def test_jsoniter_float_refuses_nan_and_infinity() -> None:
    for bits in (32, 64):
        for bad in (math.nan, math.inf, -math.inf):
            with pytest.raises(ValueError):
                jsoniter_float(bad, bits)


def test_jsoniter_quote() -> None:
    assert jsoniter_quote("\x1f") == '"\\u001f"'
    assert jsoniter_quote('a"\\\n\r\t\b\f\x01\x7f<>&\u2028é') == (
        '"a\\"\\\\\\n\\r\\t\\u0008\\u000c\\u0001\x7f<>&\u2028é"'
    )


# --- encoding/json and TiDB ------------------------------------------------------------------


def test_go_string_replaces_each_invalid_byte() -> None:
    # Go's utf8.DecodeRune reports each byte of a broken sequence on its own.
    assert go_string(b"\xe2\x80A\xed\xa0\x80\xff") == "\ufffd\ufffdA\ufffd\ufffd\ufffd\ufffd"
    assert go_string("bad\udc80") == "bad\ufffd\ufffd\ufffd"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<a href='x'>&amp;</a>", r"\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e"),
        ("line\u2028para\u2029", r"line\u2028para\u2029"),
        ('quote " back \\ slash /', r"quote \" back \\ slash /"),
        ("\b\f\n\r\t", r"\b\f\n\r\t"),
        ("\x00\x01\x0b\x1b\x1f", r"\u0000\u0001\u000b\u001b\u001f"),
        ("\x7f", "\x7f"),  # DEL is not escaped
        ("é世😀\ufeff", "é世😀\ufeff"),  # non-ASCII raw UTF-8
        ("bad\udc80", "bad\ufffd\ufffd\ufffd"),  # invalid UTF-8: one U+FFFD a byte
    ],
)
def test_json_quote_is_go_encoding_json(text: str, expected: str) -> None:
    assert json_quote(text) == '"' + expected + '"'


@given(st.text())
def test_json_quote_writes_what_the_orjson_path_writes(text: str) -> None:
    # codec.gojson.dumps is the fast path of the same rules (orjson plus a byte pass).
    assert json_quote(text).encode() == dumps(text)


def test_tidb_json_quote_has_no_html_escaping() -> None:
    # TiDB's jsonMarshalStringTo (pre-2025): no \b \f short forms, `<>&` raw, U+2028/9
    # escaped, a lone surrogate written as U+FFFD.
    assert tidb_json_quote('<a>&"\\\n\b\f\u2028\ud800') == (
        '"<a>&\\"\\\\\\n\\u0008\\u000c\\u2028\ufffd"'
    )


def test_json_float_is_tidb_json_float() -> None:
    # TiDB marshalFloat64To (pre-2025) cleans `e-07` to `e-7` as encoding/json does.
    assert json_float(1e-7) == "1e-7"
    assert json_float(1e-10) == "1e-10"
    assert json_float(1e300) == "1e+300"


# --- easyjson (canal-json) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain é 中", '"plain é 中"'),
        ("tab\tnl\ncr\r", '"tab\\tnl\\ncr\\r"'),
        ("\b\f\x00\x1f", '"\\u0008\\u000c\\u0000\\u001f"'),  # easyjson: no \b \f short forms
        ('q"b\\', '"q\\"b\\\\"'),
        ("<a>&", '"\\u003ca\\u003e\\u0026"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("\x7f", '"\x7f"'),  # DEL is written raw
        ("\udcff", '"\\ufffd"'),  # one invalid UTF-8 byte (surrogateescape)
    ],
)
def test_easyjson_quote(text: str, expected: str) -> None:
    assert easyjson_quote(text) == expected

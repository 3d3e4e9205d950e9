"""canal-json encoding: golden messages from TiCDC's docs, tiflow's mysqlType / sqlType
vectors, easyjson escaping, the column options and large-message handling."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import paths
from ticdc_sink.codec import Message, protocols
from ticdc_sink.codec.canal_json import (
    CanalJsonEncoder,
    encode_watermark,
    full_mysql_type,
    java_sql_type,
    mysql_type,
)
from ticdc_sink.config import CodecConfig, LargeMessageHandleOption, Protocol
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import InputError, MessageTooLargeError, SchemaError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import easyjson_quote
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

GOLDEN = paths.GOLDEN / "canal_json"
CONFIG = CodecConfig(protocol=Protocol.CANAL_JSON)
EXTENSION = attrs.evolve(CONFIG, enable_tidb_extension=True)
COMMIT_TS = 429918007904436226
BUILD_TS = 1639633142960


def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.value.json").read_bytes()


def col(name: str, type_text: str, **kwargs: Any) -> Column:
    return Column(name, parse_mysql_type(type_text), **kwargs)


def table(name: str, *columns: Column, pk: tuple[str, ...] = ("id",)) -> TableSchema:
    indexes = (Index("PRIMARY", pk, unique=True, primary=True),) if pk else ()
    return TableSchema(database="test", table=name, columns=columns, indexes=indexes)


# The docs' `test.tp_int`.
TP_INT = table(
    "tp_int",
    col("id", "int", nullable=False),
    col("c_tinyint", "tinyint"),
    col("c_smallint", "smallint"),
    col("c_mediumint", "mediumint"),
    col("c_int", "int"),
    col("c_bigint", "bigint"),
)
ROW_BEFORE = (2, 127, 32767, 8388607, 2147483647, 9223372036854775807)
ROW_AFTER = (2, 0, 32767, 8388607, 0, 9223372036854775807)

# The docs' `test.t` of the mysqlType example.
T_TYPES = table(
    "t",
    col("id", "int", nullable=False),
    col("c_decimal", "decimal(10, 4)"),
    col("c_char", "char(16)"),
    col("c_varchar", "varchar(16)"),
    col("c_binary", "binary(16)"),
    col("c_varbinary", "varbinary(16)"),
    col("c_enum", "enum('a','b','c')"),
    col("c_set", "set('a','b','c')"),
    col("c_bit", "bit(64)"),
)
T_ROW = (1, "123.4560", "abc", "abc", b"abc" + b"\0" * 13, b"abc", 1, 3, 65)


def encoder(
    t: TableSchema, config: CodecConfig = CONFIG, build_ts: int = BUILD_TS
) -> CanalJsonEncoder:
    return CanalJsonEncoder(config, t, build_ts_ms=build_ts)


def encode(change: RowChange, config: CodecConfig = CONFIG) -> Message:
    return encoder(change.table, config).encode_row(change)


def parsed(message: Message) -> dict[str, Any]:
    assert message.value is not None
    return json.loads(message.value)


# --- golden messages from the TiCDC docs ------------------------------------------------


def test_insert_matches_the_doc_example() -> None:
    message = encode(RowChange(TP_INT, Op.INSERT, COMMIT_TS, ROW_BEFORE), EXTENSION)
    assert message.value == golden("insert_tp_int")
    assert message.key == b""  # tiflow's async producer: a nil key becomes an empty one
    assert (message.commit_ts, message.rows) == (COMMIT_TS, 1)


def test_update_matches_the_doc_example() -> None:
    change = RowChange(TP_INT, Op.UPDATE, COMMIT_TS, ROW_AFTER, before=ROW_BEFORE)
    assert encode(change).value == golden("update_tp_int")


@pytest.mark.parametrize("option", ["only_output_updated_columns", "content_compatible"])
def test_update_with_only_updated_columns_matches_the_official_canal_example(option: str) -> None:
    change = RowChange(TP_INT, Op.UPDATE, COMMIT_TS, ROW_AFTER, before=ROW_BEFORE)
    value = encode(change, attrs.evolve(CONFIG, **{option: True})).value
    assert value is not None
    if option == "only_output_updated_columns":
        assert value == golden("update_tp_int_only_updated")
    else:  # content-compatible implies it (tiflow common/config.go), with full types
        assert json.loads(value)["old"] == json.loads(golden("update_tp_int_only_updated"))["old"]
        assert json.loads(value)["mysqlType"]["id"] == "int(11)"


def test_delete_matches_the_doc_example() -> None:
    change = RowChange(TP_INT, Op.DELETE, COMMIT_TS, None, before=ROW_AFTER)
    assert encode(change).value == golden("delete_tp_int")


def test_mysql_type_example_matches_the_doc() -> None:
    message = encode(RowChange(T_TYPES, Op.INSERT, COMMIT_TS, T_ROW))
    assert message.value == golden("insert_t_types")


def test_content_compatible_writes_full_column_types() -> None:
    config = attrs.evolve(CONFIG, content_compatible=True)
    message = encode(RowChange(T_TYPES, Op.INSERT, COMMIT_TS, T_ROW), config)
    assert message.value == golden("insert_t_types_content_compatible")


def test_watermark_matches_the_doc_example() -> None:
    message = encode_watermark(EXTENSION, COMMIT_TS, build_ts_ms=1640007050284)
    assert message is not None
    assert message.value == golden("watermark")
    assert message.key is None  # the sync producer path keeps a null key
    assert message.commit_ts == COMMIT_TS


def test_watermark_needs_the_tidb_extension() -> None:
    assert encode_watermark(CONFIG, COMMIT_TS, build_ts_ms=1) is None
    assert protocols.encode_watermark(CONFIG, COMMIT_TS, build_ts_ms=1) is None
    assert protocols.encode_watermark(EXTENSION, COMMIT_TS, build_ts_ms=1640007050284) == (
        encode_watermark(EXTENSION, COMMIT_TS, build_ts_ms=1640007050284)
    )


def test_build_encoder_dispatches_to_canal_json() -> None:
    built = protocols.build_encoder(EXTENSION, TP_INT, build_ts_ms=BUILD_TS)
    assert isinstance(built, CanalJsonEncoder)
    assert built.encode_bootstrap() is None
    change = RowChange(TP_INT, Op.INSERT, COMMIT_TS, ROW_BEFORE)
    assert built.encode_row(change).value == golden("insert_tp_int")


def test_binary_bytes_match_the_doc_escaping_example() -> None:
    data = bytes([5, 7, 10, 15, 36, 50, 43, 99, 120, 60, 38, 255, 254, 45, 55, 70])
    t = table("b", col("id", "int", nullable=False), col("c_varbinary", "varbinary(16)"))
    value = encode(RowChange(t, Op.INSERT, COMMIT_TS, (1, data))).value
    assert value is not None
    expected = '"c_varbinary":"\\u0005\\u0007\\n\\u000f$2+cx\\u003c\\u0026ÿþ-7F"'
    assert expected.encode() in value
    assert json.loads(value)["data"][0]["c_varbinary"].encode("latin-1") == data


# --- tiflow type_test.go: mysqlType and sqlType ------------------------------------------

VECTORS = json.loads((GOLDEN / "mysql_types.json").read_text())


def _sample(column: Column, value: Any) -> Any:
    if isinstance(value, str) and column.type.is_binary:
        return value.encode()  # tiflow passes []uint8("测试binary")
    return value


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["type"])
def test_mysql_and_java_types_match_tiflow(vector: dict[str, Any]) -> None:
    column = col("b", vector["type"])
    assert mysql_type(column) == vector["mysqlType"]
    assert full_mysql_type(column) == vector["fullMysqlType"]
    for value, code in vector["sqlType"]:
        assert java_sql_type(column, _sample(column, value)) == code


@pytest.mark.parametrize("vector", [v for v in VECTORS if v["sqlType"]], ids=lambda v: v["type"])
def test_messages_carry_the_tiflow_types(vector: dict[str, Any]) -> None:
    column = col("b", vector["type"])
    t = table("t", col("a", "int", nullable=False), column, pk=("a",))
    for full in (False, True):
        config = attrs.evolve(CONFIG, content_compatible=full)
        for value, code in vector["sqlType"]:
            message = parsed(
                encode(RowChange(t, Op.INSERT, 1 << 18, (1, _sample(column, value))), config)
            )
            assert message["sqlType"] == {"a": 4, "b": code}
            expected = vector["fullMysqlType"] if full else vector["mysqlType"]
            assert message["mysqlType"] == {"a": "int(11)" if full else "int", "b": expected}


def test_sql_type_comes_from_the_new_image_and_the_old_image_for_delete() -> None:
    t = table("u", col("id", "int", nullable=False), col("u", "tinyint unsigned"))
    update = RowChange(t, Op.UPDATE, 1 << 18, (1, 200), before=(1, 100))
    assert parsed(encode(update))["sqlType"] == {"id": 4, "u": 5}
    update = RowChange(t, Op.UPDATE, 1 << 18, (1, 100), before=(1, 200))
    assert parsed(encode(update))["sqlType"] == {"id": 4, "u": -6}
    delete = RowChange(t, Op.DELETE, 1 << 18, None, before=(1, 255))
    assert parsed(encode(delete))["sqlType"] == {"id": 4, "u": 5}


def test_enum_elements_are_written_as_tidb_formats_them() -> None:
    column = Column("e", MySQLType("enum", elements=("it's", "a\nb", "c\\d")))
    assert full_mysql_type(column) == "enum('it''s','a\\nb','c\\d')"


@pytest.mark.parametrize(
    ("type_text", "full"),
    [
        ("datetime(6)", "datetime(6)"),
        ("time(0)", "time"),
        ("varbinary(8)", "varbinary(8)"),
        ("year", "year(4)"),
        ("vector(3)", "vector(3)"),
        ("vector", "vector"),
        ("mediumtext", "mediumtext"),
        ("double(10,2) unsigned", "double(10,2) unsigned"),
    ],
)
def test_more_full_types(type_text: str, full: str) -> None:
    assert full_mysql_type(col("x", type_text)) == full


# --- values and escaping -----------------------------------------------------------------


TEXT = table("x", col("id", "int", nullable=False), col("s", "longtext"), col("j", "json"))


@given(st.text(), st.text(alphabet='\\bf<>&"\b\f\x00\x1f\x7f\u2028\u2029é中 '))
def test_messages_escape_text_as_easyjson(text: str, tricky: str) -> None:
    # The encoder writes values with orjson and patches its escaping; `easyjson_quote` is
    # character-by-character reference.
    value = encode(RowChange(TEXT, Op.INSERT, 1 << 18, (1, text, tricky))).value
    assert value is not None
    expected = (
        '"data":[{"id":"1","s":' + easyjson_quote(text) + ',"j":' + easyjson_quote(tricky) + "}]"
    )
    assert expected.encode() in value


def test_escaped_backslash_before_b_is_not_a_backspace() -> None:
    value = encode(RowChange(TEXT, Op.INSERT, 1 << 18, (1, "\\b\\f\b", "<"))).value
    assert value is not None
    assert b'"s":"\\\\b\\\\f\\u0008","j":"\\u003c"' in value


def test_invalid_utf8_in_text_bytes_becomes_one_replacement_per_byte() -> None:
    t = table("x", col("id", "int", nullable=False), col("s", "varchar(10)"))
    value = encode(RowChange(t, Op.INSERT, 1 << 18, (1, b"a\xe2\x82b\xff"))).value
    assert value is not None
    assert b'"s":"a\\ufffd\\ufffdb\\ufffd"' in value


@pytest.mark.parametrize(
    ("type_text", "value", "text"),
    [
        ("float", 3.14, "3.14"),
        ("float", 1e-7, "0.0000001"),
        ("float", float("nan"), "0"),
        ("double", 0.1, "0.1"),
        ("double", 1e21, "1000000000000000000000"),
        ("double", float("-inf"), "0"),
        ("bigint unsigned", 18446744073709551615, "18446744073709551615"),
        ("tinyint(1)", True, "1"),
        ("bit(8)", b"\x01\x02", "258"),
        ("year", 0, "0"),
        ("json", '{"a": [1, 2]}', '{"a": [1, 2]}'),
        ("timestamp(3)", "2024-01-02 03:04:05.120", "2024-01-02 03:04:05.120"),
        ("time", "-838:59:59", "-838:59:59"),
        ("vector", "[1,2.5]", "[1,2.5]"),
        ("blob", b"", ""),
    ],
)
def test_values_are_rendered_as_tiflow_formats_them(type_text: str, value: Any, text: str) -> None:
    t = table("v", col("id", "int", nullable=False), col("v", type_text))
    assert parsed(encode(RowChange(t, Op.INSERT, 1 << 18, (1, value))))["data"] == [
        {"id": "1", "v": text}
    ]


def test_null_values_are_json_null() -> None:
    t = table("n", col("id", "int", nullable=False), col("v", "varchar(3)"))
    assert parsed(encode(RowChange(t, Op.INSERT, 1 << 18, (1, None))))["data"] == [
        {"id": "1", "v": None}
    ]


def test_names_are_escaped() -> None:
    t = TableSchema(database="d<b", table='t"1', columns=(col("a&b", "int", nullable=False),))
    value = encode(RowChange(t, Op.INSERT, 1 << 18, (1,))).value
    assert value is not None
    assert value.startswith(b'{"id":0,"database":"d\\u003cb","table":"t\\"1","pkNames":[]')
    assert b'"a\\u0026b":"1"' in value


# --- options -----------------------------------------------------------------------------


def test_only_updated_columns_compares_values_and_nulls() -> None:
    t = table(
        "o",
        col("id", "int", nullable=False),
        col("f", "float"),
        col("s", "varchar(5)"),
        col("b", "varbinary(5)"),
    )
    config = attrs.evolve(CONFIG, only_output_updated_columns=True)
    same = RowChange(t, Op.UPDATE, 1 << 18, (1, 0.1, None, b"x"), before=(1, 0.1, None, b"x"))
    assert parsed(encode(same, config))["old"] == [{}]
    # 0.1 and 0.1000000001 are the same float32, as TiCDC compares them.
    change = RowChange(
        t, Op.UPDATE, 1 << 18, (1, 0.1, "a", b"x"), before=(1, 0.1000000001, None, b"y")
    )
    assert parsed(encode(change, config))["old"] == [{"s": None, "b": "y"}]


def test_delete_only_handle_key_columns() -> None:
    t = table("d", col("id", "int", nullable=False), col("v", "varchar(5)"), col("w", "int"))
    config = attrs.evolve(EXTENSION, delete_only_output_handle_key_columns=True)
    message = parsed(encode(RowChange(t, Op.DELETE, 5 << 18, None, before=(7, "x", 3)), config))
    assert message["data"] == [{"id": "7"}]
    assert message["sqlType"] == {"id": 4}
    assert message["mysqlType"] == {"id": "int"}
    assert message["pkNames"] == ["id"]
    assert message["_tidb"] == {"commitTs": 5 << 18}  # no onlyHandleKey marker
    insert = parsed(encode(RowChange(t, Op.INSERT, 5 << 18, (7, "x", 3)), config))
    assert insert["data"] == [{"id": "7", "v": "x", "w": "3"}]


def test_no_primary_key_gives_empty_pk_names() -> None:
    t = TableSchema(
        database="d",
        table="t",
        columns=(col("a", "int", nullable=False), col("b", "int")),
        indexes=(Index("a", ("a",), unique=True),),
    )
    message = parsed(encode(RowChange(t, Op.INSERT, 1 << 18, (1, 2))))
    assert message["pkNames"] == []


def test_pk_names_are_in_column_order() -> None:
    t = table(
        "p",
        col("a", "int", nullable=False),
        col("b", "int", nullable=False),
        col("c", "int"),
        pk=("b", "a"),
    )
    assert parsed(encode(RowChange(t, Op.INSERT, 1 << 18, (1, 2, 3))))["pkNames"] == ["a", "b"]


# --- large messages ----------------------------------------------------------------------

WIDE = table("w", col("id", "int", nullable=False), col("text", "longtext"))


def test_handle_key_only_for_large_messages() -> None:
    config = attrs.evolve(
        EXTENSION,
        max_message_bytes=400,
        large_message_handle_option=LargeMessageHandleOption.HANDLE_KEY_ONLY,
    )
    small = encode(RowChange(WIDE, Op.INSERT, 3 << 18, (1, "x")), config)
    assert "onlyHandleKey" not in parsed(small)["_tidb"]
    message = encode(RowChange(WIDE, Op.INSERT, 3 << 18, (1, "x" * 500)), config)
    body = parsed(message)
    assert body["data"] == [{"id": "1"}]
    assert body["sqlType"] == {"id": 4}
    assert body["mysqlType"] == {"id": "int"}
    assert body["_tidb"] == {"commitTs": 3 << 18, "onlyHandleKey": True}
    assert message.value is not None and message.value.endswith(b',"onlyHandleKey":true}}')
    update = RowChange(WIDE, Op.UPDATE, 3 << 18, (1, "y" * 500), before=(1, "x"))
    body = parsed(encode(update, config))
    assert (body["old"], body["data"]) == ([{"id": "1"}], [{"id": "1"}])


def test_too_large_even_with_handle_key_only() -> None:
    config = attrs.evolve(
        EXTENSION,
        max_message_bytes=100,
        large_message_handle_option=LargeMessageHandleOption.HANDLE_KEY_ONLY,
    )
    with pytest.raises(MessageTooLargeError) as info:
        encode(RowChange(WIDE, Op.INSERT, 3 << 18, (1, "x" * 500)), config)
    assert info.value.table == "test.w"
    assert info.value.key == "id=1"


def test_too_large_without_a_policy() -> None:
    config = attrs.evolve(CONFIG, max_message_bytes=300)
    change = RowChange(WIDE, Op.INSERT, 3 << 18, (1, "x" * 500))
    with pytest.raises(MessageTooLargeError, match="test.w key id=1 is 771 bytes"):
        encode(change, config)
    size = len(encode(change).value or b"") + 36
    with pytest.raises(MessageTooLargeError) as info:
        encode(change, attrs.evolve(CONFIG, max_message_bytes=size - 1))
    assert info.value.size == size
    assert encode(change, attrs.evolve(CONFIG, max_message_bytes=size)).value


# --- input errors --------------------------------------------------------------------------


def test_update_without_old_row_is_an_error() -> None:
    with pytest.raises(InputError, match="UPDATE of test.tp_int has no old row") as info:
        encode(RowChange(TP_INT, Op.UPDATE, 1 << 18, ROW_AFTER))
    assert info.value.table == "test.tp_int"


def test_a_bad_value_names_the_column() -> None:
    with pytest.raises(InputError, match="column c_int of test.tp_int .int. cannot take 'x'"):
        encode(RowChange(TP_INT, Op.INSERT, 1 << 18, (2, 1, 1, 1, "x", 1)))
    change = RowChange(TP_INT, Op.UPDATE, 1 << 18, ROW_AFTER, before=(2, 1, 1, 1, 1.5, 1))
    config = attrs.evolve(CONFIG, only_output_updated_columns=True)
    with pytest.raises(InputError, match="column c_int") as info:
        encode(change, config)
    assert info.value.column == "c_int"


def test_a_row_of_the_wrong_width_is_an_error() -> None:
    with pytest.raises(InputError, match="has 2 values in its row image; the table has 6"):
        encode(RowChange(TP_INT, Op.INSERT, 1 << 18, (1, 2)))


def test_unsupported_types_fail_when_the_encoder_is_built() -> None:
    t = table("g", col("id", "int", nullable=False), Column("g", MySQLType("geometry")))
    with pytest.raises(SchemaError, match="geometry"):
        encoder(t)


# --- DDL and determinism -----------------------------------------------------------------


def test_encode_ddl() -> None:
    enc = encoder(TP_INT, EXTENSION, build_ts=1639633095489)
    message = enc.encode_ddl(None, "CREATE TABLE `tp_int` (<x>)", COMMIT_TS)
    assert message.key is None
    assert message.value == (
        b'{"id":0,"database":"test","table":"tp_int","pkNames":null,"isDdl":true,'
        b'"type":"CREATE","es":1640007049196,"ts":1639633095489,'
        b'"sql":"CREATE TABLE `tp_int` (\\u003cx\\u003e)","sqlType":null,"mysqlType":null,'
        b'"data":null,"old":null,"_tidb":{"commitTs":429918007904436226}}'
    )
    assert b'"type":"ALTER"' in enc.encode_ddl(TP_INT, "ALTER TABLE t ADD c INT", 1).value


@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=6, max_size=6))
def test_replays_are_byte_identical(values: list[int]) -> None:
    change = RowChange(TP_INT, Op.INSERT, COMMIT_TS, (2, *values[1:]))
    first = encoder(TP_INT, EXTENSION).encode_row(change)
    second = encoder(TP_INT, EXTENSION).encode_row(change)
    assert first == second

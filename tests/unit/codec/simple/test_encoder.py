"""Simple protocol JSON encoding: golden messages from TiCDC's docs, every MySQL type's
rendering, Go JSON escaping and float formatting, table schemas, size limits."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from tests.support import paths
from tests.support.schemas import SIMPLE_DOC_USER
from ticdc_sink.codec import Message
from ticdc_sink.codec.gojson import GoFloat, dumps
from ticdc_sink.codec.protocols import build_encoder, encode_watermark
from ticdc_sink.codec.simple.values import table_schema_json
from ticdc_sink.config import (
    CodecConfig,
    EncodingFormat,
    LargeMessageHandleOption,
)
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import InputError, MessageTooLargeError, SchemaError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

GOLDEN = paths.GOLDEN / "simple"
CONFIG = CodecConfig()


def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.value.json").read_bytes()


def col(name: str, type_text: str, column_id: int = 0, **kwargs: Any) -> Column:
    return Column(name, parse_mysql_type(type_text), column_id=column_id, **kwargs)


USER = SIMPLE_DOC_USER


def encode(change: RowChange, build_ts: int, config: CodecConfig = CONFIG) -> Message:
    return build_encoder(config, change.table, build_ts_ms=build_ts).encode_row(change)


def data_of(message: Message) -> dict[str, Any]:
    assert message.value is not None
    return json.loads(message.value)


# --- golden messages from the TiCDC docs ------------------------------------------------


def test_insert_matches_the_doc_example_byte_for_byte() -> None:
    change = RowChange(USER, Op.INSERT, 447984084414103554, (1, "John Doe", 25, 90.5))
    message = encode(change, 1708923662983)
    assert message.value == golden("insert")
    assert message.key == b""  # sarama StringEncoder(nil): an empty key, not a null one
    assert (message.commit_ts, message.rows) == (447984084414103554, 1)


def test_update_matches_the_doc_example_byte_for_byte() -> None:
    change = RowChange(
        USER,
        Op.UPDATE,
        447984099186180098,
        row=(1, "John Doe", 25, 95.0),
        before=(1, "John Doe", 25, 90.5),
    )
    assert encode(change, 1708923719184).value == golden("update")


def test_delete_matches_the_doc_example_byte_for_byte() -> None:
    change = RowChange(
        USER, Op.DELETE, 447984114259722243, row=None, before=(1, "John Doe", 25, 95.0)
    )
    assert encode(change, 1708923776484).value == golden("delete")


def test_watermark_matches_the_doc_example_byte_for_byte() -> None:
    message = encode_watermark(CONFIG, 447984124732375041, build_ts_ms=1708923816911)
    assert message is not None
    assert message.value == golden("watermark")
    assert message.key is None  # the sync producer path keeps a null key
    assert message.commit_ts == 447984124732375041


def test_bootstrap_matches_the_doc_example_byte_for_byte() -> None:
    table = attrs.evolve(USER, table="new_user")
    message = build_encoder(CONFIG, table, build_ts_ms=1708924603278).encode_bootstrap()
    assert message is not None
    assert message.value == golden("bootstrap")
    assert message.key == b""
    assert (message.commit_ts, message.rows) == (0, 0)


def test_bootstrap_table_schema_matches_the_ddl_example() -> None:
    # The doc's DDL example carries the same table after ADD COLUMN createTime TIMESTAMP.
    ddl = json.loads(golden("ddl_alter"))
    after = attrs.evolve(
        USER,
        columns=(*USER.columns, col("createTime", "timestamp", 5)),
        version=447987408682614791,
    )
    assert table_schema_json(after) == ddl["tableSchema"]
    assert table_schema_json(USER) == ddl["preTableSchema"]


def test_replays_are_byte_identical() -> None:
    change = RowChange(USER, Op.INSERT, 1, (1, "a", 2, 0.1))
    first = encode(change, 5).value
    assert encode(change, 5).value == first
    assert encode(change, 6).value != first  # only buildTs differs


# --- message shape -----------------------------------------------------------------------


def test_update_without_before_image_has_no_old() -> None:
    # Go's formatColumns(nil) is an empty map, which `omitempty` drops.
    change = RowChange(USER, Op.UPDATE, 7, row=(1, "x", 2, 3.0), before=None)
    message = data_of(encode(change, 1))
    assert message["type"] == "UPDATE"
    assert "old" not in message and message["data"]["id"] == "1"


def test_delete_has_old_only_and_insert_data_only() -> None:
    delete = data_of(encode(RowChange(USER, Op.DELETE, 7, None, (1, "x", 2, 3.0)), 1))
    insert = data_of(encode(RowChange(USER, Op.INSERT, 7, (1, "x", 2, 3.0)), 1))
    assert "data" not in delete and delete["old"]["name"] == "x"
    assert "old" not in insert and insert["data"]["name"] == "x"


def test_omitempty_fields_are_dropped_when_zero() -> None:
    table = attrs.evolve(USER, database="", table="", table_id=0, version=0)
    value = encode(RowChange(table, Op.INSERT, 9, (1, None, None, None)), 3).value
    assert value == (
        b'{"version":1,"type":"INSERT","commitTs":9,"buildTs":3,'
        b'"data":{"age":null,"id":"1","name":null,"score":null}}'
    )


def test_data_keys_are_sorted_bytewise() -> None:
    table = TableSchema(
        "d",
        "t",
        (col("b", "int"), col("a", "int"), col("B", "int"), col("é", "int"), col("a_", "int")),
    )
    value = encode(RowChange(table, Op.INSERT, 1, (1, 2, 3, 4, 5)), 0).value
    assert value is not None
    assert value.endswith('"data":{"B":"3","a":"2","a_":"5","b":"1","é":"4"}}'.encode())


# --- value rendering (reference §7.3) ---------------------------------------------------

ALL_TYPES: list[tuple[str, Any, Any]] = [
    # (MySQL type, mounter value, JSON value)
    ("tinyint", -128, "-128"),
    ("tinyint(1)", True, "1"),
    ("tinyint unsigned", 255, "255"),
    ("smallint", -32768, "-32768"),
    ("mediumint unsigned", 16777215, "16777215"),
    ("int", -2147483648, "-2147483648"),
    ("bigint", -9223372036854775808, "-9223372036854775808"),
    ("bigint unsigned", 18446744073709551615, "18446744073709551615"),
    ("year", 2020, "2020"),
    ("float", 3.14, "3.14"),
    ("float", to_float32(3.14), "3.14"),
    ("float", 95.0, "95"),
    ("float", float("nan"), "0"),
    ("double", 1e-7, "0.0000001"),
    ("double", 1e21, "1000000000000000000000"),
    ("double", -0.0, "-0"),
    ("double", float("inf"), "0"),
    ("double", 0.1, "0.1"),
    ("decimal(10,2)", "-1.50", "-1.50"),
    ("decimal(10,0)", "12", "12"),
    ("date", "0000-00-00", "0000-00-00"),
    ("datetime(3)", "2020-01-02 03:04:05.120", "2020-01-02 03:04:05.120"),
    ("timestamp(6)", "2020-01-02 03:04:05.000001", None),  # checked below
    ("time", "-838:59:59", "-838:59:59"),
    ("enum('a','b','c')", 2, "2"),
    ("set('a','b','c')", 5, "5"),
    ("bit(7)", 65, "65"),
    ("bit(16)", b"\x00A", "65"),
    ("json", '{"a": [1, 2]}', '{"a": [1, 2]}'),
    ("char(4)", "ab", "ab"),
    ("varchar(20)", "héllo 世界 😀", "héllo 世界 😀"),
    ("text", "", ""),
    ("varbinary(8)", b"\x00\xff", "AP8="),
    ("binary(3)", b"ab\x00", "YWIA"),
    ("blob", b"", ""),
    ("longblob", b"\xde\xad\xbe\xef", "3q2+7w=="),
    ("int", None, None),
]


def test_every_mysql_type_renders_as_tidb_does() -> None:
    columns = tuple(col(f"c{i:02d}", t, i) for i, (t, _, _) in enumerate(ALL_TYPES))
    table = TableSchema("d", "t", columns)
    row = tuple(v for _, v, _ in ALL_TYPES)
    config = CodecConfig(time_zone="Asia/Shanghai")
    data = data_of(encode(RowChange(table, Op.INSERT, 1, row), 0, config))["data"]
    for i, (type_text, value, expected) in enumerate(ALL_TYPES):
        if type_text.startswith("timestamp"):
            expected = {"location": "Asia/Shanghai", "value": value}
        assert data[f"c{i:02d}"] == expected, type_text


def test_timestamp_is_an_object_with_sorted_keys() -> None:
    table = TableSchema("d", "t", (col("ts", "timestamp"),))
    value = encode(RowChange(table, Op.INSERT, 1, ("2020-01-02 03:04:05",)), 0).value
    assert value is not None
    assert value.endswith(b'"data":{"ts":{"location":"UTC","value":"2020-01-02 03:04:05"}}}')


def test_a_value_of_the_wrong_type_names_the_column() -> None:
    table = TableSchema("d", "t", (col("id", "int"), col("name", "varchar(5)")))
    encoder = build_encoder(CONFIG, table, build_ts_ms=0)
    with pytest.raises(InputError, match="column id of d.t \\(int\\)") as caught:
        encoder.encode_row(RowChange(table, Op.INSERT, 1, ("1", "x")))
    assert caught.value.column == "id"
    with pytest.raises(InputError, match="column name"):
        encoder.encode_row(RowChange(table, Op.INSERT, 1, (1, 5)))
    with pytest.raises(InputError, match="has 1 values; the table has 2 columns"):
        encoder.encode_row(RowChange(table, Op.INSERT, 1, (1,)))


def test_a_float_beyond_float32_is_an_input_error() -> None:
    table = TableSchema("d", "t", (col("f", "float"),))
    with pytest.raises(InputError, match="column f"):
        encode(RowChange(table, Op.INSERT, 1, (1e39,)), 0)


def test_an_unknown_column_type_is_a_schema_error_at_build() -> None:
    table = TableSchema("d", "t", (Column("g", MySQLType("geometry")),))
    with pytest.raises(SchemaError, match="column g has MySQL type 'geometry'"):
        build_encoder(CONFIG, table, build_ts_ms=0)


# --- Go encoding/json escaping (reference §1.8) -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<a href='x'>&amp;</a>", rb"\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e"),
        ("line\u2028para\u2029", rb"line\u2028para\u2029"),
        ('quote " back \\ slash /', rb"quote \" back \\ slash /"),
        ("\b\f\n\r\t", rb"\b\f\n\r\t"),
        ("\x00\x01\x0b\x1b\x1f", rb"\u0000\u0001\u000b\u001b\u001f"),
        ("\x7f", b"\x7f"),  # DEL is not escaped
        ("é世😀\ufeff", "é世😀\ufeff".encode()),  # non-ASCII raw UTF-8
        ("bad\udc80", "bad\ufffd\ufffd\ufffd".encode()),  # invalid UTF-8: one U+FFFD a byte
    ],
)
def test_strings_are_escaped_as_go_encoding_json(text: str, expected: bytes) -> None:
    assert dumps(text) == b'"' + expected + b'"'
    table = TableSchema("d", "t", (col("v", "text"),))
    value = encode(RowChange(table, Op.INSERT, 1, (text,)), 0).value
    assert value is not None
    assert value.endswith(b'"data":{"v":"' + expected + b'"}}')


def test_escaping_applies_to_names_too() -> None:
    table = TableSchema("<db>", "t&", (col("a>b", "int"),))
    value = encode(RowChange(table, Op.INSERT, 1, (1,)), 0).value
    assert value is not None
    assert b'"database":"\\u003cdb\\u003e","table":"t\\u0026"' in value
    assert b'"data":{"a\\u003eb":"1"}' in value


def test_text_bytes_with_invalid_utf8_become_replacement_characters() -> None:
    table = TableSchema("d", "t", (col("v", "varchar(9)"),))
    data = data_of(encode(RowChange(table, Op.INSERT, 1, (b"a\xffb",)), 0))["data"]
    assert data == {"v": "a\ufffdb"}


def test_dumps_keeps_order_and_writes_go_floats() -> None:
    assert dumps({"b": 1, "a": [True, None, GoFloat(1e-7), GoFloat(3.14, 32)]}) == (
        b'{"b":1,"a":[true,null,1e-7,3.14]}'
    )
    assert dumps([GoFloat(1e21), GoFloat(-0.0), GoFloat(100.0)]) == b"[1e+21,-0,100]"
    with pytest.raises(TypeError):
        dumps({"a": object()})


# --- table schema (reference §7.4) ------------------------------------------------------


def test_table_schema_data_types() -> None:
    table = TableSchema(
        "d",
        "t",
        (
            col("z", "decimal(10,2)", 9, default="1.50"),
            col("dt", "datetime(3)", 2),
            col("y", "year", 3),
            col("b", "bit(5)", 4, default="5"),
            col("e", "enum('a','bc')", 5, default="bc"),
            col("s", "set('a','b','c')", 6),
            col("f", "float", 7),
            col("u", "int unsigned", 8),
            col("j", "json", 1),
            col("vb", "varbinary(16)", 10),
            col("zf", "int(5) zerofill", 11),
        ),
    )
    schema = table_schema_json(table)
    by_name = {c["name"]: c for c in schema["columns"]}
    # sorted by column id, not definition order
    assert [c["name"] for c in schema["columns"]] == [
        "j", "dt", "y", "b", "e", "s", "f", "u", "z", "vb", "zf",
    ]  # fmt: skip
    assert by_name["z"]["dataType"] == {
        "mysqlType": "decimal",
        "charset": "binary",
        "collate": "binary",
        "length": 10,
        "decimal": 2,
    }
    assert by_name["z"]["default"] == "1.50"
    assert by_name["dt"]["dataType"]["length"] == 23
    assert by_name["dt"]["dataType"]["decimal"] == 3
    assert by_name["y"]["dataType"] == {
        "mysqlType": "year",
        "charset": "binary",
        "collate": "binary",
        "length": 4,
        "unsigned": True,
        "zerofill": True,
    }
    assert by_name["b"]["dataType"]["unsigned"] is True
    assert by_name["b"]["default"] == 5  # BIT defaults are JSON numbers
    assert by_name["e"]["dataType"] == {
        "mysqlType": "enum",
        "charset": "utf8mb4",
        "collate": "utf8mb4_bin",
        "length": 2,
        "elements": ["a", "bc"],
    }
    assert by_name["s"]["dataType"]["length"] == 5
    assert "decimal" not in by_name["f"]["dataType"]  # FLOAT/DOUBLE never carry it
    assert by_name["u"]["dataType"]["length"] == 10
    assert by_name["u"]["dataType"]["unsigned"] is True
    assert by_name["j"]["dataType"]["length"] == 4294967295
    assert by_name["vb"]["dataType"]["charset"] == "binary"
    assert by_name["zf"]["dataType"]["zerofill"] is True
    assert schema["indexes"] == []
    text = dumps(schema)
    assert b'"default":5}' in text and b'"default":null}' in text


def test_integer_handle_primary_key_becomes_a_synthetic_index_appended_last() -> None:
    table = TableSchema(
        "d",
        "t",
        (col("id", "bigint", 1, nullable=False), col("k", "varchar(5)", 2)),
        indexes=(
            Index("PRIMARY", ("id",), unique=True, primary=True),
            Index("k", ("k",), unique=True),
        ),
    )
    assert table_schema_json(table)["indexes"] == [
        {"name": "k", "unique": True, "primary": False, "nullable": True, "columns": ["k"]},
        {"name": "primary", "unique": True, "primary": True, "nullable": False, "columns": ["id"]},
    ]


def test_a_composite_or_nonclustered_primary_key_stays_in_table_order() -> None:
    columns = (
        col("a", "int", 1, nullable=False),
        col("b", "varchar(5)", 2, nullable=False),
        col("c", "int", 3),
    )
    indexes = (
        Index("c_idx", ("c",)),
        Index("PRIMARY", ("a", "b"), unique=True, primary=True),
    )
    schema = table_schema_json(TableSchema("d", "t", columns, indexes))
    assert [(i["name"], i["primary"], i["nullable"]) for i in schema["indexes"]] == [
        ("c_idx", False, True),
        ("PRIMARY", True, False),
    ]
    nonclustered = TableSchema(
        "d",
        "t",
        columns[:1],
        (Index("PRIMARY", ("a",), unique=True, primary=True),),
        pk_clustered=False,
    )
    assert [i["name"] for i in table_schema_json(nonclustered)["indexes"]] == ["PRIMARY"]


def test_a_bit_default_that_is_not_a_number_is_a_schema_error() -> None:
    table = TableSchema("d", "t", (col("b", "bit(3)", default="x"),))
    with pytest.raises(SchemaError, match="BIT default 'x'"):
        table_schema_json(table)


# --- max-message-bytes and large messages ----------------------------------------------

WIDE = TableSchema(
    "d",
    "wide",
    (col("id", "int", 1, nullable=False), col("payload", "text", 2)),
    (Index("PRIMARY", ("id",), unique=True, primary=True),),
    table_id=5,
    version=6,
)


def test_a_message_above_the_limit_is_an_error_without_a_policy() -> None:
    change = RowChange(WIDE, Op.INSERT, 1, (7, "x" * 500))
    size = len(encode(change, 0).value or b"") + 36
    assert encode(change, 0, CodecConfig(max_message_bytes=size)).rows == 1
    with pytest.raises(MessageTooLargeError) as caught:
        encode(change, 0, CodecConfig(max_message_bytes=size - 1))
    assert (caught.value.size, caught.value.limit, caught.value.table) == (size, size - 1, "d.wide")
    assert caught.value.key == "id=7"


def test_handle_key_only_keeps_the_key_columns_and_marks_the_message() -> None:
    config = CodecConfig(
        max_message_bytes=300,
        large_message_handle_option=LargeMessageHandleOption.HANDLE_KEY_ONLY,
    )
    update = RowChange(WIDE, Op.UPDATE, 3, (7, "x" * 500), (7, "y" * 500))
    message = encode(update, 4, config)
    assert message.value == (
        b'{"version":1,"database":"d","table":"wide","tableID":5,"type":"UPDATE","commitTs":3,'
        b'"buildTs":4,"schemaVersion":6,"handleKeyOnly":true,"data":{"id":"7"},"old":{"id":"7"}}'
    )
    small = RowChange(WIDE, Op.INSERT, 3, (7, "x"))
    assert b"handleKeyOnly" not in (encode(small, 4, config).value or b"")
    with pytest.raises(MessageTooLargeError):
        encode(update, 4, attrs.evolve(config, max_message_bytes=50))


def test_a_bootstrap_above_the_limit_is_an_error() -> None:
    encoder = build_encoder(CodecConfig(max_message_bytes=100), WIDE, build_ts_ms=0)
    with pytest.raises(MessageTooLargeError, match="d.wide"):
        encoder.encode_bootstrap()


# --- configuration ------------------------------------------------------------------------


def test_encoding_format_avro_picks_the_avro_marshaller() -> None:
    # The Avro encoding itself is tested in tests/unit/codec/simple/test_avro_encoder.py.
    config = CodecConfig(encoding_format=EncodingFormat.AVRO)
    change = RowChange(USER, Op.INSERT, 1, (1, "a", 2, 3.0))
    value = build_encoder(config, USER, build_ts_ms=0).encode_row(change).value
    assert value is not None and value[:3] == b"\x16\x06\x06"
    mark = encode_watermark(config, 1, build_ts_ms=0)
    assert mark is not None and mark.value is not None and mark.value[:3] == b"\x16\x00\x00"


def test_the_bootstrap_is_built_once() -> None:
    encoder = build_encoder(CONFIG, USER, build_ts_ms=1)
    assert encoder.encode_bootstrap() is encoder.encode_bootstrap()

"""Avro protocol encoding: schemas byte for byte against tiflow's own expected schemas,
the default-value and union-order quirks on tiflow's all-types DDL, values per MySQL type
against tiflow's test vectors, decimal two's complement, Confluent framing, registry use
(one registration per schema, lazily), tombstones, extension fields and size limits; the
hand-written Avro binary is checked against fastavro's writer with hypothesis."""

from __future__ import annotations

import io
import json
import struct
from decimal import Decimal
from typing import Any

import attrs
import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.schemas import ALL_TYPES_TABLE, USERS, col, large_event_table, table_of
from tests.support.strategies import all_types_rows
from ticdc_sink.codec import Message
from ticdc_sink.codec.avro import (
    AvroEncoder,
    decimal_bytes,
    key_schema_json,
    record_name,
    tidb_type,
    value_schema_json,
)
from ticdc_sink.codec.common import escape_enum_option, sanitize_name
from ticdc_sink.codec.protocols import build_encoder, encode_watermark
from ticdc_sink.config import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CodecConfig,
    Protocol,
)
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import ConfigError, InputError, MessageTooLargeError, SchemaError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = paths.GOLDEN / "avro"
AVRO = CodecConfig(protocol=Protocol.AVRO)
EXT = attrs.evolve(AVRO, enable_tidb_extension=True)
STRING_MODES = attrs.evolve(
    AVRO,
    avro_decimal_handling_mode=AvroDecimalHandling.STRING,
    avro_bigint_unsigned_handling_mode=AvroBigintUnsignedHandling.STRING,
)


def go_compact(text: str) -> str:
    """Go's json.Compact: drop whitespace outside strings (tiflow's goldens are indented)."""
    out: list[str] = []
    in_string = escaped = False
    for c in text:
        if in_string:
            out.append(c)
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif c not in " \t\r\n":
            out.append(c)
    return "".join(out)


def unframe(data: bytes | None) -> tuple[int, bytes]:
    assert data is not None and data[0] == 0
    return int.from_bytes(data[1:5], "big"), data[5:]


def read(schema: str, body: bytes) -> dict[str, Any]:
    stream = io.BytesIO(body)
    record = fastavro.schemaless_reader(stream, fastavro.parse_schema(json.loads(schema)), None)
    assert stream.tell() == len(body)
    assert isinstance(record, dict)
    return record


# --- tiflow's all-types table (pkg/sink/codec/avro/avro_test.go avroTestColumns) --------

# (column name, MySQL type as TiDB's NewFieldType gives it, value, expected decoded value)
TIFLOW_COLUMNS: list[tuple[str, str, Any, Any]] = [
    ("tiny", "tinyint", 1, 1),
    ("short", "smallint", 1, 1),
    ("int24", "mediumint", 1, 1),
    ("long", "int", 1, 1),
    ("longlong", "bigint", 1, 1),
    ("tinyunsigned", "tinyint unsigned", 1, 1),
    ("shortunsigned", "smallint unsigned", 1, 1),
    ("int24unsigned", "mediumint unsigned", 1, 1),
    ("longunsigned", "int unsigned", 1, 1),
    ("longlongunsigned", "bigint unsigned", 1, 1),
    ("float", "float", 3.14, to_float32(3.14)),
    ("double", "double", 3.14, 3.14),
    ("bit", "bit", 683, b"\x02\xab"),
    # decimal without precision/scale is decimal(10,0): big.Rat 129012.123 floored
    ("decimal", "decimal", "129012.1230000", Decimal("129012")),
    ("tinytext", "tinytext", "hello world", "hello world"),
    ("mediumtext", "mediumtext", "hello world", "hello world"),
    ("text", "text", "hello world", "hello world"),
    ("longtext", "longtext", "hello world", "hello world"),
    ("varchar", "varchar(10)", "hello world", "hello world"),
    ("varstring", "varchar(10)", "hello world", "hello world"),
    ("string", "char", "hello world", "hello world"),
    ("tinyblob", "tinyblob", b"hello world", b"hello world"),
    ("mediumblob", "mediumblob", b"hello world", b"hello world"),
    ("blob", "blob", b"hello world", b"hello world"),
    ("longblob", "longblob", b"hello world", b"hello world"),
    ("varbinary", "varbinary(10)", b"hello world", b"hello world"),
    ("varbinary1", "varbinary(10)", b"hello world", b"hello world"),
    ("binary", "binary", b"hello world", b"hello world"),
    ("enum", "enum('a','b')", 1, "a"),
    ("set", "set('a','b')", 1, "a"),
    ("json", "json", '{"key": "value"}', '{"key": "value"}'),
    ("date", "date", "2000-01-01", "2000-01-01"),
    ("datetime", "datetime", "2015-12-20 23:58:58", "2015-12-20 23:58:58"),
    ("timestamp", "timestamp", "1973-12-30 15:30:00", "1973-12-30 15:30:00"),
    ("time", "time", "23:59:59", "23:59:59"),
    ("year", "year", 1970, 1970),
]


def tiflow_table() -> TableSchema:
    """tiflow newLargeEvent: `id` int primary key, then each column NOT NULL and a
    nullable twin `<name>nullable`, table testdb.avroencode."""
    columns = [col("id", "int", nullable=False)]
    for name, type_text, _, _ in TIFLOW_COLUMNS:
        columns.append(col(name, type_text, nullable=False))
        columns.append(col(name + "nullable", type_text))
    return table_of(*columns, key=("id",), db="testdb", name="avroencode")


def tiflow_row() -> tuple[Any, ...]:
    values: list[Any] = [1]
    for _, _, value, _ in TIFLOW_COLUMNS:
        values += [value, None]
    return tuple(values)


def test_value_schema_matches_tiflow_expected_schema_byte_for_byte() -> None:
    golden = (GOLDEN / "tiflow_all_types.value.schema.json").read_text()
    assert value_schema_json(AVRO, tiflow_table()) == go_compact(golden)


def test_value_schema_with_extension_matches_tiflow_byte_for_byte() -> None:
    golden = (GOLDEN / "tiflow_all_types_extension.value.schema.json").read_text()
    assert value_schema_json(EXT, tiflow_table()) == go_compact(golden)


def test_key_schema_holds_the_handle_key_only_and_no_extension() -> None:
    assert key_schema_json(EXT, tiflow_table()) == (
        '{"type":"record","name":"avroencode","namespace":"default.testdb","fields":'
        '[{"name":"id","type":{"type":"int","connect.parameters":{"tidb_type":"INT"}}}]}'
    )


def test_values_match_tiflow_column_to_avro_data() -> None:
    registry = FakeRegistry()
    table = tiflow_table()
    encoder = AvroEncoder(EXT, table, topic="avro-test-topic", registry=registry)
    commit_ts = 417318403368288260
    message = encoder.encode_row(RowChange(table, Op.INSERT, commit_ts, tiflow_row()))
    value_id, body = unframe(message.value)
    record = read(registry.schema_text(value_id), body)
    assert record.pop("id") == 1
    for name, _, _, expected in TIFLOW_COLUMNS:
        assert record.pop(name) == expected, name
        assert record.pop(name + "nullable") is None
    assert record == {
        "_tidb_op": "c",
        "_tidb_commit_ts": commit_ts,
        "_tidb_commit_physical_time": 1591943372224,
    }
    key_id, key_body = unframe(message.key)
    assert read(registry.schema_text(key_id), key_body) == {"id": 1}


def test_string_modes_of_tiflow_test() -> None:
    table = tiflow_table()
    schema = json.loads(value_schema_json(STRING_MODES, table))
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types["decimal"] == {"type": "string", "connect.parameters": {"tidb_type": "DECIMAL"}}
    assert types["longlongunsigned"] == {
        "type": "string",
        "connect.parameters": {"tidb_type": "BIGINT UNSIGNED"},
    }
    registry = FakeRegistry()
    encoder = AvroEncoder(STRING_MODES, table, topic="t", registry=registry)
    message = encoder.encode_row(RowChange(table, Op.INSERT, 1, tiflow_row()))
    value_id, body = unframe(message.value)
    record = read(registry.schema_text(value_id), body)
    assert record["decimal"] == "129012.1230000"
    assert record["longlongunsigned"] == "1"


def test_confluent_envelope_of_tiflow_test_avro_envelope() -> None:
    # tiflow TestAvroEnvelope / reference §6.2: schema id 8, {"id": int 7} -> 00 00 00 00 08 0e
    table = table_of(col("id", "int", nullable=False), key=("id",))
    encoder = AvroEncoder(AVRO, table, topic="t", registry=FakeRegistry(first_id=8))
    message = encoder.encode_row(RowChange(table, Op.INSERT, 1, (7,)))
    assert message.key == bytes.fromhex("00000000080e")
    assert message.value == bytes.fromhex("00000000080e")  # same schema text, same id


# --- names (tiflow TestSanitizeName, TestGetAvroNamespace) -------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("normalColumnName123", "normalColumnName123"),
        ("1ColumnNameStartWithNumber", "_1ColumnNameStartWithNumber"),
        ("A.B", "A_B"),
        ("columnNameWith中文", "columnNameWith__"),
        ("-x", "_x"),
        ("中", "_"),
        ("", ""),
    ],
)
def test_sanitize_name(name: str, expected: str) -> None:
    assert sanitize_name(name) == expected


def test_record_name_is_default_namespace_database_table() -> None:
    assert record_name(table_of(col("a", "int"), db="1Schema", name="S.chema")) == (
        "default._1Schema.S_chema"
    )
    assert record_name(table_of(col("a", "int"), db="", name="t")) == "default.t"
    schema = json.loads(value_schema_json(AVRO, table_of(col("a", "int"), db="my-db")))
    assert (schema["namespace"], schema["name"]) == ("default.my_db", "t")


def test_colliding_sanitised_column_names_are_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="a-b.*a_b|a_b.*a-b"):
        AvroEncoder(AVRO, table_of(col("a-b", "int"), col("a_b", "int")), topic="t", registry=None)
    with pytest.raises(SchemaError, match="_tidb_op"):
        AvroEncoder(EXT, table_of(col("_tidb_op", "int")), topic="t", registry=None)
    AvroEncoder(AVRO, table_of(col("_tidb_op", "int")), topic="t", registry=None)


# --- schema details (reference §6.5) -------------------------------------------------------


def fields_of(config: CodecConfig, table: TableSchema) -> dict[str, str]:
    """Each field's compact Go JSON text, cut out of the schema text itself."""
    text = value_schema_json(config, table)
    body = text[text.index('"fields":[') + len('"fields":[') : -2]
    out: dict[str, str] = {}
    depth, start = 0, 0
    in_string = escaped = False
    for i, c in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            out[json.loads(body[start:i])["name"]] = body[start:i]
            start = i + 1
    out[json.loads(body[start:])["name"]] = body[start:]
    return out


def test_defaults_and_union_order_on_tiflow_large_event_table() -> None:
    fields = fields_of(AVRO, large_event_table())
    expected = {
        # nullable without default: ["null", T], default null
        "t": '{"default":null,"name":"t","type":["null",{"type":"int",'
        '"connect.parameters":{"tidb_type":"INT"}}]}',
        # NOT NULL (primary key) with default: T, default
        "tu1": '{"default":1,"name":"tu1","type":{"type":"int",'
        '"connect.parameters":{"tidb_type":"INT UNSIGNED"}}}',
        # nullable with default: [T, "null"]
        "tu2": '{"default":2,"name":"tu2","type":[{"type":"int",'
        '"connect.parameters":{"tidb_type":"INT UNSIGNED"}},"null"]}',
        "iu1": '{"default":16,"name":"iu1","type":[{"type":"long",'
        '"connect.parameters":{"tidb_type":"INT UNSIGNED"}},"null"]}',
        "biu1": '{"default":21,"name":"biu1","type":[{"type":"long",'
        '"connect.parameters":{"tidb_type":"BIGINT UNSIGNED"}},"null"]}',
        # FLOAT default through ParseFloat(s, 32), written as float64
        "floatT": '{"default":3.140000104904175,"name":"floatT","type":[{"type":"float",'
        '"connect.parameters":{"tidb_type":"FLOAT"}},"null"]}',
        "doubleT": '{"default":2.7182818284,"name":"doubleT","type":[{"type":"double",'
        '"connect.parameters":{"tidb_type":"DOUBLE"}},"null"]}',
        # decimal logical type: never a default
        "decimalT": '{"default":null,"name":"decimalT","type":["null",{"type":"bytes",'
        '"connect.parameters":{"tidb_type":"DECIMAL"},"logicalType":"decimal",'
        '"precision":12,"scale":6}]}',
        "varcharT": '{"default":"测试Varchar default","name":"varcharT","type":[{"type":'
        '"string","connect.parameters":{"tidb_type":"TEXT"}},"null"]}',
        # binary defaults are []byte: base64
        "varbinaryT": '{"default":"5rWL6K+VdmFyYmluYXJ5IGRlZmF1bHQ=","name":"varbinaryT",'
        '"type":[{"type":"bytes","connect.parameters":{"tidb_type":"BLOB"}},"null"]}',
        "timestampT": '{"default":"CURRENT_TIMESTAMP","name":"timestampT","type":[{"type":'
        '"string","connect.parameters":{"tidb_type":"TIMESTAMP"}},"null"]}',
        "yearT": '{"default":2023,"name":"yearT","type":[{"type":"int",'
        '"connect.parameters":{"tidb_type":"YEAR"}},"null"]}',
        "enumT": '{"default":"b","name":"enumT","type":[{"type":"string",'
        '"connect.parameters":{"allowed":"a,b,c","tidb_type":"ENUM"}},"null"]}',
        "setT": '{"default":"c","name":"setT","type":[{"type":"string",'
        '"connect.parameters":{"allowed":"a,b,c","tidb_type":"SET"}},"null"]}',
        # BIT(10) default b'1010101010': bytes 02 aa, base64 (reference §6.5)
        "bitT": '{"default":"Aqo=","name":"bitT","type":[{"type":"bytes",'
        '"connect.parameters":{"length":"10","tidb_type":"BIT"}},"null"]}',
        "vectorT": '{"default":null,"name":"vectorT","type":["null",{"type":"string",'
        '"connect.parameters":{"tidb_type":"TiDBVECTORFloat32"}}]}',
    }
    for name, text in expected.items():
        assert fields[name] == text, name
    # BINARY(255): TiDB pads the default with 0x00 to 255 bytes
    binary_default = json.loads(fields["binaryT"])["default"]
    import base64

    assert base64.b64decode(binary_default) == "测试Binary default".encode().ljust(255, b"\0")


def test_decimal_and_unsigned_defaults_in_string_modes() -> None:
    fields = fields_of(STRING_MODES, large_event_table())
    assert fields["decimalT"] == (
        '{"default":"179394.233300","name":"decimalT","type":[{"type":"string",'
        '"connect.parameters":{"tidb_type":"DECIMAL"}},"null"]}'
    )
    assert fields["biu1"] == (
        '{"default":"21","name":"biu1","type":[{"type":"string",'
        '"connect.parameters":{"tidb_type":"BIGINT UNSIGNED"}},"null"]}'
    )


def test_not_null_columns_with_and_without_default() -> None:
    table = table_of(
        col("a", "int", nullable=False, default="5"),
        col("b", "decimal(5,2)", nullable=False, default="1.50"),
        col("c", "varchar(5)", nullable=False),
    )
    assert fields_of(AVRO, table) == {
        "a": '{"default":5,"name":"a","type":{"type":"int",'
        '"connect.parameters":{"tidb_type":"INT"}}}',
        "b": '{"name":"b","type":{"type":"bytes","connect.parameters":{"tidb_type":"DECIMAL"},'
        '"logicalType":"decimal","precision":5,"scale":2}}',
        "c": '{"name":"c","type":{"type":"string","connect.parameters":{"tidb_type":"TEXT"}}}',
    }


def test_bit_defaults_are_minimal_big_endian_bytes() -> None:
    # TiDB ddl getDefaultValue: NewBinaryLiteralFromUint(v, -1) for an integer, the
    # (zero-trimmed, as SHOW CREATE TABLE prints it) b'...' digits otherwise
    table = table_of(
        col("a", "bit(64)", default="1"), col("b", "bit(10)", default="0"), col("c", "bit(64)")
    )
    defaults = {k: json.loads(v).get("default") for k, v in fields_of(AVRO, table).items()}
    assert defaults == {"a": "AQ==", "b": "AA==", "c": None}


def test_timestamp_literal_defaults_are_stored_in_utc() -> None:
    table = table_of(
        col("a", "timestamp(3)", default="2024-03-11 08:51:01.461"),
        col("b", "timestamp", default="CURRENT_TIMESTAMP"),
        col("c", "datetime", default="2024-03-11 08:51:01"),
    )
    config = attrs.evolve(AVRO, time_zone="Asia/Shanghai")
    defaults = {k: json.loads(v)["default"] for k, v in fields_of(config, table).items()}
    assert defaults == {
        "a": "2024-03-11 00:51:01.461",
        "b": "CURRENT_TIMESTAMP",
        "c": "2024-03-11 08:51:01",
    }


def test_string_default_null_is_a_string_not_null() -> None:
    # tiflow #11994: a default 'null' is the string, so the union puts the type first
    fields = fields_of(AVRO, table_of(col("a", "varchar(5)", default="null")))
    assert fields["a"] == (
        '{"default":"null","name":"a","type":[{"type":"string",'
        '"connect.parameters":{"tidb_type":"TEXT"}},"null"]}'
    )


def test_html_characters_in_defaults_are_escaped_as_go_does() -> None:
    fields = fields_of(AVRO, table_of(col("a", "varchar(5)", default="<&>")))
    assert '"default":"\\u003c\\u0026\\u003e"' in fields["a"]


def test_allowed_escaping_and_bit_length() -> None:
    assert escape_enum_option("a,b") == "a\\,b"
    assert escape_enum_option("it''s") == "it's"
    assert escape_enum_option("it\\'s") == "it's"
    table = table_of(
        Column("e", attrs.evolve(parse_mysql_type("enum('x')"), elements=("a,b", "c"))),
        col("b64", "bit(64)", nullable=False),
    )
    fields = fields_of(AVRO, table)
    assert '"connect.parameters":{"allowed":"a\\\\,b,c","tidb_type":"ENUM"}' in fields["e"]
    assert fields["b64"] == (
        '{"name":"b64","type":{"type":"bytes","connect.parameters":'
        '{"length":"64","tidb_type":"BIT"}}}'
    )


@pytest.mark.parametrize(
    ("type_text", "expected"),
    [
        ("tinyint(1)", "INT"),
        ("smallint unsigned", "INT UNSIGNED"),
        ("int unsigned", "INT UNSIGNED"),
        ("bigint unsigned", "BIGINT UNSIGNED"),
        ("float unsigned", "FLOAT"),
        ("decimal(5,2) unsigned", "DECIMAL"),
        ("char(3)", "TEXT"),
        ("binary(3)", "BLOB"),
        ("longblob", "BLOB"),
        ("year", "YEAR"),
        ("vector(3)", "TiDBVECTORFloat32"),
    ],
)
def test_tidb_type(type_text: str, expected: str) -> None:
    assert tidb_type(col("c", type_text)) == expected


@pytest.mark.parametrize(
    ("type_text", "default"),
    [("int", "abc"), ("tinyint", "99999999999"), ("float", "1e40"), ("vector(3)", "[1,2,3]")],
)
def test_defaults_that_cannot_be_converted_are_schema_errors(type_text: str, default: str) -> None:
    with pytest.raises(SchemaError, match="db.t.*column c has DEFAULT"):
        AvroEncoder(AVRO, table_of(col("c", type_text, default=default)), topic="t", registry=None)


# --- binary values (reference §6.6, §6.7) ---------------------------------------------------


@pytest.mark.parametrize(
    ("unscaled", "hex_bytes"),
    [(0, "00"), (1, "01"), (127, "7f"), (128, "0080"), (-1, "ff"), (-128, "80"), (-129, "ff7f")],
)
def test_decimal_two_complement_is_minimal(unscaled: int, hex_bytes: str) -> None:
    assert decimal_bytes(unscaled).hex() == hex_bytes


def encode_value(table: TableSchema, row: tuple[Any, ...], config: CodecConfig = AVRO) -> bytes:
    message = AvroEncoder(config, table, topic="t", registry=FakeRegistry()).encode_row(
        RowChange(table, Op.INSERT, 1, row)
    )
    assert message.value is not None
    return message.value[5:]


@pytest.mark.parametrize(
    ("text", "scale", "body"),
    [
        ("2333.654321", 6, "0a008b18bd31"),  # 2333654321 = 0x8b18bd31: sign byte 00
        ("-1.50", 2, "04ff6a"),  # -150
        ("0.00", 2, "0200"),
        ("1.005", 2, "0264"),  # floor(100.5) = 100
        ("-1.005", 2, "029b"),  # floor(-100.5) = -101: big.Int.Div floors
    ],
)
def test_decimal_values_are_floored_unscaled_integers(text: str, scale: int, body: str) -> None:
    table = table_of(col("d", f"decimal(20,{scale})", nullable=False))
    assert encode_value(table, (text,)).hex() == body


def test_bit_values_are_minimal_big_endian() -> None:
    table = table_of(col("b", "bit(64)", nullable=False))
    assert encode_value(table, (683,)).hex() == "0402ab"
    assert encode_value(table, (0,)).hex() == "0200"
    assert encode_value(table, (2**64 - 1,)).hex() == "10" + "ff" * 8


def test_bigint_unsigned_wraps_in_long_mode_and_is_text_in_string_mode() -> None:
    table = table_of(col("u", "bigint unsigned", nullable=False))
    long_body = encode_value(table, (2**63,))
    assert long_body == bytes.fromhex("ffffffffffffffffff01")  # zig-zag of -2^63
    assert encode_value(table, (2**64 - 1,)) == b"\x01"  # -1
    assert encode_value(table, (2**64 - 1,), STRING_MODES) == b"\x28" + b"18446744073709551615"


def test_nullable_branch_indexes_follow_the_union_order() -> None:
    table = table_of(col("a", "int"), col("b", "int", default="7"))
    assert encode_value(table, (5, 5)) == bytes([0x02, 0x0A, 0x00, 0x0A])
    assert encode_value(table, (None, None)) == bytes([0x00, 0x02])


def test_enum_and_set_values_are_names() -> None:
    table = table_of(
        col("e", "enum('a','b','c')", nullable=False), col("s", "set('a','b','c')", False)
    )
    assert encode_value(table, (3, 5)) == b"\x02c\x06a,c"
    assert encode_value(table, (1, 0)) == b"\x02a\x00"


def test_float_is_four_bytes_little_endian() -> None:
    table = table_of(col("f", "float", nullable=False), col("d", "double", nullable=False))
    assert encode_value(table, (3.14, 3.14)) == struct.pack("<fd", 3.14, 3.14)
    # the mounter writes NaN and infinities as 0
    assert encode_value(table, (float("nan"), float("-inf"))) == bytes(12)


@pytest.mark.parametrize(
    ("type_text", "value", "problem"),
    [
        ("enum('a')", 0, "ENUM index"),
        ("enum('a')", 2, "ENUM index"),
        ("set('a')", 2, "SET bitmask"),
        ("int", 2**31, "out of range"),
        ("int", "1", "expected an int"),
        ("decimal(5,2)", "x", "not a decimal"),
        ("varbinary(3)", "text", "expected bytes"),
        ("float", 1e40, "float"),
    ],
)
def test_bad_values_are_input_errors_naming_the_column(
    type_text: str, value: Any, problem: str
) -> None:
    table = table_of(col("c", type_text, nullable=False))
    with pytest.raises(InputError, match=f"column c of db.t .*{problem}") as info:
        encode_value(table, (value,))
    assert info.value.column == "c"


def test_null_in_not_null_column_is_an_input_error() -> None:
    with pytest.raises(InputError, match="NULL in a NOT NULL column"):
        encode_value(table_of(col("c", "int", nullable=False)), (None,))


# --- messages, registry, tombstones, extension, size -----------------------------------


def test_registry_is_asked_lazily_once_per_schema() -> None:
    registry = FakeRegistry()
    encoder = build_encoder(EXT, USERS, build_ts_ms=0, topic="tidb_shop_users", registry=registry)
    assert registry.calls == []
    for i in range(50):
        encoder.encode_row(RowChange(USERS, Op.INSERT, 100 + i, (i, f"n{i}")))
    assert registry.calls == [
        ("tidb_shop_users", "default.shop.users", True),
        ("tidb_shop_users", "default.shop.users", False),
    ]


def test_key_and_value_carry_their_own_schema_ids() -> None:
    registry = FakeRegistry()
    encoder = AvroEncoder(EXT, USERS, topic="t", registry=registry)
    message = encoder.encode_row(RowChange(USERS, Op.UPDATE, 5 << 18 | 3, (7, "x"), (7, "w")))
    key_id, key_body = unframe(message.key)
    value_id, value_body = unframe(message.value)
    assert key_id != value_id
    assert registry.texts[key_id] == encoder.key_schema
    assert registry.texts[value_id] == encoder.value_schema
    assert key_body == b"\x0e"
    # name ["null",string] branch 1 "x"; then _tidb_op "u", commit ts, physical time 5
    assert value_body == b"\x0e\x02\x02x" + b"\x02u" + bytes([0x86, 0x80, 0xA0, 0x01]) + b"\x0a"
    assert message.commit_ts == 5 << 18 | 3 and message.rows == 1


def test_delete_is_a_tombstone_with_the_key_and_registers_only_the_key() -> None:
    registry = FakeRegistry()
    encoder = AvroEncoder(EXT, USERS, topic="t", registry=registry)
    message = encoder.encode_row(RowChange(USERS, Op.DELETE, 9, None, (7, "x")))
    assert message.value is None
    assert unframe(message.key)[1] == b"\x0e"
    assert [call[2] for call in registry.calls] == [True]


def test_no_handle_key_means_no_key() -> None:
    table = table_of(col("a", "int"))
    assert key_schema_json(AVRO, table) is None
    message = AvroEncoder(AVRO, table, topic="t", registry=FakeRegistry()).encode_row(
        RowChange(table, Op.INSERT, 1, (1,))
    )
    assert message.key is None and message.value is not None


def test_unique_not_null_key_is_the_handle_key_in_column_order() -> None:
    table = TableSchema(
        "db",
        "t",
        (col("a", "int"), col("b", "varchar(5)", nullable=False), col("c", "int", False)),
        (Index("uk", ("c", "b"), unique=True),),
    )
    schema = json.loads(key_schema_json(AVRO, table) or "")
    assert [f["name"] for f in schema["fields"]] == ["b", "c"]


def test_without_extension_the_value_is_the_columns_only() -> None:
    registry = FakeRegistry()
    message = AvroEncoder(AVRO, USERS, topic="t", registry=registry).encode_row(
        RowChange(USERS, Op.INSERT, 1, (7, None))
    )
    assert unframe(message.value)[1] == b"\x0e\x00"


def test_encoding_without_a_registry_names_the_option() -> None:
    encoder = build_encoder(AVRO, USERS, build_ts_ms=0)
    assert encoder.encode_bootstrap() is None
    with pytest.raises(ConfigError, match="schema-registry"):
        encoder.encode_row(RowChange(USERS, Op.INSERT, 1, (1, "a")))


def test_avro_sends_no_watermark() -> None:
    assert encode_watermark(AVRO, 5, build_ts_ms=0) is None


def test_message_too_large_names_table_key_and_size() -> None:
    config = attrs.evolve(AVRO, max_message_bytes=60)
    encoder = AvroEncoder(config, USERS, topic="t", registry=FakeRegistry())
    small = encoder.encode_row(RowChange(USERS, Op.INSERT, 1, (1, "a")))
    assert isinstance(small, Message)
    assert len(small.key or b"") + len(small.value or b"") + 36 <= 60
    with pytest.raises(MessageTooLargeError, match="shop.users key id=2") as info:
        encoder.encode_row(RowChange(USERS, Op.INSERT, 1, (2, "x" * 30)))
    # key: frame 5 + id 1; value: frame 5 + id 1 + branch 1 + length 1 + 30; overhead 36
    assert info.value.size == 6 + 38 + 36
    assert info.value.limit == 60


def test_row_width_mismatch_is_an_input_error() -> None:
    encoder = AvroEncoder(AVRO, USERS, topic="t", registry=FakeRegistry())
    with pytest.raises(InputError, match="has 1 values; the table has 2 columns"):
        encoder.encode_row(RowChange(USERS, Op.INSERT, 1, (1,)))


# --- the hand-written binary equals fastavro's -------------------------------------------


def fastavro_native(column: Column, value: Any, config: CodecConfig) -> Any:
    """What goavro is handed (tiflow columnToAvroData), in fastavro's terms."""
    if value is None:
        return None
    base = column.type.base
    decimal_string = config.avro_decimal_handling_mode is AvroDecimalHandling.STRING
    unsigned_string = config.avro_bigint_unsigned_handling_mode is AvroBigintUnsignedHandling.STRING
    if base == "bigint" and column.type.unsigned:
        return str(value) if unsigned_string else value - 2**64 if value >= 2**63 else value
    if base == "decimal":
        if decimal_string:
            return value
        unscaled = int(value.replace(".", ""))  # exactly `scale` fraction digits
        return decimal_bytes(unscaled)  # fastavro passes bytes through a decimal
    if base == "bit":
        return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
    if base == "enum":
        return column.type.elements[value - 1]
    if base == "set":
        return ",".join(e for i, e in enumerate(column.type.elements) if value >> i & 1)
    return value


_COMPILED: dict[CodecConfig, tuple[AvroEncoder, Any]] = {}


def compiled(config: CodecConfig) -> tuple[AvroEncoder, Any]:
    if config not in _COMPILED:
        encoder = AvroEncoder(config, ALL_TYPES_TABLE, topic="t", registry=FakeRegistry())
        _COMPILED[config] = (encoder, fastavro.parse_schema(json.loads(encoder.value_schema)))
    return _COMPILED[config]


@pytest.mark.parametrize("config", [EXT, STRING_MODES], ids=["precise-long", "string-string"])
@settings(max_examples=examples(80), deadline=None)
@given(data=st.data())
def test_binary_equals_fastavro_schemaless_writer(config: CodecConfig, data: st.DataObject) -> None:
    row = data.draw(all_types_rows())
    commit_ts = data.draw(st.integers(0, 2**63 - 1))
    encoder, parsed = compiled(config)
    message = encoder.encode_row(RowChange(ALL_TYPES_TABLE, Op.INSERT, commit_ts, row))
    record = {
        sanitize_name(c.name): fastavro_native(c, v, config)
        for c, v in zip(ALL_TYPES_TABLE.columns, row, strict=True)
    }
    if config.enable_tidb_extension:
        record.update(
            _tidb_op="c", _tidb_commit_ts=commit_ts, _tidb_commit_physical_time=commit_ts >> 18
        )
    expected = io.BytesIO()
    fastavro.schemaless_writer(expected, parsed, record)
    assert message.value is not None
    assert message.value[5:] == expected.getvalue()

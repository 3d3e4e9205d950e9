"""Simple protocol Avro encoding (reference §7.5): the bundled schema, the pinned golden
bytes of the doc's messages (equivalent to the doc's JSON), every value branch checked
against fastavro's writer and reader, table schemas, large messages and errors."""

from __future__ import annotations

import hashlib
import io
import json
import random
import struct
from typing import Any

import attrs
import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.hypothesis_profiles import examples
from ticdc_sink.codec.protocols import build_encoder, encode_watermark
from ticdc_sink.codec.simple.avro_row import AvroMarshaller, marshal_ddl, table_schema_avro
from ticdc_sink.codec.simple.avro_values import (
    encode_long,
    load_message_schema,
    parsed_message_record,
    parsed_message_schema,
)
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.codec.simple.encoder import encode_ddl
from ticdc_sink.codec.simple.values import DDL_TYPES, SimpleDDL, table_schema_json
from ticdc_sink.config import CodecConfig, EncodingFormat, LargeMessageHandleOption
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import InputError, MessageTooLargeError, SchemaError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

GOLDEN = paths.GOLDEN / "simple"
AVRO = CodecConfig(encoding_format=EncodingFormat.AVRO)
NS = "com.pingcap.simple.avro."
# sha256 of tiflow pkg/sink/codec/simple/message.json at c7b2588ef6c7 (last changed 71b5a0ad7be3)
SCHEMA_SHA256 = "8121934fc6826067fa32bbf43d8a80850b80a76a4f35a9199c7c733c4ef58be5"


def golden(name: str, suffix: str = "avro") -> bytes:
    return (GOLDEN / f"{name}.value.{suffix}").read_bytes()


def read(value: bytes | None) -> dict[str, Any]:
    """The Message record as fastavro reads it with the bundled schema (whole value)."""
    assert value is not None
    stream = io.BytesIO(value)
    message = fastavro.schemaless_reader(
        stream, parsed_message_schema(), handle_unicode_errors="surrogateescape"
    )
    assert stream.tell() == len(value)
    return message


def write(native: Any) -> bytes:
    """fastavro's bytes for a Message record (tuple notation picks union branches)."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed_message_schema(), (NS + "Message", native))
    return out.getvalue()


def col(name: str, type_text: str, column_id: int = 0, **kwargs: Any) -> Column:
    return Column(name, parse_mysql_type(type_text), column_id=column_id, **kwargs)


# The doc's table `simple.user`, as test_codec_simple.USER.
USER = TableSchema(
    database="simple",
    table="user",
    columns=(
        col("id", "int", 1, nullable=False),
        Column(
            "name",
            MySQLType("varchar", 255, charset="utf8mb4", collation="utf8mb4_bin"),
            column_id=2,
        ),
        col("age", "int", 3),
        col("score", "float", 4),
    ),
    indexes=(Index("PRIMARY", ("id",), unique=True, primary=True),),
    table_id=148,
    version=447984074911121426,
)


def encode(change: RowChange, build_ts: int = 7, config: CodecConfig = AVRO) -> bytes:
    value = build_encoder(config, change.table, build_ts_ms=build_ts).encode_row(change).value
    assert value is not None
    return value


# --- the schema file ---------------------------------------------------------------------


def test_the_bundled_schema_is_tiflows_message_json() -> None:
    schema = load_message_schema()
    names = [t["name"] for t in schema]
    assert names == [
        "DataType", "ColumnSchema", "IndexSchema", "TableSchema", "Checksum", "Watermark",
        "Bootstrap", "DDL", "Timestamp", "UnsignedBigint", "DML", "Message",
    ]  # fmt: skip
    assert all(t["namespace"] == "com.pingcap.simple.avro" for t in schema)
    ddl = next(t for t in schema if t["name"] == "DDL")
    assert next(f for f in ddl["fields"] if f["name"] == "type")["type"]["symbols"] == list(
        DDL_TYPES
    )
    text = paths.PACKAGE / "codec/simple/message.json"
    digest = hashlib.sha256(text.read_bytes()).hexdigest()
    assert digest == SCHEMA_SHA256, "the schema file differs from tiflow's message.json"


def test_every_message_is_the_unions_message_record_and_reads_so_alone() -> None:
    # The decoder reads the Message branch with the record alone (fastavro parses a
    # top-level union again at every read); it must read what the union reads.
    branch, record = parsed_message_record()
    assert branch == encode_long(11)
    table = TableSchema(
        "db",
        "t",
        (Column("id", parse_mysql_type("bigint"), nullable=False, column_id=1),
         Column("v", parse_mysql_type("varchar(20)"), column_id=2)),
        (Index("PRIMARY", ("id",), unique=True, primary=True),),
        table_id=7,
        version=1,
    )  # fmt: skip
    config = CodecConfig(encoding_format=EncodingFormat.AVRO)
    encoder = build_encoder(config, table, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap()
    watermark = encode_watermark(config, 100, build_ts_ms=1)
    assert bootstrap is not None and watermark is not None
    values = [
        bootstrap.value,
        watermark.value,
        encoder.encode_row(RowChange(table, Op.INSERT, 5, (1, "a"), None)).value,
        encoder.encode_row(RowChange(table, Op.UPDATE, 6, (1, "b"), (1, "a"))).value,
        encoder.encode_row(RowChange(table, Op.DELETE, 7, None, (1, "b"))).value,
    ]
    for value in values:
        assert value is not None and value.startswith(branch)
        alone = io.BytesIO(value[len(branch) :])
        union = io.BytesIO(value)
        assert fastavro.schemaless_reader(alone, record) == fastavro.schemaless_reader(
            union, parsed_message_schema()
        )
        assert alone.tell() == len(value) - len(branch) and union.tell() == len(value)


@pytest.mark.parametrize(
    "n", [0, 1, -1, 63, -64, 64, -65, 300, -300, 2**31, 2**63 - 1, -(2**63), 123456789012]
)
def test_encode_long_matches_fastavro(n: int) -> None:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, {"type": "long"}, n)
    assert encode_long(n) == out.getvalue()


def test_encode_long_refuses_values_beyond_int64() -> None:
    with pytest.raises(OverflowError):
        encode_long(2**63)


# --- golden messages ---------------------------------------------------------------------
# Pinned bytes of the doc's examples (tests/golden/simple/SOURCE.md). TiCDC's own bytes
# differ only in map entry order; the tests below check each golden against the doc's
# JSON message field by field, through fastavro.


def _avro_value_of_json(column: str, text: Any) -> Any:
    # simple.user: id/age int -> long, name varchar -> string, score float -> float
    if text is None:
        return None
    if column in ("id", "age"):
        return int(text)
    if column == "score":
        return to_float32(float(text))
    return text


def _assert_same_as_json(name: str) -> None:
    avro = read(golden(name))
    doc = json.loads(golden(name, "json"))
    payload = avro["payload"]
    kind = avro["type"]
    assert payload["version"] == doc["version"] == 1
    assert payload["buildTs"] == doc["buildTs"]
    if kind == "DML":
        assert payload["type"] == doc["type"]
        for field, doc_field in (
            ("database", "database"),
            ("table", "table"),
            ("tableID", "tableID"),
            ("commitTs", "commitTs"),
            ("schemaVersion", "schemaVersion"),
        ):
            assert payload[field] == doc[doc_field]
        for image in ("data", "old"):
            expected = doc.get(image)
            if expected is None:
                assert payload[image] is None
            else:
                assert payload[image] == {k: _avro_value_of_json(k, v) for k, v in expected.items()}
        assert payload["handleKeyOnly"] is None and payload["claimCheckLocation"] is None
        assert payload["checksum"] is None
    elif kind == "WATERMARK":
        assert doc["type"] == "WATERMARK" and payload["commitTs"] == doc["commitTs"]
    else:
        pairs = [("tableSchema", doc["tableSchema"])]
        if kind == "DDL":
            assert (payload["type"], payload["sql"], payload["commitTs"]) == (
                doc["type"],
                doc["sql"],
                doc["commitTs"],
            )
            pairs.append(("preTableSchema", doc["preTableSchema"]))
        for field, expected in pairs:
            schema = payload[field]
            assert schema["database"] == expected["schema"]
            for key in ("table", "tableID", "version", "indexes"):
                assert schema[key] == expected[key]
            assert [c["name"] for c in schema["columns"]] == [
                c["name"] for c in expected["columns"]
            ]
            for got, want in zip(schema["columns"], expected["columns"], strict=True):
                assert got["nullable"] == want["nullable"]
                assert got["default"] == want["default"]
                for key in ("mysqlType", "charset", "collate", "length"):
                    assert got["dataType"][key] == want["dataType"][key]


@pytest.mark.parametrize(
    "name", ["insert", "update", "delete", "watermark", "bootstrap", "ddl_alter"]
)
def test_goldens_carry_the_doc_json_messages(name: str) -> None:
    _assert_same_as_json(name)


def test_insert_update_delete_match_the_goldens() -> None:
    insert = RowChange(USER, Op.INSERT, 447984084414103554, (1, "John Doe", 25, 90.5))
    assert encode(insert, 1708923662983) == golden("insert")
    update = RowChange(
        USER,
        Op.UPDATE,
        447984099186180098,
        row=(1, "John Doe", 25, 95.0),
        before=(1, "John Doe", 25, 90.5),
    )
    assert encode(update, 1708923719184) == golden("update")
    delete = RowChange(
        USER, Op.DELETE, 447984114259722243, row=None, before=(1, "John Doe", 25, 95.0)
    )
    assert encode(delete, 1708923776484) == golden("delete")


def test_watermark_matches_the_golden() -> None:
    message = encode_watermark(AVRO, 447984124732375041, build_ts_ms=1708923816911)
    assert message is not None
    assert message.value == golden("watermark")
    assert message.key is None and message.commit_ts == 447984124732375041


def test_bootstrap_matches_the_golden() -> None:
    table = attrs.evolve(USER, table="new_user")
    message = build_encoder(AVRO, table, build_ts_ms=1708924603278).encode_bootstrap()
    assert message is not None
    assert message.value == golden("bootstrap")
    assert message.key == b"" and (message.commit_ts, message.rows) == (0, 0)


def test_ddl_matches_the_golden_and_json_ddl_matches_the_doc() -> None:
    after = attrs.evolve(
        USER,
        columns=(*USER.columns, col("createTime", "timestamp", 5)),
        version=447987408682614791,
    )
    sql = "ALTER TABLE `user` ADD COLUMN `createTime` TIMESTAMP"
    args = ("ALTER", sql, 447987408682614795)
    kwargs = {"build_ts_ms": 1708936343598, "table": after, "pre_table": USER}
    assert encode_ddl(AVRO, *args, **kwargs).value == golden("ddl_alter")
    assert marshal_ddl(SimpleDDL(*args, **kwargs)) == golden("ddl_alter")
    json_ddl = encode_ddl(CodecConfig(), *args, **kwargs)
    assert json_ddl.value == golden("ddl_alter", "json") and json_ddl.key is None
    with pytest.raises(InputError, match="'DROP' is not a Simple DDL type"):
        encode_ddl(AVRO, "DROP", "", 1, build_ts_ms=0)


def test_message_heads_are_the_union_branch_and_payload() -> None:
    assert golden("watermark")[:3] == b"\x16\x00\x00"
    assert golden("bootstrap")[:3] == b"\x16\x02\x02"
    assert golden("ddl_alter")[:3] == b"\x16\x04\x04"
    assert golden("insert")[:3] == b"\x16\x06\x06"


# --- DML layout ---------------------------------------------------------------------------


def test_map_entries_are_sorted_by_column_name_in_one_block() -> None:
    change = RowChange(USER, Op.INSERT, 1, (1, "a", 2, 0.5))
    value = encode(change)
    data = read(value)["payload"]["data"]
    assert list(data) == ["age", "id", "name", "score"]
    # one block: count 4, the entries, then 0; `old` null at the end
    assert value.endswith(b"\x00\x00")
    assert encode_long(4) + b"\x06age" in value


def test_insert_has_data_only_delete_old_only_update_both() -> None:
    row = (1, "a", 2, 0.5)
    insert = read(encode(RowChange(USER, Op.INSERT, 1, row)))["payload"]
    assert insert["type"] == "INSERT" and insert["old"] is None and insert["data"]
    delete = read(encode(RowChange(USER, Op.DELETE, 1, None, row)))["payload"]
    assert delete["type"] == "DELETE" and delete["data"] is None and delete["old"]
    update = read(encode(RowChange(USER, Op.UPDATE, 1, row, row)))["payload"]
    assert update["data"] == update["old"]
    no_before = read(encode(RowChange(USER, Op.UPDATE, 1, row)))["payload"]
    assert no_before["type"] == "UPDATE" and no_before["old"] is None


def test_fixed_fields_are_always_written() -> None:
    # Unlike JSON's omitempty, Avro writes database/table/tableID/schemaVersion even if 0.
    table = attrs.evolve(USER, table_id=0, version=0)
    payload = read(encode(RowChange(table, Op.INSERT, 2**64 - 1, (1, None, None, None))))["payload"]
    assert (payload["tableID"], payload["schemaVersion"]) == (0, 0)
    assert payload["commitTs"] == -1  # Go's int64(uint64): wraps
    assert payload["data"] == {"age": None, "id": 1, "name": None, "score": None}


def test_replays_are_byte_identical() -> None:
    change = RowChange(USER, Op.INSERT, 1, (1, "a", 2, 0.1))
    first = encode(change, 5)
    assert encode(change, 5) == first
    assert encode(change, 6) != first


# Every MySQL type: (type, mounter value, the map value fastavro reads, its union branch).
_VALUES: list[tuple[str, Any, Any, str]] = [
    ("tinyint", -128, -128, "long"),
    ("tinyint unsigned", 255, 255, "long"),
    ("smallint", 32767, 32767, "long"),
    ("mediumint unsigned", 16777215, 16777215, "long"),
    ("int", -(2**31), -(2**31), "long"),
    ("int unsigned", 2**32 - 1, 2**32 - 1, "long"),
    ("bigint", -(2**63), -(2**63), "long"),
    ("bigint unsigned", 2**64 - 1, {"value": -1}, NS + "UnsignedBigint"),
    ("bigint unsigned", 5, {"value": 5}, NS + "UnsignedBigint"),
    ("year", 2024, 2024, "long"),
    ("float", 3.14, to_float32(3.14), "float"),
    ("float", float("nan"), 0.0, "float"),
    ("double", 0.1, 0.1, "double"),
    ("double", float("-inf"), 0.0, "double"),
    ("decimal(10,2)", "-1.50", "-1.50", "string"),
    ("date", "2020-01-02", "2020-01-02", "string"),
    ("datetime(3)", "2020-01-02 03:04:05.120", "2020-01-02 03:04:05.120", "string"),
    ("time", "-838:59:59", "-838:59:59", "string"),
    (
        "timestamp",
        "2020-01-02 03:04:05",
        {"location": "UTC", "value": "2020-01-02 03:04:05"},
        NS + "Timestamp",
    ),
    ("enum('a','b')", 2, 2, "long"),
    ("set('a','b','c')", 5, 5, "long"),
    ("bit(64)", 2**63, -(2**63), "long"),
    ("bit(8)", b"\x41", 65, "long"),
    ("json", '{"a": 1}', '{"a": 1}', "string"),
    ("varchar(10)", "héllo", "héllo", "string"),
    ("text", b"caf\xc3\xa9", "café", "string"),
    ("char(3)", "ab", "ab", "string"),
    ("varbinary(4)", b"\x00\xff", b"\x00\xff", "bytes"),
    ("blob", b"raw", b"raw", "bytes"),
    ("binary(2)", b"\x01\x02", b"\x01\x02", "bytes"),
    ("vector(3)", "[1,2,3]", "[1,2,3]", "string"),
]


def _one_column(type_text: str) -> TableSchema:
    return TableSchema(
        "d",
        "t",
        (col("k", "int", 1, nullable=False), col("v", type_text, 2)),
        indexes=(Index("PRIMARY", ("k",), unique=True, primary=True),),
        table_id=3,
        version=4,
    )


def _native_dml(table: TableSchema, change: RowChange, values: dict[str, Any]) -> Any:
    return {
        "type": "DML",
        "payload": (
            NS + "DML",
            {
                "version": 1,
                "database": table.database,
                "table": table.table,
                "tableID": table.table_id,
                "type": change.op.value,
                "commitTs": change.commit_ts,
                "buildTs": 7,
                "schemaVersion": table.version,
                "claimCheckLocation": None,
                "handleKeyOnly": None,
                "checksum": None,
                "data": values,
                "old": None,
            },
        ),
    }


@pytest.mark.parametrize(("type_text", "value", "expected", "branch"), _VALUES)
def test_every_mysql_type_takes_tidbs_union_branch(
    type_text: str, value: Any, expected: Any, branch: str
) -> None:
    table = _one_column(type_text)
    change = RowChange(table, Op.INSERT, 9, (1, value))
    ours = encode(change)
    assert read(ours)["payload"]["data"] == {"k": 1, "v": expected}
    # fastavro, told the branch, writes the same bytes
    assert ours == write(_native_dml(table, change, {"k": ("long", 1), "v": (branch, expected)}))


def test_text_bytes_are_written_as_they_are() -> None:
    # Go's string([]byte) keeps invalid UTF-8; goavro writes the bytes unchanged.
    change = RowChange(_one_column("varchar(8)"), Op.INSERT, 1, (1, b"a\xffb"))
    value = encode(change)
    assert b"\x08\x06a\xffb" in value
    assert read(value)["payload"]["data"]["v"] == "a\udcffb"


def test_timestamp_location_is_the_time_zone() -> None:
    config = attrs.evolve(AVRO, time_zone="Asia/Shanghai")
    change = RowChange(_one_column("timestamp"), Op.INSERT, 1, (1, "2020-01-01 08:00:00"))
    data = read(encode(change, config=config))["payload"]["data"]
    assert data["v"] == {"location": "Asia/Shanghai", "value": "2020-01-01 08:00:00"}


@pytest.mark.parametrize(
    ("type_text", "value", "match"),
    [
        ("int", "1", "column v of d.t \\(int\\) cannot take '1'"),
        ("bigint", 2**63, "cannot take 9223372036854775808"),
        ("bigint unsigned", -1, "cannot take -1"),
        ("float", 1e39, "cannot take 1e\\+39"),
        ("double", "x", "expected a float"),
        ("varchar(3)", 5, "expected a str"),
        ("varbinary(3)", "x", "expected bytes"),
        ("timestamp", 5, "expected a str"),
        ("varchar(3)", "\ud800", "surrogates not allowed"),
    ],
)
def test_a_value_that_does_not_fit_names_the_column(type_text: str, value: Any, match: str) -> None:
    change = RowChange(_one_column(type_text), Op.INSERT, 1, (1, value))
    with pytest.raises(InputError, match=match) as caught:
        encode(change)
    assert caught.value.column == "v" and caught.value.table == "d.t"


def test_a_row_of_the_wrong_length_is_an_input_error() -> None:
    with pytest.raises(InputError, match="has 3 values; the table has 4 columns"):
        encode(RowChange(USER, Op.INSERT, 1, (1, 2, 3)))


def test_an_unknown_column_type_is_a_schema_error_at_build() -> None:
    table = TableSchema("d", "t", (Column("g", MySQLType("geometry")),))
    with pytest.raises(SchemaError, match="'geometry'"):
        AvroMarshaller(table, time_zone="UTC", build_ts_ms=0)


# --- table schemas ------------------------------------------------------------------------

SCHEMA_TABLE = TableSchema(
    "d",
    "t",
    (
        col("z", "decimal(10,2)", 9, default="1.50"),
        col("dt", "datetime(3)", 2),
        col("y", "year", 3),
        col("b", "bit(12)", 4, default="300"),
        col("e", "enum('a','bc')", 5, default="bc"),
        col("s", "set('a','b','c')", 6),
        col("f", "float", 7),
        col("u", "int unsigned", 8),
        col("j", "json", 1),
        col("vb", "varbinary(16)", 10),
        col("zf", "int(5) zerofill", 11),
        col("c0", "char(0)", 12),
        col("d0", "decimal(5,0)", 13),
    ),
    indexes=(Index("uk", ("u", "y"), unique=True),),
    table_id=77,
    version=2**63 + 5,
)


def test_table_schema_data_types_follow_tiflow_avro_go() -> None:
    schema = table_schema_avro(SCHEMA_TABLE)
    by_name = {c["name"]: c for c in schema["columns"]}
    assert [c["name"] for c in schema["columns"]] == [
        "j", "dt", "y", "b", "e", "s", "f", "u", "z", "vb", "zf", "c0", "d0",
    ]  # fmt: skip
    assert by_name["z"]["dataType"] == {
        "mysqlType": "decimal",
        "charset": "binary",
        "collate": "binary",
        "length": 10,
        "decimal": 2,
        "elements": None,
        "unsigned": False,
        "zerofill": False,
    }
    assert by_name["z"]["default"] == "1.50"
    # temporal fsp is not written (only the length tells it)
    assert by_name["dt"]["dataType"]["length"] == 23
    assert by_name["dt"]["dataType"]["decimal"] is None
    assert by_name["dt"]["dataType"]["unsigned"] is None
    assert (by_name["y"]["dataType"]["unsigned"], by_name["y"]["dataType"]["zerofill"]) == (
        True,
        True,
    )
    assert by_name["b"]["dataType"]["unsigned"] is True
    assert by_name["b"]["default"] == b"\x01\x2c"  # raw big-endian bytes of 300
    assert by_name["e"]["dataType"]["elements"] == ["a", "bc"]
    assert by_name["e"]["dataType"]["unsigned"] is None
    assert by_name["f"]["dataType"]["decimal"] is None
    assert by_name["f"]["dataType"]["unsigned"] is False
    assert by_name["j"]["dataType"]["length"] == 4294967295
    assert by_name["vb"]["dataType"]["unsigned"] is None
    assert by_name["zf"]["dataType"]["unsigned"] is True
    assert by_name["c0"]["dataType"]["length"] == 0  # written, unlike JSON's omitempty
    assert by_name["d0"]["dataType"]["decimal"] == 0
    assert schema["indexes"] == table_schema_json(SCHEMA_TABLE)["indexes"]
    assert schema["indexes"][0]["nullable"] is True


def _native_table_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """table_schema_avro's data with union branches named for fastavro."""
    columns = []
    for column in schema["columns"]:
        t = column["dataType"]
        columns.append(
            {
                **column,
                "dataType": {
                    **t,
                    "elements": None if t["elements"] is None else ("array", t["elements"]),
                },
                "default": column["default"],
            }
        )
    return {**schema, "columns": columns}


def test_bootstrap_matches_fastavro_and_reads_back() -> None:
    # Every column but the BIT one (fastavro writes only valid UTF-8 strings).
    table = attrs.evolve(
        SCHEMA_TABLE, columns=tuple(c for c in SCHEMA_TABLE.columns if c.name != "b")
    )
    value = AvroMarshaller(table, time_zone="UTC", build_ts_ms=11).marshal_bootstrap()
    schema = {**_native_table_schema(table_schema_avro(table)), "version": 5 - 2**63}
    native = {
        "type": "BOOTSTRAP",
        "payload": (NS + "Bootstrap", {"version": 1, "buildTs": 11, "tableSchema": schema}),
    }
    assert value == write(native)
    got = read(value)["payload"]["tableSchema"]
    assert got["version"] == 5 - 2**63  # int64(UpdateTS)
    assert got["columns"][0]["dataType"]["decimal"] is None
    assert got["indexes"] == [
        {"name": "uk", "unique": True, "primary": False, "nullable": True, "columns": ["u", "y"]}
    ]


def test_bit_default_is_written_as_raw_bytes() -> None:
    value = AvroMarshaller(SCHEMA_TABLE, time_zone="UTC", build_ts_ms=0).marshal_bootstrap()
    assert b"\x02\x04\x01\x2c" in value  # [null,string] branch 1, length 2, 0x01 0x2c
    bit = next(c for c in read(value)["payload"]["tableSchema"]["columns"] if c["name"] == "b")
    assert bit["default"].encode("utf-8", "surrogateescape") == b"\x01\x2c"


def test_a_bit_default_that_is_not_a_number_is_a_schema_error() -> None:
    table = TableSchema("d", "t", (col("b", "bit(3)", 1, default="b'1x'"),))
    marshaller = AvroMarshaller(table, time_zone="UTC", build_ts_ms=0)
    with pytest.raises(SchemaError, match="BIT default"):
        marshaller.marshal_bootstrap()


# --- large messages -----------------------------------------------------------------------


def test_a_message_above_the_limit_is_an_error_without_a_policy() -> None:
    config = attrs.evolve(AVRO, max_message_bytes=60)
    change = RowChange(USER, Op.INSERT, 1, (1, "x" * 100, 2, 0.5))
    with pytest.raises(MessageTooLargeError) as caught:
        encode(change, config=config)
    assert caught.value.table == "simple.user" and "id=1" in caught.value.key


def test_handle_key_only_keeps_the_key_columns_and_marks_the_message() -> None:
    config = attrs.evolve(
        AVRO,
        max_message_bytes=120,
        large_message_handle_option=LargeMessageHandleOption.HANDLE_KEY_ONLY,
    )
    change = RowChange(USER, Op.UPDATE, 1, (1, "x" * 100, 2, 0.5), (1, "y", 2, 0.5))
    value = encode(change, config=config)
    payload = read(value)["payload"]
    assert payload["handleKeyOnly"] is True
    assert payload["data"] == {"id": 1} and payload["old"] == {"id": 1}
    small = RowChange(USER, Op.INSERT, 1, (1, "x", 2, 0.5))
    assert read(encode(small, config=config))["payload"]["handleKeyOnly"] is None


def test_claim_check_location_is_written_when_given() -> None:
    marshaller = AvroMarshaller(USER, time_zone="UTC", build_ts_ms=0)
    change = RowChange(USER, Op.DELETE, 1, None, (1, "x", 2, 0.5))
    value = marshaller.marshal_row(
        change, handle_key_only=True, claim_check_location="s3://b/a.json"
    )
    payload = read(value)["payload"]
    assert payload["claimCheckLocation"] == "s3://b/a.json" and payload["handleKeyOnly"]
    assert payload["old"] == {"id": 1}


def test_a_bootstrap_above_the_limit_is_an_error() -> None:
    config = attrs.evolve(AVRO, max_message_bytes=100)
    with pytest.raises(MessageTooLargeError):
        build_encoder(config, USER, build_ts_ms=0).encode_bootstrap()


# --- property: our bytes are fastavro's bytes ---------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.sampled_from(range(len(_VALUES))), min_size=1, max_size=8),
    st.sampled_from(list(Op)),
    st.integers(0, 2**64 - 1),
    st.randoms(use_true_random=False),
)
def test_rows_are_byte_identical_to_fastavro(
    picks: list[int], op: Op, commit_ts: int, rnd: random.Random
) -> None:
    cases = [_VALUES[i] for i in picks]
    columns = tuple(col(f"c{i}", t, i + 1) for i, (t, _, _, _) in enumerate(cases))
    names = [c.name for c in columns]
    rnd.shuffle(names)  # definition order is not map order
    columns = tuple(attrs.evolve(c, name=n) for c, n in zip(columns, names, strict=True))
    table = TableSchema("db", "tbl", columns, table_id=5, version=6)
    row = tuple(None if rnd.random() < 0.2 else v for (_, v, _, _) in cases)
    change = RowChange(
        table,
        op,
        commit_ts,
        row=None if op is Op.DELETE else row,
        before=None if op is Op.INSERT else row,
    )
    image = {
        c.name: None if value is None else (branch, expected)
        for c, value, (_, _, expected, branch) in zip(columns, row, cases, strict=True)
    }
    image = dict(sorted(image.items()))
    native = _native_dml(table, change, image)
    dml = native["payload"][1]
    dml["commitTs"] = commit_ts - 2**64 if commit_ts >= 2**63 else commit_ts
    dml["data"] = None if op is Op.DELETE else image
    dml["old"] = None if op is Op.INSERT else image
    assert encode(change) == write(native)


def test_a_ticdc_message_with_another_map_order_decodes_the_same() -> None:
    # TiCDC writes Go map order; fastavro writes the entries in the order given.
    change = RowChange(USER, Op.INSERT, 447984084414103554, (1, "John Doe", 25, 90.5))
    ours = encode(change, 1708923662983)
    native = _native_dml(
        USER,
        change,
        {"score": ("float", 90.5), "name": ("string", "John Doe"), "id": 1, "age": 25},
    )
    native["payload"][1]["buildTs"] = 1708923662983
    theirs = write(native)
    assert theirs != ours and len(theirs) == len(ours)
    decoder = SimpleDecoder(encoding_format="avro")
    decoder.add_table(USER)
    assert decoder.decode_message(b"", theirs) == decoder.decode_message(b"", ours)


def test_float_bytes_are_little_endian_ieee() -> None:
    change = RowChange(_one_column("float"), Op.INSERT, 1, (1, 1.5))
    assert b"\x04" + struct.pack("<f", 1.5) in encode(change)

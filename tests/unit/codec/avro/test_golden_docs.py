"""Avro protocol against TiCDC's own documents, field for field: the schema examples of the
Avro design document (seed 000, tiflow docs/design/2022-05-12-ticdc-avro-protocol-refactor.md)
and of the Avro protocol page (seed 003 in English, seed 002 its Japanese translation),
stored as tests/golden/avro/docs_*.json (see SOURCE.md there).

Each example is filled in for a table built from DDL, encoded with AvroEncoder over an
in-memory registry, and compared as parsed JSON data (the documents are pretty-printed and
not in Go's key order). The documents give no binary or value examples, so the values are
checked against what the documents say about them (AVRO_TYPE of each SQL type, `_tidb_op`
"c"/"u", the commit ts fields, DELETE tombstones, BIGINT UNSIGNED overflow, the handling
modes), decoded with fastavro. Where a document disagrees with TiCDC's code, the code's form
is asserted and the difference is stated next to the assertion (reference §12)."""

from __future__ import annotations

import io
import json
import struct
from decimal import Decimal
from typing import Any

import attrs
import fastavro
import pytest

from tests.support import paths
from ticdc_sink.codec.avro import AvroEncoder, key_schema_json, value_schema_json
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.config import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CodecConfig,
    Protocol,
)
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import TableSchema

GOLDEN = paths.GOLDEN / "avro"
AVRO = CodecConfig(protocol=Protocol.AVRO)
EXT = attrs.evolve(AVRO, enable_tidb_extension=True)
STRING_MODES = attrs.evolve(
    AVRO,
    avro_decimal_handling_mode=AvroDecimalHandling.STRING,
    avro_bigint_unsigned_handling_mode=AvroBigintUnsignedHandling.STRING,
)


class FakeRegistry:
    """An in-memory SchemaRegistry: ids by schema text."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.texts: dict[int, str] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        schema_id = self.ids.setdefault(schema, 1 + len(self.ids))
        self.texts[schema_id] = schema
        return schema_id


def golden(name: str) -> Any:
    return json.loads((GOLDEN / name).read_text())


def fill(template: Any, **values: Any) -> Any:
    """The document's example with each `"{{Name}}"` placeholder replaced by values[Name]; a
    list item `"{{ColumnValueBlock}}"` takes the next block of values["ColumnValueBlock"]."""
    blocks = iter(values.get("ColumnValueBlock", ()))

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [next(blocks) if v == "{{ColumnValueBlock}}" else walk(v) for v in node]
        if isinstance(node, str) and node.startswith("{{") and node.endswith("}}"):
            return values[node[2:-2]]
        return node

    filled = walk(template)
    assert next(blocks, None) is None, "more blocks than the example has placeholders"
    return filled


def table(ddl: str) -> TableSchema:
    parsed = parse_table_ddl(ddl)
    return TableSchema(
        parsed.database or "test",
        parsed.table,
        parsed.columns,
        parsed.indexes,
        table_id=1,
        version=1,
        pk_clustered=parsed.pk_clustered,
    )


def fields(config: CodecConfig, t: TableSchema) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in json.loads(value_schema_json(config, t))["fields"]}


def read(schema: str, body: bytes) -> dict[str, Any]:
    stream = io.BytesIO(body)
    record = fastavro.schemaless_reader(stream, fastavro.parse_schema(json.loads(schema)), None)
    assert stream.tell() == len(body)
    assert isinstance(record, dict)
    return record


def encode(
    config: CodecConfig, t: TableSchema, op: Op, commit_ts: int, row: tuple[Any, ...]
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(decoded key, decoded value) of one row change; None for an absent key or value."""
    registry = FakeRegistry()
    encoder = AvroEncoder(config, t, topic="docs", registry=registry)
    if op is Op.DELETE:
        change = RowChange(t, op, commit_ts, None, row)
    elif op is Op.UPDATE:
        change = RowChange(t, op, commit_ts, row, row)
    else:
        change = RowChange(t, op, commit_ts, row)
    message = encoder.encode_row(change)

    def decoded(data: bytes | None) -> dict[str, Any] | None:
        if data is None:
            return None
        assert data[0] == 0
        return read(registry.texts[int.from_bytes(data[1:5], "big")], data[5:])

    return decoded(message.key), decoded(message.value)


# --- the type table (seed 003 "Column data format"; seed 002 the same in Japanese) -------

MAPPING = golden("docs_type_mapping.json")

# SQL TYPE of the document -> (column type in the DDL, mounter value, decoded value)
SAMPLES: dict[str, tuple[str, Any, Any]] = {
    "BOOL": ("bool", 1, 1),
    "TINYINT": ("tinyint", -128, -128),
    "SMALLINT": ("smallint", -32768, -32768),
    "MEDIUMINT": ("mediumint", 8388607, 8388607),
    "INT": ("int", -2147483648, -2147483648),
    "BIGINT": ("bigint", -(2**63), -(2**63)),
    "TINYBLOB": ("tinyblob", b"\x00\xff", b"\x00\xff"),
    "BLOB": ("blob", b"blob", b"blob"),
    "MEDIUMBLOB": ("mediumblob", b"m", b"m"),
    "LONGBLOB": ("longblob", b"", b""),
    "BINARY": ("binary(3)", b"ab\x00", b"ab\x00"),
    "VARBINARY": ("varbinary(10)", b"hello", b"hello"),
    "TINYTEXT": ("tinytext", "hello world", "hello world"),
    "TEXT": ("text", "测试", "测试"),
    "MEDIUMTEXT": ("mediumtext", "", ""),
    "LONGTEXT": ("longtext", "x" * 300, "x" * 300),
    "CHAR": ("char(10)", "c", "c"),
    "VARCHAR": ("varchar(10)", "varchar", "varchar"),
    "FLOAT": ("float", 3.14, to_float32(3.14)),
    "DOUBLE": ("double", 3.14, 3.14),
    "DATE": ("date", "2000-01-01", "2000-01-01"),
    "DATETIME": ("datetime", "2015-12-20 23:58:58", "2015-12-20 23:58:58"),
    "TIMESTAMP": ("timestamp", "1973-12-30 15:30:00", "1973-12-30 15:30:00"),
    "TIME": ("time", "-838:59:59", "-838:59:59"),
    "YEAR": ("year", 1970, 1970),
    # the BIT(64), ENUM/SET(a,b,c) and DECIMAL(10, 4) examples of the same page
    "BIT": ("bit(64)", 683, b"\x02\xab"),
    "JSON": ("json", '{"key": "value"}', '{"key": "value"}'),
    "ENUM": ("enum('a','b','c')", 2, "b"),
    "SET": ("set('a','b','c')", 5, "a,c"),
    "DECIMAL": ("decimal(10,4)", "-2333.6543", Decimal("-2333.6543")),
}

# how fastavro hands back each AVRO_TYPE the documents name
PYTHON_TYPE = {
    "int": int,
    "long": int,
    "bytes": bytes,
    "string": str,
    "float": float,
    "double": float,
}

# the extended examples ("Some other SQL types extend the base data format")
EXTENDED = {
    "BIT": golden("docs_column_block_bit64.json"),
    "ENUM": golden("docs_column_block_enum_set.json"),
    "SET": golden("docs_column_block_enum_set.json"),
    "DECIMAL": golden("docs_column_block_decimal_10_4.json"),
}


def code_avro_type(sql_type: str, doc_avro_type: str) -> str:
    if sql_type == "FLOAT":
        # DIFFERENCE: the documents (000, 002, 003) say AVRO_TYPE double for FLOAT; TiCDC's
        # code writes `float` (4 bytes) since v7.0 (tiflow #8490; reference §6.5, §12). 003's (and
        # 002's) "Compatibility" section tells users to relax the registry's compatibility policy
        # when upgrading to v7.0 because of it.
        assert doc_avro_type == "double"
        return "float"
    return doc_avro_type


def expected_type(sql_type: str, tidb: str, avro: str) -> dict[str, Any]:
    """The `type` object the document shows for a column of this SQL type."""
    if sql_type in EXTENDED:
        params = EXTENDED[sql_type]["type"]["connect.parameters"]
        if sql_type in ("ENUM", "SET"):
            # the example's "tidb_type":"ENUM/SET" stands for ENUM or SET
            assert params["tidb_type"] == "ENUM/SET"
        else:
            assert params["tidb_type"] == tidb
        return {
            **EXTENDED[sql_type]["type"],
            "connect.parameters": {
                **EXTENDED[sql_type]["type"]["connect.parameters"],
                "tidb_type": tidb,
            },
        }
    block = fill(
        golden("docs_column_block.json"),
        ColumnName="-",
        TIDB_TYPE=tidb,
        AVRO_TYPE=code_avro_type(sql_type, avro),
    )
    return block["type"]


DOC_ROWS = MAPPING["protocol_doc_en"]["rows"]


def doc_table() -> TableSchema:
    """One NOT NULL column and one nullable column (no DEFAULT) per row of the type table."""
    columns = ["`id` int NOT NULL"]
    for sql_type, _, _, _ in DOC_ROWS:
        type_text = SAMPLES[sql_type][0]
        columns.append(f"`{sql_type.lower()}` {type_text} NOT NULL")
        columns.append(f"`{sql_type.lower()}_null` {type_text}")
    return table(f"CREATE TABLE `docs`.`types` ({', '.join(columns)}, PRIMARY KEY (`id`))")


def test_doc_type_table_covers_every_sample() -> None:
    assert [row[0] for row in DOC_ROWS] == list(SAMPLES)


@pytest.mark.parametrize(
    ("sql_type", "tidb", "avro", "note"), DOC_ROWS, ids=[row[0] for row in DOC_ROWS]
)
def test_column_blocks_match_the_documented_column_data_format(
    sql_type: str, tidb: str, avro: str, note: str
) -> None:
    got = fields(AVRO, doc_table())
    name = sql_type.lower()
    t = expected_type(sql_type, tidb, avro)
    # "The basic Column data format": {"name", "type": {"connect.parameters", "type"}}
    if sql_type not in EXTENDED:
        assert got[name] == fill(
            golden("docs_column_block.json"),
            ColumnName=name,
            TIDB_TYPE=tidb,
            AVRO_TYPE=code_avro_type(sql_type, avro),
        )
    assert got[name] == {"name": name, "type": t}
    # "If one column can be NULL": "default":null and ["null", T]
    nullable = fill(
        golden("docs_column_block_nullable.json"),
        ColumnName=name + "_null",
        TIDB_TYPE=tidb,
        AVRO_TYPE=code_avro_type(sql_type, avro),
    )
    nullable["type"][1] = t
    assert got[name + "_null"] == nullable


def test_values_have_the_documented_avro_types() -> None:
    t = doc_table()
    row: list[Any] = [1]
    for sql_type, _, _, _ in DOC_ROWS:
        row += [SAMPLES[sql_type][1], SAMPLES[sql_type][1]]
    _, value = encode(AVRO, t, Op.INSERT, 1, tuple(row))
    assert value is not None
    assert value.pop("id") == 1
    for sql_type, _, avro, _ in DOC_ROWS:
        expected = SAMPLES[sql_type][2]
        name = sql_type.lower()
        assert value[name] == expected, sql_type
        assert value[name + "_null"] == expected, sql_type
        if sql_type == "DECIMAL":  # the logical type: fastavro gives a Decimal of scale 4
            assert value[name].as_tuple().exponent == -4
        else:
            assert type(value[name]) is PYTHON_TYPE[code_avro_type(sql_type, avro)], sql_type
    _, nulls = encode(
        AVRO, t, Op.INSERT, 1, tuple(None if i and i % 2 == 0 else v for i, v in enumerate(row))
    )
    assert nulls is not None
    assert all(nulls[sql_type.lower() + "_null"] is None for sql_type, *_ in DOC_ROWS)


def test_float_is_four_bytes_not_the_documented_double() -> None:
    # DIFFERENCE (docs: AVRO_TYPE double): the body of a NOT NULL FLOAT is a 4-byte float.
    t = table("CREATE TABLE `docs`.`f` (`f` float NOT NULL)")
    registry = FakeRegistry()
    message = AvroEncoder(AVRO, t, topic="docs", registry=registry).encode_row(
        RowChange(t, Op.INSERT, 1, (3.14,))
    )
    assert message.value is not None
    assert message.value[5:] == struct.pack("<f", 3.14)


# "When it is unsigned, TIDB_TYPE is INT UNSIGNED" / "... and AVRO_TYPE is long" /
# "BIGINT ... When it is unsigned, TIDB_TYPE is BIGINT UNSIGNED. If
# avro-bigint-unsigned-handling-mode is string, AVRO_TYPE is string."
UNSIGNED = [
    # (column type, config, TIDB_TYPE, AVRO_TYPE, value, decoded)
    ("tinyint unsigned", AVRO, "INT UNSIGNED", "int", 255, 255),
    ("smallint unsigned", AVRO, "INT UNSIGNED", "int", 65535, 65535),
    ("mediumint unsigned", AVRO, "INT UNSIGNED", "int", 16777215, 16777215),
    ("int unsigned", AVRO, "INT UNSIGNED", "long", 4294967295, 4294967295),
    ("bigint unsigned", AVRO, "BIGINT UNSIGNED", "long", 2**63 - 1, 2**63 - 1),
    # "long: ... When the value is greater than 9223372036854775807, overflow will occur."
    ("bigint unsigned", AVRO, "BIGINT UNSIGNED", "long", 2**63, -(2**63)),
    ("bigint unsigned", AVRO, "BIGINT UNSIGNED", "long", 2**64 - 1, -1),
    (
        "bigint unsigned",
        STRING_MODES,
        "BIGINT UNSIGNED",
        "string",
        2**64 - 1,
        "18446744073709551615",
    ),
    # "DECIMAL ... When avro-decimal-handling-mode is string, AVRO_TYPE is string."
    ("decimal(10,4)", STRING_MODES, "DECIMAL", "string", "-2333.6543", "-2333.6543"),
]


@pytest.mark.parametrize(
    ("type_text", "config", "tidb", "avro", "value", "decoded"),
    UNSIGNED,
    ids=[f"{u[0]}-{u[3]}-{u[4]}" for u in UNSIGNED],
)
def test_unsigned_and_handling_modes_as_documented(
    type_text: str, config: CodecConfig, tidb: str, avro: str, value: Any, decoded: Any
) -> None:
    t = table(f"CREATE TABLE `docs`.`u` (`c` {type_text} NOT NULL)")
    assert fields(config, t)["c"] == fill(
        golden("docs_column_block.json"), ColumnName="c", TIDB_TYPE=tidb, AVRO_TYPE=avro
    )
    _, record = encode(config, t, Op.INSERT, 1, (value,))
    assert record == {"c": decoded}


def test_japanese_type_table_is_the_english_one() -> None:
    # seed 002 is a machine translation of 003: SQL types and, from FLOAT on, TIDB_TYPE
    # were translated too (浮く "float" as in floating on water, 弦 "string" of an
    # instrument, 長さ "long" as a length, 少し "a bit"). Mapped back, it is 003's table.
    glossary = {
        "ブール": "BOOL",
        "タイイント": "TINYINT",
        "スモールント": "SMALLINT",
        "ミディアムミント": "MEDIUMINT",
        "タイニーブロブ": "TINYBLOB",
        "ミディアムブロブ": "MEDIUMBLOB",
        "ロングブロブ": "LONGBLOB",
        "バイナリ": "BINARY",
        "ヴァービナリー": "VARBINARY",
        "小さなテキスト": "TINYTEXT",
        "メディアテキスト": "MEDIUMTEXT",
        "長文": "LONGTEXT",
        "チャー": "CHAR",
        "浮く": "FLOAT",
        "ダブル": "DOUBLE",
        "日付": "DATE",
        "日付時刻": "DATETIME",
        "タイムスタンプ": "TIMESTAMP",
        "時間": "TIME",
        "年": "YEAR",
        "少し": "BIT",
        "セット": "SET",
        "10進数": "DECIMAL",
        "整数": "int",
        "長さ": "long",
        "バイト": "bytes",
        "弦": "string",
    }
    ja = MAPPING["protocol_doc_ja"]["rows"]
    en = MAPPING["protocol_doc_en"]["rows"]
    # AVRO_TYPE ダブル is "double", as is the SQL type ダブル
    back = [
        [glossary.get(c, c) for c in r[:2]]
        + ["double" if r[2] == "ダブル" else glossary.get(r[2], r[2])]
        for r in ja
    ]
    assert back == [r[:3] for r in en]


# --- the design document's grouped table (seed 000) -------------------------------------


def design_rows() -> list[tuple[str, str, str]]:
    """(SQL TYPE, TIDB_TYPE, AVRO_TYPE) with the grouped cells split: `FLOAT/DOUBLE` in both
    columns pairs up, a single TIDB_TYPE holds for every SQL type of the group."""
    out = []
    for sql_cell, tidb_cell, avro, _ in MAPPING["design_doc"]["rows"]:
        sql_types, tidb_types = sql_cell.split("/"), tidb_cell.split("/")
        for i, sql_type in enumerate(sql_types):
            out.append((sql_type, tidb_types[i] if len(tidb_types) > 1 else tidb_types[0], avro))
    return out


@pytest.mark.parametrize(("sql_type", "tidb", "avro"), design_rows(), ids=lambda v: str(v))
def test_design_doc_type_mapping(sql_type: str, tidb: str, avro: str) -> None:
    got = fields(AVRO, doc_table())[sql_type.lower()]["type"]
    assert got["connect.parameters"]["tidb_type"] == tidb
    assert got["type"] == code_avro_type(sql_type, avro)


def test_design_doc_extra_parameters() -> None:
    # "BIT has another connector.parameters entry "length":"64"" and (the row says BIT but
    # is the ENUM/SET row) "allowed":"a,b,c". DIFFERENCE: the design doc writes
    # `connector.parameters`; the code (and the protocol page) writes `connect.parameters`.
    got = fields(AVRO, doc_table())
    assert "connector.parameters" not in json.dumps(got)
    assert got["bit"]["type"]["connect.parameters"]["length"] == "64"
    assert got["enum"]["type"]["connect.parameters"]["allowed"] == "a,b,c"
    assert got["set"]["type"]["connect.parameters"]["allowed"] == "a,b,c"
    # "This is an avro logical type having scale and precision."
    assert got["decimal"]["type"]["logicalType"] == "decimal"
    assert (got["decimal"]["type"]["precision"], got["decimal"]["type"]["scale"]) == (10, 4)


# --- key and value data formats (003 "Definition of the data format", 000 "Key/Value Schema")

# two key columns and nothing else, so that the examples' two {{ColumnValueBlock}} are all
USERS = (
    "CREATE TABLE `shop`.`users` (`id` bigint NOT NULL, `name` varchar(20) NOT NULL, "
    "PRIMARY KEY (`id`, `name`))"
)
BLOCKS = [
    {"name": "id", "type": {"connect.parameters": {"tidb_type": "BIGINT"}, "type": "long"}},
    {"name": "name", "type": {"connect.parameters": {"tidb_type": "TEXT"}, "type": "string"}},
]
# {{TableName}} is the table; {{Namespace}} is "default.<database>" (the classic
# changefeed namespace `default`, reference §6.4) -- the documents do not spell it out.
NAMES = {"TableName": "users", "Namespace": "default.shop"}


def test_key_data_format() -> None:
    key = json.loads(key_schema_json(EXT, table(USERS)) or "")
    assert key == fill(golden("docs_key_schema.json"), ColumnValueBlock=BLOCKS, **NAMES)


def test_value_data_format_without_extension() -> None:
    value = json.loads(value_schema_json(AVRO, table(USERS)))
    assert value == fill(golden("docs_value_schema.json"), ColumnValueBlock=BLOCKS, **NAMES)
    # "By default, the data format of Value is the same as that of Key"
    assert value == json.loads(key_schema_json(AVRO, table(USERS)) or "")


def with_extension_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """DIFFERENCE: the documents show the extension fields as {"name","type"}; the code
    gives each a default ("" for _tidb_op, 0 for the two longs; reference §6.5)."""
    defaults = {"_tidb_op": "", "_tidb_commit_ts": 0, "_tidb_commit_physical_time": 0}
    return {
        **schema,
        "fields": [
            {"default": defaults[f["name"]], **f} if f["name"] in defaults else f
            for f in schema["fields"]
        ],
    }


def test_value_data_format_with_extension() -> None:
    value = json.loads(value_schema_json(EXT, table(USERS)))
    doc = fill(golden("docs_value_schema_extension.json"), ColumnValueBlock=BLOCKS, **NAMES)
    assert value != doc  # the defaults
    assert value == with_extension_defaults(doc)
    # the key never carries the extension fields
    assert json.loads(key_schema_json(EXT, table(USERS)) or "")["fields"] == BLOCKS


def test_design_doc_key_and_value_schema() -> None:
    # DIFFERENCE (wording): the design doc's {{RecordName}} "represents full qualified table
    # name"; the code's `name` is the bare table and the qualification is in `namespace`
    # (full name default.shop.users).
    names = {"RecordName": "users", "Namespace": "default.shop"}
    t = table(USERS)
    key = json.loads(key_schema_json(AVRO, t) or "")
    assert key == fill(golden("docs_design_key_schema.json"), ColumnValueBlock=BLOCKS, **names)
    assert f"{key['namespace']}.{key['name']}" == "default.shop.users"
    # the design doc's value schema always lists the extension fields; its text says they
    # are appended only with enable-tidb-extension=true, which is what the code does
    doc = fill(golden("docs_design_value_schema.json"), ColumnValueBlock=BLOCKS, **names)
    assert json.loads(value_schema_json(EXT, t)) == with_extension_defaults(doc)
    assert json.loads(value_schema_json(AVRO, t))["fields"] == BLOCKS


def test_key_holds_primary_key_or_unique_index_columns_only() -> None:
    # "The fields in the key contains only primary key columns or unique index columns."
    pk = table(
        "CREATE TABLE `d`.`t` (`a` int NOT NULL, `b` int, `c` int NOT NULL, PRIMARY KEY (`c`))"
    )
    assert [f["name"] for f in json.loads(key_schema_json(AVRO, pk) or "")["fields"]] == ["c"]
    uk = table("CREATE TABLE `d`.`t` (`a` int, `b` int NOT NULL, UNIQUE KEY `uk` (`b`))")
    assert [f["name"] for f in json.loads(key_schema_json(AVRO, uk) or "")["fields"]] == ["b"]
    # "fields in the Value contains all columns, not just the primary key columns"
    assert [f["name"] for f in json.loads(value_schema_json(AVRO, uk))["fields"]] == ["a", "b"]


# --- DML events (000 "DML Events"; 003 "TiDB extension fields") -----------------------


COMMIT_TS = 417318403368288260  # tiflow's test commit ts; physical part 1591943372224


@pytest.mark.parametrize(("op", "tidb_op"), [(Op.INSERT, "c"), (Op.UPDATE, "u")])
def test_extension_values_of_insert_and_update(op: Op, tidb_op: str) -> None:
    # "_tidb_op: "c" indicates insert and "u" indicates updates"; "_tidb_commit_ts: the
    # unique identifier of a transaction"; "_tidb_commit_physical_time: the physical
    # timestamp in a transaction identifier" (commit ts >> 18, in milliseconds)
    key, value = encode(EXT, table(USERS), op, COMMIT_TS, (7, "x"))
    assert key == {"id": 7, "name": "x"}
    assert value == {
        "id": 7,
        "name": "x",
        "_tidb_op": tidb_op,
        "_tidb_commit_ts": COMMIT_TS,
        "_tidb_commit_physical_time": 1591943372224,
    }
    # "If enable-tidb-extension is false ... there is no difference between INSERT and
    # UPDATE event."
    assert encode(AVRO, table(USERS), op, COMMIT_TS, (7, "x")) == (key, {"id": 7, "name": "x"})


@pytest.mark.parametrize("config", [AVRO, EXT], ids=["plain", "extension"])
def test_delete_sends_the_primary_key_and_a_null_value(config: CodecConfig) -> None:
    # "For the DELETE event, TiCDC will send the primary key value as the Kafka key, and the
    # Kafka value will be null."
    assert encode(config, table(USERS), Op.DELETE, COMMIT_TS, (7, "x")) == (
        {"id": 7, "name": "x"},
        None,
    )


def test_our_decoder_reads_the_documented_types_back_to_mounter_values() -> None:
    t = doc_table()
    row: list[Any] = [1]
    for sql_type, *_ in DOC_ROWS:
        row += [SAMPLES[sql_type][1], None]
    registry = FakeRegistry()
    message = AvroEncoder(EXT, t, topic="docs", registry=registry).encode_row(
        RowChange(t, Op.UPDATE, COMMIT_TS, tuple(row), tuple(row))
    )
    decoded = AvroDecoder(registry.texts.__getitem__).decode_message(message.key, message.value)
    assert (decoded.database, decoded.table, decoded.op, decoded.commit_ts) == (
        "docs",
        "types",
        Op.UPDATE,
        COMMIT_TS,
    )
    expected: dict[str, Any] = {"id": 1}
    for sql_type, *_ in DOC_ROWS:
        value = SAMPLES[sql_type][1]
        if sql_type == "FLOAT":
            value = to_float32(value)
        elif sql_type == "DECIMAL":
            value = Decimal(value)
        expected[sql_type.lower()] = value
        expected[sql_type.lower() + "_null"] = None
    assert decoded.data == expected

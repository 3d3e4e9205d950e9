"""Avro protocol decoding: round trips for every MySQL type in both decimal and
BIGINT UNSIGNED handling modes (hypothesis), with NULLs and defaults, tombstones, the
extension fields, names from the record namespace, and malformed messages."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

import attrs
import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.schemas import ALL_TYPES_TABLE, USERS, col, large_event_table, table_of
from tests.support.strategies import all_types_rows
from ticdc_sink.codec.avro import AvroEncoder, value_schema_json
from ticdc_sink.codec.avro.decoder import AvroDecoder, split_allowed
from ticdc_sink.config import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CodecConfig,
    Protocol,
    SubjectNameStrategy,
)
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.decode import DecodedRow
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import to_float32
from ticdc_sink.schema import Column, TableSchema

AVRO = CodecConfig(protocol=Protocol.AVRO)
EXT = attrs.evolve(AVRO, enable_tidb_extension=True)
MODES = {
    f"{d.value}-{u.value}{'-ext' if ext else ''}": attrs.evolve(
        AVRO,
        avro_decimal_handling_mode=d,
        avro_bigint_unsigned_handling_mode=u,
        enable_tidb_extension=ext,
    )
    for d in AvroDecimalHandling
    for u in AvroBigintUnsignedHandling
    for ext in (False, True)
}


def expected_value(column: Column, value: Any, config: CodecConfig) -> Any:
    """The mounter value a decoder gives back (codec/avro/decoder.py docstring)."""
    if value is None:
        return None
    base = column.type.base
    if base == "bigint" and column.type.unsigned:
        wrap = config.avro_bigint_unsigned_handling_mode is AvroBigintUnsignedHandling.LONG
        return value - 2**64 if wrap and value >= 2**63 else value
    if base == "float":
        return to_float32(value)
    if base == "decimal":
        return Decimal(value)
    return value


def round_trip(
    config: CodecConfig, table: TableSchema, change: RowChange
) -> tuple[DecodedRow, FakeRegistry]:
    registry = FakeRegistry()
    message = AvroEncoder(config, table, topic="t", registry=registry).encode_row(change)
    decoder = AvroDecoder(registry.schema_text)
    return decoder.decode_message(message.key, message.value), registry


ENCODERS: dict[str, tuple[AvroEncoder, FakeRegistry]] = {}


def encoder_for(mode: str) -> tuple[AvroEncoder, FakeRegistry]:
    if mode not in ENCODERS:
        registry = FakeRegistry()
        encoder = AvroEncoder(MODES[mode], ALL_TYPES_TABLE, topic="t", registry=registry)
        ENCODERS[mode] = (encoder, registry)
    return ENCODERS[mode]


@pytest.mark.parametrize("mode", sorted(MODES))
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_every_type_round_trips(mode: str, data: st.DataObject) -> None:
    table = ALL_TYPES_TABLE
    config = MODES[mode]
    row = data.draw(all_types_rows(table))
    op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE]))
    commit_ts = data.draw(st.integers(0, 2**64 - 1))
    encoder, registry = encoder_for(mode)
    message = encoder.encode_row(RowChange(table, op, commit_ts, row, row))
    decoded = AvroDecoder(registry.schema_text).decode_message(message.key, message.value)
    assert decoded.data == {
        c.name: expected_value(c, v, config) for c, v in zip(table.columns, row, strict=True)
    }
    assert decoded.old is None
    assert (decoded.database, decoded.table) == ("db", "t")
    if config.enable_tidb_extension:
        assert (decoded.op, decoded.commit_ts) == (op, commit_ts)
    else:
        assert (decoded.op, decoded.commit_ts) == (Op.INSERT, 0)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_delete_decodes_the_key_columns_from_the_tombstone(mode: str) -> None:
    table = TableSchema(
        "shop",
        "orders",
        (
            col("region", "varchar(8)", nullable=False),
            col("id", "bigint unsigned", nullable=False),
            col("amount", "decimal(10,2)"),
        ),
        table_of(col("x", "int"), key=("region", "id")).indexes,
    )
    change = RowChange(table, Op.DELETE, 77, None, ("eu", 2**64 - 2, "1.50"))
    decoded, registry = round_trip(MODES[mode], table, change)
    assert decoded.op is Op.DELETE and decoded.data is None
    expected_id = 2**64 - 2 if "string" in mode.split("-")[1] else -2
    assert decoded.old == {"region": "eu", "id": expected_id}
    assert decoded.commit_ts == 0  # the key carries no extension fields
    assert (decoded.database, decoded.table) == ("shop", "orders")
    assert len(registry.texts) == 1


@pytest.mark.parametrize("strategy", list(SubjectNameStrategy))
def test_a_tombstone_names_its_table_whatever_the_subject_strategy(
    strategy: SubjectNameStrategy,
) -> None:
    # Under the record strategies the key record is <namespace>.<table>.Key.
    table = table_of(col("id", "int", nullable=False), col("x", "int"), key=("id",))
    config = CodecConfig(protocol=Protocol.AVRO, subject_name_strategy=strategy)
    change = RowChange(table, Op.DELETE, 77, None, (1, 2))
    decoded, _ = round_trip(config, table, change)
    assert (decoded.database, decoded.table, decoded.old) == (
        table.database,
        table.table,
        {"id": 1},
    )


def test_defaults_and_nulls_round_trip_on_tiflow_large_event_table() -> None:
    table = large_event_table()
    for config in MODES.values():
        registry = FakeRegistry()
        encoder = AvroEncoder(config, table, topic="t", registry=registry)
        nulls = tuple(None if c.nullable else 127 for c in table.columns)
        message = encoder.encode_row(RowChange(table, Op.INSERT, 1, nulls))
        decoded = AvroDecoder(registry.schema_text).decode_message(message.key, message.value)
        assert decoded.data == {c.name: (None if c.nullable else 127) for c in table.columns}


def test_tiflow_large_event_insert_values() -> None:
    # the row of tiflow NewLargeEvent4Test's INSERT, as mounter values
    table = large_event_table()
    values: dict[str, Any] = {
        "t": 127,
        "tu1": 127,
        "tu2": 128,
        "tu3": 0,
        "tu4": None,
        "s": 32767,
        "su1": 32767,
        "su2": 32768,
        "su3": 0,
        "su4": None,
        "m": 8388607,
        "mu1": 8388607,
        "mu2": 8388608,
        "mu3": 0,
        "mu4": None,
        "i": 2147483647,
        "iu1": 2147483647,
        "iu2": 2147483648,
        "iu3": 0,
        "iu4": None,
        "bi": 9223372036854775807,
        "biu1": 9223372036854775807,
        "biu2": 9223372036854775808,
        "biu3": 0,
        "biu4": None,
        "floatT": 3.14,
        "doubleT": 2.71,
        "decimalT": "2333.654321",
        "floatTu": 3.14,
        "doubleTu": 2.71,
        "decimalTu": "2333.123456",
        "decimalTu2": "1.7371",
        "varcharT": "测试Varchar",
        "charT": "测试String",
        "binaryT": "测试Binary".encode().ljust(255, b"\0"),
        "varbinaryT": "测试varbinary".encode(),
        "tinytextT": "测试Tinytext",
        "textT": "测试text",
        "mediumtextT": "测试mediumtext",
        "longtextT": "测试longtext",
        "tinyblobT": "测试tinyblob".encode(),
        "blobT": "测试blob".encode(),
        "mediumblobT": "测试mediumblob".encode(),
        "longblobT": "测试longblob".encode(),
        "dateT": "2020-02-20",
        "datetimeT": "2020-02-20 02:20:20",
        "timestampT": "2020-02-20 10:20:20",
        "timestampT2": "2024-03-11 08:51:01.461270",
        "timeT": "02:20:20",
        "yearT": 2020,
        "enumT": 1,
        "setT": 2,
        "bitT": 65,
        "vectorT": "[1,2,3,4,5]",
        "jsonT": '{"key1": "value1"}',
    }
    row = tuple(values[c.name] for c in table.columns)
    config = MODES["precise-long-ext"]
    decoded, _ = round_trip(config, table, RowChange(table, Op.INSERT, 5, row))
    assert decoded.data == {
        c.name: expected_value(c, values[c.name], config) for c in table.columns
    }
    assert decoded.data is not None
    assert decoded.data["biu2"] == -9223372036854775808  # long mode wraps
    assert decoded.data["floatT"] == to_float32(3.14)
    string_config = MODES["string-string-ext"]
    decoded, _ = round_trip(string_config, table, RowChange(table, Op.INSERT, 5, row))
    assert decoded.data is not None
    assert decoded.data["biu2"] == 9223372036854775808
    assert decoded.data["decimalTu2"] == Decimal("1.7371")


def test_names_come_from_the_sanitised_record_names() -> None:
    table = table_of(col("a-b", "int"), db="my-db", name="1t")
    decoded, _ = round_trip(AVRO, table, RowChange(table, Op.INSERT, 1, (3,)))
    assert (decoded.database, decoded.table, decoded.data) == ("my_db", "_1t", {"a_b": 3})


def test_schemas_are_fetched_once_per_id() -> None:
    registry = FakeRegistry()
    encoder = AvroEncoder(EXT, USERS, topic="t", registry=registry)
    fetched: list[int] = []

    def schema_for_id(schema_id: int) -> str:
        fetched.append(schema_id)
        return registry.schema_text(schema_id)

    decoder = AvroDecoder(schema_for_id)
    for i in range(20):
        message = encoder.encode_row(RowChange(USERS, Op.INSERT, i, (i, "x")))
        assert decoder.decode_message(message.key, message.value).data == {"id": i, "name": "x"}
    assert sorted(fetched) == [1, 2]


def test_split_allowed_undoes_comma_escaping() -> None:
    assert split_allowed("a\\,b,c") == ["a,b", "c"]
    assert split_allowed("a,b,c") == ["a", "b", "c"]


def test_enum_with_comma_round_trips() -> None:
    table = table_of(
        Column("e", attrs.evolve(parse_mysql_type("enum('x')"), elements=("a,b", "c"))),
        Column("s", attrs.evolve(parse_mysql_type("set('x')"), elements=("a", "b", "c"))),
    )
    decoded, _ = round_trip(AVRO, table, RowChange(table, Op.INSERT, 1, (1, 5)))
    assert decoded.data == {"e": 1, "s": 5}


def test_fields_without_tidb_type_keep_their_avro_value() -> None:
    schema = {
        "type": "record",
        "name": "t",
        "namespace": "default.db",
        "fields": [{"name": "x", "type": "long"}],
    }
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), {"x": 5})
    decoder = AvroDecoder({3: json.dumps(schema)}.__getitem__)
    decoded = decoder.decode_message(None, b"\x00\x00\x00\x00\x03" + body.getvalue())
    assert decoded.data == {"x": 5}


# --- malformed messages -------------------------------------------------------------------


def users_message() -> tuple[bytes | None, bytes | None, FakeRegistry]:
    registry = FakeRegistry()
    message = AvroEncoder(EXT, USERS, topic="t", registry=registry).encode_row(
        RowChange(USERS, Op.INSERT, 1, (1, "x"))
    )
    return message.key, message.value, registry


@pytest.mark.parametrize(
    ("mangle", "problem"),
    [
        (lambda v: b"\x01" + v[1:], "not the Confluent magic byte"),
        (lambda v: v[:3], "at least 5"),
        (lambda v: v[:5] + b"\x0e", "does not decode"),
        (lambda v: v + b"\x00", "bytes after its Avro record"),
        (lambda v: v[:4] + b"\x63" + v[5:], "schema id 99 is unknown"),
    ],
)
def test_malformed_values_are_decode_errors(mangle: Any, problem: str) -> None:
    key, value, registry = users_message()
    assert value is not None
    with pytest.raises(DecodeError, match=problem):
        AvroDecoder(registry.schema_text).decode_message(key, mangle(value))


def test_a_record_without_key_and_value_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="neither key nor value"):
        AvroDecoder(FakeRegistry().schema_text).decode_message(None, None)


def test_an_enum_name_outside_allowed_is_a_decode_error() -> None:
    schema = json.loads(value_schema_json(AVRO, table_of(col("e", "enum('a')", False))))
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), {"e": "zzz"})
    decoder = AvroDecoder({1: json.dumps(schema)}.__getitem__)
    with pytest.raises(DecodeError, match="field e .*'zzz' is not one of the ENUM elements"):
        decoder.decode_message(None, b"\x00\x00\x00\x00\x01" + body.getvalue())


def test_an_unknown_op_is_a_decode_error() -> None:
    key, value, registry = users_message()
    assert value is not None and value.endswith(b"\x02c\x02\x00")
    with pytest.raises(DecodeError, match="_tidb_op .* 'x'"):
        AvroDecoder(registry.schema_text).decode_message(key, value[:-4] + b"\x02x\x02\x00")


def test_a_whole_number_float_default_is_written_as_go_writes_it_and_read_back() -> None:
    # Go writes a FLOAT's default 0 as `0`, which the Avro specification allows; fastavro
    # refused it for a float type with properties, so such a table could not be written
    # or read (issue 23's property test found it).
    table = table_of(
        col("id", "int", nullable=False),
        col("f", "float", nullable=False, default="0"),
        col("d", "double", nullable=False, default="2"),
        key=("id",),
    )
    fields = json.loads(value_schema_json(AVRO, table))["fields"]
    assert [f.get("default") for f in fields] == [None, 0, 2]
    decoded, registry = round_trip(AVRO, table, RowChange(table, Op.INSERT, 5, (1, 1.5, 2.5)))
    assert decoded.data == {"id": 1, "f": 1.5, "d": 2.5}
    reread = AvroDecoder(registry.schema_text).row_table(*_framed(table, registry))
    assert reread is not None
    assert [(c.name, c.default) for c in reread.columns] == [("id", None), ("f", "0"), ("d", "2")]


def _framed(table: TableSchema, registry: FakeRegistry) -> tuple[bytes | None, bytes | None]:
    message = AvroEncoder(AVRO, table, topic="t", registry=registry).encode_row(
        RowChange(table, Op.INSERT, 5, (1, 1.5, 2.5))
    )
    return message.key, message.value

"""Row checksums in avro messages (`integrity-check-level=correctness`): the value schema's
checksum fields and column-ID order (tiflow avro.go `value2AvroSchema`,
`schemaWithExtension`), the field bytes worked by hand, the split key UPDATE and the
checksum-less row, and the decoder's round trip and mismatch errors. The column-wise path
sending the row path's bytes is tests/unit/codec/test_batch_path.py's `avro-checksum` case."""

from __future__ import annotations

import io
import json
import zlib
from typing import Any

import attrs
import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.checksums import crc32_bitwise
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.schemas import ALL_TYPES_TABLE, USERS, col, table_of
from tests.support.strategies import all_types_rows
from ticdc_sink.codec.avro import AvroEncoder, key_schema_json, value_schema_json
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.codec.checksum import RowChecksum
from ticdc_sink.config import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CodecConfig,
    IntegrityCheckLevel,
    Protocol,
)
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import OP_INSERT, OP_UPDATE, ChangeBatch, Op, RowChange, split_key_update
from ticdc_sink.schema import TableSchema

CHECKED = CodecConfig(
    protocol=Protocol.AVRO,
    enable_tidb_extension=True,
    avro_decimal_handling_mode=AvroDecimalHandling.STRING,
    avro_bigint_unsigned_handling_mode=AvroBigintUnsignedHandling.STRING,
    integrity_check_level=IntegrityCheckLevel.CORRECTNESS,
)
UNCHECKED = attrs.evolve(CHECKED, integrity_check_level=IntegrityCheckLevel.NONE)
COMMIT_TS = 449_767_204_478_754_817

# users (id bigint, name varchar(20)) row (7, "Ann") as appendDatumForChecksum appends it:
# bigint as uint64 LE, varchar as uint32 LE length + bytes.
ANN = bytes.fromhex("0700000000000000" + "03000000") + b"Ann"
CRC_ANN = crc32_bitwise(ANN)


def encode(config: CodecConfig, table: TableSchema, change: RowChange) -> tuple[Any, FakeRegistry]:
    registry = FakeRegistry()
    message = AvroEncoder(config, table, topic="t", registry=registry).encode_row(change)
    return message, registry


def read_value(registry: FakeRegistry, value: bytes) -> dict[str, Any]:
    schema = fastavro.parse_schema(json.loads(registry.schema_text(int.from_bytes(value[1:5]))))
    record = fastavro.schemaless_reader(io.BytesIO(value[5:]), schema, None)
    assert isinstance(record, dict)
    return record


def test_the_value_schema_ends_with_the_checksum_fields() -> None:
    fields = json.loads(value_schema_json(CHECKED, USERS))["fields"]
    assert [f["name"] for f in fields] == [
        "id",
        "name",
        "_tidb_op",
        "_tidb_commit_ts",
        "_tidb_commit_physical_time",
        "_tidb_row_level_checksum",
        "_tidb_corrupted",
        "_tidb_checksum_version",
    ]
    # Go's json.Marshal of the field maps: keys sorted, defaults "", false, 0
    assert value_schema_json(CHECKED, USERS).endswith(
        '{"default":"","name":"_tidb_row_level_checksum","type":"string"},'
        '{"default":false,"name":"_tidb_corrupted","type":"boolean"},'
        '{"default":0,"name":"_tidb_checksum_version","type":"int"}]}'
    )
    assert "_tidb_row_level_checksum" not in value_schema_json(UNCHECKED, USERS)
    assert key_schema_json(CHECKED, USERS) == key_schema_json(UNCHECKED, USERS)


def _reordered() -> TableSchema:
    """users with name's column ID below id's, as after `ADD COLUMN ... FIRST` history."""
    id_, name = USERS.columns
    columns = (attrs.evolve(id_, column_id=2), attrs.evolve(name, column_id=1))
    return attrs.evolve(USERS, columns=columns)


def test_value_columns_follow_column_ids_with_the_checksum_only() -> None:
    table = _reordered()
    checked = [f["name"] for f in json.loads(value_schema_json(CHECKED, table))["fields"]]
    plain = [f["name"] for f in json.loads(value_schema_json(UNCHECKED, table))["fields"]]
    assert checked[:2] == ["name", "id"]
    assert plain[:2] == ["id", "name"]
    message, registry = encode(CHECKED, table, RowChange(table, Op.INSERT, COMMIT_TS, (7, "Ann")))
    record = read_value(registry, message.value)
    assert (record["id"], record["name"]) == (7, "Ann")
    # the checksum follows the column IDs too: name, then id
    expected = crc32_bitwise(bytes.fromhex("03000000") + b"Ann" + bytes.fromhex("07" + "00" * 7))
    assert record["_tidb_row_level_checksum"] == str(expected)


def test_insert_carries_the_new_rows_checksum_byte_exact() -> None:
    assert zlib.crc32(ANN) == CRC_ANN
    change = RowChange(USERS, Op.INSERT, COMMIT_TS, (7, "Ann"))
    plain, _ = encode(UNCHECKED, USERS, change)
    checked, registry = encode(CHECKED, USERS, change)
    text = str(CRC_ANN).encode()
    # string (length as zig-zag varint, then the decimal digits), false, int 0
    assert checked.value[5:] == plain.value[5:] + bytes([2 * len(text)]) + text + b"\x00\x00"
    record = read_value(registry, checked.value)
    assert record["_tidb_row_level_checksum"] == str(CRC_ANN)
    assert (record["_tidb_corrupted"], record["_tidb_checksum_version"]) == (False, 0)


def test_update_carries_the_new_rows_checksum() -> None:
    change = RowChange(USERS, Op.UPDATE, COMMIT_TS, (7, "Ann"), (7, "Bob"))
    message, registry = encode(CHECKED, USERS, change)
    assert read_value(registry, message.value)["_tidb_row_level_checksum"] == str(CRC_ANN)


def test_a_delete_is_a_tombstone_still() -> None:
    message, _ = encode(CHECKED, USERS, RowChange(USERS, Op.DELETE, COMMIT_TS, None, (7, "Ann")))
    assert message.value is None


def test_a_split_key_update_inserts_with_the_zeroed_checksum() -> None:
    # tiflow SplitUpdateEvent zeroes the shared checksum (codec/checksum.py): "0", not ""
    update = RowChange(USERS, Op.UPDATE, COMMIT_TS, (8, "Ann"), (7, "Ann"))
    delete, insert = split_key_update(update, USERS.handle_key_indexes)
    registry = FakeRegistry()
    encoder = AvroEncoder(CHECKED, USERS, topic="t", registry=registry)
    assert encoder.encode_row(delete).value is None
    record = read_value(registry, encoder.encode_row(insert).value)
    assert record["_tidb_row_level_checksum"] == "0"


def test_a_row_without_values_carries_the_defaults() -> None:
    # no column holds a value: the checksum is 0 and tiflow's mounter attaches none, so
    # the fields are left to goavro's defaults
    table = table_of(col("a", "int"), col("b", "varchar(5)"))
    message, registry = encode(CHECKED, table, RowChange(table, Op.INSERT, COMMIT_TS, (None, None)))
    assert message.value.endswith(b"\x00\x00\x00")
    record = read_value(registry, message.value)
    assert record["_tidb_row_level_checksum"] == ""


# --- the decoder ---------------------------------------------------------------------


def test_the_decoder_returns_and_checks_the_checksum() -> None:
    message, registry = encode(CHECKED, USERS, RowChange(USERS, Op.INSERT, COMMIT_TS, (7, "Ann")))
    decoded = AvroDecoder(registry.schema_text).decode_message(message.key, message.value)
    assert decoded.checksum == RowChecksum(CRC_ANN, 0)
    assert decoded.data == {"id": 7, "name": "Ann"}


def test_records_without_the_checksum_decode_without_one() -> None:
    message, registry = encode(UNCHECKED, USERS, RowChange(USERS, Op.INSERT, COMMIT_TS, (7, "Ann")))
    assert (
        AvroDecoder(registry.schema_text).decode_message(message.key, message.value).checksum
        is None
    )


# VECTOR aside (refused: codec/checksum.py)
NO_VECTOR = attrs.evolve(
    ALL_TYPES_TABLE, columns=tuple(c for c in ALL_TYPES_TABLE.columns if c.type.base != "vector")
)


def test_a_vector_column_is_refused_with_the_checksum() -> None:
    assert len(NO_VECTOR.columns) < len(ALL_TYPES_TABLE.columns)
    with pytest.raises(SchemaError, match="is a VECTOR.*integrity-check-level to none"):
        AvroEncoder(CHECKED, ALL_TYPES_TABLE, topic="t", registry=FakeRegistry())


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_every_type_round_trips_through_the_check(data: st.DataObject) -> None:
    table = NO_VECTOR
    zone = data.draw(st.sampled_from(["UTC", "Asia/Shanghai", "America/New_York"]))
    config = attrs.evolve(CHECKED, time_zone=zone)
    row = data.draw(all_types_rows(table))
    op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE]))
    message, registry = encode(config, table, RowChange(table, op, COMMIT_TS, row, row))
    decoder = AvroDecoder(registry.schema_text, time_zone=zone)
    decoded = decoder.decode_message(message.key, message.value)  # checks, or raises
    assert decoded.checksum is not None
    record = read_value(registry, message.value)
    assert record["_tidb_row_level_checksum"] == str(decoded.checksum.current)


def test_an_altered_value_is_a_decode_error_naming_table_key_and_checksums() -> None:
    message, registry = encode(CHECKED, USERS, RowChange(USERS, Op.INSERT, COMMIT_TS, (7, "Ann")))
    altered = message.value.replace(b"Ann", b"Anm")
    got = zlib.crc32(bytes.fromhex("0700000000000000" + "03000000") + b"Anm")
    with pytest.raises(DecodeError) as info:
        AvroDecoder(registry.schema_text).decode_message(message.key, altered)
    first = str(info.value).splitlines()[0]
    assert f"INSERT shop.users key id=7 commitTs {COMMIT_TS}" in first
    assert f"row checksum mismatch: the record says {CRC_ANN}, its values give {got}" in first


def test_a_record_marked_corrupted_is_a_decode_error() -> None:
    message, registry = encode(CHECKED, USERS, RowChange(USERS, Op.INSERT, COMMIT_TS, (7, "Ann")))
    text = str(CRC_ANN).encode()
    corrupted = message.value.replace(text + b"\x00\x00", text + b"\x01\x00")
    with pytest.raises(DecodeError, match="key id=7 .*_tidb_corrupted is true"):
        AvroDecoder(registry.schema_text).decode_message(message.key, corrupted)


@pytest.mark.parametrize(
    "replace",
    [
        lambda text: b"x" * len(text),
        lambda text: "²".encode() + text[2:],  # a digit to str.isdigit, not to int()
        lambda text: b"9" * len(text) if len(text) == 10 else b"1" + text,  # above 2^32 - 1
    ],
    ids=["letters", "superscript", "too large"],
)
def test_a_checksum_that_is_no_crc32_is_a_decode_error(replace: Any) -> None:
    message, registry = encode(CHECKED, USERS, RowChange(USERS, Op.INSERT, COMMIT_TS, (7, "Ann")))
    text = str(CRC_ANN).encode()
    bad = replace(text)
    value = message.value.replace(bytes([2 * len(text)]) + text, bytes([2 * len(bad)]) + bad)
    with pytest.raises(DecodeError, match="_tidb_row_level_checksum of shop.users is '"):
        AvroDecoder(registry.schema_text).decode_message(message.key, value)


def test_the_column_wise_path_follows_column_ids_too() -> None:
    # test_batch_path's tables number their columns in order; here name's ID is lower
    table = _reordered()
    batch = ChangeBatch(
        table=table,
        rows=3,
        positions=None,
        op_codes=pa.array([OP_INSERT, OP_UPDATE, OP_UPDATE], pa.int8()),
        commit_ts=None,
        default_commit_ts=COMMIT_TS,
        columns=[pa.array([7, 8, 10], pa.int64()), pa.array(["Ann", None, "Cy"])],
        before_rows=[1, 2],
        before_columns=[pa.array([8, 9], pa.int64()), pa.array(["Bob", "Cy"])],
    )
    registry = FakeRegistry()
    encoder = AvroEncoder(CHECKED, table, topic="t", registry=registry)
    encoded = encoder.encode_batch(batch, table.handle_key_indexes)
    assert not encoded.row_path
    rows = [encoder.encode_row(c).value for c in batch.to_events(table.handle_key_indexes)]
    assert encoded.values == rows
    assert rows[2] is None  # the split UPDATE's DELETE half: a tombstone
    first = read_value(registry, rows[0])
    assert first["_tidb_row_level_checksum"] == str(
        crc32_bitwise(bytes.fromhex("03000000") + b"Ann" + bytes.fromhex("07" + "00" * 7))
    )
    assert read_value(registry, rows[-1])["_tidb_row_level_checksum"] == "0"  # split INSERT

"""avro `avro-include-before-value` (pingcap/ticdc master, ticdc#5154, in no v26.3 tag):
the value schema and record bodies of TiCDC's TestAvroEncodeIncludeBeforeValue cases
(tests/golden/avro/ticdc_before_value.json), the old row of UPDATEs and the value of
DELETEs, the checksum of a DELETE, the option's sources, the column-wise path, and the
decoder and reader taking them back."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import attrs
import fastavro
import pyarrow as pa
import pytest

from tests.support import paths
from tests.support.fake_registry import FakeRegistry
from tests.support.read_log import FakeTopicLog, protocol_messages, table
from tests.support.row_path import with_row_path
from ticdc_sink.codec.avro import AvroEncoder, as_fastavro_reads_it, value_schema_json
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.config import CodecConfig, IntegrityCheckLevel, Protocol, SinkConfig
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import ConfigError, DecodeError, InputError, SchemaError
from ticdc_sink.events import ChangeBatch, Op, RowChange, split_key_update
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = json.loads((paths.GOLDEN / "avro" / "ticdc_before_value.json").read_text())
BEFORE = CodecConfig(protocol=Protocol.AVRO, avro_include_before_value=True)
BEFORE_EXT = attrs.evolve(BEFORE, enable_tidb_extension=True)
# pingcap/ticdc avro_test.go newAvroTableInfoForTest
PERSON = TableSchema(
    "test",
    "person",
    (
        Column("id", parse_mysql_type("int"), nullable=False),
        Column("age", parse_mysql_type("int")),
    ),
    (Index("PRIMARY", ("id",), unique=True, primary=True),),
    table_id=20,
)
BASE = {"kafka.bootstrap.servers": "b:9092", "topic": "t_{schema}_{table}"}
AVRO = {**BASE, "protocol": "avro", "schema-registry": "http://r:1"}


def _encoder(config: CodecConfig, registry: FakeRegistry, t: TableSchema = PERSON) -> AvroEncoder:
    return AvroEncoder(config, t, topic="t", registry=registry)


def _change(case: dict[str, Any]) -> RowChange:
    row = None if case["row"] is None else tuple(case["row"])
    before = None if case["before"] is None else tuple(case["before"])
    return RowChange(PERSON, Op(case["op"]), case["commit_ts"], row, before)


def _read(schema: str, body: bytes) -> Any:
    parsed = fastavro.parse_schema(as_fastavro_reads_it(json.loads(schema)))
    return fastavro.schemaless_reader(io.BytesIO(body), parsed, None)


@pytest.mark.parametrize("extension", [True, False])
def test_value_schemas_are_ticdcs(extension: bool) -> None:
    config = BEFORE_EXT if extension else BEFORE
    key = "value_schema_extension" if extension else "value_schema"
    assert value_schema_json(config, PERSON) == GOLDEN[key]


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["test"])
def test_values_are_ticdcs_records_byte_for_byte(case: dict[str, Any]) -> None:
    registry = FakeRegistry()
    config = BEFORE_EXT if case["extension"] else BEFORE
    message = _encoder(config, registry).encode_row(_change(case))
    assert message.value is not None and message.key is not None
    schema_id = int.from_bytes(message.value[1:5], "big")
    assert message.value[:1] == b"\x00"
    assert message.value[5:].hex() == case["body_hex"]
    schema = registry.schema_text(schema_id)
    assert schema == GOLDEN["value_schema_extension" if case["extension"] else "value_schema"]
    assert _read(schema, message.value[5:]) == case["record"]
    # The key: the handle key of the row (a DELETE's, the deleted row's).
    key_schema = registry.schema_text(int.from_bytes(message.key[1:5], "big"))
    assert _read(key_schema, message.key[5:]) == {"id": 1}


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["test"])
def test_the_decoder_gives_back_ticdcs_row_types_and_rows(case: dict[str, Any]) -> None:
    # TestAvroEncodeIncludeBeforeValue: the decoded row type and rows are the event's.
    registry = FakeRegistry()
    config = BEFORE_EXT if case["extension"] else BEFORE
    message = _encoder(config, registry).encode_row(_change(case))
    row = AvroDecoder(registry.schema_text).decode_message(message.key, message.value)

    def image(values: list[int] | None) -> dict[str, int] | None:
        return None if values is None else dict(zip(("id", "age"), values, strict=True))

    assert row.op is Op(case["op"])
    assert row.commit_ts == (case["commit_ts"] if case["extension"] else 0)
    if row.op is Op.DELETE:
        assert (row.data, row.old) == (None, image(case["before"]))
    else:
        assert (row.data, row.old) == (image(case["row"]), image(case["before"]))


def test_a_split_key_change_sends_a_delete_value_and_an_insert() -> None:
    registry = FakeRegistry()
    encoder = _encoder(BEFORE_EXT, registry)
    moved = RowChange(PERSON, Op.UPDATE, 7 << 18, (2, 30), before=(1, 30))
    events = split_key_update(moved, (0,))
    records = [
        _read(GOLDEN["value_schema_extension"], (encoder.encode_row(e).value or b"")[5:])
        for e in events
    ]
    assert [(r["_tidb_op"], r["id"], r["_ticdc_before"]) for r in records] == [
        ("d", 1, {"id": 1, "age": 30}),
        ("c", 2, None),
    ]


def test_an_update_without_its_old_row_is_an_error() -> None:
    encoder = _encoder(BEFORE_EXT, FakeRegistry())
    with pytest.raises(InputError, match="an UPDATE of test.person has no old row") as info:
        encoder.encode_row(RowChange(PERSON, Op.UPDATE, 1 << 18, (1, 2)))
    assert "give the `_before` column" in str(info.value).splitlines()[0]
    with pytest.raises(InputError, match="the old row of an UPDATE of test.person has 1 values"):
        encoder.encode_row(RowChange(PERSON, Op.UPDATE, 1 << 18, (1, 2), before=(1,)))
    with pytest.raises(InputError, match="column age of test.person"):
        encoder.encode_row(RowChange(PERSON, Op.UPDATE, 1 << 18, (1, 2), before=(1, "x")))


def test_without_the_option_a_delete_is_still_a_tombstone() -> None:
    config = attrs.evolve(BEFORE_EXT, avro_include_before_value=False)
    message = _encoder(config, FakeRegistry()).encode_row(
        RowChange(PERSON, Op.DELETE, 1 << 18, None, (1, 2))
    )
    assert message.value is None and message.key is not None


def test_a_column_named_like_the_before_field_is_a_schema_error() -> None:
    t = attrs.evolve(
        PERSON, columns=(*PERSON.columns, Column("_ticdc_before", parse_mysql_type("int")))
    )
    with pytest.raises(SchemaError, match="column '_ticdc_before' and the TiDB extension field"):
        _encoder(BEFORE, FakeRegistry(), t)


def test_a_delete_carries_the_deleted_rows_checksum() -> None:
    # pingcap/ticdc TestAvroEncodeDeleteChecksum: a DELETE writes Checksum.Previous.
    config = attrs.evolve(
        BEFORE_EXT,
        integrity_check_level=IntegrityCheckLevel.CORRECTNESS,
        avro_decimal_handling_mode="string",
        avro_bigint_unsigned_handling_mode="string",
    )
    registry = FakeRegistry()
    encoder = _encoder(config, registry)
    delete = RowChange(PERSON, Op.DELETE, 5 << 18, None, (1, 20))
    insert = RowChange(PERSON, Op.INSERT, 5 << 18, (1, 20))
    deleted, inserted = encoder.encode_row(delete), encoder.encode_row(insert)
    schema = registry.schema_text(int.from_bytes((deleted.value or b"")[1:5], "big"))
    record = _read(schema, (deleted.value or b"")[5:])
    assert record["_tidb_op"] == "d"
    # the deleted row's checksum is the one an INSERT of that row carries as `current`
    assert (
        record["_tidb_row_level_checksum"]
        == _read(schema, (inserted.value or b"")[5:])["_tidb_row_level_checksum"]
    )
    assert record["_tidb_row_level_checksum"] not in ("", "0")
    decoder = AvroDecoder(registry.schema_text)
    row = decoder.decode_message(deleted.key, deleted.value)
    assert row.checksum is not None and row.checksum.previous == int(
        record["_tidb_row_level_checksum"]
    )
    # A changed value in the before record fails the check.
    value = bytearray(deleted.value or b"")
    at = value.rindex(bytes.fromhex("020228"))  # the before record: id 1, age 20
    value[at + 2] = 0x2A  # age 21
    with pytest.raises(DecodeError, match="row checksum mismatch"):
        decoder.decode_message(deleted.key, bytes(value))


def test_a_delete_value_without_its_before_record_is_a_decode_error() -> None:
    registry = FakeRegistry()
    message = _encoder(BEFORE, registry).encode_row(
        RowChange(PERSON, Op.DELETE, 1 << 18, None, (1, 2))
    )
    value = message.value or b""
    broken = value[:5] + value[5:].replace(bytes.fromhex("02020204"), b"\x00", 1)
    with pytest.raises(DecodeError, match="a DELETE value of test.person has no _ticdc_before"):
        AvroDecoder(registry.schema_text).decode_message(message.key, broken)


# -- the option -----------------------------------------------------------------------------


def test_the_option_comes_from_options_the_sink_uri_and_the_changefeed_file(
    tmp_path: Path,
) -> None:
    assert SinkConfig.from_options(
        {**AVRO, "avro-include-before-value": "true"}
    ).codec.avro_include_before_value
    uri = "kafka://b:9092/t_{schema}_{table}?protocol=avro&avro-include-before-value=true"
    given = SinkConfig.from_options({"sink-uri": uri, "schema-registry": "http://r:1"})
    assert given.codec.avro_include_before_value
    # pingcap/ticdc mergeConfig copies AvroIncludeBeforeValue from the file's codec-config.
    path = tmp_path / "changefeed.toml"
    path.write_text("[sink.kafka-config.codec-config]\navro-include-before-value = true\n")
    from_file = SinkConfig.from_options({**AVRO, "config": str(path)})
    assert from_file.codec.avro_include_before_value and from_file.ignored == ()


def test_other_protocols_refuse_it() -> None:
    with pytest.raises(ConfigError) as info:
        SinkConfig.from_options({**BASE, "protocol": "simple", "avro-include-before-value": "1"})
    assert "applies to protocol avro, not to 'simple'" in str(info.value)


def test_updates_then_carry_old_values() -> None:
    assert not SinkConfig.from_options(AVRO).codec.sends_old_values
    options = {**AVRO, "avro-include-before-value": "true"}
    assert SinkConfig.from_options(options).codec.sends_old_values


# -- the column-wise path and the reader ----------------------------------------------------


def test_the_column_wise_path_leaves_every_message_to_the_row_path() -> None:
    encoder = _encoder(BEFORE_EXT, FakeRegistry())
    batch = ChangeBatch(
        table=PERSON,
        rows=3,
        positions=None,
        op_codes=pa.array([0, 1, 2], pa.int8()),
        commit_ts=None,
        default_commit_ts=9 << 18,
        columns=[pa.array([1, 2, 3], pa.int64()), pa.array([10, None, 30], pa.int64())],
        before_rows=[1],
        before_columns=[pa.array([2], pa.int64()), pa.array([20], pa.int64())],
    )
    encoded = encoder.encode_batch(batch, (0,))
    assert encoded.row_path == [0, 1, 2]
    done = with_row_path(encoded, encoder, batch, (0,))
    expected = [encoder.encode_row(e).value for e in batch.to_events((0,))]
    assert done.values == expected


def test_a_read_gives_the_old_rows_and_whole_deleted_rows() -> None:
    items = table("items", {"name": "varchar(20)"})
    changes = [
        (Op.INSERT, 10 << 18, (1, "one"), None),
        (Op.UPDATE, 11 << 18, (1, "uno"), (1, "one")),
        (Op.DELETE, 12 << 18, None, (1, "uno")),
    ]
    registry = FakeRegistry()
    codec = CodecConfig(protocol="avro", enable_tidb_extension=True, avro_include_before_value=True)
    log = FakeTopicLog({0: protocol_messages(codec, items, changes, registry=registry)})
    config = ReadConfig.from_options(
        {"kafka.bootstrap.servers": "unused:1", "topic": "t", "protocol": "avro"}
        | {"schema-registry": "http://unused:1"}
    )
    plan = plan_read(config, log, schema_for_id=registry.schema_text)
    rows = [
        row
        for offsets in plan.ranges
        for batch in read_range(
            config, plan.table, plan.known, offsets, log=log, schema_for_id=registry.schema_text
        )
        for row in batch.to_pylist()
    ]
    assert [(r["_op"], r["id"], r["name"]) for r in rows] == [
        ("INSERT", 1, "one"),
        ("UPDATE", 1, "uno"),
        ("DELETE", 1, "uno"),
    ]
    assert [r["_before"] and r["_before"]["name"] for r in rows] == [None, "one", None]
    assert [c.name for c in plan.table.columns] == ["id", "name"]

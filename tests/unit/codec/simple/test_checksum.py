"""Row checksums in Simple messages (`integrity-check-level=correctness`): the doc's
golden messages with the `checksum` object worked by hand (tests/golden/simple/SOURCE.md),
the split key UPDATE and handle-key-only cases, the column-wise path sending the row
path's bytes, and the decoder's round trip and mismatch errors; then the same for the
`Checksum` record of `encoding-format=avro`."""

from __future__ import annotations

import io
import json
from typing import Any

import attrs
import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.batches import ARROW_FIELDS, COMMIT_TS, write_plan
from tests.support.checksums import crc32_bitwise
from tests.support.fake_producer import FakeProducer
from tests.support.hypothesis_profiles import examples
from tests.support.row_path import outcome, rows_by_table, write_rows
from tests.support.schemas import SIMPLE_DOC_USER as USER
from tests.support.strategies import record_batches
from ticdc_sink.codec.simple.avro_values import (
    dml_heads,
    dml_times,
    encode_long,
    parsed_message_schema,
)
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.codec.simple.encoder import build_encoder
from ticdc_sink.config import CodecConfig, EncodingFormat, IntegrityCheckLevel
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange, split_key_update
from ticdc_sink.writer import write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule

GOLDEN = paths.GOLDEN / "simple"
CHECKED = CodecConfig(integrity_check_level=IntegrityCheckLevel.CORRECTNESS)

# The doc's `simple.user` rows, column by column in column-ID order (id, name, age, score),
# as appendDatumForChecksum appends them: int as uint64 LE, varchar as uint32 LE length +
# bytes, FLOAT as the float64 bits of its float32 value, LE.
_ROW_95 = (
    "0100000000000000"
    + "08000000"
    + b"John Doe".hex()
    + "1900000000000000"
    + (
        "0000000000c05740"  # 95.0
    )
)
_ROW_90_5 = (
    "0100000000000000"
    + "08000000"
    + b"John Doe".hex()
    + "1900000000000000"
    + (
        "0000000000a05640"  # 90.5
    )
)
CRC_95 = crc32_bitwise(bytes.fromhex(_ROW_95))
CRC_90_5 = crc32_bitwise(bytes.fromhex(_ROW_90_5))


def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.value.json").read_bytes()


def with_checksum(value: bytes, current: int, previous: int) -> bytes:
    """A golden message with tiflow's `checksum` member where Go's struct puts it: after
    `handleKeyOnly`, before `data`."""
    member = (
        f',"checksum":{{"version":0,"corrupted":false,"current":{current},"previous":{previous}}}'
    ).encode()
    head, rest = value.split(b',"data"', 1) if b',"data"' in value else value.split(b',"old"', 1)
    tail = b',"data"' if b',"data"' in value else b',"old"'
    return head + member + tail + rest


def encode(change: RowChange, build_ts: int) -> bytes:
    message = build_encoder(
        CHECKED, change.table, build_ts_ms=build_ts, topic="t", registry=None, claim_check=None
    ).encode_row(change)
    assert message.value is not None
    return message.value


def test_update_carries_current_and_previous() -> None:
    change = RowChange(
        USER, Op.UPDATE, 447984099186180098, (1, "John Doe", 25, 95.0), (1, "John Doe", 25, 90.5)
    )
    assert encode(change, 1708923719184) == with_checksum(golden("update"), CRC_95, CRC_90_5)


def test_insert_and_delete_carry_one_side() -> None:
    insert = RowChange(USER, Op.INSERT, 447984084414103554, (1, "John Doe", 25, 90.5))
    assert encode(insert, 1708923662983) == with_checksum(golden("insert"), CRC_90_5, 0)
    delete = RowChange(USER, Op.DELETE, 447984114259722243, None, (1, "John Doe", 25, 95.0))
    assert encode(delete, 1708923776484) == with_checksum(golden("delete"), 0, CRC_95)


def test_split_key_update_halves_carry_zeros() -> None:
    change = RowChange(USER, Op.UPDATE, 5, (2, "a", 1, 1.0), (1, "a", 1, 1.0))
    for half in split_key_update(change, USER.handle_key_indexes):
        message = json.loads(encode(half, 1))
        assert message["checksum"] == {
            "version": 0,
            "corrupted": False,
            "current": 0,
            "previous": 0,
        }


def test_handle_key_only_messages_keep_the_checksum() -> None:
    # tiflow newDMLMessage sets the checksum whatever onlyHandleKey says
    config = CodecConfig(
        integrity_check_level=IntegrityCheckLevel.CORRECTNESS,
        max_message_bytes=300,
        large_message_handle_option="handle-key-only",
    )
    change = RowChange(USER, Op.INSERT, 5, (1, "x" * 400, 25, 90.5))
    encoder = build_encoder(config, USER, build_ts_ms=1, topic="t", registry=None, claim_check=None)
    message = json.loads(encoder.encode_row(change).value or b"")
    assert message["handleKeyOnly"] is True and message["data"] == {"id": "1"}
    assert message["checksum"]["current"] == crc32_bitwise(
        bytes.fromhex("0100000000000000")
        + (400).to_bytes(4, "little")
        + b"x" * 400
        + bytes.fromhex("1900000000000000" + "0000000000a05640")
    )


def test_without_the_setting_no_checksum() -> None:
    change = RowChange(USER, Op.INSERT, 447984084414103554, (1, "John Doe", 25, 90.5))
    message = build_encoder(
        CodecConfig(), USER, build_ts_ms=1708923662983, topic="t", registry=None, claim_check=None
    ).encode_row(change)
    assert message.value == golden("insert")


# --- column-wise path ------------------------------------------------------------------


@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_path_sends_what_the_row_path_sends(with_table: bool, data: Any) -> None:
    batches = data.draw(record_batches(with_table))
    plan = write_plan(with_table, **{"integrity-check-level": "correctness"})
    expected = outcome(lambda: write_rows([rows_by_table(b) for b in batches], plan))
    producer = FakeProducer()
    actual = outcome(
        lambda: (
            write_batches(
                batches,
                plan,
                producer_factory=producer,
                bootstraps=BootstrapSchedule(),
                rows_per_table=1,  # each record batch on its own, as write_rows takes them
            ),
            producer.sent,
        )[1]
    )
    assert actual == expected
    assert any(b'"checksum":{' in (m[3] or b"") for m in producer.sent) or not any(
        b.num_rows for b in batches
    )


def test_fast_path_with_split_updates_and_deletes() -> None:
    rows = 10
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "u", "u", "d", "c"] * 2),
            "_commit_ts": pa.array([COMMIT_TS + i for i in range(rows)], pa.int64()),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 5 in (1, 2) else None for i in range(rows)],
                pa.struct(ARROW_FIELDS),
            ),
        }
    )
    plan = write_plan(False, **{"integrity-check-level": "correctness"})
    producer = FakeProducer()
    write_batches([batch], plan, producer_factory=producer)
    assert producer.sent == write_rows([batch], plan)
    values = [json.loads(m[3]) for m in producer.sent if m[3] and b'"BOOTSTRAP"' not in m[3]]
    zeros = [
        v
        for v in values
        if v.get("checksum", {}).get("current", 1) == 0 == v["checksum"]["previous"]
    ]
    assert [v["type"] for v in zeros] == ["DELETE", "INSERT"]  # row 6: id 7 -> 6


# --- decoder ---------------------------------------------------------------------------


def _decoder() -> SimpleDecoder:
    decoder = SimpleDecoder()
    decoder.add_table(USER)
    return decoder


def test_decoder_round_trip_keeps_and_checks_the_checksum() -> None:
    change = RowChange(
        USER, Op.UPDATE, 447984099186180098, (1, "John Doe", 25, 95.0), (1, "John Doe", 25, 90.5)
    )
    row = _decoder().decode_message(b"", encode(change, 1))
    assert row.checksum is not None
    assert (row.checksum.current, row.checksum.previous) == (CRC_95, CRC_90_5)
    assert row.data == {"id": 1, "name": "John Doe", "age": 25, "score": 95.0}


def test_decoder_detects_a_corrupted_value() -> None:
    value = encode(RowChange(USER, Op.INSERT, 7, (1, "John Doe", 25, 90.5)), 1)
    altered = value.replace(b'"name":"John Doe"', b'"name":"John Dough"')
    with pytest.raises(DecodeError) as info:
        _decoder().decode_message(b"", altered)
    first = str(info.value).splitlines()[0]
    assert "INSERT simple.user key id=1 commitTs 7" in first
    assert f"current row checksum mismatch: the message says {CRC_90_5}, its values give" in first


def test_decoder_refuses_a_row_marked_corrupted() -> None:
    value = encode(RowChange(USER, Op.INSERT, 7, (1, "John Doe", 25, 90.5)), 1)
    with pytest.raises(DecodeError, match="corrupted=true"):
        _decoder().decode_message(b"", value.replace(b'"corrupted":false', b'"corrupted":true'))


def test_decoder_checks_once_the_schema_arrives() -> None:
    value = encode(RowChange(USER, Op.INSERT, 7, (1, "John Doe", 25, 90.5)), 1)
    altered = value.replace(b'"age":"25"', b'"age":"26"')
    decoder = SimpleDecoder()
    pending = decoder.decode_message(b"", altered)
    assert not pending.typed and pending.checksum is not None
    decoder.add_table(USER)
    with pytest.raises(DecodeError, match="checksum mismatch"):
        decoder.resolve(pending)


# --- encoding-format=avro: the Checksum record ----------------------------------------------

CHECKED_AVRO = attrs.evolve(CHECKED, encoding_format=EncodingFormat.AVRO)


def encode_avro(change: RowChange, config: CodecConfig = CHECKED_AVRO) -> bytes:
    encoder = build_encoder(
        config, change.table, build_ts_ms=1, topic="t", registry=None, claim_check=None
    )
    value = encoder.encode_row(change).value
    assert value is not None
    return value


def read_avro(value: bytes) -> dict[str, Any]:
    """The DML payload as fastavro reads it with the bundled message schema."""
    message = fastavro.schemaless_reader(io.BytesIO(value), parsed_message_schema(), None)
    assert isinstance(message, dict)
    return message["payload"]


def test_avro_update_carries_the_checksum_record_byte_exact() -> None:
    change = RowChange(
        USER, Op.UPDATE, 447984099186180098, (1, "John Doe", 25, 95.0), (1, "John Doe", 25, 90.5)
    )
    plain = encode_avro(change, attrs.evolve(CHECKED_AVRO, integrity_check_level="none"))
    value = encode_avro(change)
    # tiflow simple/avro.go: ["null", Checksum] branch 1, version int, corrupted boolean,
    # current and previous as longs (zig-zag varints), where the null was
    record = b"\x02\x00\x00" + _zigzag(CRC_95) + _zigzag(CRC_90_5)
    # the record up to commitTs, buildTs and schemaVersion, then null claimCheckLocation
    # and handleKeyOnly: the checksum's null is the byte after those
    head = dml_heads(USER)[Op.UPDATE] + encode_long(change.commit_ts) + dml_times(USER, 1)
    cut = len(head) + 2
    assert plain[cut : cut + 1] == b"\x00"
    assert value == plain[:cut] + record + plain[cut + 1 :]
    assert read_avro(value)["checksum"] == {
        "version": 0,
        "corrupted": False,
        "current": CRC_95,
        "previous": CRC_90_5,
    }
    assert read_avro(plain)["checksum"] is None


def _zigzag(n: int) -> bytes:
    out = bytearray()
    z = n << 1
    while z > 0x7F:
        out.append(z & 0x7F | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def test_avro_split_halves_and_deletes() -> None:
    change = RowChange(USER, Op.UPDATE, 5, (2, "a", 1, 1.0), (1, "a", 1, 1.0))
    for half in split_key_update(change, USER.handle_key_indexes):
        assert read_avro(encode_avro(half))["checksum"]["current"] == 0
        assert read_avro(encode_avro(half))["checksum"]["previous"] == 0
    delete = RowChange(USER, Op.DELETE, 9, None, (1, "John Doe", 25, 95.0))
    checksum = read_avro(encode_avro(delete))["checksum"]
    assert (checksum["current"], checksum["previous"]) == (0, CRC_95)


@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_avro_fast_path_sends_what_the_row_path_sends(with_table: bool, data: Any) -> None:
    batches = data.draw(record_batches(with_table))
    options = {"integrity-check-level": "correctness", "encoding-format": "avro"}
    plan = write_plan(with_table, **options)
    expected = outcome(lambda: write_rows([rows_by_table(b) for b in batches], plan))
    producer = FakeProducer()
    actual = outcome(
        lambda: (
            write_batches(
                batches,
                plan,
                producer_factory=producer,
                bootstraps=BootstrapSchedule(),
                rows_per_table=1,  # each record batch on its own, as write_rows takes them
            ),
            producer.sent,
        )[1]
    )
    assert actual == expected


def test_avro_fast_path_with_split_updates_and_deletes() -> None:
    rows = 10
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "u", "u", "d", "c"] * 2),
            "_commit_ts": pa.array([COMMIT_TS + i for i in range(rows)], pa.int64()),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 5 in (1, 2) else None for i in range(rows)],
                pa.struct(ARROW_FIELDS),
            ),
        }
    )
    plan = write_plan(False, **{"integrity-check-level": "correctness", "encoding-format": "avro"})
    producer = FakeProducer()
    write_batches([batch], plan, producer_factory=producer)
    assert producer.sent == write_rows([batch], plan)
    payloads = [read_avro(m[3]) for m in producer.sent if m[3] and m[3][1] == 6]  # DML
    zeros = [
        p["type"]
        for p in payloads
        if p["checksum"] is not None and p["checksum"]["current"] == 0 == p["checksum"]["previous"]
    ]
    assert zeros == ["DELETE", "INSERT"]  # row 6: id 7 -> 6
    assert all(p["checksum"] is not None for p in payloads)


def test_avro_decoder_round_trip_and_a_corrupted_value() -> None:
    change = RowChange(
        USER, Op.UPDATE, 447984099186180098, (1, "John Doe", 25, 95.0), (1, "John Doe", 25, 90.5)
    )
    value = encode_avro(change)
    decoder = SimpleDecoder(encoding_format="avro")
    decoder.add_table(USER)
    row = decoder.decode_message(b"", value)
    assert row.checksum is not None
    assert (row.checksum.current, row.checksum.previous) == (CRC_95, CRC_90_5)
    altered = value.replace(b"John Doe", b"John Dof", 1)
    with pytest.raises(DecodeError) as info:
        decoder.decode_message(b"", altered)
    first = str(info.value).splitlines()[0]
    assert "UPDATE simple.user key id=1 commitTs 447984099186180098" in first
    assert "row checksum mismatch: the message says" in first

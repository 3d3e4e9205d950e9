"""Row checksums in Simple JSON messages (`integrity-check-level=correctness`): the doc's
golden messages with the `checksum` object worked by hand (tests/golden/simple/SOURCE.md),
the split key UPDATE and handle-key-only cases, the column-wise path sending the row
path's bytes, and the decoder's round trip and mismatch errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.batches import ARROW_FIELDS, COMMIT_TS, write_plan
from tests.support.checksums import crc32_bitwise
from tests.support.fake_producer import FakeProducer
from tests.support.row_path import outcome, rows_by_table, write_rows
from tests.support.schemas import SIMPLE_DOC_USER as USER
from tests.support.strategies import record_batches
from ticdc_sink.codec.simple.encoder import build_encoder
from ticdc_sink.config import CodecConfig, IntegrityCheckLevel
from ticdc_sink.decode.simple import SimpleDecoder
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange, split_key_update
from ticdc_sink.writer import write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "simple"
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
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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

"""Mutated messages of every protocol: a decoder meets them only through
`decode.decode_record`, and a read only through `read.decoding`, so whatever the message
holds, the only error that escapes is a `DecodeError` (a read's naming topic, partition
and offset), never a Python one. Mutations: bytes flipped, cut, inserted and repeated;
for JSON, any node replaced by another JSON value (out-of-range numbers among them) or a
key removed; for open-protocol, the same inside its framed key and value parts. Also the
watermark of commit ts 2^64-1 that used to kill a stream with an OverflowError."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import (
    WATERMARK,
    FakeTopicLog,
    protocol_messages,
    simple_messages,
    simple_stream,
    table,
)
from tests.support.schemas import ALL_TYPES_TABLE
from tests.support.strategies import all_types_rows, json_paths
from ticdc_sink.codec.protocols import build_encoder, decoder_for
from ticdc_sink.config import AvroBigintUnsignedHandling, CodecConfig, EncodingFormat
from ticdc_sink.decode import DecoderSettings, decode_record
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range
from ticdc_sink.read.stream import StreamScan

PROTOCOLS = [
    ("simple", "json"),
    ("simple", "avro"),
    ("debezium", "json"),
    ("canal-json", "json"),
    ("open-protocol", "json"),
    ("avro", "json"),
    ("debezium-avro", "json"),
]
Record = tuple[bytes | None, bytes | None]
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 1 << 63, (1 << 64) - 1, 1 << 64, 10**30]),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["1", "0x10", "-", "2020-13-45", "\ud800"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _records(protocol: str, encoding: str, rows: list[tuple[Any, ...]]) -> list[Record]:
    """A BOOTSTRAP (Simple), the rows as INSERT, UPDATE and DELETE, and a watermark."""
    registry = FakeRegistry() if protocol in ("avro", "debezium-avro") else None
    codec = CodecConfig(
        protocol=protocol,
        encoding_format=EncodingFormat(encoding),
        enable_tidb_extension=True,
        # debezium-avro refuses an unsigned bigint beyond a long in long mode (TiCDC's rule).
        avro_bigint_unsigned_handling_mode=AvroBigintUnsignedHandling.STRING
        if protocol == "debezium-avro"
        else AvroBigintUnsignedHandling.LONG,
    )
    changes = [(Op.INSERT, 10, rows[0], None)]
    if len(rows) > 1:
        changes += [(Op.UPDATE, 11, rows[1], rows[0]), (Op.DELETE, 12, None, rows[1])]
    records = protocol_messages(codec, ALL_TYPES_TABLE, changes, watermark=20, registry=registry)
    encoder = build_encoder(codec, ALL_TYPES_TABLE, build_ts_ms=1, topic="t", registry=registry)
    bootstrap = encoder.encode_bootstrap()
    if bootstrap is not None:
        records.insert(0, (bootstrap.key, bootstrap.value))
    _SCHEMAS[protocol] = registry
    return records


_SCHEMAS: dict[str, FakeRegistry | None] = {}


def _decoder(protocol: str, encoding: str) -> Any:
    registry = _SCHEMAS.get(protocol)
    return decoder_for(
        protocol,
        DecoderSettings(
            encoding_format=encoding,
            schema_for_id=registry.schema_text if registry is not None else None,
        ),
    )


@st.composite
def _mutated_bytes(draw: Any, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(out)))
        kind = draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        if kind == "flip" and at < len(out):
            out[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del out[at:]
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=4))
        else:
            out[at:at] = out[at : at + draw(st.integers(1, 16))]
    return bytes(out)


@st.composite
def _mutated_json(draw: Any, data: bytes) -> bytes:
    """A node of the JSON document replaced by another value, or a key removed."""
    try:
        document = json.loads(data)
    except ValueError:
        return draw(_mutated_bytes(data))
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(json_paths(document)))
        if not path:
            document = draw(JSON_VALUES)
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON_VALUES)
    return json.dumps(document).encode("utf-8", "surrogatepass")


def _split(data: bytes) -> list[bytes]:
    parts, at = [], 0
    while at + 8 <= len(data):
        (length,) = struct.unpack_from(">Q", data, at)
        parts.append(data[at + 8 : at + 8 + length])
        at += 8 + length
    return parts


def _framed(parts: list[bytes]) -> bytes:
    return b"".join(struct.pack(">Q", len(p)) + p for p in parts)


@st.composite
def _mutated(draw: Any, protocol: str, record: Record) -> Record:
    """`record` with its key or value mutated as the protocol's envelope allows."""
    key, value = record
    if protocol == "open-protocol" and key is not None and draw(st.booleans()):
        keys, values = _split(key[8:]), _split(value or b"")
        side = draw(st.sampled_from(["key", "value"]))
        parts = keys if side == "key" else values
        if parts:
            i = draw(st.integers(0, len(parts) - 1))
            parts[i] = draw(_mutated_json(parts[i]))
        return key[:8] + _framed(keys), _framed(values)
    if key and draw(st.booleans()):
        return draw(_mutated_json(key) if key[:1] == b"{" else _mutated_bytes(key)), value
    if value is None:
        return key, draw(st.binary(max_size=8))
    return key, draw(_mutated_json(value) if value[:1] == b"{" else _mutated_bytes(value))


@pytest.mark.parametrize(("protocol", "encoding"), PROTOCOLS)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_decoder_lets_only_decode_errors_escape(protocol: str, encoding: str, data: Any) -> None:
    rows = data.draw(st.lists(all_types_rows(), min_size=2, max_size=2), label="rows")
    records = _records(protocol, encoding, rows)
    decoder = _decoder(protocol, encoding)
    decode_record(decoder, *records[0])  # a BOOTSTRAP teaches Simple the table
    record = data.draw(_mutated(protocol, data.draw(st.sampled_from(records))), label="record")
    try:
        decode_record(decoder, *record)
    except DecodeError:
        pass


@pytest.mark.parametrize(("protocol", "encoding"), PROTOCOLS[:5])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), columnwise=st.booleans(), skip=st.booleans())
def test_a_read_of_a_mutated_message_fails_only_with_a_located_decode_error(
    protocol: str, encoding: str, data: Any, columnwise: bool, skip: bool
) -> None:
    rows = data.draw(st.lists(all_types_rows(), min_size=2, max_size=2), label="rows")
    records = _records(protocol, encoding, rows)
    at = data.draw(st.integers(0, len(records) - 1), label="at")
    records[at] = data.draw(_mutated(protocol, records[at]), label="record")
    log = FakeTopicLog({0: records})
    options = {"kafka.bootstrap.servers": "unused:1", "topic": "t", "protocol": protocol}
    options |= {"encoding-format": encoding, "on-bad-message": "skip" if skip else "fail"}
    config = ReadConfig.from_options(options)
    try:
        plan = plan_read(config, log)
        for offsets in plan.ranges:
            for _ in read_range(
                config, plan.table, plan.known, offsets, log=log, columnwise=columnwise
            ):
                pass
    except DecodeError as exc:
        assert str(exc).startswith("ticdc: topic t partition 0 offset "), exc
    except Exception as exc:  # a SchemaError names what changed; any other is a bug
        assert type(exc).__name__ == "SchemaError", repr(exc)


def test_a_watermark_beyond_a_bigint_fails_batch_and_stream_reads_naming_its_offset() -> None:
    users = table("users")
    values = simple_messages(users, []) + simple_stream(
        users, [(Op.INSERT, 10, (1, "a")), (WATERMARK, (1 << 64) - 1)]
    )
    log = FakeTopicLog({0: values})
    options = {"kafka.bootstrap.servers": "unused:1", "topic": "t"}
    config = ReadConfig.from_options(options)
    plan = plan_read(config, log)
    expected = (
        r"^ticdc: topic t partition 0 offset 2: WATERMARK commit ts 18446744073709551615 is "
        r"beyond 9223372036854775807, the largest a read takes"
    )
    with pytest.raises(DecodeError, match=expected):
        list(read_range(config, plan.table, plan.known, plan.ranges[0], log=log))
    earliest = ReadConfig.from_options({**options, "startingoffsets": "earliest"})
    scan = StreamScan(earliest, plan.table, plan.known, log)  # type: ignore[arg-type]
    with pytest.raises(DecodeError, match=expected):
        scan.next_cut(scan.initial_offset(), {("t", 0): 3}, None)

"""Simple Avro's DML reader (`codec/simple/avro_dml.py`) gives the plain row fastavro's
read gives (the reference: `decode_message` reads with fastavro), or nothing: for
messages the writer wrote, and for DML records built byte by byte with maps in any key
order, every union branch of a map value, duplicate keys, several blocks, varints longer
than they need be, text that is not UTF-8, and any byte changed, removed or added."""

from __future__ import annotations

import io
import struct
from typing import Any

import attrs
import fastavro
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from tests.support.schemas import ALL_TYPES_TABLE
from tests.support.strategies import all_types_rows, all_types_tables
from ticdc_sink.codec.choices import EncodingFormat, IntegrityCheckLevel
from ticdc_sink.codec.config import CodecConfig
from ticdc_sink.codec.protocols import build_encoder, encode_watermark
from ticdc_sink.codec.simple.avro_dml import DML_PREFIX, read_plain
from ticdc_sink.codec.simple.avro_values import encode_long, parsed_message_schema
from ticdc_sink.codec.simple.decoder import SimpleDecoder, simple_row_fields
from ticdc_sink.events import Op, RowChange

_MASK64 = (1 << 64) - 1


def _fastavro_fields(value: bytes) -> Any:
    """`simple_row_fields` of the message as fastavro reads it (strict UTF-8), longs as
    Go's uint64; None for anything but a plain row; "refused" where fastavro refuses."""
    stream = io.BytesIO(value)
    try:
        message = fastavro.schemaless_reader(stream, parsed_message_schema(), None)
    except UnicodeDecodeError:
        return None  # decode_message reads it with surrogateescape: not a plain row
    except Exception:  # fastavro raises EOFError, IndexError, ValueError, ...
        return "refused"
    if stream.tell() != len(value):
        return "refused"
    if message["type"] != "DML":
        return None
    fields = simple_row_fields(message["payload"])
    if fields is None:
        return None
    op, commit_ts, database, table, version, data, old = fields
    return op, commit_ts & _MASK64, database, table, version & _MASK64, data, old


def _long(n: int, padding: int = 0) -> bytes:
    """A zig-zag varint, with `padding` continuation bytes more than it needs."""
    raw = encode_long(n)
    if not padding:
        return raw
    body = bytearray(raw)
    body[-1] |= 0x80
    body += b"\x80" * (padding - 1) + b"\x00"
    return bytes(body)


def _text(raw: bytes, padding: int = 0) -> bytes:
    return _long(len(raw), padding) + raw


_TEXT = st.text(max_size=8).map(lambda t: t.encode()) | st.binary(max_size=6)


@st.composite
def map_values(draw: Any) -> bytes:
    """A map value's union index and value, of any branch (a few out of range)."""
    branch = draw(st.integers(0, 8))
    head = _long(branch)
    if branch == 0:
        return head
    if branch in (1, 7):
        return head + _long(draw(st.integers(-(1 << 63), (1 << 63) - 1)), draw(st.integers(0, 1)))
    if branch == 2:
        return head + struct.pack("<f", draw(st.floats(width=32)))
    if branch == 3:
        return head + struct.pack("<d", draw(st.floats()))
    if branch in (4, 5):
        return head + _text(draw(_TEXT), draw(st.integers(0, 1)))
    if branch == 6:
        return head + _text(draw(_TEXT)) + _text(draw(_TEXT))
    return head  # beyond the union


@st.composite
def images(draw: Any) -> bytes:
    """A `data` or `old` field: null, or a map of some blocks, keys in any order."""
    if draw(st.integers(0, 4)) == 0:
        return b"\x00"
    names = [c.name.encode() for c in ALL_TYPES_TABLE.columns[:6]] + [b"\xff", b"zz"]
    entries = draw(st.lists(st.tuples(st.sampled_from(names), map_values()), max_size=7))
    body = bytearray(b"\x02")
    blocks = draw(st.integers(1, 2)) if entries else 0
    cut = len(entries) // 2 if blocks == 2 else len(entries)
    for part in (entries[:cut], entries[cut:]) if blocks == 2 else (entries,):
        if part:
            body += _long(len(part)) + b"".join(_text(k) + v for k, v in part)
    return bytes(body + b"\x00")


@st.composite
def dml_records(draw: Any) -> bytes:
    """A DML message byte by byte: each field mostly as TiCDC writes it, sometimes not."""
    unusual = st.integers(0, 9).map(lambda n: n == 0)
    version = 2 if not draw(unusual) else draw(st.integers(0, 255))
    parts = [DML_PREFIX, bytes([version])]
    parts += [_text(draw(_TEXT)), _text(draw(_TEXT))]  # database, table
    parts.append(_long(draw(st.integers(0, 1 << 40))))  # tableID
    parts.append(_long(draw(st.integers(0, 3) if draw(unusual) else st.integers(0, 2))))
    parts += [_long(draw(st.integers(-(1 << 63), (1 << 63) - 1)), draw(st.integers(0, 1)))]
    parts += [_long(draw(st.integers(0, 1 << 41))), _long(draw(st.integers(-5, 1 << 40)))]
    parts.append(draw(st.sampled_from([b"\x00"] * 8 + [b"\x02" + _text(b"s3://x")])))
    parts.append(draw(st.sampled_from([b"\x00"] * 4 + [b"\x02\x00", b"\x02\x01", b"\x02\x03"])))
    parts.append(draw(st.sampled_from([b"\x00"] * 8 + [b"\x02\x00\x00\x02\x04"])))
    parts += [draw(images()), draw(images())]
    if draw(unusual):
        parts.append(b"\x00")  # a byte after the record
    return b"".join(parts)


@settings(max_examples=examples(500), deadline=None)
@given(value=dml_records())
def test_a_dml_record_reads_as_fastavro_reads_it(value: bytes) -> None:
    got = read_plain(value)
    assert got is None or repr(got) == repr(_fastavro_fields(value))  # NaN == NaN


def test_maps_in_any_key_order_are_read() -> None:
    # Guards the test above: the reader takes what TiCDC writes, whatever the key order.
    data = {b"b": b"\x08" + _text(b"x"), b"a": b"\x02\x04", b"c": b"\x00"}
    for keys in ([b"a", b"b", b"c"], [b"c", b"b", b"a"]):
        body = b"".join(_text(k) + data[k] for k in keys)
        value = DML_PREFIX + b"\x02" + _text(b"db") + _text(b"t") + b"\x0e" + b"\x00"
        value += b"\x14\x02\x02" + b"\x00\x00\x00" + b"\x02\x06" + body + b"\x00\x00"
        fields = read_plain(value)
        assert fields == _fastavro_fields(value)
        assert fields is not None and list(fields[5] or {}) == [k.decode() for k in keys]


def _simple_avro(data: Any) -> tuple[SimpleDecoder, bytes, bool]:
    """A decoder that knows a table, a message of it (a row, maybe checksummed, maybe
    with a byte changed, removed or added; a watermark or a BOOTSTRAP), and whether it is
    a row as written."""
    table = data.draw(all_types_tables(8))
    codec = CodecConfig(encoding_format=EncodingFormat.AVRO)
    checked = "v" not in table.column_names and data.draw(st.booleans())
    if checked:
        codec = attrs.evolve(codec, integrity_check_level=IntegrityCheckLevel.CORRECTNESS)
    encoder = build_encoder(codec, table, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None and bootstrap.value is not None
    decoder = SimpleDecoder(encoding_format="avro")
    decoder.decode_message(None, bootstrap.value)
    kind = data.draw(st.sampled_from(["row"] * 6 + ["watermark", "bootstrap"]))
    if kind == "bootstrap":
        return decoder, bootstrap.value, False
    if kind == "watermark":
        mark = encode_watermark(codec, 5, build_ts_ms=1)
        assert mark is not None and mark.value is not None
        return decoder, mark.value, False
    op = data.draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE]))
    rows = all_types_rows(table)
    row, before = data.draw(rows), data.draw(st.none() | rows)
    if op is Op.DELETE:
        row, before = None, data.draw(rows)
    value = encoder.encode_row(RowChange(table, op, 7, row, before)).value
    assert value is not None
    body = bytearray(value)
    changes = data.draw(st.integers(0, 2))
    for _ in range(changes):
        at = data.draw(st.integers(0, len(body) - 1))
        how = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if how == "insert":
            body.insert(at, data.draw(st.integers(0, 255)))
        elif how == "delete":
            del body[at]
        else:
            body[at] = data.draw(st.integers(0, 255))
    return decoder, bytes(body), not changes and not checked


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_a_simple_avro_plain_row_is_the_one_fastavro_reads(data: Any) -> None:
    decoder, value, written_row = _simple_avro(data)
    got = decoder.plain_row(value)
    fastavro_reads = _fastavro_fields(value)
    if got is not None:
        assert repr(tuple(got)) == repr(fastavro_reads)
    elif written_row:  # a row as written is plain unless a text is not UTF-8
        assert fastavro_reads is None

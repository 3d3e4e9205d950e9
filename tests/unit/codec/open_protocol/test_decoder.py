"""open-protocol decoding: batched messages back into events, types from the column
codes and flags, and messages that are not open-protocol refused with a DecodeError."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from ticdc_sink.codec.open_protocol.decoder import OpenProtocolDecoder
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedDDL, DecodedRow, DecodedWatermark, decode_record
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op


def message(*events: tuple[bytes, bytes]) -> tuple[bytes, bytes]:
    key = struct.pack(">Q", 1) + b"".join(struct.pack(">Q", len(k)) + k for k, _ in events)
    value = b"".join(struct.pack(">Q", len(v)) + v for _, v in events)
    return key, value


ROW_KEY = b'{"ts":5,"scm":"d","tbl":"t","t":1}'


def test_a_batch_holds_rows_ddl_and_resolved_events_in_order() -> None:
    key, value = message(
        (ROW_KEY, b'{"u":{"id":{"t":3,"h":true,"f":11,"v":1}}}'),
        (
            ROW_KEY,
            b'{"u":{"id":{"t":3,"h":true,"f":11,"v":1},"x":{"t":246,"f":65,"v":"1.50"}},'
            b'"p":{"x":{"t":246,"f":65,"v":"2.00"}}}',
        ),
        (ROW_KEY, b'{"d":{"id":{"t":3,"h":true,"f":11,"v":1}}}'),
    )
    decoder = decoder_for("open-protocol")
    events = decode_record(decoder, key, value)
    assert [e.op for e in events if isinstance(e, DecodedRow)] == [Op.INSERT, Op.UPDATE, Op.DELETE]
    assert events[1].data == {"id": 1, "x": Decimal("1.50")}
    # `p` keeps the changed columns (only-output-updated-columns): the others as in `u`.
    assert events[1].old == {"id": 1, "x": Decimal("2.00")}
    assert events[2].data is None and events[2].old == {"id": 1}
    with pytest.raises(DecodeError, match="holds 3 events; read it with decode_messages"):
        decoder.decode_message(key, value)
    ddl = OpenProtocolDecoder().decode_message(
        *message((b'{"ts":7,"scm":"d","tbl":"t","t":2}', b'{"q":"drop table t","t":4}'))
    )
    assert ddl == DecodedDDL(type="drop table", sql="drop table t", commit_ts=7)
    resolved = OpenProtocolDecoder().decode_message(*message((b'{"ts":9,"t":3}', b"")))
    assert resolved == DecodedWatermark(commit_ts=9)


def test_values_are_typed_from_codes_and_flags() -> None:
    columns = (
        b'{"u":{"b":{"t":254,"f":65,"v":"\\\\x89PNG"},"bl":{"t":252,"f":65,"v":"5rWL"},'
        b'"tx":{"t":252,"f":64,"v":"5rWL"},"f":{"t":4,"f":65,"v":1},'
        b'"s":{"t":15,"f":64,"v":"\\\\x89"},"n":{"t":3,"f":65,"v":null}}}'
    )
    (row,) = OpenProtocolDecoder().decode_messages(*message((ROW_KEY, columns)))
    assert row.data == {
        "b": b"\x89PNG",
        "bl": "测".encode(),
        "tx": "测",
        "f": 1.0,
        "s": "\\x89",  # not binary: the text as it is
        "n": None,
    }


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        (None, b"", "shorter than its 8-byte version"),
        (b"\x00" * 7, b"", "shorter than its 8-byte version"),
        (struct.pack(">Q", 2), b"", "has version 2"),
        (struct.pack(">QQ", 1, 100) + b"{}", b"", "says 100 bytes"),
        (struct.pack(">Q", 1) + b"\x00\x00", b"", "ends inside a length"),
        (message((ROW_KEY, b"{}"))[0], b"", "holds 1 keys but 0 values"),
        (*message((b"[1]", b"{}")), "event key is not a JSON object"),
        (*message((b'{"t":1}', b"{}")), "has no commit ts"),
        (*message((b'{"ts":1,"t":9}', b"{}")), "has type 9"),
        (*message((ROW_KEY, b"not json")), "row value is not JSON"),
        (*message((ROW_KEY, b'{"p":{}}')), "has neither `u` nor `d`"),
        (*message((ROW_KEY, b'{"u":{"a":{"t":3,"v":"x"}}}')), "is not an integer"),
        (*message((ROW_KEY, b'{"u":{"a":{"t":252,"v":"%%"}}}')), "is not base64"),
        (*message((ROW_KEY, b'{"u":{"a":{"t":254,"f":1,"v":"\\\\q"}}}')), "bad escape"),
        (*message((b'{"ts":1,"t":2}', b'{"q":1}')), "lacks its query"),
    ],
)
def test_what_is_not_open_protocol_is_a_decode_error(
    key: bytes | None, value: bytes, problem: str
) -> None:
    with pytest.raises(DecodeError, match=problem):
        OpenProtocolDecoder().decode_messages(key, value)

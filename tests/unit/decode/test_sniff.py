"""What a record looks like (`decode.sniff`): every protocol's messages as the sink writes
them (rows, watermarks, DDL; compressed or not) are told apart by their envelope, and a
read told another protocol (or no compression) fails saying which options read the topic."""

from __future__ import annotations

import pytest

from tests.support.fake_registry import FakeRegistry
from tests.support.read_log import FakeTopicLog, protocol_messages, table
from ticdc_sink.codec.protocols import build_encoder, decoder_for, encode_ddl
from ticdc_sink.config import CodecConfig, EncodingFormat, LargeMessageCompression
from ticdc_sink.decode.sniff import Sniffed, misread_hint, protocol_of, sniff_message
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read

USERS = table("users")
CHANGES = [
    (Op.INSERT, 10, (1, "a"), None),
    (Op.UPDATE, 11, (1, "b"), (1, "a")),
    (Op.DELETE, 12, None, (1, "b")),
]
WRITTEN = [
    Sniffed("simple"),
    Sniffed("simple", "avro"),
    Sniffed("simple", compression="snappy"),
    Sniffed("simple", "avro", compression="lz4"),
    Sniffed("canal-json"),
    Sniffed("canal-json", compression="lz4"),
    Sniffed("debezium"),
    Sniffed("debezium", compression="snappy"),
    Sniffed("open-protocol"),
    Sniffed("avro"),
]


def _codec(written: Sniffed, **options: object) -> CodecConfig:
    return CodecConfig(
        protocol=written.protocol,
        encoding_format=EncodingFormat(written.encoding_format),
        large_message_handle_compression=LargeMessageCompression(written.compression),
        enable_tidb_extension=True,
        **options,
    )


def _records(written: Sniffed, **options: object) -> list[tuple[bytes | None, bytes | None]]:
    registry = FakeRegistry() if written.protocol == "avro" else None
    codec = _codec(written, **options)
    records = protocol_messages(codec, USERS, CHANGES, watermark=20, registry=registry)
    ddl = encode_ddl(
        codec, USERS, None, "CREATE TABLE users (id bigint)", commit_ts=5, build_ts_ms=1
    )
    bootstrap = build_encoder(codec, USERS, build_ts_ms=1, topic="t", registry=registry)
    schema = bootstrap.encode_bootstrap()
    extra = [m for m in (ddl, schema) if m is not None]
    return [(m.key, m.value) for m in extra] + records


@pytest.mark.parametrize("written", WRITTEN, ids=lambda w: ",".join(w.options().values()))
def test_every_message_the_sink_writes_looks_like_its_protocol(written: Sniffed) -> None:
    records = _records(written)
    if written.protocol == "debezium":  # its schema-less form too
        records += _records(written, debezium_disable_schema=True)
    for key, value in records:
        assert sniff_message(key, value) == written, (key, value)


def test_what_looks_like_no_protocol() -> None:
    for key, value in [
        (None, None),
        (None, b""),
        (None, b"[1]"),
        (None, b'{"a": 1}'),
        (None, b"\x16"),
    ]:
        assert sniff_message(key, value) is None
    decoder = decoder_for("canal-json")
    assert protocol_of(decoder) == Sniffed("canal-json")
    assert misread_hint(decoder, None, b"nothing") == (
        "; it does not look like a message of any TiCDC protocol"
    )
    assert misread_hint(decoder, *_records(Sniffed("canal-json"))[0]) == ""


@pytest.mark.parametrize(
    ("written", "read", "hint"),
    [
        # The issue's: "Simple message version is None" said nothing of the protocol.
        (
            Sniffed("canal-json"),
            {},
            "looks like a canal-json message: set option protocol=canal-json",
        ),
        (Sniffed("debezium"), {"protocol": "canal-json"}, "set option protocol=debezium"),
        (Sniffed("open-protocol"), {}, "looks like an open-protocol message"),
        (Sniffed("simple", "avro"), {}, "simple message in Avro: set option encoding-format=avro"),
        (Sniffed("simple"), {"encoding-format": "avro"}, "set option encoding-format=json"),
        # The issue's: a snappy topic read without the option said "not valid UTF-8".
        (
            Sniffed("simple", compression="snappy"),
            {},
            "looks like a snappy-compressed simple message: set option "
            "large-message-handle-compression=snappy",
        ),
        (
            Sniffed("canal-json"),
            {"protocol": "canal-json", "large-message-handle-compression": "lz4"},
            "set option large-message-handle-compression=none",
        ),
    ],
)
def test_a_read_of_another_protocol_says_which_options_read_it(
    written: Sniffed, read: dict[str, str], hint: str
) -> None:
    log = FakeTopicLog({0: _records(written)})
    config = ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t", **read})
    with pytest.raises(DecodeError, match=r"^ticdc: topic t partition 0 offset 0: ") as caught:
        plan_read(config, log)
    assert hint in str(caught.value)

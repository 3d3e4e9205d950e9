"""open-protocol encoding: golden events written from tiflow's code for the tables of its
tests, the framing, the size check and the large-message policy, the column options, DDL
and resolved events, and TiCDC's batching limits."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import attrs
import pytest

from tests.support import paths
from tests.support.large_messages import MemoryStore
from ticdc_sink.codec import Message, protocols
from ticdc_sink.codec.compression import decompress
from ticdc_sink.codec.open_protocol import (
    OpenProtocolBatcher,
    OpenProtocolEncoder,
)
from ticdc_sink.codec.open_protocol.decoder import OpenProtocolDecoder
from ticdc_sink.codec.open_protocol.encoder import ddl_action_type
from ticdc_sink.codec.open_protocol.values import column_flags
from ticdc_sink.config import (
    CodecConfig,
    LargeMessageCompression,
    LargeMessageHandleOption,
    Protocol,
)
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import (
    ConfigError,
    DecodeError,
    InputError,
    MessageTooLargeError,
    SchemaError,
)
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import go_quote, go_unquote
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = paths.GOLDEN / "open_protocol"
CONFIG = CodecConfig(protocol=Protocol.OPEN_PROTOCOL)
TS = 424242424242424242


def golden(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def col(name: str, type_text: str, **kwargs: Any) -> Column:
    t = parse_mysql_type(type_text)
    if t.is_text or t.base in ("enum", "set"):
        t = attrs.evolve(t, charset="utf8mb4", collation="utf8mb4_bin")
    return Column(name, t, **kwargs)


def table(*columns: Column, pk: tuple[str, ...] = (), name: str = "t") -> TableSchema:
    indexes = (Index("PRIMARY", pk, unique=True, primary=True),) if pk else ()
    return TableSchema(database="test", table=name, columns=columns, indexes=indexes)


def framed(key: bytes, value: bytes) -> tuple[bytes, bytes]:
    """The docs' framing, written here independently of the encoder."""
    return (
        struct.pack(">QQ", 1, len(key)) + key,
        struct.pack(">Q", len(value)) + value,
    )


VARCHAR_PK = table(col("a", "varchar(10)", nullable=False), col("b", "varchar(10)"), pk=("a",))
INT_ABC = table(col("a", "int", nullable=False), col("b", "int"), col("c", "int"), pk=("a",))
INT_ID_A = table(col("id", "int", nullable=False), col("a", "int"), pk=("id",))


def encode(t: TableSchema, change: RowChange, config: CodecConfig = CONFIG, **kw: Any) -> Message:
    return OpenProtocolEncoder(config, t, **kw).encode_row(change)


def test_insert_is_the_golden_event_framed() -> None:
    message = encode(VARCHAR_PK, RowChange(VARCHAR_PK, Op.INSERT, TS, ("aa", "bb")))
    key, value = framed(
        golden("insert_varchar_pk.key.json"), golden("insert_varchar_pk.value.json")
    )
    assert (message.key, message.value) == (key, value)
    assert message.rows == 1 and message.commit_ts == TS and not message.diverted


def test_max_message_bytes_188_just_holds_the_row_187_does_not() -> None:
    # tiflow TestMaxMessageBytes: key + value + 36 (sarama) + 16 (lengths) + 8 (version).
    change = RowChange(VARCHAR_PK, Op.INSERT, TS, ("aa", "bb"))
    assert encode(VARCHAR_PK, change, attrs.evolve(CONFIG, max_message_bytes=188))
    with pytest.raises(MessageTooLargeError, match="is 188 bytes, above max-message-bytes 187"):
        encode(VARCHAR_PK, change, attrs.evolve(CONFIG, max_message_bytes=187))


def test_only_output_updated_columns_keeps_the_changed_old_values() -> None:
    config = attrs.evolve(CONFIG, only_output_updated_columns=True)
    changed = RowChange(INT_ABC, Op.UPDATE, TS, (1, 2, 1), (1, 1, 1))
    message = encode(INT_ABC, changed, config)
    assert message.key == framed(golden("update_int_pk_only_updated.key.json"), b"")[0]
    assert message.value == framed(b"", golden("update_int_pk_only_updated.value.json"))[1]
    same = RowChange(INT_ABC, Op.UPDATE, TS, (1, 1, 1), (1, 1, 1))
    value = golden("update_int_pk_unchanged.value.json")
    assert encode(INT_ABC, same, config).value == framed(b"", value)[1]
    # Without the option every old value is written.
    full = encode(INT_ABC, changed).value[8:]
    assert json.loads(full)["p"] == json.loads(full)["u"] | {"b": json.loads(full)["p"]["b"]}
    assert len(json.loads(full)["p"]) == 3


def test_float_zero_and_minus_zero_are_equal_as_go_compares_them() -> None:
    t = table(col("id", "int", nullable=False), col("f", "double"), pk=("id",))
    config = attrs.evolve(CONFIG, only_output_updated_columns=True)
    message = encode(t, RowChange(t, Op.UPDATE, TS, (1, -0.0), (1, 0.0)), config)
    assert b'"p"' not in message.value


def test_open_output_old_value_false_leaves_p_out() -> None:
    config = attrs.evolve(CONFIG, open_output_old_value=False)
    message = encode(INT_ABC, RowChange(INT_ABC, Op.UPDATE, TS, (1, 2, 1), (1, 1, 1)), config)
    assert json.loads(message.value[8:]).keys() == {"u"}
    # Then an UPDATE without its old row is fine; with old values it is refused.
    assert encode(INT_ABC, RowChange(INT_ABC, Op.UPDATE, TS, (1, 2, 1)), config)
    with pytest.raises(InputError, match="has no old row; open-protocol writes the old"):
        encode(INT_ABC, RowChange(INT_ABC, Op.UPDATE, TS, (1, 2, 1)))


def test_delete_only_output_handle_key_columns() -> None:
    config = attrs.evolve(CONFIG, delete_only_output_handle_key_columns=True)
    deleted = RowChange(INT_ID_A, Op.DELETE, TS, None, (1, 1))
    value = golden("delete_int_pk_key_only.value.json")
    assert encode(INT_ID_A, deleted, config).value == framed(b"", value)[1]
    # INSERTs and UPDATEs keep every column (tiflow TestRowChanged2MsgOnlyHandleKeyColumns).
    inserted = encode(INT_ID_A, RowChange(INT_ID_A, Op.INSERT, TS, (1, 1)), config)
    assert set(json.loads(inserted.value[8:])["u"]) == {"id", "a"}
    full = encode(INT_ID_A, deleted).value[8:]
    assert set(json.loads(full)["d"]) == {"id", "a"}
    no_key = table(col("id", "varchar(10)"), col("a", "varchar(10)"))
    with pytest.raises(SchemaError, match="has no handle key"):
        OpenProtocolEncoder(config, no_key)


def test_handle_key_only_for_a_large_message() -> None:
    config = attrs.evolve(
        CONFIG,
        max_message_bytes=170,
        large_message_handle_option=LargeMessageHandleOption.HANDLE_KEY_ONLY,
    )
    big = RowChange(INT_ID_A, Op.INSERT, TS, (1, 1))
    assert len(encode(INT_ID_A, big).value) == 75  # 181 bytes with key and overheads
    message = encode(INT_ID_A, big, config)
    assert message.diverted
    key, value = framed(
        golden("insert_int_pk_handle_key_only.key.json"),
        golden("insert_int_pk_handle_key_only.value.json"),
    )
    assert (message.key, message.value) == (key, value)
    # Still too large: refused.
    with pytest.raises(MessageTooLargeError):
        encode(INT_ID_A, big, attrs.evolve(config, max_message_bytes=120))
    # A table without a handle key cannot be cut (tiflow TestNoHandleKeys).
    no_key = table(col("id", "varchar(10)"), col("a", "varchar(10)"))
    with pytest.raises(SchemaError, match="has no handle key"):
        encode(no_key, RowChange(no_key, Op.INSERT, TS, ("1", "1")), config)


def test_claim_check_stores_the_framed_event_and_sends_its_location() -> None:
    store = MemoryStore()
    config = attrs.evolve(
        CONFIG,
        max_message_bytes=300,
        large_message_handle_option=LargeMessageHandleOption.CLAIM_CHECK,
        claim_check_storage_uri="file:///tmp/claim-check",
    )
    t = table(col("id", "int", nullable=False), col("s", "varchar(300)"), pk=("id",))
    big = RowChange(t, Op.INSERT, TS, (1, "x" * 200))
    full = encode(t, big)
    message = encode(t, big, config, claim_check=store)
    assert message.diverted
    ((name, data),) = store.files.items()
    location = store.location(name)
    # The file: Go JSON of {key, value}, both framed as a one-event message (tiflow
    # newMessage + claimcheck.WriteMessage).
    assert json.loads(data) == {
        "key": base64.b64encode(full.key).decode(),
        "value": base64.b64encode(full.value).decode(),
    }
    key = json.loads(message.key[16:])
    assert key == {"ts": TS, "scm": "test", "tbl": "t", "t": 1, "ccl": location}
    assert json.loads(message.value[8:]) == {"u": {"id": {"t": 3, "h": True, "f": 11, "v": 1}}}
    # The decoder reads the full row back from the file.
    decoder = OpenProtocolDecoder(claim_check_loader=store.load)
    row = decoder.decode_message(message.key, message.value)
    assert row.data == {"id": 1, "s": "x" * 200} and row.claim_check_location == location


@pytest.mark.parametrize(
    ("name", "columns", "row"),
    [
        (
            "insert_binary_png",
            (col("id", "int", nullable=False), col("b", "binary(8)")),
            (1, b"\x89PNG\r\n\x1a\n"),
        ),
        (
            "insert_blob_text_utf8",
            (
                col("id", "int", nullable=False),
                col("c_blob", "blob"),
                col("c_char", "char(4)"),
                col("c_text", "text"),
            ),
            (1, "测".encode(), "测", "测"),
        ),
    ],
)
def test_string_kinds(name: str, columns: tuple[Column, ...], row: tuple[Any, ...]) -> None:
    t = table(*columns, pk=("id",))
    message = encode(t, RowChange(t, Op.INSERT, TS, row))
    assert message.value == framed(b"", golden(f"{name}.value.json"))[1]
    decoded = OpenProtocolDecoder().decode_message(message.key, message.value)
    assert decoded.data == {c.name: v for c, v in zip(columns, row, strict=True)}


def test_column_flags_follow_tidb_index_flags() -> None:
    t = TableSchema(
        "test",
        "t",
        (
            col("id", "bigint unsigned", nullable=False),
            col("u1", "int", nullable=False),
            col("m1", "varchar(4)"),
            col("m2", "year"),
            col("k", "bit(3)"),
        ),
        (
            Index("PRIMARY", ("id",), unique=True, primary=True),
            Index("u1", ("u1",), unique=True),
            Index("m", ("m1", "m2"), unique=True),
            Index("k", ("k",)),
        ),
    )
    flags = {c.name: column_flags(t, c) for c in t.columns}
    # id: binary 1 + handle 2 + pk 8 + unsigned 128; u1: binary + unique 16; m1: unique +
    # multiple 32 + nullable 64; m2 (YEAR: unsigned, binary): unique + multiple + nullable;
    # k: the first column of a plain index is a multiple key (TiDB's MultipleKeyFlag).
    assert flags == {"id": 139, "u1": 17, "m1": 112, "m2": 241, "k": 225}


def test_values_as_go_json_writes_them() -> None:
    t = table(
        col("id", "int", nullable=False),
        col("f", "float"),
        col("d", "double"),
        col("dec", "decimal(5,2)"),
        col("e", "enum('x','y')"),
        col("j", "json"),
        col("s", "varchar(8)"),
        col("n", "int"),
        pk=("id",),
    )
    row = (1, 0.1, float("nan"), "1.50", 2, '{"a": "<b>"}', "a<&\u2028", None)
    value = encode(t, RowChange(t, Op.INSERT, TS, row)).value[8:]
    assert value == (
        b'{"u":{"d":{"t":5,"f":65,"v":0},"dec":{"t":246,"f":65,"v":"1.50"},'
        b'"e":{"t":247,"f":64,"v":2},"f":{"t":4,"f":65,"v":0.1},'
        b'"id":{"t":3,"h":true,"f":11,"v":1},'
        b'"j":{"t":245,"f":65,"v":"{\\"a\\": \\"\\u003cb\\u003e\\"}"},'
        b'"n":{"t":3,"f":65,"v":null},"s":{"t":15,"f":64,"v":"a\\u003c\\u0026\\u2028"}}}'
    )


def test_refused_value_names_the_column() -> None:
    with pytest.raises(InputError, match="column a of test.t .int. cannot take"):
        encode(INT_ID_A, RowChange(INT_ID_A, Op.INSERT, TS, (1, "x")))


def test_ddl_and_resolved_events() -> None:
    t = table(col("a", "int", nullable=False), col("b", "int"), pk=("a",))
    query = "create table test.t(a int primary key, b int)"
    message = protocols.encode_ddl(CONFIG, t, None, query, commit_ts=TS, build_ts_ms=0)
    assert message is not None
    assert (message.key, message.value) == framed(
        golden("ddl_create_table.key.json"), golden("ddl_create_table.value.json")
    )
    assert list(protocols.ddl_partitions(CONFIG, 3)) == [0, 1, 2]
    watermark = protocols.encode_watermark(CONFIG, 2333, build_ts_ms=0)
    assert watermark is not None and watermark.commit_ts == 2333
    assert (watermark.key, watermark.value) == framed(golden("resolved.key.json"), b"")


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("ALTER TABLE `t` ADD COLUMN `c` int(11) DEFAULT NULL", 5),
        ("ALTER TABLE `t` DROP COLUMN `c`", 6),
        ("ALTER TABLE `t` MODIFY COLUMN `c` bigint(20) DEFAULT NULL", 12),
        ("ALTER TABLE `t` ADD UNIQUE KEY `u` (`c`)", 7),
        ("ALTER TABLE `t` ADD PRIMARY KEY (`c`)", 32),
        ("ALTER TABLE `t` DROP PRIMARY KEY", 33),
        ("ALTER TABLE `t` DROP INDEX `u`", 8),
        ("ALTER TABLE `t` RENAME TO `d`.`t2`", 14),
        ("ALTER TABLE `t` DROP COLUMN `c`, ADD COLUMN `d` int(11) DEFAULT 'x, y'", 61),
    ],
)
def test_ddl_action_types(query: str, action: int) -> None:
    assert ddl_action_type(INT_ABC, query) == action
    assert ddl_action_type(None, "CREATE TABLE `t` (...)") == 3


def test_go_quote_matches_strconv_quote() -> None:
    # Values from Go's strconv quote_test.go (quotetests), without the surrounding quotes.
    cases = {
        b"\a\b\f\r\n\t\v": "\\a\\b\\f\\r\\n\\t\\v",
        b"\\": "\\\\",
        "abc\xffdef".encode("latin-1"): "abc\\xffdef",
        "\u263a".encode(): "\u263a",
        b"\xe2\x98": "\\xe2\\x98",
        "\U0010ffff".encode(): "\\U0010ffff",
        b"\x04": "\\x04",
        "!\u00a0!\u2000!\u3000!".encode(): "!\\u00a0!\\u2000!\\u3000!",
        b"\x7f": "\\x7f",
    }
    for data, text in cases.items():
        assert go_quote(data) == text
        assert go_unquote(text) == data


# --- batching (tiflow AppendRowChangedEvent) -----------------------------------------------


def _events(count: int, config: CodecConfig = CONFIG) -> list[Message]:
    encoder = OpenProtocolEncoder(config, VARCHAR_PK)
    return [
        encoder.encode_row(RowChange(VARCHAR_PK, Op.INSERT, TS + i, ("aa", "bb")))
        for i in range(count)
    ]


def _batched(messages: list[Message], batcher: OpenProtocolBatcher) -> list[tuple[bytes, bytes]]:
    out = [done for m in messages if (done := batcher.add(m.key, m.value)) is not None]
    last = batcher.flush()
    return out + ([last] if last is not None else [])


def test_max_batch_size_2_makes_3_messages_of_5_events() -> None:
    out = _batched(_events(5), OpenProtocolBatcher(2, 1 << 20))
    decoder = OpenProtocolDecoder()
    assert [len(decoder.decode_messages(k, v)) for k, v in out] == [2, 2, 1]
    assert [e.commit_ts for k, v in out for e in decoder.decode_messages(k, v)] == [
        TS + i for i in range(5)
    ]


def test_batches_hold_at_most_max_batch_size_events() -> None:
    out = _batched(_events(10000), OpenProtocolBatcher(64, 1048576))
    counts = [len(OpenProtocolDecoder().decode_messages(k, v)) for k, v in out]
    assert max(counts) == 64 and sum(counts) == 10000


def test_batches_stay_within_max_message_bytes() -> None:
    out = _batched(_events(10000), OpenProtocolBatcher(16, 256))
    assert all(len(k) + len(v) + 36 <= 256 for k, v in out)
    # 188 bytes for one event, 144 more per event (its 2 lengths and JSON): one fits.
    assert len(out) == 10000
    two = _batched(_events(4), OpenProtocolBatcher(16, 188 + 144))
    assert [len(OpenProtocolDecoder().decode_messages(k, v)) for k, v in two] == [2, 2]
    key, value = two[0]
    first, second = _events(2)
    assert key == first.key + second.key[8:] and value == first.value + second.value


def test_build_batcher_only_for_open_protocol() -> None:
    assert protocols.build_batcher(CodecConfig()) is None
    assert isinstance(protocols.build_batcher(CONFIG), OpenProtocolBatcher)


# --- large-message-handle-compression (tiflow common.Compress) ------------------------------


@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_compressed_values_are_checked_for_size_and_decode(compression: str) -> None:
    t = table(col("id", "int", nullable=False), col("s", "varchar(2000)"), pk=("id",))
    row = RowChange(t, Op.INSERT, TS, (1, "x" * 1000))
    plain = attrs.evolve(CONFIG, max_message_bytes=400)
    with pytest.raises(MessageTooLargeError):
        encode(t, row, plain)
    config = attrs.evolve(plain, large_message_handle_compression=compression)
    message = encode(t, row, config)  # the compressed value fits (tiflow: compress, then check)
    assert message.key == encode(t, row).key  # keys are never compressed
    full = encode(t, row).value[8:]
    value = message.value[8:]
    assert len(value) < len(full) and struct.unpack(">Q", message.value[:8]) == (len(value),)
    if compression == "lz4":
        assert value[:4] == b"\x04\x22\x4d\x18"  # an LZ4 frame
    decoder = OpenProtocolDecoder(compression=compression)
    assert decoder.decode_message(message.key, message.value).data == {"id": 1, "s": "x" * 1000}
    with pytest.raises(DecodeError, match=f"not {compression}-compressed"):
        OpenProtocolDecoder(compression=compression).decode_messages(
            *framed(golden("insert_varchar_pk.key.json"), golden("insert_varchar_pk.value.json"))
        )


def test_snappy_values_of_another_encoder_decode() -> None:
    # A raw Snappy block as the format defines it: length 9, literal "abc", then a copy of
    # 6 bytes from offset 3 (what TiCDC's encoder may write instead of cramjam's bytes).
    value = b"\x09\x08abc\x09\x03"
    assert decompress(LargeMessageCompression.SNAPPY, value) == b"abcabcabc"


def test_compressed_ddl_and_claim_check_round_trip() -> None:
    # tiflow TestE2EDDLCompression (snappy) and TestE2EClaimCheckMessage (lz4).
    config = attrs.evolve(CONFIG, large_message_handle_compression="snappy")
    query = "create table test.person(id int, name varchar(32), primary key(id))"
    ddl = protocols.encode_ddl(config, INT_ID_A, None, query, commit_ts=TS, build_ts_ms=0)
    assert ddl is not None
    decoded = OpenProtocolDecoder(compression="snappy").decode_message(ddl.key, ddl.value)
    assert decoded.sql == query and decoded.commit_ts == TS
    watermark = protocols.encode_watermark(config, 2333, build_ts_ms=0)
    assert watermark == protocols.encode_watermark(CONFIG, 2333, build_ts_ms=0)  # not compressed
    store = MemoryStore()
    config = attrs.evolve(
        CONFIG,
        max_message_bytes=300,
        large_message_handle_option=LargeMessageHandleOption.CLAIM_CHECK,
        claim_check_storage_uri="file:///tmp/claim-check",
        large_message_handle_compression="lz4",
    )
    t = table(col("id", "int", nullable=False), col("s", "varchar(300)"), pk=("id",))
    row = RowChange(t, Op.INSERT, TS, (1, "".join(chr(0x4E00 + i) for i in range(100))))
    message = encode(t, row, config, claim_check=store)
    assert message.diverted
    decoder = OpenProtocolDecoder(claim_check_loader=store.load, compression="lz4")
    assert decoder.decode_message(message.key, message.value).data == {"id": 1, "s": row.row[1]}


def test_claim_check_raw_value_is_refused_as_tiflow_refuses_it() -> None:
    # tiflow LargeMessageHandleConfig.AdjustAndValidate: not with open-protocol.
    with pytest.raises(ConfigError, match="'claim-check-raw-value' applies to protocol simple"):
        CodecConfig(
            protocol=Protocol.OPEN_PROTOCOL,
            large_message_handle_option=LargeMessageHandleOption.CLAIM_CHECK,
            claim_check_storage_uri="file:///tmp/cc",
            claim_check_raw_value=True,
        )

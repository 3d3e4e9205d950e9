"""`large-message-handle-compression` for simple and canal-json (open-protocol's is in
tests/unit/codec/open_protocol/test_encoder.py): every value TiCDC compresses is compressed
(rows, before the size check and the large-message policy; the claim-check file's value;
watermarks, DDL and bootstraps), the column-wise path gives the row path's bytes, and the
decoders undo it."""

from __future__ import annotations

import base64
from typing import Any

import attrs
import orjson
import pyarrow as pa
import pytest
from pyspark.sql import types as T

from tests.support.large_messages import BIG, CLAIM, SMALL, WIDE, MemoryStore, simple_config
from tests.support.reference_table import SPARK_SCHEMA, make_batches, sink_options
from tests.support.row_path import with_row_path
from ticdc_sink.codec import protocols
from ticdc_sink.codec.compression import compress, decompress
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.config import (
    CodecConfig,
    EncodingFormat,
    LargeMessageCompression,
    Protocol,
    SinkConfig,
)
from ticdc_sink.decode import DecoderSettings
from ticdc_sink.errors import DecodeError, MessageTooLargeError
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.writer import key_column_indexes, make_plan, split_key_update

SNAPPY = LargeMessageCompression.SNAPPY
LZ4 = LargeMessageCompression.LZ4
CONFIGS = {
    "simple-json": CodecConfig(),
    "simple-avro": CodecConfig(encoding_format=EncodingFormat.AVRO),
    "canal-json": CodecConfig(protocol=Protocol.CANAL_JSON, enable_tidb_extension=True),
}
DEBEZIUM = CodecConfig(protocol=Protocol.DEBEZIUM, enable_tidb_extension=True)


def decoder(config: CodecConfig, **kwargs: Any) -> Any:
    settings = DecoderSettings(
        encoding_format=config.encoding_format.value,
        compression=config.large_message_handle_compression.value,
        **kwargs,
    )
    return decoder_for(config.protocol.value, settings)


@pytest.mark.parametrize("compression", [SNAPPY, LZ4])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_message_is_compressed_and_decodes(name: str, compression: Any) -> None:
    plain = CONFIGS[name]
    config = attrs.evolve(plain, large_message_handle_compression=compression)
    encoder = protocols.build_encoder(config, WIDE, build_ts_ms=5)
    reference = protocols.build_encoder(plain, WIDE, build_ts_ms=5)
    messages = [
        (encoder.encode_row(SMALL), reference.encode_row(SMALL)),
        (
            protocols.encode_watermark(config, 9 << 18, build_ts_ms=5),
            protocols.encode_watermark(plain, 9 << 18, build_ts_ms=5),
        ),
        (
            protocols.encode_ddl(config, WIDE, None, "CREATE TABLE x", commit_ts=9, build_ts_ms=5),
            protocols.encode_ddl(plain, WIDE, None, "CREATE TABLE x", commit_ts=9, build_ts_ms=5),
        ),
    ]
    if name.startswith("simple"):
        messages.append((encoder.encode_bootstrap(), reference.encode_bootstrap()))
    for message, expected in messages:
        assert message is not None and expected is not None
        assert message.key == expected.key
        assert decompress(compression, message.value) == expected.value
        assert message.value == compress(compression, expected.value)
        event = decoder(config).decode_message(message.key, message.value)
        assert event == decoder(plain).decode_message(expected.key, expected.value)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_size_check_and_claim_check_see_compressed_values(name: str) -> None:
    # 2000 "x" compress well below max-message-bytes=1000: no longer too large.
    plain = attrs.evolve(CONFIGS[name], max_message_bytes=1000)
    with pytest.raises(MessageTooLargeError):
        protocols.build_encoder(plain, WIDE, build_ts_ms=1).encode_row(BIG)
    config = attrs.evolve(plain, large_message_handle_compression=SNAPPY)
    message = protocols.build_encoder(config, WIDE, build_ts_ms=1).encode_row(BIG)
    assert not message.diverted and len(message.value) < 1000
    # Incompressible: claim-check stores the compressed full value, as TiCDC.
    store = MemoryStore()
    claim = simple_config(
        CLAIM,
        protocol=plain.protocol,
        enable_tidb_extension=plain.enable_tidb_extension,
        encoding_format=plain.encoding_format,
        large_message_handle_compression=LZ4,
    )
    noisy = attrs.evolve(BIG, row=(7, base64.b64encode(bytes(range(256)) * 8).decode()))
    diverted = protocols.build_encoder(claim, WIDE, build_ts_ms=1, claim_check=store).encode_row(
        noisy
    )
    assert diverted.diverted
    (data,) = store.files.values()
    stored = base64.b64decode(orjson.loads(data)["value"])
    full = protocols.build_encoder(CONFIGS[name], WIDE, build_ts_ms=1).encode_row(noisy)
    assert decompress(LZ4, stored) == full.value
    row = decoder(claim, claim_check_loader=store.load).decode_message(None, diverted.value)
    assert row.data["payload"] == noisy.row[1]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_column_wise_path_gives_the_row_paths_compressed_bytes(name: str) -> None:
    sink = {
        **sink_options("127.0.0.1:1", name),
        "enable-tidb-extension": str(name == "canal-json").lower(),
        "large-message-handle-compression": "snappy",
    }
    config = SinkConfig.from_options(sink)
    spark = T.StructType(
        [*SPARK_SCHEMA.fields, T.StructField("_before", T.StructType(SPARK_SCHEMA.fields[1:]))]
    )
    plan = make_plan(config, spark, 1 << 40, batch_id=None)
    (batch,) = read_change_batches(
        make_batches(300, size=300)[0],
        layout=InputLayout(),
        tables=plan.tables.schema_for,
        default_database=plan.tables.default_database,
        default_table=plan.tables.default_table,
        default_commit_ts=1 << 40,
        time_zone="UTC",
    )
    keys = key_column_indexes(batch.table)
    encoder = protocols.build_encoder(config.codec, batch.table, build_ts_ms=1)
    encoded = with_row_path(encoder.encode_batch(batch, keys), encoder, batch, keys)
    rows = [encoder.encode_row(e) for c in batch.to_changes() for e in split_key_update(c, keys)]
    assert encoded.values == [m.value for m in rows]
    assert encoded.sizes == [len(m.value) + 36 for m in rows]


@pytest.mark.parametrize("compression", [SNAPPY, LZ4])
def test_debezium_compresses_keys_and_values(compression: Any) -> None:
    config = attrs.evolve(DEBEZIUM, large_message_handle_compression=compression)
    encoder = protocols.build_encoder(config, WIDE, build_ts_ms=5)
    reference = protocols.build_encoder(DEBEZIUM, WIDE, build_ts_ms=5)
    pairs = [
        (encoder.encode_row(SMALL), reference.encode_row(SMALL)),
        (
            protocols.encode_watermark(config, 9 << 18, build_ts_ms=5),
            protocols.encode_watermark(DEBEZIUM, 9 << 18, build_ts_ms=5),
        ),
        (
            protocols.encode_ddl(
                config, WIDE, None, "CREATE TABLE x", commit_ts=9 << 18, build_ts_ms=5
            ),
            protocols.encode_ddl(
                DEBEZIUM, WIDE, None, "CREATE TABLE x", commit_ts=9 << 18, build_ts_ms=5
            ),
        ),
    ]
    for message, expected in pairs:
        assert message is not None and expected is not None
        assert message.key == compress(compression, expected.key)
        assert message.value == compress(compression, expected.value)
        event = decoder(config).decode_message(message.key, message.value)
        assert event == decoder(DEBEZIUM).decode_message(expected.key, expected.value)


def test_debezium_column_wise_keys_and_values_are_compressed() -> None:
    sink = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t",
            "database": "d",
            "table": "wide",
            "protocol": "debezium",
            "primary-key": "id",
            "large-message-handle-compression": "snappy",
        }
    )
    assert sink.codec.large_message_handle_compression is SNAPPY
    spark = T.StructType(
        [T.StructField("id", T.IntegerType(), False), T.StructField("payload", T.StringType())]
    )
    plan = make_plan(sink, spark, 1 << 40, batch_id=None)
    record = pa.RecordBatch.from_pydict(
        {"id": pa.array([1, 2], pa.int32()), "payload": ["a", None]}
    )
    (batch,) = read_change_batches(
        record,
        layout=InputLayout(),
        tables=plan.tables.schema_for,
        default_database="d",
        default_table="wide",
        default_commit_ts=1 << 40,
        time_zone="UTC",
    )
    keys = key_column_indexes(batch.table)
    encoder = protocols.build_encoder(sink.codec, batch.table, build_ts_ms=1)
    encoded = with_row_path(encoder.encode_batch(batch, keys), encoder, batch, keys)
    rows = [encoder.encode_row(c) for c in batch.to_changes()]
    message_keys = encoded.keys or [encoded.key] * len(rows)
    assert message_keys == [m.key for m in rows] and encoded.values == [m.value for m in rows]
    assert decompress(SNAPPY, rows[0].key or b"").startswith(b'{"payload":{"id":1},')


def test_avro_accepts_it_and_writes_as_ever() -> None:
    # TiCDC's avro encoder never compresses; the setting is valid for every protocol.
    assert CodecConfig(protocol=Protocol.AVRO, large_message_handle_compression=LZ4)


def test_a_value_not_compressed_as_said_is_a_decode_error() -> None:
    plain = protocols.encode_watermark(CodecConfig(), 9 << 18, build_ts_ms=5)
    assert plain is not None
    with pytest.raises(DecodeError, match="not lz4-compressed"):
        decoder_for("simple", DecoderSettings(compression="lz4")).decode_message(None, plain.value)
    with pytest.raises(DecodeError, match="'zip' is unknown; use none, snappy, lz4"):
        decoder_for("canal-json", DecoderSettings(compression="zip"))

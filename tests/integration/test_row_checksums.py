"""Row checksums through Spark `local[2]` and Apache Kafka: a changefeed file
with `[integrity] integrity-check-level = "correctness"` makes Simple JSON messages carry
TiCDC's checksum, and the option makes avro records (through the test registry) and
Simple Avro messages carry theirs; the decoders check every row, and one altered message
is caught."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.support.apicurio import confluent_client
from tests.support.checksums import crc32_bitwise
from ticdc_sink import tso
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

CHANGEFEED = """
[integrity]
integrity-check-level = "correctness"
corruption-handle-level = "warn"

[sink]
protocol = "simple"
"""

# The INSERT of id 1 as TiDB's appendDatumForChecksum appends it, columns in DataFrame
# order (the column IDs here): bigint, varchar, decimal text, TIMESTAMP(3) as UTC text.
ALICE = (
    "0100000000000000"
    + "05000000"
    + b"alice".hex()
    + "05000000"
    + b"12.50".hex()
    + "17000000"
    + b"2024-01-02 00:00:00.500".hex()
)


def _frame(spark: Any) -> Any:
    """INSERT 1 and 2, UPDATE 1, DELETE 2, in one partition."""
    ts = [tso.compose(1_700_000_000_000 + i) for i in range(4)]
    instant = dt.datetime(2024, 1, 2, 0, 0, 0, 500000)  # UTC: the session zone is UTC
    before = (1, "alice", Decimal("12.50"), instant)
    return spark.createDataFrame(
        [
            ("c", ts[0], 1, "alice", Decimal("12.50"), instant, None),
            ("c", ts[1], 2, None, None, None, None),
            ("u", ts[2], 1, "alicia", Decimal("13.00"), instant, before),
            ("d", ts[3], 2, None, None, None, None),
        ],
        "_op string, _commit_ts bigint, id bigint, name string, amount decimal(10,2), "
        "ts timestamp, "
        "_before struct<id: bigint, name: string, amount: decimal(10,2), ts: timestamp>",
    ).coalesce(1)


def test_checksums_are_written_and_checked(spark, broker, topics, tmp_path: Path) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text(CHANGEFEED)
    df = _frame(spark)
    (
        df.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("config", str(config))
        .option("topic", topics("checksums"))
        .option("database", "shop")
        .option("table", "orders")
        .option("partition-num", "1")
        .option("primary-key", "id")
        .option("time-zone", "Asia/Shanghai")
        .option("column-types", json.dumps({"ts": "timestamp(3)"}))
        .save()
    )
    records = broker.consume_all(topics("checksums"))
    decoder = SimpleDecoder()
    decoded = [decoder.decode_message(r.key, r.value) for r in records]
    sent = [e for e in decoded if isinstance(e, DecodedRow)]
    assert [(r.op, r.typed) for r in sent] == [
        (Op.INSERT, True),
        (Op.INSERT, True),
        (Op.UPDATE, True),
        (Op.DELETE, True),
    ]
    checksums: list[Any] = [r.checksum for r in sent]
    assert all(c is not None and c.version == 0 and not c.corrupted for c in checksums)
    assert checksums[0].current == crc32_bitwise(bytes.fromhex(ALICE))
    assert checksums[2].previous == checksums[0].current  # the same image
    assert checksums[2].current not in (0, checksums[0].current)
    assert (checksums[3].current, checksums[3].previous) == (0, checksums[1].current)

    # one byte changed on the way is a DecodeError naming the row and both checksums
    first = next(r for r in records if b'"INSERT"' in (r.value or b""))
    altered = (first.value or b"").replace(b'"alice"', b'"alicf"')
    with pytest.raises(DecodeError) as info:
        decoder.decode_message(first.key, altered)
    line = str(info.value).splitlines()[0]
    assert "INSERT shop.orders key id=1" in line
    assert f"the message says {checksums[0].current}, its values give" in line


def test_avro_checksums_are_written_and_checked(spark, broker, topics, registry) -> None:
    # protocol=avro: the value records end with TiCDC's checksum fields (TiCDC's required
    # settings given), read by Confluent's deserializer and checked by the decoder
    df = _frame(spark)
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "protocol": "avro",
        "schema-registry": registry.url,
        "integrity-check-level": "correctness",
        "enable-tidb-extension": "true",
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
        "topic": topics("avro_checksums"),
        "database": "shop",
        "table": "orders",
        "partition-num": "1",
        "primary-key": "id",
        "time-zone": "Asia/Shanghai",
        "column-types": json.dumps({"ts": "timestamp(3)"}),
    }
    writer = df.write.format("ticdc").mode("append")
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()

    records = broker.consume_all(topics("avro_checksums"))
    assert [r.value is None for r in records] == [False, False, False, True]
    client = confluent_client(registry.url)
    values = AvroDeserializer(client)
    context = SerializationContext(topics("avro_checksums"), MessageField.VALUE)
    confluent = [values(r.value, context) for r in records[:3]]
    assert [v["_tidb_row_level_checksum"] for v in confluent][0] == str(
        crc32_bitwise(bytes.fromhex(ALICE))
    )
    assert all(not v["_tidb_corrupted"] and v["_tidb_checksum_version"] == 0 for v in confluent)

    decoder = AvroDecoder(
        lambda schema_id: client.get_schema(schema_id).schema_str, time_zone="Asia/Shanghai"
    )
    decoded = [decoder.decode_message(r.key, r.value) for r in records]  # each one checked
    assert [r.op for r in decoded] == [Op.INSERT, Op.INSERT, Op.UPDATE, Op.DELETE]
    assert [None if r.checksum is None else str(r.checksum.current) for r in decoded] == [
        *(v["_tidb_row_level_checksum"] for v in confluent),
        None,
    ]
    assert decoded[2].checksum is not None and decoded[2].checksum.current not in (
        0,
        int(confluent[0]["_tidb_row_level_checksum"]),
    )

    # one byte changed on the way is a DecodeError naming the row and both checksums
    altered = (records[0].value or b"").replace(b"alice", b"alicf")
    with pytest.raises(DecodeError) as info:
        decoder.decode_message(records[0].key, altered)
    line = str(info.value).splitlines()[0]
    assert "INSERT shop.orders key id=1" in line
    assert f"the record says {confluent[0]['_tidb_row_level_checksum']}, its values give" in line


def test_simple_avro_checksums_are_written_and_checked(spark, broker, topics) -> None:
    # encoding-format=avro: the Checksum record, checked by the Simple Avro decoder
    writer = _frame(spark).write.format("ticdc").mode("append")
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "protocol": "simple",
        "encoding-format": "avro",
        "integrity-check-level": "correctness",
        "topic": topics("simple_avro_checksums"),
        "database": "shop",
        "table": "orders",
        "partition-num": "1",
        "primary-key": "id",
        "time-zone": "Asia/Shanghai",
        "column-types": json.dumps({"ts": "timestamp(3)"}),
    }
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()
    records = broker.consume_all(topics("simple_avro_checksums"))
    decoder = SimpleDecoder(encoding_format="avro")
    decoded = [decoder.decode_message(r.key, r.value) for r in records]  # each one checked
    sent = [e for e in decoded if isinstance(e, DecodedRow)]
    assert [(r.op, r.typed) for r in sent] == [
        (Op.INSERT, True),
        (Op.INSERT, True),
        (Op.UPDATE, True),
        (Op.DELETE, True),
    ]
    checksums: list[Any] = [r.checksum for r in sent]
    assert checksums[0].current == crc32_bitwise(bytes.fromhex(ALICE))
    assert checksums[2].previous == checksums[0].current
    assert (checksums[3].current, checksums[3].previous) == (0, checksums[1].current)

    first = next(r for r in records if b"alice" in (r.value or b""))
    with pytest.raises(DecodeError) as info:
        decoder.decode_message(first.key, (first.value or b"").replace(b"alice", b"alicf"))
    line = str(info.value).splitlines()[0]
    assert "INSERT shop.orders key id=1" in line
    assert f"the message says {checksums[0].current}, its values give" in line

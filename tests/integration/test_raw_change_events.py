"""`output-raw-change-event=true` through Spark and the broker, for every protocol, given
as TiCDC users give it (in the sink URI): an UPDATE that changes the primary key arrives as
one UPDATE in the new key's partition (index-value, recomputed here with zlib.crc32 as
tiflow's dispatcher hashes), where the default sends a DELETE and an INSERT."""

from __future__ import annotations

import zlib
from typing import Any

import pytest

from tests.support.apicurio import confluent_client
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedRow, DecoderSettings

pytestmark = pytest.mark.integration

PARTITIONS = 4

# protocol -> sink-URI parameters and options besides output-raw-change-event
PROTOCOLS: dict[str, str] = {
    "simple": "protocol=simple",
    "canal-json": "protocol=canal-json&enable-tidb-extension=true",
    "debezium": "protocol=debezium",
    "avro": "protocol=avro&enable-tidb-extension=true",
}

SCHEMA = (
    "id bigint not null, name string, _op string, _before struct<id: bigint not null, name: string>"
)
ROWS = [
    (1, "ann", "c", None),
    (2, "ann", "u", (1, "ann")),  # the key changes: 1 -> 2
    (2, "bob", "u", (2, "ann")),  # the key stays
]


def partition_of(key: int) -> int:
    # tiflow index_value.go and hash.PositionInertia: crc32 of schema and table name, xor
    # crc32 of each handle-key column's name and value text; modulo the partition count.
    acc = zlib.crc32(b"shopusers") ^ zlib.crc32(b"id" + str(key).encode())
    return acc % PARTITIONS


def write(spark: Any, broker: Any, registry: Any, protocol: str, topic: str, raw: bool) -> None:
    uri = (
        f"kafka://{broker.bootstrap}/{topic}?{PROTOCOLS[protocol]}"
        f"&partition-num={PARTITIONS}&output-raw-change-event={str(raw).lower()}"
    )
    writer = (
        spark.createDataFrame(ROWS, SCHEMA)
        .coalesce(1)
        .write.format("ticdc")
        .mode("append")
        .option("sink-uri", uri)
        .option("database", "shop")
        .option("table", "users")
        .option("primary-key", "id")
        .option("partition", "index-value")
    )
    if protocol == "avro":
        writer = writer.option("schema-registry", registry.url)
    writer.save()


def rows(broker: Any, registry: Any, protocol: str, topic: str) -> list[tuple[int, DecodedRow]]:
    client = confluent_client(registry.url)
    decoder = decoder_for(
        protocol,
        DecoderSettings(schema_for_id=lambda schema_id: client.get_schema(schema_id).schema_str),
    )
    out = []
    for record in broker.consume_all(topic):
        event = decoder.decode_message(record.key, record.value)
        if isinstance(event, DecodedRow):
            out.append((record.partition, event))
    return out


def summary(placed: list[tuple[int, DecodedRow]]) -> list[tuple[str, int, int, int]]:
    """(op, id of the row's image, old id or 0, partition) per row message, sorted."""
    out = []
    for partition, row in placed:
        image = row.data if row.data is not None else row.old
        old = int(row.old["id"]) if row.old is not None and row.data is not None else 0
        out.append((row.op.value, int(image["id"]), old, partition))
    return sorted(out)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_key_changing_update_arrives_as_one_update(
    spark, broker, topics, registry, protocol: str
):
    topic = topics(f"raw_{protocol.replace('-', '_')}")
    write(spark, broker, registry, protocol, topic, raw=True)
    # Avro carries no old values (tiflow ValidateProtocol: outputOldValue is false).
    old = (lambda key: 0) if protocol == "avro" else (lambda key: key)
    assert summary(rows(broker, registry, protocol, topic)) == [
        ("INSERT", 1, 0, partition_of(1)),
        ("UPDATE", 2, old(1), partition_of(2)),
        ("UPDATE", 2, old(2), partition_of(2)),
    ]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_by_default_it_arrives_as_a_delete_and_an_insert(
    spark, broker, topics, registry, protocol: str
):
    topic = topics(f"split_{protocol.replace('-', '_')}")
    write(spark, broker, registry, protocol, topic, raw=False)
    old = (lambda key: 0) if protocol == "avro" else (lambda key: key)
    assert summary(rows(broker, registry, protocol, topic)) == sorted(
        [
            ("INSERT", 1, 0, partition_of(1)),
            ("DELETE", 1, 0, partition_of(1)),
            ("INSERT", 2, 0, partition_of(2)),
            ("UPDATE", 2, old(2), partition_of(2)),
        ]
    )

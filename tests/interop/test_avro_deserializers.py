"""confluent-kafka's `AvroDeserializer` and the Apache `avro` package decode the sink's
`protocol=avro` topic with the schemas the sink registered in Apicurio: every row, with the
input's values, ops (`_tidb_op`; a DELETE is a tombstone under its key) and order per key,
and both decoders give the same records."""

from __future__ import annotations

import io
import json
import urllib.request
from typing import Any

import pytest

from tests.support.changelog import Change, apply, expected_per_key, make_row, per_key, source_table
from tests.support.consumers import CONSUMERS

pytestmark = pytest.mark.interop

CONFLUENT = CONSUMERS["confluent-avro"]
APACHE = CONSUMERS["apache-avro"]


def _apache_decode(registry: str, data: bytes) -> Any:
    """Confluent framing taken apart by hand, the body read by the Apache `avro` package."""
    import avro.io
    import avro.schema

    assert data[0] == 0, "not Confluent-framed (magic byte 0)"
    schema_id = int.from_bytes(data[1:5], "big")
    with urllib.request.urlopen(f"{registry}/schemas/ids/{schema_id}", timeout=30) as answer:
        schema = avro.schema.parse(json.loads(answer.read())["schema"])
    return avro.io.DatumReader(schema).read(avro.io.BinaryDecoder(io.BytesIO(data[5:])))


def test_avro_deserializers_decode_the_topic(write_topic, kafka, apicurio, announce) -> None:
    import avro
    import confluent_kafka
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    assert CONFLUENT.options == APACHE.options  # one topic serves both
    announce(
        f"confluent-kafka {confluent_kafka.__version__} AvroDeserializer "
        f"(librdkafka {confluent_kafka.libversion()[0]})"
    )
    announce(f"Apache avro {avro.__version__} (Python)")
    options = {k: v.replace("<registry>", apicurio.url) for k, v in CONFLUENT.options.items()}
    write_topic("interop_avro_{schema}_{table}", options)
    topic = "interop_avro_shop_items"
    assert {f"{topic}-key", f"{topic}-value"} <= set(apicurio.subjects())

    client = SchemaRegistryClient(CONFLUENT.settings_for(registry=apicurio.url))
    keys, values = AvroDeserializer(client), AvroDeserializer(client)
    changes: list[Change] = []
    for record in kafka.consume_all(topic):
        key = keys(record.key, SerializationContext(topic, MessageField.KEY))
        assert key == _apache_decode(apicurio.url, record.key)
        if record.value is None:  # a DELETE: the tombstone of its key
            changes.append(("DELETE", {"id": key["id"]}, None))
            continue
        value = values(record.value, SerializationContext(topic, MessageField.VALUE))
        assert value == _apache_decode(apicurio.url, record.value)
        assert value["_tidb_op"] in ("c", "u")
        op = "INSERT" if value["_tidb_op"] == "c" else "UPDATE"
        changes.append((op, make_row(value["id"], value["name"], value["amount"]), None))

    # avro carries no old row, and a DELETE only its key
    expected = {
        key: [(op, {"id": key} if op == "DELETE" else row, None) for op, row, _ in items]
        for key, items in expected_per_key().items()
    }
    assert per_key(changes) == expected
    assert apply(changes) == source_table()

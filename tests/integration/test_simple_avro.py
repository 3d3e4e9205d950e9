"""protocol=simple with encoding-format=avro through Spark and the broker, read back by the
Simple decoder in Avro mode: bootstraps, rows of every type, and watermarks."""

from __future__ import annotations

import pytest

from tests.support.tables import ALL_TYPES, EXPECTED, all_types_frame, all_types_options
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedBootstrap, DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration


def test_every_mysql_type_round_trips_in_the_simple_avro_encoding(spark, broker, topics):
    writer = all_types_frame(spark).write.format("ticdc").mode("append")
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": topics("simple_avro_types"),
        "encoding-format": "avro",
        **all_types_options(),
    }
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()
    records = broker.consume_all(topics("simple_avro_types"))
    assert all(r.value[:1] == b"\x16" for r in records)  # the Message union branch
    decoder = SimpleDecoder(encoding_format="avro")
    events = [decoder.decode_message(r.key, r.value) for r in records]
    assert isinstance(events[0], DecodedBootstrap)
    assert isinstance(events[-1], DecodedWatermark)
    rows = [e for e in events if isinstance(e, DecodedRow)]
    assert [r.data["id"] for r in rows] == [1, 2]
    for name in ALL_TYPES:
        assert rows[0].data[name] == EXPECTED.get(name, ALL_TYPES[name][1]), name
    assert rows[1].data == {"id": 2, **dict.fromkeys(ALL_TYPES)}

"""What a topic written by the runtime tests holds, decoded: the rows' ids (duplicates kept),
the commit ts of each row, and the WATERMARKs of each partition in topic order.

`simple_topic` decodes the Simple protocol (JSON); `avro_ids` a Confluent Avro topic
through the test registry. Rows are `add_file` / `batch_frame` rows: an `id` column.
"""

from __future__ import annotations

from typing import Any

import attrs

from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow, DecodedWatermark

__all__ = ["SimpleTopic", "avro_ids", "simple_topic"]


@attrs.frozen
class SimpleTopic:
    ids: list[int]  # sorted, a replayed row once per copy
    commit_ts: list[int]  # the distinct commit ts of the rows, sorted
    watermarks: dict[int, list[int]]  # partition -> WATERMARK commit ts, in topic order
    rows: list[tuple[Any, DecodedRow]]  # (record, decoded row), in topic order


def simple_topic(broker: Any, topic: str) -> SimpleTopic:
    decoder = SimpleDecoder()
    rows: list[tuple[Any, DecodedRow]] = []
    watermarks: dict[int, list[int]] = {}
    for record in broker.consume_all(topic):
        event = decoder.decode_message(record.key, record.value)
        if isinstance(event, DecodedRow):
            rows.append((record, event))
        elif isinstance(event, DecodedWatermark):
            watermarks.setdefault(record.partition, []).append(event.commit_ts)
    return SimpleTopic(
        ids=sorted(int(e.data["id"]) for _, e in rows),
        commit_ts=sorted({e.commit_ts for _, e in rows}),
        watermarks=watermarks,
        rows=rows,
    )


def avro_ids(broker: Any, registry: Any, topic: str) -> list[int]:
    from tests.support.apicurio import confluent_client
    from ticdc_sink.codec.avro.decoder import AvroDecoder

    client = confluent_client(registry.url)
    decoder = AvroDecoder(lambda schema_id: client.get_schema(schema_id).schema_str)
    return sorted(
        int(decoder.decode_message(r.key, r.value).data["id"]) for r in broker.consume_all(topic)
    )

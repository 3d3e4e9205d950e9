"""The idempotent producer on Apache Kafka: connections between the sink's producers and the
broker cut again and again during a write (a TCP proxy, tests/support/proxy.py) leave no
duplicate row in the topic. Kafka drops a produce request resent after a lost answer
(same producer id and sequence numbers); Tansu stored some twice
(tests/integration/test_broker_faults.py allows those byte-identical copies), Kafka must
not. The driver's watermark fan-out is not idempotent (docs/reference/write-options.md): a
watermark may come twice, rows may not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.kafka import ProxiedKafka
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration

ROWS = 100_000


@pytest.fixture(scope="module")
def proxied_kafka() -> Iterator[ProxiedKafka]:
    with ProxiedKafka() as running:
        yield running


def test_connections_cut_during_a_write_leave_no_duplicate_row_on_kafka(
    spark: Any, proxied_kafka: ProxiedKafka
) -> None:
    topic = "idempotent_cuts"
    proxy = proxied_kafka.proxy
    df = (
        spark.range(ROWS, numPartitions=4)
        .selectExpr("id", "concat('name-', cast(id as string)) as name")
        .repartition(4, "id")
    )
    # ~35 MB on the wire uncompressed: a cut every ~4 MB, paced by the bytes.
    proxy.cut_every(nbytes=4_000_000)
    try:
        (
            df.write.format("ticdc")
            .mode("append")
            .option("kafka.bootstrap.servers", proxied_kafka.bootstrap)
            .option("topic", topic)
            .option("database", "shop")
            .option("table", "items")
            .option("primary-key", "id")
            .option("partition", "index-value")
            .option("partition-num", "3")
            .option("kafka.compression.type", "none")
            .save()
        )
    finally:
        proxy.cut_every()
    assert proxy.cuts >= 3, f"only {proxy.cuts} cuts"

    decoder = SimpleDecoder()
    rows: Counter[int] = Counter()
    messages: Counter[tuple[int, bytes | None, bytes | None]] = Counter()
    watermarks: Counter[int] = Counter()
    for record in proxied_kafka.consume_all(topic, timeout=180):
        event = decoder.decode_message(record.key, record.value)
        if isinstance(event, DecodedRow):
            rows[int(event.data["id"])] += 1
            messages[(record.partition, record.key, record.value)] += 1
        elif isinstance(event, DecodedWatermark):
            watermarks[record.partition] += 1
    assert set(rows) == set(range(ROWS))
    assert [key for key, n in rows.items() if n > 1] == []
    assert max(messages.values()) == 1
    assert set(watermarks) == {0, 1, 2}
    print(f"{proxy.cuts} cuts, {proxy.connections} connections, no copy of any row")

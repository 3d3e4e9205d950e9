"""A TiCDC changefeed file with several dispatchers: rows of three tables go to the topics
and partitions TiCDC would choose (partitions recomputed here with zlib.crc32)."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.decode import DecodedRow

pytestmark = pytest.mark.integration

CHANGEFEED = """
case-sensitive = false

[sink]
protocol = "canal-json"

# PREFIX_: the test's topic prefix (tests/support/topics.py)
[[sink.dispatchers]]
matcher = ['shop.orders']
topic = "PREFIX_orders_{schema}_{table}"
partition = "index-value"

[[sink.dispatchers]]
matcher = ['shop.*', '!shop.tmp_*']
topic = "PREFIX_shop_all"
partition = "columns"
columns = ["region"]

[sink.kafka-config]
partition-num = 4
"""


def crc(*parts: bytes) -> int:
    acc = 0
    for part in parts:
        acc ^= zlib.crc32(part)
    return acc


def test_three_tables_follow_the_changefeed_dispatchers(spark, broker, topics, tmp_path: Path):
    config = tmp_path / "changefeed.toml"
    config.write_text(CHANGEFEED.replace("PREFIX_", topics.prefix))
    rows = [("shop", "orders", i, f"r{i % 3}") for i in range(8)]
    rows += [("shop", "users", 100 + i, f"r{i % 3}") for i in range(8)]
    rows += [("shop", "tmp_x", 200 + i, f"r{i % 3}") for i in range(4)]
    df = spark.createDataFrame(rows, "_database string, _table string, id bigint, region string")
    (
        df.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("config", str(config))
        .option("topic", topics("fallback"))
        .option("primary-key", "id")
        .save()
    )
    decoder = CanalJsonDecoder()

    def placed(topic: str) -> list[tuple[int, DecodedRow]]:
        return [
            (r.partition, decoder.decode_message(r.key, r.value)) for r in broker.consume_all(topic)
        ]

    # shop.orders: its own topic, index-value on the handle key (id).
    orders = placed(topics("orders_shop_orders"))
    assert len(orders) == 8
    for partition, row in orders:
        key = str(row.data["id"]).encode()
        assert partition == crc(b"shoporders", b"id" + key) % 4
    # shop.users: the shared topic, columns dispatcher on region.
    users = placed(topics("shop_all"))
    assert {row.table for _, row in users} == {"users"}
    for partition, row in users:
        region = row.data["region"].encode()
        assert partition == crc(b"shopusers", b"region" + region) % 4
    # shop.tmp_x: excluded by '!shop.tmp_*', so the catch-all: default topic, table dispatcher.
    tmp = placed(topics("fallback"))
    assert len(tmp) == 4
    assert {p for p, _ in tmp} == {crc(b"shoptmp_x") % 4}

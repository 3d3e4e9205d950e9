"""The strict options of docs/reference/consumers.md (tests/support/consumers.py):
with them a schema change between two batches, updates and deletes produce only row
changes (no watermark, no DDL, UPDATEs with their old row, the schema part and key where
the consumer needs them), which Flink's `debezium-json` / `canal-json` formats read without
`ignore-parse-errors`. Without them the same writes produce watermarks and DDL messages,
which those formats reject (and the Debezium JDBC sink fails on the watermarks).
tests/interop/ has the consumers themselves read such topics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PRESETS = {
    "flink-debezium-json": {
        "protocol": "debezium",
        "enable-tidb-extension": "false",
        "ddl-on-schema-change": "false",
        "debezium-disable-schema": "true",
    },
    "flink-canal-json": {
        "protocol": "canal-json",
        "enable-tidb-extension": "false",
        "ddl-on-schema-change": "false",
    },
    "debezium-jdbc-sink": {
        "protocol": "debezium",
        "enable-tidb-extension": "false",
        "ddl-on-schema-change": "false",
        "debezium-disable-schema": "false",
    },
}


def write_two_batches(spark: Any, broker: Any, topic: str, checkpoint: Path, **options: str):
    first = spark.createDataFrame(
        [("c", 1, "a", None), ("c", 2, "b", None), ("u", 1, "a2", (1, "a"))],
        "_op string, id bigint, name string, _before struct<id: bigint, name: string>",
    )
    second = spark.createDataFrame(
        [("u", 2, "b2", 7, (2, "b", None)), ("d", 1, "a2", None, None)],
        "_op string, id bigint, name string, qty int, "
        "_before struct<id: bigint, name: string, qty: int>",
    )
    for df in (first, second):
        writer = df.coalesce(1).write.format("ticdc").mode("append")
        settings = {
            "kafka.bootstrap.servers": broker.bootstrap,
            "topic": topic,
            "database": "shop",
            "table": "items",
            "primary-key": "id",
            "partition-num": "1",
            "checkpointLocation": str(checkpoint),
            **options,
        }
        for name, value in settings.items():
            writer = writer.option(name, value)
        writer.save()
    return [json.loads(r.value) for r in broker.consume_all(topic)], broker.consume_all(topic)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_send_only_what_the_consumer_accepts(spark, broker, topics, tmp_path, preset):
    topic = topics(f"preset_{preset.replace('-', '_')}")
    values, records = write_two_batches(spark, broker, topic, tmp_path, **PRESETS[preset])
    assert len(values) == 5  # the five row changes, nothing else
    if PRESETS[preset]["protocol"] == "debezium":
        payloads = [v.get("payload", v) for v in values]
        assert [p["op"] for p in payloads] == ["c", "c", "u", "u", "d"]
        assert all(p["before"] is not None for p in payloads if p["op"] == "u")
        has_schema = PRESETS[preset]["debezium-disable-schema"] == "false"
        assert all(("schema" in v) is has_schema for v in values)
        assert all(json.loads(r.key)["payload"].keys() == {"id"} for r in records)
    else:
        assert [v["type"] for v in values] == ["INSERT", "INSERT", "UPDATE", "UPDATE", "DELETE"]
        assert all(v["old"] for v in values if v["type"] == "UPDATE")
        assert not any(v["isDdl"] for v in values)


@pytest.mark.parametrize("protocol", ["debezium", "canal-json"])
def test_without_the_presets_watermarks_and_ddl_are_sent(spark, broker, topics, tmp_path, protocol):
    topic = topics(f"nopreset_{protocol.replace('-', '_')}")
    values, _ = write_two_batches(
        spark, broker, topic, tmp_path, protocol=protocol, **{"enable-tidb-extension": "true"}
    )
    if protocol == "debezium":
        kinds = [v["payload"].get("op") or "ddl" for v in values]
        assert kinds == ["c", "c", "u", "m", "ddl", "u", "d", "m"]
    else:
        kinds = ["ddl" if v["isDdl"] else v["type"] for v in values]
        assert kinds == [
            "INSERT",
            "INSERT",
            "UPDATE",
            "TIDB_WATERMARK",
            "ddl",
            "UPDATE",
            "DELETE",
            "TIDB_WATERMARK",
        ]

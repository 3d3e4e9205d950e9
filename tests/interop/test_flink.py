"""Flink reads our topics straight from Kafka: `debezium-json` (with and without the schema
part), `canal-json` (TiCDC's watermarks included), and `avro-confluent` and
`debezium-avro-confluent` against Apicurio. Each changelog Flink produces (+I, -U, +U, -D)
has the input's values, ops and order per key, and applied to an empty table gives the
source table. One PyFlink job (one JVM, in a child process: tests/support/flink.py) reads
all five topics."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.changelog import apply, expected_per_key, from_row_kinds, per_key, source_table
from tests.support.consumers import CONSUMERS, Consumer
from tests.support.flink import (
    AVRO_REGISTRY_VERSION,
    KAFKA_CONNECTOR_VERSION,
    FlinkRun,
    FlinkTable,
    read_changelogs,
)

pytestmark = pytest.mark.interop

# name -> (consumer, options beyond the consumer's, topic)
READS: dict[str, tuple[Consumer, dict[str, str], str]] = {
    "debezium_json": (CONSUMERS["flink-debezium-json"], {}, "interop_flink_debezium"),
    "debezium_json_payload_only": (
        CONSUMERS["flink-debezium-json"],
        {"debezium-disable-schema": "true"},
        "interop_flink_debezium_payload",
    ),
    "canal_json": (CONSUMERS["flink-canal-json"], {}, "interop_flink_canal"),
    "avro_confluent": (
        CONSUMERS["flink-avro-confluent"],
        {"topic": "interop_flink_{schema}_{table}"},
        "interop_flink_shop_items",
    ),
    "debezium_avro_confluent": (
        CONSUMERS["flink-debezium-avro-confluent"],
        {},
        "interop_flink_debezium_avro",
    ),
}


def _table(name: str, topic: str, settings: dict[str, str], bootstrap: str) -> FlinkTable:
    options = {
        "connector": "kafka",
        "topic": topic,
        "properties.bootstrap.servers": bootstrap,
        "properties.group.id": "interop-flink",
        "scan.bounded.mode": "latest-offset",  # the query ends at the ends of the topic
        **settings,
    }
    key = ""
    if options["connector"] == "kafka":
        options["scan.startup.mode"] = "earliest-offset"
    else:  # upsert-kafka reads from the beginning, keyed by the primary key
        key = ", PRIMARY KEY (id) NOT ENFORCED"
    with_ = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    ddl = f"CREATE TABLE {name} (id BIGINT, name STRING, amount DECIMAL(10, 2){key}) WITH ({with_})"
    return FlinkTable(name, ddl, f"SELECT id, name, amount FROM {name}")


@pytest.fixture(scope="module")
def flink(write_topic: Any, kafka: Any, apicurio: Any) -> FlinkRun:
    tables = []
    for name, (consumer, extra, topic) in READS.items():
        options = {**consumer.options, **extra}
        options = {k: v.replace("<registry>", apicurio.url) for k, v in options.items()}
        write_topic(options.pop("topic", topic), options)
        settings = consumer.settings_for(registry=apicurio.url)
        tables.append(_table(name, topic, settings, kafka.bootstrap))
    return read_changelogs(tables)


@pytest.mark.parametrize("name", READS)
def test_flink_changelog_is_the_input(flink: FlinkRun, announce: Any, name: str) -> None:
    consumer = READS[name][0]
    announce(
        f"Flink {flink.version} {consumer.settings.get('connector', 'kafka')} + "
        f"{consumer.settings.get('format') or consumer.settings['value.format']}: "
        f"flink-sql-connector-kafka {KAFKA_CONNECTOR_VERSION}, "
        f"flink-sql-avro-confluent-registry {AVRO_REGISTRY_VERSION}"
    )
    changes = from_row_kinds(flink.changelogs[name])
    assert per_key(changes) == expected_per_key()
    assert apply(changes) == source_table()

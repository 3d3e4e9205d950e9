"""Debezium's JDBC sink connector, in Kafka Connect standalone, applies the sink's
`protocol=debezium` topic to PostgreSQL: after inserts, updates (one changing the primary
key) and deletes, the PostgreSQL table is the source table. The connector, Connect and
PostgreSQL are started by the test (tests/support/kafka_connect.py, postgres.py) and
stopped after it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.changelog import make_row, source_table
from tests.support.consumers import CONSUMERS
from tests.support.kafka_connect import KafkaConnect
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.interop

CONSUMER = CONSUMERS["debezium-jdbc"]


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with PostgresServer() as server:
        yield server


def test_jdbc_sink_applies_the_topic_to_postgresql(
    write_topic: Any, kafka: Any, postgres: PostgresServer, announce: Any
) -> None:
    topic = "interop_jdbc_items"
    ends = write_topic(topic, CONSUMER.options)
    settings = CONSUMER.settings_for(postgres=postgres.jdbc_url)
    worker = {k: v for k, v in settings.items() if k.startswith(("key.", "value."))}
    connector = {k: v for k, v in settings.items() if k not in worker}
    connector |= {
        "name": "interop-jdbc",
        "tasks.max": "1",
        "topics": topic,
        "connection.username": postgres.user,
        "connection.password": "",
    }
    with KafkaConnect(kafka.bootstrap, connector, worker) as connect:
        connect_version, plugin_version = connect.versions()
        announce(
            f"Debezium JDBC sink connector {plugin_version} on Kafka Connect "
            f"{connect_version}, into PostgreSQL {postgres.version()}"
        )
        connect.wait_until_consumed({topic: ends})

    rows = postgres.query(f"SELECT id, name, amount FROM {topic}")
    assert {r["id"]: make_row(r["id"], r["name"], r["amount"]) for r in rows} == source_table()
    columns = postgres.query(
        "SELECT column_name, data_type FROM information_schema.columns "
        f"WHERE table_name = '{topic}'"
    )
    # The connector creates the table from the envelope's schema: TiCDC's DECIMAL is a double.
    assert {c["column_name"]: c["data_type"] for c in columns} == {
        "id": "bigint",
        "name": "text",
        "amount": "double precision",
    }

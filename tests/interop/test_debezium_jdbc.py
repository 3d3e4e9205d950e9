"""Debezium's JDBC sink connector, in Kafka Connect standalone, applies the sink's
`protocol=debezium` topic to PostgreSQL: after inserts, updates (one changing the primary
key) and deletes, then a batch that adds a column (the sink sends its schema-change
message first), the PostgreSQL table is the source table. The connector, Connect and
PostgreSQL are started by the test (tests/support/kafka_connect.py, postgres.py) and
stopped after it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.support.changelog import make_row, source_table
from tests.support.consumers import CONSUMERS
from tests.support.kafka_connect import KafkaConnect
from tests.support.postgres import PostgresServer
from tests.support.tables import CHANGES
from ticdc_sink import tso

pytestmark = pytest.mark.interop

CONSUMER = CONSUMERS["debezium-jdbc"]
TOPIC = "interop_jdbc_items"


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with PostgresServer() as server:
        yield server


def _add_a_column(spark: Any, kafka: Any, checkpoint: Path) -> dict[int, dict[str, Any]]:
    """A second batch with a new column `note`: an UPDATE of id 1 and an INSERT of id 40;
    the table it leaves (the source table with `note`)."""
    ts = tso.compose(tso.physical_ms(max(c[1] for c in CHANGES)) + 1)
    rows = [
        ("u", ts, 1, "n1", Decimal("1.50"), "first", (1, "n1", Decimal("1.50"), None)),
        ("c", ts, 40, "n40", Decimal("40.00"), "new", None),
    ]
    frame = spark.createDataFrame(
        rows,
        "_op string, _commit_ts bigint, id bigint, name string, amount decimal(10,2), "
        "note string, _before struct<id: bigint, name: string, amount: decimal(10,2), "
        "note: string>",
    ).coalesce(1)
    settings = {
        "kafka.bootstrap.servers": kafka.bootstrap,
        "topic": TOPIC,
        "database": "shop",
        "table": "items",
        "primary-key": "id",
        "partition": "index-value",
        "checkpointLocation": str(checkpoint),
        **CONSUMER.options,
    }
    frame.write.format("ticdc").mode("append").options(**settings).save()
    table = {key: {**row, "note": None} for key, row in source_table().items()}
    table[1]["note"] = "first"
    table[40] = {**make_row(40, "n40", "40.00"), "note": "new"}
    return table


def test_jdbc_sink_applies_the_topic_to_postgresql(
    spark: Any,
    write_topic: Any,
    kafka: Any,
    postgres: PostgresServer,
    announce: Any,
    tmp_path: Path,
) -> None:
    write_topic(TOPIC, {**CONSUMER.options, "checkpointLocation": str(tmp_path)})
    expected = _add_a_column(spark, kafka, tmp_path)
    ends = kafka.end_offsets(TOPIC)
    values = [json.loads(r.value) for r in kafka.consume_all(TOPIC)]
    assert any("ddl" in v["payload"] for v in values)  # the schema change's message

    settings = CONSUMER.settings_for(postgres=postgres.jdbc_url)
    worker = {k: v for k, v in settings.items() if k.startswith(("key.", "value."))}
    connector = {k: v for k, v in settings.items() if k not in worker}
    connector |= {
        "name": "interop-jdbc",
        "tasks.max": "1",
        "topics": TOPIC,
        "connection.username": postgres.user,
        "connection.password": "",
    }
    with KafkaConnect(kafka.bootstrap, connector, worker) as connect:
        connect_version, plugin_version = connect.versions()
        announce(
            f"Debezium JDBC sink connector {plugin_version} on Kafka Connect "
            f"{connect_version}, into PostgreSQL {postgres.version()}"
        )
        connect.wait_until_consumed({TOPIC: ends})

    rows = postgres.query(f"SELECT id, name, amount, note FROM {TOPIC}")
    got = {r["id"]: {**make_row(r["id"], r["name"], r["amount"]), "note": r["note"]} for r in rows}
    assert got == expected
    columns = postgres.query(
        "SELECT column_name, data_type FROM information_schema.columns "
        f"WHERE table_name = '{TOPIC}'"
    )
    # The connector creates the table from the envelope's schema: TiCDC's DECIMAL is a double.
    assert {c["column_name"]: c["data_type"] for c in columns} == {
        "id": "bigint",
        "name": "text",
        "amount": "double precision",
        "note": "text",
    }

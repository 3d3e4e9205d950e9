"""The scripts of examples/ against the run's Apache Kafka, in the run's Spark session
(each example's `main(spark, bootstrap_servers, topic)`, which its `__main__` calls with a
session of its own): what each reports is compared with what it wrote, and the topic is
read again here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.examples import EXAMPLES, load

pytestmark = pytest.mark.integration


def _read(spark, broker, topic: str, **options: str):
    reader = spark.read.format("ticdc").option("kafka.bootstrap.servers", broker.bootstrap)
    return reader.option("topic", topic).options(**options).load()


def test_batch_backfill(spark, broker, topics) -> None:
    example = load("batch_backfill")
    prefix = topics("backfill")
    counts = example.main(spark, broker.bootstrap, prefix)
    rows = example.ROWS
    assert counts == {"written": rows, "read": rows, "inserts": rows, "commit_ts": 1}
    read = _read(spark, broker, f"{prefix}_shop_orders")
    assert read.schema["amount"].metadata["mysql_type"] == "decimal(10,2)"


def test_streaming_cdc(spark, broker, topics) -> None:
    example = load("streaming_cdc")
    prefix = topics("cdc")
    counts = example.main(spark, broker.bootstrap, prefix)
    ops = [change[2] for changes in example.ROUNDS for change in changes]
    assert counts == {
        "inserts": ops.count("INSERT"),
        "updates": ops.count("UPDATE"),
        "deletes": ops.count("DELETE"),
        "with_before": ops.count("UPDATE"),
        "commit_ts": len(example.ROUNDS),
    }
    read = _read(spark, broker, f"{prefix}_shop_users")
    renamed = read.where("_op = 'UPDATE'").select("name", "_before.name").collect()
    assert sorted(tuple(row) for row in renamed) == [
        (f"user-{i}-renamed", f"user-{i}") for i in range(1, 6)
    ]


def test_read_then_write(spark, broker, topics) -> None:
    example = load("read_then_write")
    prefix = topics("rtw")
    counts = example.main(spark, broker.bootstrap, prefix)
    changes = len(example.CHANGES)
    assert counts == {"read": changes, "written": changes, "different": 0}
    copied = _read(spark, broker, f"{prefix}_canal", protocol="canal-json")
    assert copied.schema["fruit"].metadata["mysql_type"].startswith("varchar")
    assert sorted(copied.select("id", "qty", "_op").collect()) == sorted(
        (i, q, op) for i, _, q, op, _ in example.CHANGES
    )


def test_kafka_source_migration(spark, broker, topics) -> None:
    example = load("kafka_source_migration")
    topic = topics("migration")
    counts = example.main(spark, broker.bootstrap, topic)
    rows = example.ROWS
    assert counts == {"rows": rows, "score_total": sum(2 * i for i in range(rows)), "partitions": 3}
    # The Kafka source's options, as the example gives them, are read options here.
    options = example.kafka_options(broker.bootstrap, topic)
    read = spark.read.format("ticdc").options(**options).option("protocol", "canal-json").load()
    assert "_headers" in read.columns and read.count() == rows


@pytest.mark.parametrize(
    "name", ["batch_backfill", "streaming_cdc", "read_then_write", "kafka_source_migration"]
)
def test_every_example_takes_bootstrap_servers(name: str) -> None:
    # Run as a script, each example takes --bootstrap-servers (no Spark started: --help).
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--bootstrap-servers" in done.stdout

"""The interop tests' fixtures: Spark with its own Kafka connector, the topic writer every
test shares, and the consumers' names and versions, printed by each test and listed at the
end of the run.

Spark: the run's one session (tests/conftest.py) with Spark's Kafka connector and
spark-avro added (`tests/support/spark_kafka.py`). Kafka and the registry: the run's
Apache Kafka and Apicurio (`kafka`, `apicurio`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

_READ: list[str] = []


@pytest.fixture(scope="session")
def spark_kafka(spark: Any) -> Iterator[Any]:
    """The session with `format("kafka")` and `from_avro` on its class path."""
    from tests.support.spark_kafka import add_to_session

    add_to_session(spark)
    yield spark


@pytest.fixture(scope="session")
def announce() -> Callable[[str], None]:
    """`announce("Flink 2.2.1 ...")`: print the consumer a test runs, and list it at the
    end of the run."""

    def record(consumer: str) -> None:
        print(f"consumer: {consumer}", flush=True)
        if consumer not in _READ:
            _READ.append(consumer)

    return record


@pytest.fixture(scope="session")
def write_topic(spark: Any, kafka: Any) -> Callable[..., dict[int, int]]:
    """`write_topic(topic, options)`: `tables.CHANGES` written by `format("ticdc")` to a
    new 3-partition topic of the run's Kafka with `options` (one task, so each key's
    changes keep their order; `index-value` spreads the keys); returns the topic's end
    offsets. A topic expression's `{schema}` and `{table}` are `shop` and `items`."""
    from tests.support.tables import CHANGES, CHANGES_SCHEMA

    def write(topic: str, options: dict[str, str]) -> dict[int, int]:
        name = topic.replace("{schema}", "shop").replace("{table}", "items")
        kafka.create_topic(name, 3)
        frame = spark.createDataFrame(CHANGES, CHANGES_SCHEMA).coalesce(1)
        settings = {
            "kafka.bootstrap.servers": kafka.bootstrap,
            "topic": topic,
            "database": "shop",
            "table": "items",
            "primary-key": "id",
            "partition": "index-value",
            **options,
        }
        frame.write.format("ticdc").mode("append").options(**settings).save()
        return dict(kafka.end_offsets(name))

    return write


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _READ:
        terminalreporter.section("consumers that read our topics")
        for consumer in _READ:
            terminalreporter.write_line(consumer)

"""Shared fixtures: one local Spark session per run; one Apache Kafka broker and one
Apicurio Registry per run (`kafka`, `apicurio`; fetched from Maven Central on first use);
one Tansu broker and one test schema registry per test module (`broker`, `registry`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from pyspark.sql import SparkSession

    import ticdc_sink

    session = (
        SparkSession.builder.master("local[2]")
        .appName("ticdc-sink-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    # Registered explicitly: it keeps `register` covered, and an editable install hides
    # `pyspark_ticdc` from PySpark's scan; test_auto_registration.py proves the scan.
    ticdc_sink.register(session)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def broker() -> Iterator[object]:
    from tests.support.broker import TansuBroker

    with TansuBroker() as running:
        yield running


@pytest.fixture(scope="module")
def registry() -> Iterator[object]:
    """The test Schema Registry (tests/support/registry.py) on a free loopback port."""
    from tests.support.registry import TestSchemaRegistry

    with TestSchemaRegistry() as running:
        yield running


@pytest.fixture(scope="session")
def kafka() -> Iterator[object]:
    """Apache Kafka 4.x, single node, KRaft (tests/support/kafka.py), for the whole run."""
    from tests.support.kafka import KafkaBroker

    with KafkaBroker() as running:
        yield running


@pytest.fixture(scope="session")
def apicurio() -> Iterator[object]:
    """Apicurio Registry 3.x in memory (tests/support/apicurio.py), for the whole run; its
    `url` is the Confluent-compatible API."""
    from tests.support.apicurio import ApicurioRegistry

    with ApicurioRegistry() as running:
        yield running

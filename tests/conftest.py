"""Shared fixtures of the integration tests.

| fixture | scope | what |
| --- | --- | --- |
| `spark` | run | a local Spark session (`local[2]`), `ticdc` registered |
| `broker` (`kafka`) | run | Apache Kafka 4.x, one node, KRaft (tests/support/kafka.py) |
| `registry` (`apicurio`) | run | Apicurio Registry 3.x, its Confluent-compatible API, |
|  |  | compatibility BACKWARD (tests/support/apicurio.py) |
| `topics` | test | topic names no other test uses (tests/support/topics.py) |
| `tansu` | module | Tansu, the demo's embedded broker (tests/support/broker.py), for |
|  |  | the few tests that keep `ticdc-sink demo`'s path honest |

Kafka and Apicurio are fetched from Maven Central on first use (tests/support/maven.py)
and started when a test first asks for them; every test shares them, so a test names its
topics with `topics`. The in-house registry (tests/support/registry.py) serves the tests
that need what Apicurio cannot give (basic auth, injected faults, request counts), each
starting its own."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

# The Hypothesis profile (quick, or thorough in CI) is loaded before any test module.
import tests.support.hypothesis_profiles  # noqa: F401

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


@pytest.fixture(scope="session")
def broker(kafka: object) -> object:
    """The integration tests' broker: the run's Kafka."""
    return kafka


@pytest.fixture(scope="session")
def registry(apicurio: object) -> object:
    """The integration tests' schema registry: the run's Apicurio."""
    return apicurio


@pytest.fixture
def topics() -> object:
    """Names for this test's topics (`topics("orders")`), unique in the run."""
    from tests.support.topics import TopicNames

    return TopicNames()


@pytest.fixture(scope="module")
def tansu() -> Iterator[object]:
    """Tansu on a free loopback port, as `ticdc-sink demo` starts it."""
    from tests.support.broker import TansuBroker

    with TansuBroker() as running:
        yield running

"""The mirror's lakehouse tests: one Spark session per run with Delta Lake and Apache
Iceberg (a Hadoop catalog `lake` in a temporary directory), `tests/support/lakehouse.py`.

Delta and Iceberg support PySpark up to 4.2 and 4.1 (`PACKAGES` in
`examples/mirror_lakehouse.py`), so these tests run in an environment of such a PySpark
(`.ci/run`, part `mirror`), in a pytest process of their own: a Spark session another test
started has no lakehouse jars, and these tests are skipped then, saying so."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.support.lakehouse import formats, lakehouse_session, load_example


@pytest.fixture(scope="session")
def example() -> ModuleType:
    return load_example()


@pytest.fixture(scope="session")
def lakehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, tuple[str, ...]]]:
    """(session, formats): a Spark session with the table formats this PySpark has."""
    import pyspark
    from pyspark import SparkContext

    available = formats()
    if not available:
        pytest.skip(f"no Delta or Iceberg release supports PySpark {pyspark.__version__} yet")
    if SparkContext._active_spark_context is not None:
        pytest.skip("a Spark session without lakehouse jars runs: run tests/mirror on its own")
    session = lakehouse_session(tmp_path_factory.mktemp("lakehouse"))
    yield session, available
    session.stop()

"""Spark sessions with Delta Lake and Apache Iceberg for the mirror's tests and benchmark:
the formats' jars for the running PySpark (the versions `examples/mirror_lakehouse.py`
names in `PACKAGES`), fetched from Maven Central with `tests/support/maven.py`.

| function | gives |
| --- | --- |
| `load_example()` | the example module `examples/mirror_lakehouse.py` |
| `formats()` | the table formats some release supports for the running PySpark |
| `lakehouse_session(warehouse)` | a `local[2]` session with them (Iceberg's catalog: `lake`) |
| `run_to_end(start)` | a query started by `start()` awaited, restarted if its Python |
|  | source's process did not connect back in time (a loaded machine) |
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.support.maven import classpath

__all__ = ["EXAMPLE", "formats", "lakehouse_session", "load_example", "run_to_end"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mirror_lakehouse.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mirror_lakehouse", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _minor() -> str:
    import pyspark

    return ".".join(pyspark.__version__.split(".")[:2])


def formats() -> tuple[str, ...]:
    return tuple(sorted(load_example().PACKAGES.get(_minor(), {})))


def lakehouse_session(warehouse: Path) -> Any:
    """A session with every format of `formats()` (none: a RuntimeError).

    Raises:
        MavenError: the jars could not be fetched.
    """
    example = load_example()
    packages = example.PACKAGES.get(_minor(), {})
    if not packages:
        raise RuntimeError(f"no Delta or Iceberg release supports PySpark {_minor()} yet")
    jars: list[str] = []
    for name, coordinate in sorted(packages.items()):
        folder = classpath(f"mirror-{name}-{_minor()}", [coordinate])
        # the formats' own jars: Spark brings Hadoop, Parquet, Jackson, Scala and logging
        jars += [
            str(p)
            for p in sorted(folder.glob("*.jar"))
            if p.name.startswith(("delta-spark", "delta-storage", "iceberg-spark-runtime"))
        ]
    session = example.lakehouse_session(
        warehouse,
        jars=jars,
        formats=tuple(sorted(packages)),
        # a machine shared with other work: Python workers may take long to connect back
        conf={"spark.python.authenticate.socketTimeout": "120s"},
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def run_to_end(start: Callable[[], Any], attempts: int = 3) -> Any:
    """Await the `availableNow` query `start()` starts; the query, once it ended.

    Spark gives a Python stream source's process 10 seconds to connect back when a query
    starts (PythonWorkerFactory, not configurable), which a loaded machine may miss: the
    query then fails before reading anything, and is started again (from its checkpoint).

    Raises:
        StreamingQueryException: the query failed otherwise, or `attempts` times so.
    """
    from pyspark.errors import StreamingQueryException

    for attempt in range(attempts):
        query = start()
        try:
            query.awaitTermination()
            return query
        except StreamingQueryException as exc:
            if "Python worker failed to connect back" not in str(exc) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")

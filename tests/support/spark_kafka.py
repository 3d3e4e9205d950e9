"""Spark's own Kafka connector (`format("kafka")`) and `from_avro`, from Maven Central, for
the interop tests and `benchmarks/bench_read.py`.

PySpark ships neither `spark-sql-kafka-0-10` nor `spark-avro`. `connector_jars()` fetches
the connector of the running PySpark's line with Maven (`tests/support/maven.py`) and
keeps the jars PySpark lacks (`kafka-clients`, `commons-pool2`, the token provider): a jar
PySpark already has under another version (`scala-library`, `hadoop-client-*`, ...) would
put two copies on the class path. `add_to_session(spark)` adds them to a running classic
session with `ADD JAR` (the session's class loader and the calling thread's, which is
where PySpark's JVM calls run), so the tests' one shared session serves; a new session
can take them as `spark.jars` instead.

Which connector serves which PySpark line: Maven Central (checked 2026-11-27) serves
`spark-sql-kafka-0-10_2.13` up to 4.2.0, but its dependency
`spark-token-provider-kafka-0-10_2.13` and `spark-avro_2.13` only at some releases (4.0.0,
4.1.1, 4.2.0; not 4.0.1-4.0.4, 4.1.0, 4.1.2, 4.1.3), so each line takes its newest complete
release:

| PySpark | connector and spark-avro | the Spark interop tests pass on |
| --- | --- | --- |
| 4.0.x | 4.0.0 | 4.0.5 (`.ci/run` part interop) |
| 4.1.x | 4.1.1 | 4.1.4 (by hand, 2026-11-27) |
| 4.2.x | 4.2.0 | 4.2.1 (by hand, 2026-11-27) |
| 4.3.x | 4.2.0 (no 4.3.x there) | 4.3.0 (`.ci/run` part interop; `from_avro` in bench_read.py) |

The tests read and write with `format("kafka")` in batch and read a stream of what Spark
wrote with `readStream.format("ticdc")`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.maven import classpath

__all__ = [
    "CONNECTORS",
    "add_to_session",
    "connector_jars",
    "connector_version",
    "ending_offsets",
]

#: PySpark's major.minor -> the version of spark-sql-kafka-0-10_2.13 and spark-avro_2.13.
CONNECTORS: dict[str, str] = {"4.0": "4.0.0", "4.1": "4.1.1", "4.2": "4.2.0", "4.3": "4.2.0"}


def connector_version(pyspark_version: str | None = None) -> str:
    """The Kafka connector's (and spark-avro's) version for a PySpark version (default:
    the installed one).

    Raises:
        LookupError: no connector is known for that PySpark line.
    """
    if pyspark_version is None:
        import pyspark

        pyspark_version = pyspark.__version__
    line = ".".join(pyspark_version.split(".")[:2])
    if line not in CONNECTORS:
        raise LookupError(
            f"no Spark Kafka connector known for PySpark {pyspark_version}; "
            f"tests/support/spark_kafka.py knows {', '.join(CONNECTORS)}"
        )
    return CONNECTORS[line]


def connector_jars(pyspark_version: str | None = None) -> list[Path]:
    """The jars to add to PySpark for `format("kafka")` and `from_avro` (fetched once per
    machine): the connector's and its dependencies PySpark does not ship."""
    import pyspark

    version = connector_version(pyspark_version)
    fetched = classpath(
        f"spark-kafka-{version}",
        [
            f"org.apache.spark:spark-sql-kafka-0-10_2.13:{version}",
            f"org.apache.spark:spark-avro_2.13:{version}",
        ],
    )
    shipped = {_artifact_name(p) for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return sorted(p for p in fetched.glob("*.jar") if _artifact_name(p) not in shipped)


def add_to_session(spark: Any) -> list[Path]:
    """Add the connector's jars to a running classic session (`ADD JAR`); call it from
    the thread that then uses `format("kafka")`."""
    jars = connector_jars()
    for jar in jars:
        spark.sql(f"ADD JAR '{jar}'")
    return jars


def ending_offsets(topic: str, ends: dict[int, int]) -> str:
    """Spark's `endingOffsets` JSON for one topic's end offsets."""
    return json.dumps({topic: {str(p): o for p, o in ends.items()}})


def _artifact_name(jar: Path) -> str:
    """`kafka-clients-3.9.2.jar` -> `kafka-clients`: the name without its version."""
    return jar.stem.rsplit("-", 1)[0]

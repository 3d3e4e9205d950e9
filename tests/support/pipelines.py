"""Spark Declarative Pipelines for the auto CDC test (tests/pipelines/): a local Spark
Connect session whose catalog `cdc` supports MERGE, and a pipeline run as the
`spark-pipelines` CLI runs it.

Auto CDC needs a target table with Spark's row-level operations (DSv2
`SupportsRowLevelOperations`). No table format users deploy has one on PySpark 4.2: Delta
4.4's tables refuse (`AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE`, format: delta) and Iceberg
publishes no runtime for Spark 4.2. So the test's target is Spark's own in-memory test
catalog (`InMemoryRowLevelOperationTableCatalog`, in `spark-catalyst`'s test jar on Maven
Central), its tables shared by every session of the JVM (`java/SharedRowLevelCatalog.java`,
compiled here with `javac`): a pipeline runs each flow in a session of its own.

| function | gives |
| --- | --- |
| `catalog_jars()` | the test catalog's jars for the running PySpark |
| `connect_session(jars)` | a `local[2]` Spark Connect session with the catalog `cdc` |
| `run_pipeline(spark, spec)` | one run of the pipeline of a spec file, in that session |
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.support.maven import CACHE, MavenError, artifact

__all__ = ["CATALOG", "catalog_jars", "connect_session", "run_pipeline"]

CATALOG = "cdc"
_SHIM = Path(__file__).resolve().parent / "java" / "SharedRowLevelCatalog.java"


def catalog_jars() -> list[Path]:
    """Spark's test jar (catalyst) and the shared catalog built on it.

    Raises:
        MavenError: the jar could not be fetched, or `javac` is missing or failed.
    """
    import pyspark

    version = pyspark.__version__
    tests = artifact(f"org.apache.spark:spark-catalyst_2.13:{version}:jar:tests")
    target = CACHE / f"pipelines-catalog-{version}"
    jar = target / "shared-catalog.jar"
    if jar.exists():
        return [tests, jar]
    javac, jar_tool = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar_tool is None:
        raise MavenError("cannot build the test catalog: no `javac` and `jar` on PATH (a JDK)")
    spark_jars = Path(pyspark.__file__).parent / "jars"
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".pipelines-catalog-", dir=CACHE) as work:
        classes, out = Path(work) / "classes", Path(work) / "out"
        out.mkdir()
        for command in (
            [javac, "-d", str(classes), "-cp", f"{spark_jars}/*:{tests}", str(_SHIM)],
            [jar_tool, "cf", str(out / jar.name), "-C", str(classes), "."],
        ):
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise MavenError(f"cannot build the test catalog:\n{done.stdout}{done.stderr}")
        try:
            out.rename(target)
        except OSError:
            if not jar.exists():  # not a concurrent build that finished first
                raise
    return [tests, jar]


def connect_session(jars: list[Path]) -> Any:
    """A local Spark Connect session (its server in a JVM of its own) with the catalog
    `cdc`; Python workers get 120 s to connect back (a machine shared with other work)."""
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.remote("local[2]")
        .config("spark.driver.extraClassPath", ":".join(str(j) for j in jars))
        .config(f"spark.sql.catalog.{CATALOG}", "ticdc.tests.SharedRowLevelCatalog")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.python.authenticate.socketTimeout", "120s")
        # a flow whose Python source did not connect back in time is retried
        .config("spark.sql.pipelines.maxFlowRetryAttempts", "6")
        .getOrCreate()
    )


def run_pipeline(spark: Any, spec_path: Path) -> None:
    """Run the pipeline of `spec_path` once, as `spark-pipelines run --spec` does
    (pyspark/pipelines/cli.py's `run`), in `spark` instead of a session of its own, which
    the CLI stops at the end (and the test catalog's tables with it).

    Raises:
        pyspark.errors.PySparkException: the run failed (the error of its first failing flow).
    """
    from pyspark.pipelines.cli import load_pipeline_spec, register_definitions
    from pyspark.pipelines.spark_connect_graph_element_registry import (
        SparkConnectGraphElementRegistry,
    )
    from pyspark.pipelines.spark_connect_pipeline import (
        create_dataflow_graph,
        handle_pipeline_events,
        start_run,
    )

    spec = load_pipeline_spec(spec_path)
    for key, value in spec.configuration.items():
        spark.conf.set(key, value)
    graph = create_dataflow_graph(
        spark,
        default_catalog=spec.catalog,
        default_database=spec.database,
        sql_conf=spec.configuration,
    )
    registry = SparkConnectGraphElementRegistry(spark, graph)
    register_definitions(spec_path, registry, spec, spark, graph)
    events = start_run(
        spark,
        graph,
        full_refresh=[],
        full_refresh_all=False,
        refresh=[],
        dry=False,
        storage=spec.storage,
    )
    handle_pipeline_events(events)

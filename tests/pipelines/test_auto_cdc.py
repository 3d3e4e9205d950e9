"""Spark Declarative Pipelines' auto CDC flow over `readStream.format("ticdc")`, end to end:
the pipeline of `examples/auto_cdc` (the file docs/guides/mirror.md shows), run as
`spark-pipelines run` runs it, over a topic written with `format("ticdc")` from the
mirror example's TiDB table (`Source` in examples/mirror_lakehouse.py: inserts, updates,
deletes, key-changing UPDATEs, a key deleted and taken again in one transaction). After
each run the SCD type 1 table equals the TiDB table as of the last commit written.

PySpark 4.2's auto CDC has SCD type 1 only (`stored_as_scd_type` 2 is refused by its
API), and its target must support MERGE: the test's catalog is Spark's in-memory one
(tests/support/pipelines.py says why). Run on its own, in a pytest process of its own
(CONTRIBUTING.md says how; CI does not run it): its Spark Connect server carries that
catalog's jars. tests/unit/project/test_auto_cdc_docs.py checks the guide shows this pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.lakehouse import load_example

pytestmark = pytest.mark.pipelines

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "auto_cdc"
# the auto CDC flow's own column in its target: the sequence of each row's last upsert and
# delete (pyspark.pipelines' Scd1 processor)
METADATA = "__spark_autocdc_metadata"


@pytest.fixture(scope="module")
def session() -> Iterator[Any]:
    from pyspark import SparkContext, pipelines

    if not hasattr(pipelines, "create_auto_cdc_flow"):
        pytest.skip("this PySpark has no auto CDC flow (PySpark 4.2 and newer)")
    if SparkContext._active_spark_context is not None:
        pytest.skip("a Spark session runs: run tests/pipelines on its own")
    from tests.support.pipelines import catalog_jars, connect_session

    spark = connect_session(catalog_jars())
    yield spark
    spark.stop()


def _write(spark: Any, bootstrap: str, topic: str, source: Any, rows: list[dict[str, Any]]) -> None:
    """Change rows to Kafka as TiCDC sends them by default: a key-changing UPDATE as a
    DELETE of the old key and an INSERT of the new one, at one commit ts."""
    schema = source.schema()
    frame = spark.createDataFrame(
        [tuple(r.get(f.name) for f in schema.fields) for r in rows], schema
    ).coalesce(1)  # one task: each key's changes in commit-ts order
    (
        frame.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("database", "shop")
        .option("table", "items")
        .option("primary-key", "id")
        .option("partition", "index-value")
        .option("partition-num", "3")
        .save()
    )


def _spec(tmp_path: Path, bootstrap: str, topic: str) -> Path:
    """The example project in `tmp_path`, its spec pointed at the run's Kafka, topic,
    storage and the test catalog."""
    import yaml

    from tests.support.pipelines import CATALOG

    project = tmp_path / "project"
    (project / "transformations").mkdir(parents=True)
    source = (PROJECT / "transformations" / "items.py").read_text()
    (project / "transformations" / "items.py").write_text(source)
    spec = yaml.safe_load((PROJECT / "spark-pipeline.yml").read_text())
    spec["storage"] = (tmp_path / "storage").as_uri()
    spec["catalog"] = CATALOG
    spec["configuration"] = {
        "ticdc.example.bootstrap-servers": bootstrap,
        "ticdc.example.topic": topic,
    }
    path = project / "spark-pipeline.yml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _table(spark: Any, columns: list[str]) -> list[dict[str, Any]]:
    from tests.support.pipelines import CATALOG

    frame = spark.table(f"{CATALOG}.shop.items")
    return [r.asDict() for r in frame.select(*columns).orderBy("id").collect()]


def test_auto_cdc_keeps_the_table_over_two_runs(session: Any, kafka: Any, tmp_path: Path) -> None:
    example: ModuleType = load_example()
    topic = "auto_cdc_items"
    kafka.create_topic(topic, 3)
    spec = _spec(tmp_path, kafka.bootstrap, topic)
    session.sql("CREATE NAMESPACE IF NOT EXISTS cdc.shop")  # the spec's catalog and database
    source = example.Source()
    ts = 450_000_000_000_000_000
    from tests.support.pipelines import run_pipeline

    # rounds 1 and 2 of the mirror example, then round 3 (no column is added in them)
    for rounds in (example.ROUNDS[:2], example.ROUNDS[2:3]):
        rows: list[dict[str, Any]] = []
        for transactions in rounds:
            for steps in transactions:
                ts += 1 << 18
                rows += source.apply(ts, steps)
        _write(session, kafka.bootstrap, topic, source, rows)
        run_pipeline(session, spec)
        assert _table(session, source.columns) == source.as_of(ts)

    target = session.table("cdc.shop.items")
    assert target.columns == [*source.columns, METADATA]

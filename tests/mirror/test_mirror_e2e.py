"""The end-to-end example (`examples/mirror_lakehouse.py`) as the test of the mirror: a
TiCDC-shaped stream (inserts, updates, key-changing updates, deletes, a replay, a failure
between a MERGE and the checkpoint and the restart after it, an added column and the new
query it takes) written with `format("ticdc")` to Apache Kafka, read with
`readStream.format("ticdc")` and mirrored into Delta Lake and into Iceberg; after every
micro-batch the mirror equals the source table as of the resolved ts the mirror records,
which is the batch's own."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import ticdc_sink.mirror

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_the_mirror_equals_the_source_after_every_micro_batch(
    lakehouse: Any, example: ModuleType, kafka: Any, tmp_path: Path, fmt: str
) -> None:
    spark, formats = lakehouse
    if fmt not in formats:
        pytest.skip(f"no {fmt} release for this PySpark")
    topic = f"mirror_e2e_{fmt}"
    kafka.create_topic(topic, 3)
    result = example.run(spark, kafka.bootstrap, fmt, tmp_path, topic=topic)

    # One check per round: round 2's failed micro-batch was checked only on its re-run.
    assert [c.round for c in result.checks] == [1, 2, 3, 4, 5]
    assert [c.resolved_ts for c in result.checks] == result.round_ts
    assert all(c.equal for c in result.checks), result.checks
    assert result.checks[-1].rows > 0

    target = example.TARGETS[fmt]
    # One commit per micro-batch that changed the table, each recording its resolved ts:
    # the re-run of round 2 and round 3's replay added none, the added column no other.
    commits = ticdc_sink.mirror.history(spark, target, format=fmt)
    assert [c.resolved_ts for c in commits] == result.round_ts
    if fmt == "delta":
        versions = spark.sql(f"DESCRIBE HISTORY {target}").count()
    else:
        versions = spark.sql(f"SELECT * FROM {target}.snapshots").count()
    assert versions == len(result.round_ts)
    assert "note" in spark.table(target).columns
    assert ticdc_sink.mirror.resolved_ts(spark, target, format=fmt) == result.round_ts[-1]
    # each commit reads back as the table it recorded (time travel)
    first = spark.sql(f"SELECT count(*) FROM {target} VERSION AS OF {commits[0].version}")
    assert first.first()[0] == 5  # round 1: six inserts, one delete

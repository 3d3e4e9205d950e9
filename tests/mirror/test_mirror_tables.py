"""The mirror's other promises: many tables of one topic into one table each with one
query (`ticdc_sink.mirror.start`), a column change other than an added column stopping it
with an error naming table, column and change, and a stream that is not
watermark-consistent refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

import ticdc_sink
import ticdc_sink.mirror
from tests.support.lakehouse import run_to_end
from ticdc_sink.errors import ConfigError, InputError, SchemaError

pytestmark = pytest.mark.integration

COLUMNS = [
    StructField("id", LongType()),
    StructField("name", StringType()),
    StructField("qty", IntegerType()),
]
CHANGES = StructType(
    [
        *COLUMNS,
        StructField("_op", StringType()),
        StructField("_commit_ts", LongType()),
        StructField("_database", StringType()),
        StructField("_table", StringType()),
    ]
)
TS = 450_000_000_000_000_000


def test_many_tables_of_one_topic_into_one_table_each_with_one_query(
    lakehouse: Any, kafka: Any, tmp_path: Path
) -> None:
    spark, _ = lakehouse
    ticdc_sink.register(spark)
    topic = "mirror_tables"
    kafka.create_topic(topic, 2)
    rows = [
        (1, "a", 1, "INSERT", TS + 1, "shop", "items"),
        (1, "x", 9, "INSERT", TS + 1, "shop", "stock"),
        (2, "b", 2, "INSERT", TS + 2, "shop", "items"),
        (1, "a", 5, "UPDATE", TS + 3, "shop", "items"),
        (1, "x", 9, "DELETE", TS + 3, "shop", "stock"),
        (3, "y", 3, "INSERT", TS + 4, "shop", "stock"),
    ]
    (
        spark.createDataFrame(rows, CHANGES)
        .coalesce(1)
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .option("primary-key", "id")
        .save()
    )
    stream = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    query = run_to_end(
        lambda: ticdc_sink.mirror.start(
            stream,
            target="mirror_{schema}_{table}",
            keys=["id"],
            checkpoint=str(tmp_path / "checkpoint"),
            trigger={"availableNow": True},
        )
    )
    assert query.exception() is None
    assert sorted(tuple(r) for r in spark.table("mirror_shop_items").collect()) == [
        (1, "a", 5),
        (2, "b", 2),
    ]
    assert [tuple(r) for r in spark.table("mirror_shop_stock").collect()] == [(3, "y", 3)]
    for table in ("mirror_shop_items", "mirror_shop_stock"):
        assert ticdc_sink.mirror.resolved_ts(spark, table) == TS + 4


def test_a_retyped_column_stops_the_mirror_naming_table_column_and_change(
    lakehouse: Any,
) -> None:
    spark, _ = lakehouse
    mirror = ticdc_sink.mirror.MirrorBatch("mirror_retyped", ["id"])
    mirror(spark.createDataFrame([(1, "a", 1, "INSERT", TS + 1, "shop", "t")], CHANGES), 0)
    wider = StructType([StructField("qty", LongType()) if f.name == "qty" else f for f in CHANGES])
    batch = spark.createDataFrame([(2, "b", 2, "INSERT", TS + 2, "shop", "t")], wider)
    with pytest.raises(SchemaError) as caught:
        mirror(batch, 1)
    assert str(caught.value).startswith(
        "ticdc: mirror of shop.t into mirror_retyped: column qty changed from int to bigint"
    )
    assert caught.value.column == "qty"
    assert ticdc_sink.mirror.resolved_ts(spark, "mirror_retyped") == TS + 1


def test_rows_above_the_batch_resolved_ts_are_refused(lakehouse: Any, tmp_path: Path) -> None:
    # consistency=none: a batch may end inside a commit ts, which the mirror cannot record
    spark, _ = lakehouse
    offsets = {"t": {"0": 3}, "ticdc:resolved-ts": {"t": {"0": TS + 1}}}
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "0").write_text(f"v1\n{{}}\n{json.dumps(offsets)}\n")
    mirror = ticdc_sink.mirror.MirrorBatch("mirror_none", ["id"], checkpoint=str(tmp_path))
    batch = spark.createDataFrame([(1, "a", 1, "INSERT", TS + 2, "shop", "t")], CHANGES)
    with pytest.raises(ConfigError, match="not watermark-consistent") as caught:
        mirror(batch, 0)
    assert caught.value.option == "consistency"
    assert not spark.catalog.tableExists("mirror_none")


def test_start_refuses_a_batch_frame(lakehouse: Any, tmp_path: Path) -> None:
    spark, _ = lakehouse
    frame = spark.createDataFrame([], CHANGES)
    with pytest.raises(ConfigError, match="not a stream"):
        ticdc_sink.mirror.start(frame, target="t", keys=["id"], checkpoint=str(tmp_path))


def test_a_failing_batch_fails_the_query(lakehouse: Any, kafka: Any, tmp_path: Path) -> None:
    # a key column the stream lacks: the query stops with the mirror's error
    spark, _ = lakehouse
    ticdc_sink.register(spark)
    topic = "mirror_bad_key"
    kafka.create_topic(topic, 1)
    (
        spark.createDataFrame([(1, "a", 1, "INSERT", TS + 1, "shop", "k")], CHANGES)
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .option("primary-key", "id")
        .save()
    )
    stream = (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    with pytest.raises(StreamingQueryException, match="key column sku is not a column"):
        run_to_end(
            lambda: ticdc_sink.mirror.start(
                stream,
                target="mirror_bad_key",
                keys=["sku"],
                checkpoint=str(tmp_path / "checkpoint"),
                trigger={"availableNow": True},
            )
        )


def test_rows_without_a_commit_ts_are_refused(lakehouse: Any) -> None:
    # an Avro DELETE tombstone reads with _commit_ts 0: skipping it would keep the row
    spark, _ = lakehouse
    mirror = ticdc_sink.mirror.MirrorBatch("mirror_no_ts", ["id"])
    batch = spark.createDataFrame(
        [(1, "a", 1, "INSERT", TS + 1, "shop", "t"), (1, None, None, "DELETE", 0, "shop", "t")],
        CHANGES,
    )
    with pytest.raises(InputError, match="1 rows of shop.t have no _commit_ts") as caught:
        mirror(batch, 0)
    assert caught.value.column == "_commit_ts"
    assert not spark.catalog.tableExists("mirror_no_ts")


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_another_session_sees_every_mirror_commit(lakehouse: Any, fmt: str) -> None:
    # A streaming query commits from a session of its own (a clone of the one that started
    # it), and Iceberg's catalog caches a table per session: reading the resolved ts in
    # the starting session, or checking a re-run batch for replays in another one, must
    # see the newest commit. The sessions' Iceberg caches never expire here (by default
    # an entry lives 30 s after its last use), so the test does not depend on timing.
    spark, formats = lakehouse
    if fmt not in formats:
        pytest.skip(f"no {fmt} release for this PySpark")
    query, user = spark.newSession(), spark.newSession()
    for session in (query, user):
        session.conf.set("spark.sql.catalog.lake.cache.expiration-interval-ms", "-1")
    target = {"delta": "mirror_sessions", "iceberg": "lake.mirror.sessions"}[fmt]

    def batch(session: Any, *rows: tuple[Any, ...]) -> Any:
        return session.createDataFrame([(*r, "shop", "t") for r in rows], CHANGES)

    mirror = ticdc_sink.mirror.MirrorBatch(target, ["id"], format=fmt)
    mirror(batch(query, (1, "a", 1, "INSERT", TS + 1), (2, "b", 2, "INSERT", TS + 1)), 0)
    assert ticdc_sink.mirror.resolved_ts(user, target, format=fmt) == TS + 1

    mirror(batch(query, (1, "a", 5, "UPDATE", TS + 2)), 1)
    assert ticdc_sink.mirror.resolved_ts(user, target, format=fmt) == TS + 2
    assert sorted(tuple(r) for r in user.table(target).collect()) == [(1, "a", 5), (2, "b", 2)]

    # the other way round: a commit from `user`, then a batch in `query` holding it again
    mirror(batch(user, (2, None, None, "DELETE", TS + 3)), 2)
    mirror(batch(query, (2, None, None, "DELETE", TS + 3)), 3)
    commits = ticdc_sink.mirror.history(query, target, format=fmt)
    assert [c.resolved_ts for c in commits] == [TS + 1, TS + 2, TS + 3]
    assert [tuple(r) for r in query.table(target).collect()] == [(1, "a", 5)]

"""The mirror's batch planning (`ticdc_sink.mirror.plan`) against the oracle: transactions
on a table in memory (`tests/support/changes.py`) are cut into micro-batches, each batch's
change rows shuffled (rows of different Kafka partitions come in no order) and, some of
the time, an earlier batch's rows replayed into it; each batch is planned with
`plan_changes` in Spark and applied to a dict with MERGE's rules, and after every batch
the dict equals the table as of the batch's last commit ts.

Needs Spark, no table format: the shared `local[2]` session."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import PySparkException
from pyspark.sql.types import LongType, StringType, StructField, StructType

from tests.support.changes import COLUMNS, SourceTable, Step, steps
from tests.support.hypothesis_profiles import examples
from ticdc_sink.errors import SchemaError
from ticdc_sink.mirror.plan import DELETE_FLAG, plan_changes

pytestmark = pytest.mark.integration

TABLE = StructType(
    [
        StructField("id", LongType()),
        StructField("name", StringType()),
        StructField("qty", LongType()),
    ]
)
SCHEMA = StructType(
    [
        *TABLE.fields,
        StructField("_op", StringType()),
        StructField("_commit_ts", LongType()),
        StructField("_before", TABLE),
        StructField("_database", StringType()),
        StructField("_table", StringType()),
    ]
)


def frame(spark: Any, rows: list[dict[str, Any]]) -> Any:
    tuples = [
        (
            *(r[c] for c in COLUMNS),
            r["_op"],
            r["_commit_ts"],
            tuple(r["_before"][c] for c in COLUMNS) if r["_before"] else None,
            "shop",
            "items",
        )
        for r in rows
    ]
    return spark.createDataFrame(tuples, SCHEMA)


def merge(target: dict[int, tuple[Any, ...]], planned: list[Any]) -> None:
    """MERGE's rules on a dict: matched and flagged: delete; else upsert unless flagged."""
    for row in planned:
        key = row["id"]
        if row[DELETE_FLAG]:
            target.pop(key, None)
        else:
            target[key] = tuple(row[c] for c in COLUMNS)


@settings(
    max_examples=examples(10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batches=st.lists(st.lists(steps(), min_size=1, max_size=4), min_size=1, max_size=3),
    split_moves=st.booleans(),
    replay=st.booleans(),
    shuffle=st.randoms(use_true_random=False),
)
def test_planned_batches_keep_the_table_as_of_each_resolved_ts(
    spark: Any,
    batches: list[list[list[Step]]],
    split_moves: bool,
    replay: bool,
    shuffle: random.Random,
) -> None:
    source = SourceTable(split_moves=split_moves)
    mirror: dict[int, tuple[Any, ...]] = {}
    recorded: int | None = None
    ts = 100
    previous: list[dict[str, Any]] = []
    for transactions in batches:
        rows: list[dict[str, Any]] = []
        for steps_ in transactions:
            ts += 10
            rows += source.apply(ts, steps_)
        sent = rows + (previous if replay else [])
        shuffle.shuffle(sent)
        planned = plan_changes(frame(spark, sent), ["id"], after_ts=recorded).collect()
        merge(mirror, planned)
        recorded = ts
        previous = rows
        assert mirror == source.state_at(ts)


@pytest.mark.parametrize("split_moves", [False, True])
def test_a_batch_with_several_changes_of_one_key(spark: Any, split_moves: bool) -> None:
    # The example the rules are written for: a key inserted, updated, moved to another
    # and taken again by an insert in the move's transaction, in one batch, out of order;
    # the move as one UPDATE with _before, or as TiCDC's DELETE + INSERT.
    source = SourceTable(split_moves=split_moves)
    rows = source.apply(110, [Step("insert", 1, 5)])
    rows += source.apply(120, [Step("update", 0, 6)])
    rows += source.apply(130, [Step("move", 0, 3), Step("insert", 0, 8)])
    planned = plan_changes(frame(spark, rows[::-1]), ["ID"]).collect()
    mirror: dict[int, tuple[Any, ...]] = {}
    merge(mirror, planned)
    assert mirror == source.state_at(130)
    assert sorted(mirror) == [1, 4]  # 1 moved to 4, and 1 taken again


def test_rows_at_or_below_the_recorded_ts_are_left_out(spark: Any) -> None:
    source = SourceTable()
    rows = source.apply(110, [Step("insert", 1, 5)]) + source.apply(120, [Step("insert", 2, 6)])
    planned = plan_changes(frame(spark, rows), ["id"], after_ts=110).collect()
    assert [r["id"] for r in planned] == [rows[1]["id"]]


def test_an_unknown_op_fails_the_job_naming_it(spark: Any) -> None:
    rows = SourceTable().apply(110, [Step("insert", 1, 5)])
    rows[0]["_op"] = "MERGE"
    with pytest.raises(PySparkException, match="_op is 'MERGE'"):
        plan_changes(frame(spark, rows), ["id"]).collect()


def test_a_key_that_is_not_a_column_is_refused(spark: Any) -> None:
    rows = SourceTable().apply(110, [Step("insert", 1, 5)])
    with pytest.raises(SchemaError, match="key column sku is not a column") as caught:
        plan_changes(frame(spark, rows), ["sku"])
    assert caught.value.column == "sku"

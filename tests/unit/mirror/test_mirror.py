"""The mirror's pure parts, without a Spark session: the schema rule (added columns evolve,
other changes stop with an error naming table, column and change), the MERGE statement,
the commit properties, and the batch's resolved ts read from Spark's offset log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from ticdc_sink.errors import ConfigError, SchemaError
from ticdc_sink.mirror.merge import (
    RESOLVED_TS,
    commit_properties,
    merge_statement,
    quote,
    resolved_ts_of,
)
from ticdc_sink.mirror.plan import DELETE_FLAG, table_columns
from ticdc_sink.mirror.progress import batch_resolved_ts, resolved_ts_of_offsets
from ticdc_sink.mirror.query import MirrorBatch
from ticdc_sink.mirror.schema import added_columns

ITEMS = StructType(
    [
        StructField("id", LongType()),
        StructField("name", StringType()),
        StructField("qty", IntegerType()),
    ]
)


def test_an_added_column_is_returned_in_the_streams_order() -> None:
    incoming = StructType(
        [*ITEMS.fields, StructField("note", StringType()), StructField("b", LongType())]
    )
    added = added_columns("lake.items", "shop.items", ITEMS, incoming)
    assert [f.name for f in added] == ["note", "b"]


def test_same_columns_in_another_case_and_order_add_nothing() -> None:
    incoming = StructType([StructField("QTY", IntegerType()), *ITEMS.fields[:2]])
    assert added_columns("lake.items", "shop.items", ITEMS, incoming) == []


def test_a_dropped_column_names_table_column_and_change() -> None:
    incoming = StructType(ITEMS.fields[:2])
    with pytest.raises(SchemaError) as caught:
        added_columns("lake.items", "shop.items", ITEMS, incoming)
    assert "mirror of shop.items into lake.items: column qty dropped" in str(caught.value)
    assert caught.value.column == "qty"


def test_a_retyped_column_names_both_types() -> None:
    incoming = StructType([*ITEMS.fields[:2], StructField("qty", LongType())])
    with pytest.raises(SchemaError, match="column qty changed from int to bigint"):
        added_columns("lake.items", "shop.items", ITEMS, incoming)


def test_the_merge_deletes_updates_and_inserts_by_the_flag() -> None:
    statement = merge_statement("lake.shop.items", "v", ["id"], ITEMS)
    flag = quote(DELETE_FLAG)
    assert statement == (
        "MERGE INTO lake.shop.items t\nUSING `v` s\nON t.`id` <=> s.`id`\n"
        f"WHEN MATCHED AND s.{flag} THEN DELETE\n"
        "WHEN MATCHED THEN UPDATE SET `name` = s.`name`, `qty` = s.`qty`\n"
        f"WHEN NOT MATCHED AND NOT s.{flag} THEN INSERT (`id`, `name`, `qty`) "
        "VALUES (s.`id`, s.`name`, s.`qty`)"
    )


def test_a_table_of_key_columns_only_has_no_update_clause() -> None:
    keys_only = StructType(ITEMS.fields[:1])
    statement = merge_statement("t", "v", ["id"], keys_only)
    assert "UPDATE" not in statement
    assert "THEN DELETE" in statement


def test_names_are_quoted() -> None:
    assert quote("a`b") == "`a``b`"


def test_commit_properties_read_back() -> None:
    properties = commit_properties(451_000_000_000_000_001, "shop.items")
    assert resolved_ts_of(properties) == 451_000_000_000_000_001
    assert resolved_ts_of({RESOLVED_TS: "x"}) is None
    assert resolved_ts_of(None) is None
    assert resolved_ts_of({"other": "1"}) is None


def test_table_columns_leave_the_metadata_out() -> None:
    schema = StructType(
        [
            *ITEMS.fields,
            StructField("_op", StringType()),
            StructField("_commit_ts", LongType()),
            StructField("_Database", StringType()),
            StructField("_offset", LongType()),
        ]
    )
    assert table_columns(schema) == ["id", "name", "qty"]


# Spark's offset log entry: the version, the batch's metadata, one line per source.
def _entry(*sources: str) -> str:
    return "\n".join(["v1", json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1}), *sources])


def _ticdc(resolved: dict[str, int]) -> str:
    return json.dumps(
        {"t": {p: 10 for p in resolved}, "ticdc:resolved-ts": {"t": resolved}},
    )


def test_the_resolved_ts_is_the_smallest_of_the_partitions() -> None:
    assert resolved_ts_of_offsets(_entry(_ticdc({"0": 500, "1": 500, "2": 500}))) == 500
    assert resolved_ts_of_offsets(_entry(_ticdc({"0": 500, "1": 400}))) == 400


def test_a_partition_without_a_watermark_gives_no_resolved_ts() -> None:
    assert resolved_ts_of_offsets(_entry(_ticdc({"0": 500, "1": 0}))) is None


def test_other_sources_are_ignored() -> None:
    kafka = json.dumps({"t": {"0": 5}})
    assert resolved_ts_of_offsets(_entry(kafka, "-", _ticdc({"0": 7}))) == 7
    assert resolved_ts_of_offsets(_entry(kafka)) is None


def test_the_offset_log_is_read_under_the_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "3").write_text(_entry(_ticdc({"0": 9})))
    assert batch_resolved_ts(str(tmp_path), 3) == 9
    assert batch_resolved_ts(f"file://{tmp_path}", 3) == 9
    with pytest.raises(ConfigError, match="no offsets of micro-batch 4") as caught:
        batch_resolved_ts(str(tmp_path), 4)
    assert caught.value.option == "checkpoint"


def test_targets_and_keys_by_table() -> None:
    batch = MirrorBatch("lake.{schema}.{table}_copy", {"shop.items": ["id"]})
    assert batch.target_of("shop", "items") == "lake.shop.items_copy"
    assert batch.keys_of("shop", "items") == ["id"]
    with pytest.raises(ConfigError, match="table shop.users, which keys= does not name"):
        batch.keys_of("shop", "users")
    named = MirrorBatch({"shop.items": "lake.items"}, ["id"])
    with pytest.raises(ConfigError, match="table shop.users, which target= does not name"):
        named.target_of("shop", "users")


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ConfigError, match="format 'hudi' is not one the mirror writes"):
        MirrorBatch("t", ["id"], format="hudi")

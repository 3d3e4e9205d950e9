"""Column-wise partitioning (`PartitionDispatcher.batch_partitions`) gives, per message of
a record batch, the partition the row path gives each event (`partition` per event of
`ChangeBatch.to_events`): same numbers for every dispatcher and column type, key-changing
UPDATEs split as the row path splits them, same errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.batches import ARROW_FIELDS as FIELDS
from tests.support.batches import COLUMNS, change_batches, write_plan
from tests.support.hypothesis_profiles import examples
from tests.support.strategies import record_batches
from ticdc_sink.codec.batch import key_changed
from ticdc_sink.errors import ConfigError
from ticdc_sink.routing import build_dispatcher
from ticdc_sink.writer.plan import key_column_indexes

# Every column of the reference table as a partition column: integers, floats (float32
# hashed with bitSize 32), decimals, texts with escapes, binaries, dates, times, enums,
# sets, JSON, booleans; NULLs drawn everywhere.
_DISPATCHERS: dict[str, dict[str, Any]] = {
    "table": {"rule": "table"},
    "default": {"rule": "default"},
    "ts": {"rule": "ts"},
    "index-value": {"rule": "index-value"},
    "index-value PRIMARY": {"rule": "index-value", "index": "primary"},
    "columns id": {"rule": "columns", "columns": ["ID"]},
    "columns all": {"rule": "columns", "columns": ["id", *reversed(COLUMNS)]},
    "columns float": {"rule": "columns", "columns": ["c_float", "c_double"]},
}


def _row_ends(batch: Any, keys: tuple[int, ...]) -> list[int] | None:
    split = key_changed(batch, keys)
    return np.cumsum(1 + split.astype(np.int64)).tolist() if split.any() else None


def _outcome(run: Any, *args: Any) -> Any:
    try:
        return ("ok", run(*args))
    except ConfigError as exc:
        return ("error", type(exc), str(exc))


def _per_event(dispatcher: Any, events: list[Any], partition_num: int) -> list[int]:
    return [dispatcher.partition(e, partition_num) for e in events]


@pytest.mark.parametrize("name", list(_DISPATCHERS))
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), partition_num=st.sampled_from([0, 1, 2, 3, 7, 16, 1000]))
def test_batch_partitions_are_the_row_paths(
    name: str, with_table: bool, data: Any, partition_num: int
) -> None:
    plan = write_plan(with_table)
    spec = _DISPATCHERS[name]
    for batch in change_batches(data.draw(record_batches(with_table)), plan):
        dispatcher = build_dispatcher(
            spec["rule"], batch.table, spec.get("columns", ()), spec.get("index")
        )
        keys = key_column_indexes(batch.table)
        row_ends = _row_ends(batch, keys)
        events = batch.to_events(keys)
        expected = _outcome(_per_event, dispatcher, events, partition_num)
        actual = _outcome(dispatcher.batch_partitions, batch, row_ends, partition_num)
        assert actual == expected


def test_a_split_update_hashes_its_delete_by_the_old_key() -> None:
    # id 1 -> 2: the DELETE goes where key 1 goes, the INSERT where key 2 goes.
    def image(i: int) -> dict[str, Any]:
        return {"id": i, **{f.name: None for f in FIELDS[1:]}}

    record = pa.RecordBatch.from_pydict(
        {
            **{f.name: pa.array([image(2)[f.name], image(9)[f.name]], f.type) for f in FIELDS},
            "_op": pa.array(["u", "c"]),
            "_commit_ts": pa.array([5, 6], pa.int64()),
            "_before": pa.array([image(1), None], pa.struct(FIELDS)),
        }
    )
    plan = write_plan(False)
    (batch,) = change_batches([record], plan)
    dispatcher = build_dispatcher("index-value", batch.table)
    keys = key_column_indexes(batch.table)
    row_ends = _row_ends(batch, keys)
    assert row_ends == [2, 3]
    events = batch.to_events(keys)
    assert [e.op.name for e in events] == ["DELETE", "INSERT", "INSERT"]
    got = dispatcher.batch_partitions(batch, row_ends, 1000)
    assert got == [dispatcher.partition(e, 1000) for e in events]
    assert got[0] != got[1]

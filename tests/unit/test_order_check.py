"""The per-key commit-ts order check: batches that cannot fail are only remembered, and
the result is what a check row by row over every row would give while the rows fit in
the window."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import InputError
from ticdc_sink.order_check import CommitOrderCheck
from ticdc_sink.schema import Column, Index, TableSchema


def _table(name: str) -> TableSchema:
    columns = (Column("id", parse_mysql_type("bigint"), nullable=False),)
    return TableSchema(
        "shop", name, columns, (Index("PRIMARY", ("id",), unique=True, primary=True),)
    )


T1, T2 = _table("t1"), _table("t2")


def _reference(steps: list[tuple[str, TableSchema, list[int], list[int]]]) -> Any:
    """Row by row, unbounded: the first (table, key, ts, last) that goes backwards."""
    last: dict[tuple[str, int], int] = {}
    for _kind, table, keys, ts in steps:
        for key, commit_ts in zip(keys, ts, strict=True):
            before = last.get((table.table, key))
            if before is not None and commit_ts < before:
                return (table.table, key, commit_ts, before)
            last[(table.table, key)] = commit_ts
    return None


def _run(check: CommitOrderCheck, steps: list[tuple[str, TableSchema, list[int], list[int]]]):
    try:
        for kind, table, keys, ts in steps:
            if kind == "row":
                for key, commit_ts in zip(keys, ts, strict=True):
                    check.check_row(table, (key,), commit_ts)
            else:
                check.check_batch(
                    table, [pa.array(keys, pa.int64())], pa.array(ts, pa.int64()), 0, len(keys)
                )
    except InputError as exc:
        return str(exc)
    return None


@st.composite
def _steps(draw: Any) -> list[tuple[str, TableSchema, list[int], list[int]]]:
    steps = []
    ts = 100
    for _ in range(draw(st.integers(1, 8))):
        n = draw(st.integers(1, 12))
        keys = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
        # Mostly increasing commit ts, sometimes a step back.
        values = []
        for _ in keys:
            ts += draw(st.integers(-3, 4))
            values.append(ts)
        steps.append(
            (draw(st.sampled_from(["row", "batch"])), draw(st.sampled_from([T1, T2])), keys, values)
        )
    return steps


@settings(max_examples=examples(300), deadline=None)
@given(steps=_steps())
def test_the_check_fails_exactly_where_a_row_by_row_check_fails(steps: Any) -> None:
    expected = _reference(steps)
    actual = _run(CommitOrderCheck(window=1000), steps)
    if expected is None:
        assert actual is None
    else:
        table, key, ts, before = expected
        assert actual is not None
        assert f"(id={key}) of shop.{table}: {ts} after {before}" in actual


def test_rows_sorted_by_key_then_commit_ts_pass() -> None:
    check = CommitOrderCheck()
    keys = [k for k in range(100) for _ in range(3)]
    ts = [t for _ in range(100) for t in (10, 20, 30)]
    for start in range(0, len(keys), 50):
        check.check_batch(
            T1,
            [pa.array(keys[start : start + 50])],
            pa.array(ts[start : start + 50]),
            0,
            len(keys[start : start + 50]),
        )


def test_a_key_older_than_the_window_is_no_longer_checked() -> None:
    check = CommitOrderCheck(window=4)
    check.check_batch(T1, [pa.array([1])], pa.array([50]), 0, 1)
    for key in range(2, 10):  # eight more rows push key 1 out
        check.check_batch(T1, [pa.array([key])], pa.array([60]), 0, 1)
    check.check_row(T1, (1,), 40)  # not remembered any more
    with pytest.raises(InputError, match=r"\(id=9\) of shop.t1: 40 after 60"):
        check.check_row(T1, (9,), 40)


def test_a_batch_without_commit_ts_uses_the_default() -> None:
    check = CommitOrderCheck()
    check.check_batch(T1, [[1, 2]], None, 500, 2)
    with pytest.raises(InputError, match="499 after 500"):
        check.check_batch(T1, [[2]], pa.array([499]), 0, 1)

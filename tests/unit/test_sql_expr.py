"""sql_expr: TiCDC's event-filter conditions as Arrow expressions, with MySQL's NULL and
comparison rules, and the errors for what is outside the subset."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.acero as acero
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_sink.errors import ConfigError
from ticdc_sink.sql_expr import mysql_string_number, translate_condition

BATCH = pa.record_batch(
    {
        "id": pa.array([1, 2, None, 4], pa.int64()),
        "name": ["a", "ab", None, "B"],
        "price": pa.array([1.5, 2.0, None, 10.0], pa.float64()),
        "day": pa.array([19000, 19001, None, 19002], pa.date32()),
    }
)
COLUMNS = {f.name: ((f.name,), f.type) for f in BATCH.schema}


def evaluate(sql: str, batch: pa.RecordBatch = BATCH) -> list[Any]:
    columns = {f.name: ((f.name,), f.type) for f in batch.schema}
    expr = translate_condition(sql, columns, filter_name="ignore-insert-value-expr")
    table = pa.Table.from_batches([batch])
    decl = acero.Declaration.from_sequence(
        [
            acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
            acero.Declaration("project", acero.ProjectNodeOptions([expr], ["r"])),
        ]
    )
    return decl.to_table().column("r").to_pylist()


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("id = 2", [False, True, None, False]),
        ("ID > 1 AND name = 'ab'", [False, True, None, False]),
        ("id > 3 OR name IS NULL", [False, False, True, True]),
        ("NOT id = 1", [False, True, None, True]),
        ("id IS NOT NULL", [True, True, False, True]),
        ("id IN (1, 4)", [True, False, None, True]),
        ("id NOT IN (1, 4)", [False, True, None, False]),
        ("id IN (1, NULL)", [True, None, None, None]),
        ("id BETWEEN 2 AND 4", [False, True, None, True]),
        ("name LIKE 'a%'", [True, True, None, False]),  # utf8mb4_bin: 'B' is not 'b'
        ("name NOT LIKE 'a_'", [True, False, None, True]),
        ("id = NULL", [None, None, None, None]),
        ("id <=> NULL", [False, False, True, False]),
        ("id <=> 2", [False, True, False, False]),
        ("id = '2abc'", [False, True, None, False]),  # MySQL reads '2abc' as 2
        ("price >= '2'", [False, True, None, True]),
        ("price > 1.75", [False, True, None, True]),
        ("id > -1 AND id < 2", [True, False, None, False]),
        ("day = '2022-01-08'", [True, False, None, False]),  # day 19000
        ("(id = 1 OR id = 4) AND name = 'B'", [False, False, None, True]),
        ("id = TRUE", [True, False, None, False]),
    ],
)
def test_conditions_follow_mysql(sql: str, expected: list[Any]) -> None:
    assert evaluate(sql) == expected


@pytest.mark.parametrize(
    ("sql", "part"),
    [
        ("upper(name) = 'A'", "UPPER(name)"),
        ("id + 1 > 2", "id + 1"),
        ("name = 1", "name = 1"),
        ("id", "id"),
        ("nope = 1", "nope"),
        ("t.id = 1", "t.id"),
        ("1 = 1", "1 = 1"),
        ("id IN (SELECT 1)", "id IN (SELECT 1)"),
        ("id = 1 AND name", "name"),
    ],
)
def test_unsupported_parts_are_named(sql: str, part: str) -> None:
    with pytest.raises(ConfigError) as info:
        translate_condition(sql, COLUMNS, filter_name="event-filters[0] ignore-delete-value-expr")
    message = info.value.message
    assert message.startswith(f"event-filters[0] ignore-delete-value-expr {sql!r}: {part!r}")
    assert "supported:" in message


def test_unparseable_condition_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="is not a SQL condition TiDB would parse"):
        translate_condition("id = = 1", COLUMNS, filter_name="x")


@pytest.mark.parametrize(
    ("text", "number"), [("12abc", 12.0), (" -1.5e2x", -150.0), ("abc", 0.0), (".5", 0.5)]
)
def test_strings_read_as_numbers_as_mysql_does(text: str, number: float) -> None:
    assert mysql_string_number(text) == number


@given(
    st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=1, max_size=20),
    st.integers(-5, 5),
)
def test_comparisons_match_three_valued_logic(values: list[int | None], bound: int) -> None:
    batch = pa.record_batch({"v": pa.array(values, pa.int64())})
    got = evaluate(f"v > {bound} OR v IS NULL AND v = 1", batch)
    # NULL AND x is NULL or false; v IS NULL is true only for NULL, where v = 1 is NULL.
    assert got == [None if v is None else v > bound for v in values]

"""row_filter: the changefeed's [filter] rules and event filters on record batches, as
TiCDC applies them (tiflow pkg/filter)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.row_filter import RowFilter, parse_event_filters

BATCH = pa.record_batch(
    {
        "_op": ["c", "c", "d", "u", "c", "INSERT", "u"],
        "_table": ["t", "t", "t", "t", "skip", "T", "t"],
        "a": pa.array([2, None, 1, 1, 1, 9, 1], pa.int64()),
        "s": ["xy", "x", None, "q", "x", "xa", "q"],
        "_before": pa.array([None, None, None, {"a": 5, "s": "q"}, None, None, None]),
    }
)


OPTIONS = {"kafka.bootstrap.servers": "b:9092", "topic": "t", "protocol": "simple"}


def keep(rules=(), event_filters=(), case_sensitive=False, batch=BATCH, database="db"):
    spec = RowFilter(
        tuple(rules), parse_event_filters(list(event_filters), "event-filters"), case_sensitive
    )
    mask = spec.compile(batch.schema, InputLayout()).keep(batch, database, None)
    return None if mask is None else mask.to_pylist()


def test_no_filter_keeps_everything() -> None:
    assert not RowFilter().active and not RowFilter(("*.*",)).active
    assert keep() is None


def test_table_rules_with_negation_and_any_case() -> None:
    assert keep(["db.*", "!db.skip"]) == [True] * 4 + [False, True, True]
    # `T` is `t` unless case-sensitive.
    assert keep(["db.t"]) == [True] * 4 + [False, True, True]
    assert keep(["db.t"], case_sensitive=True) == [True] * 4 + [False, False, True]
    assert keep(["other.*"]) == [False] * 7


def test_tidb_regex_and_class_patterns_take_their_tables() -> None:
    # issue 23: `/^d[a-z]$/.t` was read as literal text and every row was dropped.
    assert keep(["/^d[a-z]$/.t"]) == [True] * 4 + [False, True, True]
    assert keep(["/^d[a-z]$/.t"], database="dbx") == [False] * 7
    assert keep(['"db".[st]', "!`db`.s*"]) == [True] * 4 + [False, True, True]
    got = keep(event_filters=[{"matcher": ["/^db$/./^t$/"], "ignore-event": ["insert"]}])
    assert got == [False, False, True, True, True, True, True]


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("db.[t", "option 'filter-rules' pattern 1 'db.[t': syntax error: failed to parse"),
        ("db.*,/^d[a-z$/.t", "pattern 2 '/^d[a-z$/.t': invalid pattern: error parsing regexp"),
        ("db", "pattern 1 'db': wrong table pattern at character 3"),
        ("db.t%", "unexpected special character '%' at character 5"),
        ('["# only a comment"]', "it has no pattern, only comments"),
        ("@rules.txt", "imports a filter file"),
    ],
)
def test_filter_rules_tidb_refuses_are_config_errors(rules: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        SinkConfig.from_options({**OPTIONS, "filter-rules": rules})
    assert caught.value.option == "filter-rules"


def test_event_filter_matchers_are_checked_as_tidb_checks_them() -> None:
    with pytest.raises(ConfigError, match=re.escape("event-filters rule 2 matcher pattern 1")):
        parse_event_filters(
            [{"matcher": ["db.*"], "ignore-event": ["insert"]}, {"matcher": ["db.[x"]}],
            "event-filters",
        )


def test_event_types_are_ignored_on_matched_tables_only() -> None:
    got = keep(event_filters=[{"matcher": ["db.t"], "ignore-event": ["delete", "update"]}])
    # event-filter matchers compare names exactly (no case-insensitive wrapper in TiCDC)
    assert got == [True, True, False, False, True, True, False]
    assert keep(event_filters=[{"matcher": ["db.*"], "ignore-event": ["all dml"]}]) == [False] * 7


def test_value_conditions_per_event_type() -> None:
    rule = {
        "matcher": ["db.t"],
        "ignore-insert-value-expr": "a > 1 AND s LIKE 'x%'",
        "ignore-update-old-value-expr": "a = 5",
        "ignore-delete-value-expr": "a = 1",
    }
    # row 1: a NULL is not ignored; row 3: old a = 5; row 6: an UPDATE without old values
    # is not ignored by the old-value condition (TiCDC: no pre-row, not ignored)
    assert keep(event_filters=[rule]) == [False, True, False, False, True, True, True]
    new = {"matcher": ["db.t"], "ignore-update-new-value-expr": "s = 'q'"}
    assert keep(event_filters=[new]) == [True, True, True, False, True, True, False]


def test_old_value_condition_on_null_old_row_with_is_null_does_not_ignore() -> None:
    rule = {"matcher": ["db.t"], "ignore-update-old-value-expr": "a IS NULL"}
    assert keep(event_filters=[rule]) is None


def test_table_rules_and_event_filters_combine() -> None:
    got = keep(["db.t"], [{"matcher": ["db.t"], "ignore-event": ["insert"]}])
    assert got == [False, False, True, True, False, True, True]


def test_tables_from_defaults_without_table_column() -> None:
    batch = BATCH.drop_columns(["_table"])
    spec = RowFilter(("db.orders",))
    assert (
        spec.compile(batch.schema, InputLayout()).keep(batch, "db", "t").to_pylist() == [False] * 7
    )


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([{"matcher": ["db.*"], "ignore-event": ["INSERT"]}], "is not an event type TiCDC"),
        ([{"matcher": ["db.*"], "ignore-evnt": ["insert"]}], "unknown key 'ignore-evnt'"),
        ([{"ignore-event": ["insert"]}], "needs matcher"),
        ([{"matcher": ["nodot"]}], "rule 1 matcher pattern 1 .nodot.: wrong table pattern"),
        ([{"matcher": ["db.*"], "ignore-delete-value-expr": 3}], "must be a SQL condition"),
        ("rules", "must be a list of rules"),
    ],
)
def test_bad_event_filters(rules, message) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_event_filters(rules, "event-filters")


def test_unknown_column_names_the_rule_and_setting() -> None:
    rule = {"matcher": ["db.t"], "ignore-insert-value-expr": "missing = 1"}
    with pytest.raises(ConfigError) as info:
        keep(event_filters=[rule])
    assert info.value.message.startswith(
        "event-filters[0] ignore-insert-value-expr 'missing = 1': 'missing'"
    )


def test_old_value_condition_needs_the_before_column() -> None:
    rule = {"matcher": ["db.t"], "ignore-update-old-value-expr": "a = 1"}
    with pytest.raises(ConfigError, match="needs the old values: a column '_before'"):
        keep(event_filters=[rule], batch=BATCH.drop_columns(["_before"]))


def test_ddl_event_types_are_tidb_spellings() -> None:
    (rule,) = parse_event_filters(
        [{"matcher": ["db.*"], "ignore-event": ["alter ttl info", "insert"]}], "event-filters"
    )
    assert rule.ddl_parts == ("alter ttl info",)
    with pytest.raises(ConfigError, match="'alter ttl'"):
        parse_event_filters([{"matcher": ["db.*"], "ignore-event": ["alter ttl"]}], "x")

"""`column-selectors`: TiCDC's selector syntax and checks (tiflow `cdc/sink/dmlsink/mq/
transformer/columnselector/column_selector_test.go`), and what every protocol sends under
a selection: for the row messages exactly what it sends for the same rows of a table that
has only the selected columns (each TiCDC encoder skips an unselected column as if the
table had none: see `ticdc_sink/column_selector.py`), at the same partitions; BOOTSTRAPs
describe the whole table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from tests.support.batches import COLUMN_TYPES, COMMIT_TS, spark_schema
from tests.support.fake_producer import FakeProducer
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.row_path import outcome, write_rows
from tests.support.strategies import record_batches
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.column_selector import (
    ColumnSelector,
    check_selection,
    parse_column_selectors,
    select_columns,
)
from ticdc_sink.config import SinkConfig
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.decode import DecodedBootstrap
from ticdc_sink.errors import ConfigError
from ticdc_sink.writer import make_plan, rules, write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule
from ticdc_sink.writer.table import build_table_schema

# -- the selector syntax (tiflow TestNewColumnSelector's patterns) -------------------------


@pytest.mark.parametrize(
    ("columns", "kept"),
    [
        (["a", "b"], ["a", "b"]),
        (["*", "!a"], ["b", "col1", "col2", "Col3"]),
        (["co*", "!col2"], ["col1", "Col3"]),
        (["co?1"], ["col1"]),
        (["!a", "*"], ["a", "b", "col1", "col2", "Col3"]),  # the last matching pattern decides
        (["COL1", "# a comment", ""], ["col1"]),  # names in any case; TiDB skips both
        (["`co*`", "b\\*"], []),  # quoted and escaped wildcards are literal
        ([], []),
        # TiDB's regexp form and classes (issue 23: taken as literal text before).
        (["/^col[0-9]$/"], ["col1", "col2", "Col3"]),
        (["*", "!/^c/"], ["a", "b"]),
        (["[!c]"], ["a", "b"]),
        (['"a"', "`b`"], ["a", "b"]),
    ],
)
def test_column_patterns_select_as_tidbs_column_filter(columns: list[str], kept: list[str]) -> None:
    selector = ColumnSelector(("test.*",), tuple(columns))
    names = ["a", "b", "col1", "col2", "Col3"]
    assert [n for n in names if selector.keeps(n)] == kept


def _table(ddl: str) -> Any:
    names = [c.name for c in parse_table_ddl(ddl).columns]
    schema = T.StructType([T.StructField(n, T.IntegerType()) for n in names])
    return build_table_schema(None, None, schema, table_ddl=ddl)


_T1 = (
    "create table test.t1 (a int primary key, b int, c int, d int, e int, "
    "unique key uk_b_c (b, c), unique key uk_d_e (d, e), key idx_c_d (c, d))"
)


def _selectors(*entries: tuple[list[str], list[str]]) -> tuple[ColumnSelector, ...]:
    return parse_column_selectors([{"matcher": m, "columns": c} for m, c in entries])


def test_a_selection_keeping_the_primary_key_passes() -> None:
    # tiflow TestVerifyTables: columns a, b keep the handle key a.
    table = _table(_T1)
    assert check_selection(_selectors((["test.t1"], ["a", "b"])), table) == (0, 1)
    assert check_selection(_selectors((["other.*"], ["a"])), table) is None


def test_the_first_matching_selector_decides_and_must_keep_a_key() -> None:
    # tiflow TestVerifyTables, last case: test.* takes t1 first; c, d hold no whole key.
    selectors = _selectors((["test.*"], ["c", "d"]), (["test.t1"], ["a", "b"]))
    with pytest.raises(ConfigError) as caught:
        check_selection(selectors, _table(_T1))
    assert caught.value.message == (
        "column-selectors entry 1 (matcher ['test.*'], columns ['c', 'd']) keeps neither the "
        "primary key nor a unique key of table test.t1; add a to its columns"
    )
    assert caught.value.option == "column-selectors"


def test_dropping_the_handle_key_is_refused_even_with_a_unique_key_kept() -> None:
    # tiflow TestVerifyTables accepts b, c (unique key uk_b_c kept) and then sends rows
    # without their handle key; every protocol here keys its messages on it.
    with pytest.raises(
        ConfigError, match=r"drops handle key column\(s\) a of table test.t1, .*; add a to its"
    ):
        check_selection(_selectors((["test.t1"], ["b", "c"])), _table(_T1))


def test_a_table_without_a_primary_key_keeps_its_not_null_unique_handle_key() -> None:
    table = _table("create table test.t (a int not null, b int, c int, unique key (a))")
    assert check_selection(_selectors((["test.t"], ["a", "c"])), table) == (0, 2)
    with pytest.raises(ConfigError, match=r"drops handle key column\(s\) a"):
        check_selection(_selectors((["test.t"], ["b"])), table)


def test_a_column_the_columns_dispatcher_hashes_must_be_selected() -> None:
    # tiflow TestVerifyTablesColumnFilteredInDispatcher.
    table = _table("create table test.t1 (a int primary key, b int, c int)")
    with pytest.raises(
        ConfigError,
        match="drops column 'c' of table test.t1, which the columns partition dispatcher",
    ):
        check_selection(_selectors((["test.*"], ["a", "b"])), table, ["c"])
    assert check_selection(_selectors((["test.*"], ["a", "c"])), table, ["c"]) == (0, 2)


def test_a_selection_of_no_column_is_refused() -> None:
    table = _table("create table test.t (a int, b int)")
    with pytest.raises(ConfigError, match="selects no column of table test.t; add a"):
        check_selection(_selectors((["test.t"], ["zz"])), table)


def test_selected_table_keeps_its_keys_and_ids() -> None:
    table = _table(_T1)
    shown = select_columns(table, (0, 1))
    assert shown.column_names == ("a", "b")
    assert (shown.handle_key, shown.version, shown.table_id) == (
        ("a",),
        table.version,
        table.table_id,
    )
    assert shown.is_unique_key("b")  # part of uk_b_c, as TiCDC flags it from the table


# -- the option, as users pass it ---------------------------------------------------------

_BASE = {"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t", "protocol": "canal-json"}


def test_the_changefeed_file_spellings_are_read(tmp_path: Path) -> None:
    # tiflow tests/integration_tests/kafka_column_selector/conf/changefeed.toml, and the
    # array-of-tables form of the same.
    inline = tmp_path / "inline.toml"
    inline.write_text(
        "[sink]\ncolumn-selectors = [\n"
        "    {matcher = ['test.t1'], columns = ['a', 'b']},\n"
        '    {matcher = [\'test.*\'], columns = ["*", "!b"]},\n'
        "    {matcher = ['test1.t1'], columns = ['column*', '!column1']},\n]\n"
    )
    tables = tmp_path / "tables.toml"
    tables.write_text(
        "[[sink.column-selectors]]\nmatcher = ['test.t1']\ncolumns = ['a', 'b']\n"
        "[[sink.column-selectors]]\nmatcher = ['test.*']\ncolumns = ['*', '!b']\n"
        "[[sink.column-selectors]]\nmatcher = ['test1.t1']\ncolumns = ['column*', '!column1']\n"
    )
    as_json = json.dumps(
        [
            {"matcher": ["test.t1"], "columns": ["a", "b"]},
            {"matcher": ["test.*"], "columns": ["*", "!b"]},
            {"matcher": ["test1.t1"], "columns": ["column*", "!column1"]},
        ]
    )
    configs = [
        SinkConfig.from_options({**_BASE, "config": str(inline)}),
        SinkConfig.from_options({**_BASE, "config": str(tables)}),
        SinkConfig.from_options({**_BASE, "column-selectors": as_json}),
    ]
    assert configs[0].column_selectors == configs[1].column_selectors
    assert configs[0].column_selectors == configs[2].column_selectors
    assert [s.matcher for s in configs[0].column_selectors] == [
        ("test.t1",),
        ("test.*",),
        ("test1.t1",),
    ]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[{", "use a JSON list of selectors"),
        ('{"matcher": ["a.b"]}', "use a list of selectors"),
        ('[{"matcher": ["a.b"], "column": ["x"]}]', "entry 1 has unknown key 'column'"),
        ('[{"columns": ["x"]}]', "entry 1 needs matcher"),
        ('[{"matcher": ["ab"], "columns": ["x"]}]', "matcher pattern 1 'ab': wrong table pattern"),
        (
            '[{"matcher": ["a.b"], "columns": ["@cols.txt"]}]',
            "columns pattern 1 '@cols.txt': imports a filter file",
        ),
    ],
)
def test_a_bad_selector_list_names_the_option(value: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        SinkConfig.from_options({**_BASE, "column-selectors": value})
    assert caught.value.message.startswith("option 'column-selectors' is ")
    assert problem in str(caught.value)


def test_column_selectors_and_row_checksums_are_refused_together() -> None:
    # tiflow ReplicaConfig.ValidateAndAdjust: "integrity check enabled and column selector
    # set, not allowed".
    selectors = '[{"matcher": ["test.*"], "columns": ["id"]}]'
    options = {**_BASE, "column-selectors": selectors, "integrity-check-level": "correctness"}
    with pytest.raises(ConfigError, match="TiCDC refuses both at once") as caught:
        SinkConfig.from_options(options)
    assert caught.value.option == "column-selectors"


def test_matchers_compare_names_in_any_case_unless_case_sensitive() -> None:
    value = '[{"matcher": ["Test.T1"], "columns": ["a"]}]'
    table = _table("create table test.t1 (a int primary key, b int)")
    loose = SinkConfig.from_options({**_BASE, "column-selectors": value})
    strict = SinkConfig.from_options({**_BASE, "column-selectors": value, "case-sensitive": "1"})
    assert rules.column_selection(loose, table) == (0,)
    assert rules.column_selection(strict, table) is None


def test_the_driver_refuses_a_selection_before_any_task() -> None:
    options = {
        **_BASE,
        "database": "shop",
        "table": "users",
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        "column-selectors": '[{"matcher": ["shop.users"], "columns": ["c_*"]}]',
    }
    with pytest.raises(
        ConfigError, match="keeps neither .* of table shop.users; add id to its columns"
    ):
        make_plan(SinkConfig.from_options(options), spark_schema(False), COMMIT_TS, batch_id=None)


# -- what every protocol sends ------------------------------------------------------------

PROTOCOLS: dict[str, dict[str, str]] = {
    "simple-json": {"protocol": "simple", "send-bootstrap-in-msg-count": "3"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {
        "protocol": "avro",
        "schema-registry": "http://127.0.0.1:1",
        "enable-tidb-extension": "true",
    },
    "debezium": {"protocol": "debezium"},
    "canal-json": {"protocol": "canal-json", "enable-tidb-extension": "true"},
    "open-protocol": {"protocol": "open-protocol"},
}

# `id` (the key), the columns the `columns` dispatcher hashes, and a few of every kind.
_KEPT = (
    "id",
    "c_int_u",
    "c_double",
    "c_decimal",
    "c_text",
    "c_blob",
    "c_date",
    "c_datetime",
    "c_json",
)
_PATTERNS = ["id", "c_int_u", "c_double", "c_decimal", "c_text", "c_blob", "c_date*", "c_json"]


def _narrowed_schema(with_table: bool) -> T.StructType:
    full = spark_schema(with_table)
    fields = []
    for f in full.fields:
        if f.name == "_before":
            kept = [g for g in f.dataType.fields if g.name in _KEPT]
            fields.append(T.StructField("_before", T.StructType(kept)))
        elif not f.name.startswith("c_") or f.name in _KEPT:
            fields.append(f)
    return T.StructType(fields)


def _narrowed(batch: pa.RecordBatch) -> pa.RecordBatch:
    columns = {}
    for name, values in zip(batch.schema.names, batch.columns, strict=True):
        if name == "_before":
            fields = [f for f in values.type if f.name in _KEPT]
            children = [values.field(f.name) for f in fields]
            values = pa.StructArray.from_arrays(children, fields=fields, mask=values.is_null())
        elif name.startswith("c_") and name not in _KEPT:
            continue
        columns[name] = values
    return pa.RecordBatch.from_pydict(columns)


def _options(protocol: str, with_table: bool, partition: str) -> dict[str, str]:
    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "database": "shop",
        "primary-key": "id",
        "time-zone": "Asia/Shanghai",
        "partition": partition,
        # Both tables carry the same ids and version, as TiCDC's table info would.
        "table-id": "77",
        "schema-version": "449000000000000000",
        **PROTOCOLS[protocol],
    }
    if partition == "columns":
        options["partition-columns"] = "c_double,c_text,id"
    if not with_table:
        options["table"] = "users"
    return options


def _sent(batches: list[pa.RecordBatch], plan: Any) -> list[Any]:
    producer = FakeProducer()
    write_batches(
        batches,
        plan,
        producer_factory=producer,
        registry_factory=FakeRegistry(),
        bootstraps=BootstrapSchedule(),
    )
    return producer.sent


def _bootstraps(protocol: str, sent: list[Any]) -> list[bool]:
    """Per message sent, whether it is a Simple BOOTSTRAP."""
    options = PROTOCOLS[protocol]
    if options["protocol"] != "simple":
        return [False] * len(sent)
    decoder = SimpleDecoder(encoding_format=options.get("encoding-format", "json"))
    return [
        isinstance(decoder.decode_message(key, value), DecodedBootstrap)
        for _, _, key, value in sent
    ]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@pytest.mark.parametrize("partition", ["index-value", "columns"])
@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_selection_sends_what_a_table_of_the_selected_columns_sends(
    protocol: str, with_table: bool, partition: str, data: Any
) -> None:
    batches = data.draw(record_batches(with_table))
    options = _options(protocol, with_table, partition)
    selectors = json.dumps([{"matcher": ["shop.*"], "columns": _PATTERNS}])
    selected = make_plan(
        SinkConfig.from_options(
            {**options, "column-types": json.dumps(COLUMN_TYPES), "column-selectors": selectors}
        ),
        spark_schema(with_table),
        COMMIT_TS,
        batch_id=None,
    )
    narrow_types = {k: v for k, v in COLUMN_TYPES.items() if k in _KEPT}
    narrow = make_plan(
        SinkConfig.from_options({**options, "column-types": json.dumps(narrow_types)}),
        _narrowed_schema(with_table),
        COMMIT_TS,
        batch_id=None,
    )
    got_outcome = outcome(_sent, batches, selected)
    expected_outcome = outcome(_sent, [_narrowed(b) for b in batches], narrow)
    if "error" in (got_outcome[0], expected_outcome[0]):
        assert got_outcome == expected_outcome  # the same error, same words
        return
    got, expected = got_outcome[1], expected_outcome[1]
    got_bootstraps = _bootstraps(protocol, got)
    expected_bootstraps = _bootstraps(protocol, expected)
    rows = [m for m, b in zip(got, got_bootstraps, strict=True) if not b]
    assert rows == [m for m, b in zip(expected, expected_bootstraps, strict=True) if not b]
    # BOOTSTRAPs (simple) describe the whole table, at the same places.
    assert got_bootstraps == expected_bootstraps
    if any(got_bootstraps):
        whole = make_plan(
            SinkConfig.from_options({**options, "column-types": json.dumps(COLUMN_TYPES)}),
            spark_schema(with_table),
            COMMIT_TS,
            batch_id=None,
        )
        # The whole table's own messages: the same BOOTSTRAPs (a value of an unselected
        # column that the encoder refuses fails the whole table only: such a run is
        # left out here).
        whole_sent = outcome(_sent, batches, whole)
        if whole_sent[0] == "ok":
            sent = whole_sent[1]
            whole_bootstraps = _bootstraps(protocol, sent)
            assert [m for m, b in zip(got, got_bootstraps, strict=True) if b] == [
                m for m, b in zip(sent, whole_bootstraps, strict=True) if b
            ]


def test_an_update_of_an_unselected_unique_key_is_still_split() -> None:
    # TiCDC splits an UPDATE that changes a unique key into DELETE + INSERT in the table
    # sink, before its column selector runs: the split holds when `u` is not sent.
    options = {
        **_BASE,
        "table-ddl": "create table shop.t (id int primary key, u int, v int, unique key (u))",
        "column-selectors": '[{"matcher": ["shop.t"], "columns": ["id", "v"]}]',
    }
    spark = T.StructType(
        [
            *(T.StructField(n, T.IntegerType()) for n in ("id", "u", "v")),
            T.StructField("_op", T.StringType()),
            T.StructField(
                "_before",
                T.StructType([T.StructField(n, T.IntegerType()) for n in ("id", "u", "v")]),
            ),
        ]
    )
    plan = make_plan(SinkConfig.from_options(options), spark, COMMIT_TS, batch_id=None)
    image = pa.struct([pa.field(n, pa.int32()) for n in ("id", "u", "v")])
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2], pa.int32()),
            "u": pa.array([10, 20], pa.int32()),
            "v": pa.array([5, 6], pa.int32()),
            "_op": pa.array(["u", "u"]),
            # row 1 changes u (split), row 2 only v (one UPDATE)
            "_before": pa.array([{"id": 1, "u": 9, "v": 5}, {"id": 2, "u": 20, "v": 0}], image),
        }
    )
    sent = _sent([batch], plan)
    assert sent == write_rows([batch], plan)  # the row path agrees
    values = [json.loads(value) for *_, value in sent]
    assert [(v["type"], v["data"], v["old"]) for v in values] == [
        ("DELETE", [{"id": "1", "v": "5"}], None),
        ("INSERT", [{"id": "1", "v": "5"}], None),
        ("UPDATE", [{"id": "2", "v": "6"}], [{"id": "2", "v": "0"}]),
    ]
    assert all(set(v["mysqlType"]) == {"id", "v"} for v in values)

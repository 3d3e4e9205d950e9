"""Topic expressions and partition dispatchers against TiCDC's rules and worked examples
(reference §2, §3; tiflow dispatcher/partition/*_test.go)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_sink.errors import ConfigError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.routing import (
    DispatchRule,
    PartitionRule,
    TopicRouter,
    build_dispatcher,
    column_value_bytes,
    rule_for,
    validate_topic_expression,
)
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

INT = MySQLType("int")


def table(name: str, columns: list[str], *, pk=(), indexes=(), types=None) -> TableSchema:
    types = types or {}
    cols = tuple(
        Column(c, types.get(c, INT), nullable=c not in pk, column_id=i + 1)
        for i, c in enumerate(columns)
    )
    idx = tuple(indexes)
    if pk:
        idx = (Index("PRIMARY", tuple(pk), unique=True, primary=True), *idx)
    return TableSchema("test", name, cols, idx)


def insert(t: TableSchema, *values, commit_ts: int = 1) -> RowChange:
    return RowChange(t, Op.INSERT, commit_ts, tuple(values))


# -- topics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr",
    ["hello", "{schema}", "{schema}_{table}", "abc{schema}def{table}ghi", "{table}", "a.b-c_d"],
)
def test_valid_topic_expressions(expr: str) -> None:
    validate_topic_expression(expr, "simple")


@pytest.mark.parametrize(
    "expr",
    ["{table}{schema}", "a{schema}{schema}", "x!{schema}", "{Schema}", "{schema}_{table}?", ""],
)
def test_invalid_topic_expressions(expr: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_topic_expression(expr, "simple")
    assert info.value.option == "topic"
    assert "'topic'" in str(info.value)


def test_avro_needs_schema_and_table_in_an_expression_but_not_in_a_fixed_topic() -> None:
    validate_topic_expression("{schema}_{table}", "avro", schema_and_table=True)
    validate_topic_expression(
        "fixed-topic", "avro", schema_and_table=True
    )  # tiflow: hard-coded topics pass
    for expr in ("{schema}", "{table}", "x_{schema}_y"):
        with pytest.raises(ConfigError, match="avro"):
            validate_topic_expression(expr, "avro", schema_and_table=True)


@pytest.mark.parametrize("expr", [".", "..", "a" * 250])
def test_fixed_topic_must_be_a_legal_kafka_name(expr: str) -> None:
    with pytest.raises(ConfigError):
        validate_topic_expression(expr, "simple")


def test_topic_substitution_rules() -> None:
    router = TopicRouter("hello_{schema}_{table}")
    assert router.topic_for("test", "t1") == "hello_test_t1"
    # every code point outside [A-Za-z0-9._-] becomes one "_"
    assert router.topic_for("你好", "a b$c") == "hello_" + "__" + "_a_b_c"
    assert TopicRouter("{schema}").topic_for("db", "t") == "db"
    assert TopicRouter("{table}").topic_for("db", "t") == "t"
    assert TopicRouter("fixed").topic_for("db", "t") == "fixed"
    # '.' and '..' are not topics in Kafka: tiflow maps them to '_' and '__'
    assert TopicRouter("{schema}").topic_for(".", "t") == "_"
    assert TopicRouter("{schema}{table}").topic_for(".", ".") == "__"
    long = TopicRouter("{schema}_{table}").topic_for("d" * 200, "t" * 200)
    assert long == ("d" * 200 + "_" + "t" * 200)[:249]


# -- partition dispatchers: TiCDC's worked examples -------------------------------------


@pytest.mark.parametrize(("name", "n", "expected"), [("t1", 16, 15), ("t2", 16, 5), ("t3", 16, 3)])
def test_table_dispatcher_examples(name: str, n: int, expected: int) -> None:
    t = table(name, ["a"])
    for rule in ("table", "default", "TABLE", "Default"):
        assert build_dispatcher(rule, t).partition(insert(t, 1), n) == expected


def test_default_dispatcher_is_table_not_index_value() -> None:
    # tiflow TestDefaultDispatcher: test.t1 with 3 partitions -> 0 (index-value gives 2)
    t = table("t1", ["id"], pk=["id"])
    change = insert(t, 1)
    assert build_dispatcher(PartitionRule.DEFAULT, t).partition(change, 3) == 0
    assert build_dispatcher(PartitionRule.INDEX_VALUE, t).partition(change, 3) == 2


@pytest.mark.parametrize(
    ("name", "pk", "row", "expected"),
    [
        # tiflow TestIndexValueDispatcher
        ("t1", ["a"], (11, 22), 2),
        ("t1", ["a"], (22, 22), 11),
        ("t1", ["a"], (11, 33), 2),
        ("t2", ["a", "b"], (11, 22), 5),
        ("t2", ["b", "a"], (11, 22), 5),  # column order, not key order
        ("t2", ["a", "b"], (11, 0), 14),
        ("t2", ["a", "b"], (11, 33), 2),
    ],
)
def test_index_value_dispatcher_examples(name, pk, row, expected) -> None:
    t = table(name, ["a", "b"], pk=pk)
    for rule in ("index-value", "rowid", "Index-Value"):
        assert build_dispatcher(rule, t).partition(insert(t, *row), 16) == expected


def test_index_value_hashes_deleted_rows_from_before() -> None:
    t = table("t1", ["a", "b"], pk=["a"])
    delete = RowChange(t, Op.DELETE, 5, None, (11, 22))
    assert build_dispatcher("index-value", t).partition(delete, 16) == 2


def test_index_value_with_named_index() -> None:
    # tiflow TestIndexValueDispatcherWithIndexName: index1 (col2, col1) -> 15
    t = table(
        "t1",
        ["col1", "col2", "col3"],
        indexes=[Index("index1", ("col2", "col1"), unique=True)],
    )
    change = insert(t, 22, 11, 33)
    assert build_dispatcher("index-value", t, index="index1").partition(change, 16) == 15
    assert build_dispatcher("index-value", t, index="INDEX1").partition(change, 16) == 15
    expected = zlib.crc32(b"testt1") ^ zlib.crc32(b"col211") ^ zlib.crc32(b"col122")
    assert build_dispatcher("index-value", t, index="index1").partition(change, 1000) == (
        expected % 1000
    )
    with pytest.raises(ConfigError, match="index2") as info:
        build_dispatcher("index-value", t, index="index2")
    assert info.value.option == "index"


def test_index_value_rejects_a_non_unique_index() -> None:
    t = table("t1", ["a", "b"], indexes=[Index("ib", ("b",))])
    with pytest.raises(ConfigError, match="not unique"):
        build_dispatcher("index-value", t, index="ib")


def test_columns_dispatcher_examples() -> None:
    # tiflow TestColumnsDispatcher: col2=11, col1=22
    t = table("t1", ["col1", "col2", "col3"])
    change = insert(t, 22, 11, 33)
    assert build_dispatcher("columns", t, columns=["col2", "col1"]).partition(change, 16) == 15
    assert build_dispatcher("columns", t, columns=["COL2", "Col1"]).partition(change, 16) == 15
    # the hash takes the table's own column names, whatever case the option uses
    t2 = table("t1", ["Col1", "COL2", "col3"])
    change2 = insert(t2, 22, 11, 33)
    assert build_dispatcher("columns", t2, columns=["col2", "col1"]).partition(change2, 16) == 5
    with pytest.raises(ConfigError, match="col-not-found") as info:
        build_dispatcher("columns", t, columns=["col2", "col-not-found"])
    assert info.value.option == "partition-columns"


def test_ts_dispatcher() -> None:
    t = table("t1", ["a"])
    d = build_dispatcher("TS", t)
    assert d.partition(insert(t, 1, commit_ts=449598763200512001), 7) == 449598763200512001 % 7
    assert d.partition(insert(t, 1, commit_ts=2**64 - 1), 16) == (2**64 - 1) % 16


def test_unknown_rule_is_an_error() -> None:
    with pytest.raises(ConfigError, match="use one of default, table, index-value, ts, columns"):
        build_dispatcher("hash", table("t1", ["a"]))


def test_partition_num_must_be_positive() -> None:
    t = table("t1", ["a"])
    with pytest.raises(ConfigError):
        build_dispatcher("table", t).partition(insert(t, 1), 0)


# -- ColumnValueString ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "float32", "expected"),
    [
        (None, False, b"null"),
        (True, False, b"1"),
        (False, False, b"0"),
        (-12, False, b"-12"),
        (2**64 - 1, False, b"18446744073709551615"),
        ("2333.654321", False, b"2333.654321"),
        ("你好", False, "你好".encode()),
        (b"\x00\xff", False, b"\x00\xff"),
        (95.0, False, b"95"),
        (0.1, False, b"0.1"),
        (1e21, False, b"1000000000000000000000"),
        (1.5e-10, False, b"0.00000000015"),
        (-0.0, False, b"-0"),
        (3.14, True, b"3.14"),
        (12345.123, True, b"12345.123"),
        (0.1, True, b"0.1"),
        (16777217.0, True, b"16777216"),
        (float("inf"), False, b"+Inf"),
    ],
)
def test_column_value_string(value, float32: bool, expected: bytes) -> None:
    assert column_value_bytes(value, float32=float32) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float64_formatting_matches_go(value: float) -> None:
    # Go FormatFloat(v,'f',-1,64) == numpy's shortest positional form (reference §14)
    expected = np.format_float_positional(np.float64(value), unique=True, trim="-")
    assert column_value_bytes(value).decode() == expected


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float32_formatting_matches_go(value: float) -> None:
    expected = np.format_float_positional(np.float32(value), unique=True, trim="-")
    assert column_value_bytes(value, float32=True).decode() == expected


def test_float_columns_hash_with_bitsize_32() -> None:
    t = table("t1", ["f", "d"], types={"f": MySQLType("float"), "d": MySQLType("double")})
    change = insert(t, 3.140000104904175, 3.140000104904175)
    d = build_dispatcher("columns", t, columns=["f", "d"])
    crc = zlib.crc32(b"testt1") ^ zlib.crc32(b"f3.14") ^ zlib.crc32(b"d3.140000104904175")
    assert d.partition(change, 2**31 - 1) == crc % (2**31 - 1)


# -- properties --------------------------------------------------------------------------------

VALUES = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**64 - 1),
    st.text(max_size=20),
    st.binary(max_size=20),
    st.floats(allow_nan=False),
)


@given(
    rule=st.sampled_from(["default", "table", "index-value", "ts", "columns"]),
    a=VALUES,
    b=VALUES,
    commit_ts=st.integers(0, 2**64 - 1),
    n=st.integers(1, 2**31 - 1),
)
def test_partition_in_range_and_deterministic(rule, a, b, commit_ts, n) -> None:
    t = table("t1", ["a", "b"], pk=["a"])
    change = insert(t, a, b, commit_ts=commit_ts)
    columns = ["b", "a"] if rule == "columns" else ()
    first = build_dispatcher(rule, t, columns=columns).partition(change, n)
    again = build_dispatcher(rule, t, columns=columns).partition(change, n)
    assert 0 <= first < n
    assert first == again


@given(a=st.integers(), b=st.integers())
def test_xor_makes_write_order_irrelevant(a: int, b: int) -> None:
    t = table("t1", ["a", "b"])
    change = insert(t, a, b)
    one = build_dispatcher("columns", t, columns=["a", "b"]).partition(change, 97)
    two = build_dispatcher("columns", t, columns=["b", "a"]).partition(change, 97)
    assert one == two


# -- [sink] dispatchers ------------------------------------------------------------------------


# tiflow cdc/sink/dmlsink/mq/dispatcher/event_router_test.go (newReplicaConfig4DispatcherTest)
# with the default topic "test"; "unknown-dispatcher" is left out: TiCDC falls back to
# `table` with a warning, this sink refuses a misspelt rule.
TIFLOW_RULES = (
    DispatchRule(["test_default1.*"], partition="default"),
    DispatchRule(["test_table.*"], partition="table", topic="hard_code_schema"),
    DispatchRule(["test_index_value.*"], partition="index-value", topic="{schema}_{table}"),
    DispatchRule(["test.*"], partition="rowid", topic="hard_code_schema"),
    DispatchRule(["*.*", "!*.test"], partition="ts", topic="{schema}_{table}"),
)


@pytest.mark.parametrize(
    ("database", "table", "topic", "partition"),
    [
        ("test_default1", "table", "test", PartitionRule.DEFAULT),
        ("test_table", "table", "hard_code_schema", PartitionRule.TABLE),
        ("test_index_value", "table", "test_index_value_table", PartitionRule.INDEX_VALUE),
        ("test", "table", "hard_code_schema", PartitionRule.INDEX_VALUE),
        ("sbs", "table", "sbs_table", PartitionRule.TS),
        ("a", "test", None, None),  # excluded by !*.test: the catch-all (default topic)
    ],
)
def test_tiflow_dispatcher_rules(database, table, topic, partition):
    rule = rule_for(TIFLOW_RULES, database, table)
    if topic is None:
        assert rule is None
        return
    assert rule is not None and rule.partition is partition
    expression = rule.topic or "test"
    assert TopicRouter(expression).topic_for(database, table) == topic


def test_dispatch_rules_pickle_and_compare():
    import pickle

    rule = DispatchRule(["db.*"], topic="t_{table}", partition="columns", columns=["a"])
    assert pickle.loads(pickle.dumps(rule)) == rule
    assert hash(pickle.loads(pickle.dumps(rule))) == hash(rule)
    with pytest.raises(ConfigError, match="no columns"):
        DispatchRule(["db.*"], partition="columns")

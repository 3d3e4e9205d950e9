"""Unit tests for ticdc_sink.events: Arrow record batches -> RowChange (no Spark)."""

from __future__ import annotations

import datetime as dt
import decimal
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from tests.support.row_path import read_changes
from ticdc_sink import tso
from ticdc_sink.errors import ConfigError, InputError, SchemaError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.schema import Column, Index, MySQLType, TableSchema

D = decimal.Decimal
UTC = dt.UTC


def mysql(base: str, length: int | None = None, scale: int | None = None, **kw) -> MySQLType:
    return MySQLType(base=base, length=length, decimal=scale, **kw)


def make_table(*columns: Column, pk: tuple[str, ...] = ("id",), name: str = "users") -> TableSchema:
    indexes = (Index("PRIMARY", pk, unique=True, primary=True),) if pk else ()
    return TableSchema("shop", name, columns, indexes)


USERS = make_table(
    Column("id", mysql("bigint"), nullable=False),
    Column("name", mysql("varchar", 20)),
    Column("age", mysql("tinyint", unsigned=True)),
)


def read(
    batch: pa.RecordBatch,
    table: TableSchema | dict[tuple[str, str], TableSchema] = USERS,
    *,
    database: str | None = "shop",
    name: str | None = "users",
    commit_ts: int = 1000,
    time_zone: str = "UTC",
    layout: InputLayout | None = None,
) -> list[RowChange]:
    def tables(db: str, tb: str) -> TableSchema:
        return table[(db, tb)] if isinstance(table, dict) else table

    return list(
        read_changes(
            batch,
            layout=layout or InputLayout(),
            tables=tables,
            default_database=database,
            default_table=name,
            default_commit_ts=commit_ts,
            time_zone=time_zone,
        )
    )


def convert(arr: pa.Array, kind: MySQLType, *, time_zone: str = "UTC") -> list:
    """The mounter values of one nullable column `v` of type `kind`."""
    table = make_table(Column("v", kind), pk=())
    return [c.row[0] for c in read(pa.record_batch({"v": arr}), table, time_zone=time_zone)]


def convert_error(arr: pa.Array, kind: MySQLType, error=InputError, **kw) -> str:
    with pytest.raises(error) as info:
        convert(arr, kind, **kw)
    return str(info.value)


# --- InputLayout -----------------------------------------------------------------------


def test_layout_defaults_and_reserved():
    layout = InputLayout()
    assert layout.reserved == {"_op", "_commit_ts", "_before", "_database", "_table"}
    custom = InputLayout(op_column="kind", table_column="tbl")
    assert custom.reserved == {"kind", "_commit_ts", "_before", "_database", "tbl"}


def test_custom_layout_names_are_used():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [3], "kind": ["d"], "ts": [7]})
    layout = InputLayout(op_column="kind", commit_ts_column="ts")
    (change,) = read(batch, layout=layout)
    assert (change.op, change.commit_ts, change.row, change.before) == (
        Op.DELETE,
        7,
        None,
        (1, "a", 3),
    )


BEFORE_TYPE_UPPER = pa.struct([("ID", pa.int64()), ("Name", pa.string()), ("AGE", pa.int64())])


def test_metadata_columns_match_in_any_case():
    # Spark matches column names case-insensitively: `_OP` is the op column, not data.
    before = pa.array([{"ID": 1, "Name": "old", "AGE": 2}], BEFORE_TYPE_UPPER)
    batch = pa.record_batch(
        {
            "id": [1, 2],
            "name": ["a", "b"],
            "age": [3, 4],
            "_OP": ["u", "D"],
            "_Commit_TS": [7, 8],
            "_BEFORE": pa.concat_arrays([before, pa.nulls(1, BEFORE_TYPE_UPPER)]),
        }
    )
    update, delete = read(batch)
    assert (update.op, update.commit_ts, update.row, update.before) == (
        Op.UPDATE,
        7,
        (1, "a", 3),
        (1, "old", 2),
    )
    assert (delete.op, delete.commit_ts, delete.before) == (Op.DELETE, 8, (2, "b", 4))
    custom = pa.record_batch({"id": [1], "name": ["a"], "age": [3], "Kind": ["d"]})
    (change,) = read(custom, layout=InputLayout(op_column="kind"))
    assert change.op is Op.DELETE


@pytest.mark.parametrize(
    ("names", "shown", "option"),
    [
        (("_op", "_OP"), "'_op' and '_OP'", "op-column"),
        (("_Commit_Ts", "_commit_ts"), "'_Commit_Ts' and '_commit_ts'", "commit-ts-column"),
        (("_op", "_op"), "'_op' and '_op'", "op-column"),
    ],
)
def test_two_spellings_of_a_metadata_column_are_refused(names, shown, option):
    columns = {"id": [1], "name": ["a"], "age": [3]}
    arrays = [pa.array(v) for v in columns.values()]
    arrays += [pa.array(["c"]) if "op" in n else pa.array([5]) for n in names]
    batch = pa.RecordBatch.from_arrays(arrays, names=[*columns, *names])
    with pytest.raises(SchemaError) as info:
        read(batch)
    message = str(info.value)
    assert shown in message and f"option '{option}'" in message


def test_layout_bind_names_the_frames_spelling():
    bound = InputLayout(op_column="kind").bind(["ID", "KIND", "_Table"])
    assert (bound.op_column, bound.table_column, bound.commit_ts_column) == (
        "KIND",
        "_Table",
        "_commit_ts",
    )


def test_empty_batch_has_no_changes():
    batch = pa.record_batch({"id": pa.array([], pa.int64())})
    assert read(batch) == []


# --- rows, ops and commit ts ------------------------------------------------------------


def test_insert_by_default_in_input_order():
    batch = pa.record_batch({"id": [3, 1, 2], "name": ["c", "a", None], "age": [30, 10, None]})
    changes = read(batch, commit_ts=42)
    assert [c.row for c in changes] == [(3, "c", 30), (1, "a", 10), (2, None, None)]
    assert all(c.op is Op.INSERT and c.before is None and c.commit_ts == 42 for c in changes)
    assert all(c.table is USERS for c in changes)


@pytest.mark.parametrize(
    ("spelling", "op"),
    [
        ("c", Op.INSERT),
        ("C", Op.INSERT),
        ("r", Op.INSERT),
        ("R", Op.INSERT),
        ("insert", Op.INSERT),
        ("INSERT", Op.INSERT),
        ("Insert", Op.INSERT),
        ("u", Op.UPDATE),
        ("U", Op.UPDATE),
        ("update", Op.UPDATE),
        ("UPDATE", Op.UPDATE),
        ("d", Op.DELETE),
        ("D", Op.DELETE),
        ("delete", Op.DELETE),
        ("DeLeTe", Op.DELETE),
    ],
)
def test_op_spellings(spelling, op):
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": [spelling]})
    (change,) = read(batch)
    assert change.op is op
    if op is Op.DELETE:
        assert (change.row, change.before) == (None, (1, "a", 1))
    else:
        assert (change.row, change.before) == ((1, "a", 1), None)


def test_op_dictionary_column():
    ops = pa.array(["u", "c", "u"]).dictionary_encode()
    batch = pa.record_batch(
        {"id": [1, 2, 3], "name": ["a", "b", "c"], "age": [1, 2, 3], "_op": ops}
    )
    assert [c.op for c in read(batch)] == [Op.UPDATE, Op.INSERT, Op.UPDATE]


def test_unknown_op_names_value_and_allowed():
    batch = pa.record_batch(
        {"id": [1, 2], "name": ["a", "b"], "age": [1, 2], "_op": ["c", "upsert"]}
    )
    with pytest.raises(InputError) as info:
        read(batch)
    message = str(info.value)
    assert "column '_op' of shop.users: value 'upsert' is not an operation" in message
    assert "c, r, u, d, INSERT, UPDATE, DELETE" in message
    assert info.value.column == "_op" and info.value.value == "upsert"


def test_null_op_is_an_error():
    batch = pa.record_batch(
        {"id": [1], "name": ["a"], "age": [1], "_op": pa.array([None], pa.string())}
    )
    with pytest.raises(InputError, match="column '_op' of shop.users: value NULL"):
        read(batch)


def test_op_column_must_be_string():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": [1]})
    with pytest.raises(SchemaError, match="'_op'"):
        read(batch)


def test_commit_ts_bigint_and_null_default():
    batch = pa.record_batch(
        {"id": [1, 2], "name": ["a", "b"], "age": [1, 2], "_commit_ts": pa.array([7, None])}
    )
    assert [c.commit_ts for c in read(batch, commit_ts=99)] == [7, 99]


def test_commit_ts_uint64():
    big = (1 << 64) - 1
    batch = pa.record_batch(
        {"id": [1], "name": ["a"], "age": [1], "_commit_ts": pa.array([big], pa.uint64())}
    )
    assert read(batch)[0].commit_ts == big


def test_commit_ts_from_timestamp():
    instant = dt.datetime(2020, 6, 12, 6, 29, 32, 224999, tzinfo=UTC)
    stamps = pa.array([instant, None], pa.timestamp("us", tz="Asia/Shanghai"))
    batch = pa.record_batch({"id": [1, 2], "name": ["a", "b"], "age": [1, 2], "_commit_ts": stamps})
    first, second = read(batch, commit_ts=5)
    assert first.commit_ts == tso.compose(1_591_943_372_224) == 1591943372224 << 18
    assert second.commit_ts == 5


def test_commit_ts_negative_is_an_error():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_commit_ts": [-5]})
    with pytest.raises(
        InputError, match=r"column '_commit_ts' of shop\.users: value -5 is negative"
    ):
        read(batch)


def test_commit_ts_zero_is_an_error():
    # TSO 0 is no commit, and a batch whose max commit ts is 0 would send no watermark.
    batch = pa.record_batch({"id": [1, 2], "name": ["a", "b"], "age": [1, 1], "_commit_ts": [9, 0]})
    with pytest.raises(InputError, match=r"column '_commit_ts' of shop\.users: value 0 is commit"):
        read(batch)
    epoch = pa.array([dt.datetime(1970, 1, 1, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_commit_ts": epoch})
    with pytest.raises(InputError, match="value 1970-01-01 00:00:00.000000Z is commit ts 0"):
        read(batch)


def test_commit_ts_before_epoch_is_an_error():
    early = pa.array([dt.datetime(1969, 12, 31, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_commit_ts": early})
    with pytest.raises(InputError, match="before 1970-01-01"):
        read(batch)


def test_commit_ts_without_time_zone_is_rejected():
    naive = pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("us"))
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_commit_ts": naive})
    with pytest.raises(SchemaError, match="without time zone"):
        read(batch)


def test_commit_ts_of_wrong_type_is_rejected():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_commit_ts": ["7"]})
    with pytest.raises(SchemaError, match="bigint TSO or a timestamp"):
        read(batch)


# --- tables: defaults, multi-table frames -----------------------------------------------

ORDERS = make_table(
    Column("id", mysql("int"), nullable=False),
    Column("total", mysql("decimal", 10, 2)),
    name="orders",
)
CATALOG = {("shop", "users"): USERS, ("shop", "orders"): ORDERS}


def test_multi_table_rows_keep_input_order():
    batch = pa.record_batch(
        {
            "id": [1, 10, 2, 11],
            "name": ["a", None, "b", None],
            "age": [1, None, 2, None],
            "total": pa.array([None, D("1.5"), None, D("2")], pa.decimal128(10, 2)),
            "_table": ["users", "orders", "users", "orders"],
            "_op": ["c", "d", "u", "c"],
            "_commit_ts": [1, 2, 3, 4],
        }
    )
    changes = read(batch, CATALOG, name=None)
    assert [c.table.table for c in changes] == ["users", "orders", "users", "orders"]
    assert [c.commit_ts for c in changes] == [1, 2, 3, 4]
    assert [c.op for c in changes] == [Op.INSERT, Op.DELETE, Op.UPDATE, Op.INSERT]
    assert changes[0].row == (1, "a", 1)
    assert changes[1].before == (10, "1.50") and changes[1].row is None
    assert changes[2].row == (2, "b", 2)
    assert changes[3].row == (11, "2.00")


def test_database_column_and_null_falls_back_to_option():
    other = make_table(Column("id", mysql("bigint"), nullable=False), name="users")
    other = TableSchema("crm", "users", other.columns, other.indexes)
    catalog = {("shop", "users"): USERS, ("crm", "users"): other}
    batch = pa.record_batch(
        {
            "id": [1, 2, 3],
            "name": ["a", "b", "c"],
            "age": [1, 2, 3],
            "_database": pa.array(["crm", None, "shop"]),
            "_table": pa.array([None, "users", "users"]),
        }
    )
    changes = read(batch, catalog)
    assert [c.table.database for c in changes] == ["crm", "shop", "shop"]
    assert [c.row for c in changes] == [(1,), (2, "b", 2), (3, "c", 3)]


def test_single_value_table_column():
    batch = pa.record_batch(
        {"id": [1, 2], "total": pa.array([1, 2]), "_table": ["orders", "orders"]}
    )
    changes = read(batch, CATALOG, name=None)
    assert [c.row for c in changes] == [(1, "1.00"), (2, "2.00")]


def test_missing_table_name_without_column():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1]})
    with pytest.raises(InputError, match="no table name: the input has no '_table' column"):
        read(batch, name=None)


def test_missing_database_name_without_column():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1]})
    with pytest.raises(InputError, match="option 'database' is not set"):
        read(batch, database=None)


def test_null_table_name_without_default():
    batch = pa.record_batch(
        {"id": [1, 2], "name": ["a", "b"], "age": [1, 2], "_table": pa.array(["users", None])}
    )
    with pytest.raises(InputError, match="no table name for row 1: column '_table' is null"):
        read(batch, name=None)


def test_empty_table_name_without_default():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_table": [""]})
    with pytest.raises(InputError, match="no table name for row 0"):
        read(batch, name=None)


def test_missing_input_column_is_a_schema_error():
    batch = pa.record_batch({"id": [1], "name": ["a"]})
    with pytest.raises(SchemaError, match=r"column 'age' of shop\.users is not in the input"):
        read(batch)


def test_column_names_match_case_insensitively():
    batch = pa.record_batch({"ID": [1], "Name": ["a"], "AGE": [2]})
    assert read(batch)[0].row == (1, "a", 2)


def test_columns_follow_table_order_not_input_order():
    batch = pa.record_batch({"age": [2], "extra": [9], "name": ["a"], "id": [1]})
    assert read(batch)[0].row == (1, "a", 2)


# --- _before ----------------------------------------------------------------------------

BEFORE_TYPE = pa.struct([("id", pa.int64()), ("name", pa.string()), ("age", pa.int64())])


def test_update_with_before_and_null_before():
    before = pa.array(
        [{"id": 1, "name": "old", "age": 9}, None, {"id": 3, "name": "x", "age": 1}], BEFORE_TYPE
    )
    batch = pa.record_batch(
        {
            "id": [1, 2, 3],
            "name": ["new", "b", "c"],
            "age": [10, 2, 3],
            "_op": ["u", "u", "c"],
            "_before": before,
        }
    )
    changes = read(batch)
    assert (changes[0].row, changes[0].before) == ((1, "new", 10), (1, "old", 9))
    assert (changes[1].row, changes[1].before) == ((2, "b", 2), None)
    assert (changes[2].op, changes[2].before) == (Op.INSERT, None)


def test_update_without_before_column():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["UPDATE"]})
    (change,) = read(batch)
    assert (change.op, change.row, change.before) == (Op.UPDATE, (1, "a", 1), None)


def test_before_values_are_converted_and_checked():
    before_type = pa.struct([("age", pa.int64()), ("id", pa.int64()), ("name", pa.string())])
    before = pa.array([{"id": 1, "name": "a", "age": 300}], before_type)
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["u"], "_before": before})
    with pytest.raises(InputError) as info:
        read(batch)
    assert str(info.value) == (
        "ticdc: column 'age' (in '_before') of shop.users: value 300 is out of range for "
        "tinyint unsigned (0..255)"
    )


def test_before_null_in_key_column_is_an_error():
    before = pa.array([{"id": None, "name": "a", "age": 1}], BEFORE_TYPE)
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["u"], "_before": before})
    with pytest.raises(
        InputError, match=r"column 'id' \(in '_before'\) of shop\.users: value NULL"
    ):
        read(batch)


def test_before_missing_field_is_an_error():
    before = pa.array(
        [{"id": 1, "name": "a"}], pa.struct([("id", pa.int64()), ("name", pa.string())])
    )
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["u"], "_before": before})
    with pytest.raises(InputError, match="column '_before' of shop.users has no field 'age'"):
        read(batch)


def test_before_extra_field_is_an_error():
    kind = pa.struct(
        [("id", pa.int64()), ("name", pa.string()), ("age", pa.int64()), ("x", pa.int8())]
    )
    before = pa.array([{"id": 1, "name": "a", "age": 1, "x": 1}], kind)
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["u"], "_before": before})
    with pytest.raises(InputError, match="has field 'x', which is not a column of shop.users"):
        read(batch)


def test_before_fields_naming_one_column_twice_are_an_error():
    kind = pa.struct(
        [("id", pa.int64()), ("name", pa.string()), ("age", pa.int64()), ("ID", pa.int64())]
    )
    before = pa.array([{"id": 1, "name": "a", "age": 1, "ID": 2}], kind)
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["u"], "_before": before})
    with pytest.raises(InputError, match="has fields 'id' and 'ID', which name the same column"):
        read(batch)


def test_before_must_be_a_struct():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["u"], "_before": ["x"]})
    with pytest.raises(InputError, match="column '_before' of shop.users has Arrow type string"):
        read(batch)


def test_before_in_multi_table_frame_may_hold_other_tables_columns():
    kind = pa.struct(
        [("id", pa.int64()), ("name", pa.string()), ("age", pa.int64()), ("total", pa.int64())]
    )
    before = pa.array(
        [{"id": 1, "name": "o", "age": 5, "total": None}, {"id": 7, "total": 3}], kind
    )
    batch = pa.record_batch(
        {
            "id": [1, 7],
            "name": ["n", None],
            "age": [6, None],
            "total": pa.array([None, 4]),
            "_table": ["users", "orders"],
            "_op": ["u", "u"],
            "_before": before,
        }
    )
    first, second = read(batch, CATALOG, name=None)
    assert first.before == (1, "o", 5)
    assert (second.row, second.before) == ((7, "4.00"), (7, "3.00"))


def test_delete_ignores_before_column():
    before = pa.array([{"id": 9, "name": "z", "age": 9}], BEFORE_TYPE)
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": [1], "_op": ["d"], "_before": before})
    (change,) = read(batch)
    assert (change.row, change.before) == (None, (1, "a", 1))


# --- NOT NULL and key columns -----------------------------------------------------------


def test_null_in_primary_key_is_an_error():
    batch = pa.record_batch({"id": pa.array([1, None]), "name": ["a", "b"], "age": [1, 2]})
    with pytest.raises(InputError) as info:
        read(batch)
    assert str(info.value) == (
        "ticdc: column 'id' of shop.users: value NULL is not allowed: 'id' is a primary or "
        "handle key column"
    )
    assert (info.value.table, info.value.column, info.value.value) == ("shop.users", "id", None)


def test_null_in_not_null_column_is_an_error():
    table = make_table(
        Column("id", mysql("int"), nullable=False), Column("v", mysql("int"), nullable=False)
    )
    batch = pa.record_batch({"id": [1], "v": pa.array([None], pa.int64())})
    with pytest.raises(InputError, match="'v' is a NOT NULL column"):
        read(batch, table)


def test_null_in_handle_key_is_an_error():
    class WithHandle(TableSchema):
        @property
        def handle_key(self) -> tuple[str, ...]:
            return ("code",)

    table = WithHandle("shop", "t", (Column("code", mysql("varchar", 5)),), ())
    batch = pa.record_batch({"code": pa.array([None], pa.string())})
    with pytest.raises(InputError, match="'code' is a primary or handle key column"):
        read(batch, table)


def test_nullable_column_all_null():
    assert convert(pa.array([None, None], pa.int64()), mysql("int")) == [None, None]


# --- integer types ----------------------------------------------------------------------

INT_RANGES = [
    ("tinyint", False, -128, 127),
    ("tinyint", True, 0, 255),
    ("smallint", False, -32768, 32767),
    ("smallint", True, 0, 65535),
    ("mediumint", False, -8388608, 8388607),
    ("mediumint", True, 0, 16777215),
    ("int", False, -(2**31), 2**31 - 1),
    ("int", True, 0, 2**32 - 1),
    ("bigint", False, -(2**63), 2**63 - 1),
]


@pytest.mark.parametrize(("base", "unsigned", "low", "high"), INT_RANGES)
def test_integer_limits(base, unsigned, low, high):
    kind = mysql(base, unsigned=unsigned)
    assert convert(pa.array([low, high, None], pa.int64()), kind) == [low, high, None]
    name = base + (" unsigned" if unsigned else "")
    if low > -(2**63):
        message = convert_error(pa.array([low - 1], pa.int64()), kind)
        assert f"value {low - 1} is out of range for {name} ({low}..{high})" in message
    if high < 2**63 - 1:
        message = convert_error(pa.array([high + 1], pa.int64()), kind)
        assert f"value {high + 1} is out of range for {name} ({low}..{high})" in message


def test_out_of_range_message_names_table_column_value_and_range():
    batch = pa.record_batch({"id": [1], "name": ["a"], "age": pa.array([300], pa.int32())})
    with pytest.raises(InputError) as info:
        read(batch)
    assert str(info.value) == (
        "ticdc: column 'age' of shop.users: value 300 is out of range for tinyint unsigned (0..255)"
    )
    assert (info.value.table, info.value.column, info.value.value) == ("shop.users", "age", 300)


def test_bigint_unsigned_from_uint64_and_decimal():
    kind = mysql("bigint", unsigned=True)
    top = 2**64 - 1
    assert convert(pa.array([0, top], pa.uint64()), kind) == [0, top]
    assert convert(pa.array([D(top), D(5)], pa.decimal128(20, 0)), kind) == [top, 5]
    assert "out of range for bigint unsigned" in convert_error(pa.array([-1]), kind)


def test_bigint_from_uint64_too_large():
    message = convert_error(pa.array([2**63], pa.uint64()), mysql("bigint"))
    assert f"value {2**63} is out of range for bigint" in message


@pytest.mark.parametrize(
    ("arr", "expected"),
    [
        (pa.array([True, False, None]), [1, 0, None]),
        (pa.array(["12", "-3", None]), [12, -3, None]),
        (pa.array([2.0, -1.0]), [2, -1]),
        (pa.array([D("7.0")], pa.decimal128(5, 1)), [7]),
        (pa.array([1, 2], pa.int8()), [1, 2]),
        (pa.array([1, 2], pa.uint16()), [1, 2]),
        (pa.array([5, 5, 6]).dictionary_encode(), [5, 5, 6]),
    ],
)
def test_integer_from_other_arrow_types(arr, expected):
    assert convert(arr, mysql("int")) == expected


@pytest.mark.parametrize(
    ("arr", "shown"),
    [
        (pa.array(["12", "x"]), "'x'"),
        (pa.array([1.5]), "1.5"),
        (pa.array([D("1.5")], pa.decimal128(5, 1)), "1.5"),
    ],
)
def test_integer_from_non_integers_is_an_error(arr, shown):
    message = convert_error(arr, mysql("int"))
    assert f"value {shown} is not an integer in the range of int" in message


def test_integer_from_date_is_a_schema_error():
    message = convert_error(pa.array([dt.date(2020, 1, 1)]), mysql("int"), SchemaError)
    assert "column 'v' of shop.users has Arrow type date32[day]" in message
    assert "cannot be written as MySQL int" in message


def test_boolean_as_tinyint_1():
    assert convert(pa.array([True, False]), mysql("tinyint", 1)) == [1, 0]
    assert convert(pa.array([True]), mysql("boolean")) == [1]


def test_year():
    kind = mysql("year")
    assert convert(pa.array([0, 1901, 2155, None], pa.int32()), kind) == [0, 1901, 2155, None]
    for bad in (1900, 2156, 20, -1):
        assert f"value {bad} is out of range for year" in convert_error(pa.array([bad]), kind)


def test_bit():
    assert convert(pa.array([0, 31, None]), mysql("bit", 5)) == [0, 31, None]
    assert convert(pa.array([True, False]), mysql("bit", 1)) == [1, 0]
    assert convert(pa.array([b"\x01\x00", b"A"]), mysql("bit", 10)) == [256, 65]
    assert convert(pa.array([2**64 - 1], pa.uint64()), mysql("bit", 64)) == [2**64 - 1]
    assert "value 32 is out of range for bit(5) (0..31)" in convert_error(
        pa.array([32]), mysql("bit", 5)
    )
    assert "out of range for bit(8)" in convert_error(pa.array([b"\x01\x00"]), mysql("bit", 8))


# --- floating point ----------------------------------------------------------------------


def test_float_is_rounded_to_float32():
    (value,) = convert(pa.array([3.14]), mysql("float"))
    assert value == struct.unpack("f", struct.pack("f", 3.14))[0]
    assert convert(pa.array([1.5, None], pa.float32()), mysql("float")) == [1.5, None]
    assert convert(pa.array([3]), mysql("float")) == [3.0]


def test_double():
    assert convert(pa.array([0.1, -2.5, None]), mysql("double")) == [0.1, -2.5, None]
    assert convert(pa.array([1.5], pa.float32()), mysql("double")) == [1.5]
    assert convert(pa.array([D("1.25")], pa.decimal128(5, 2)), mysql("double")) == [1.25]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_errors(bad):
    assert "is not a number MySQL double can store" in convert_error(
        pa.array([1.0, bad]), mysql("double")
    )


def test_float_overflow_is_an_error():
    message = convert_error(pa.array([1e300]), mysql("float"))
    assert "value 1e+300 is not a number MySQL float can store" in message


def test_unsigned_double_rejects_negative():
    assert "is negative" in convert_error(pa.array([-1.0]), mysql("double", unsigned=True))


def test_float_from_string_is_a_schema_error():
    convert_error(pa.array(["1.5"]), mysql("double"), SchemaError)


# --- decimal ----------------------------------------------------------------------------


def test_decimal_same_scale():
    arr = pa.array([D("1.50"), D("-1.50"), D("0"), D("12345678.99"), None], pa.decimal128(10, 2))
    assert convert(arr, mysql("decimal", 10, 2)) == [
        "1.50",
        "-1.50",
        "0.00",
        "12345678.99",
        None,
    ]


def test_decimal_scale_zero():
    kind = mysql("decimal", 10, 0)
    assert convert(pa.array([D("12"), D("-7")], pa.decimal128(10, 0)), kind) == ["12", "-7"]
    assert convert(pa.array([D("12")], pa.decimal128(10, 0)), mysql("decimal")) == ["12"]


def test_decimal_large_scale_never_uses_exponent_form():
    kind = mysql("decimal", 20, 8)
    arr = pa.array(
        [D("0"), D("0.00000001"), D("-0.00000001"), D("-0.5"), D("123.45678901")],
        pa.decimal128(20, 8),
    )
    assert convert(arr, kind) == [
        "0.00000000",
        "0.00000001",
        "-0.00000001",
        "-0.50000000",
        "123.45678901",
    ]
    wide = mysql("decimal", 12, 6)
    assert convert(pa.array([D("2333.654321")], pa.decimal128(12, 6)), wide) == ["2333.654321"]


def test_decimal_rescales_up():
    arr = pa.array([D("1.5"), D("-2")], pa.decimal128(5, 1))
    assert convert(arr, mysql("decimal", 10, 3)) == ["1.500", "-2.000"]


def test_decimal_rounds_extra_digits_half_away_from_zero():
    arr = pa.array([D("1.555"), D("-1.555"), D("1.554"), D("9.995")], pa.decimal128(10, 3))
    assert convert(arr, mysql("decimal", 10, 2)) == ["1.56", "-1.56", "1.55", "10.00"]


def test_decimal_wide_types_use_decimal256():
    kind = mysql("decimal", 65, 30)
    arr = pa.array([D("12345678901234567890.123456789")], pa.decimal128(38, 9))
    assert convert(arr, kind) == ["12345678901234567890.123456789000000000000000000000"]


def test_decimal_precision_overflow():
    kind = mysql("decimal", 5, 2)
    arr = pa.array([D("999.99"), D("1000.00")], pa.decimal128(10, 2))
    message = convert_error(arr, kind)
    assert "value 1000.00 does not fit decimal(5,2): at most 3 integer digits" in message
    assert "does not fit" in convert_error(pa.array([D("-1000")], pa.decimal128(10, 0)), kind)
    # rounding can carry into a new integer digit
    assert "does not fit" in convert_error(pa.array([D("999.995")], pa.decimal128(10, 3)), kind)


def test_decimal_unsigned_rejects_negative():
    kind = mysql("decimal", 5, 2, unsigned=True)
    assert "is negative" in convert_error(pa.array([D("-1")], pa.decimal128(5, 0)), kind)


def test_decimal_from_integers_floats_and_strings():
    kind = mysql("decimal", 10, 2)
    assert convert(pa.array([12, -3, None]), kind) == ["12.00", "-3.00", None]
    assert convert(pa.array([2.675, 0.125, -0.125]), kind) == ["2.68", "0.13", "-0.13"]
    assert convert(pa.array(["1.005", " 7 ", "-0.5"]), kind) == ["1.01", "7.00", "-0.50"]
    assert convert(pa.array([True]), kind) == ["1.00"]
    assert "is not a number for decimal(10,2)" in convert_error(pa.array(["abc"]), kind)
    assert "is not a number" in convert_error(pa.array([float("nan")]), kind)
    assert "does not fit" in convert_error(pa.array(["123456789"]), kind)


def test_decimal_from_date_is_a_schema_error():
    convert_error(pa.array([dt.date(2020, 1, 1)]), mysql("decimal", 10, 2), SchemaError)


# --- date and time ----------------------------------------------------------------------


def test_date():
    arr = pa.array([dt.date(2020, 1, 2), dt.date(1, 1, 1), dt.date(9999, 12, 31), None])
    assert convert(arr, mysql("date")) == ["2020-01-02", "0001-01-01", "9999-12-31", None]
    assert convert(pa.array([0], pa.date64()), mysql("date")) == ["1970-01-01"]


def test_date_from_strings():
    kind = mysql("date")
    assert convert(pa.array(["2020-02-29", "0000-00-00"]), kind) == ["2020-02-29", "0000-00-00"]
    for bad in ("2021-02-29", "2020-1-2", "20200102"):
        assert "is not a date 'YYYY-MM-DD'" in convert_error(pa.array([bad]), kind)


def test_date_out_of_range():
    arr = pa.array([dt.date(2020, 1, 1), None], pa.date32()).cast(pa.int32())
    arr = pa.array([3_000_000], pa.int32()).cast(pa.date32())
    assert "out of range for date" in convert_error(arr, mysql("date"))


NTZ = pa.timestamp("us")


@pytest.mark.parametrize(
    ("fsp", "expected"),
    [
        (None, "2020-01-02 03:04:05"),
        (0, "2020-01-02 03:04:05"),
        (1, "2020-01-02 03:04:05.9"),
        (3, "2020-01-02 03:04:05.999"),
        (6, "2020-01-02 03:04:05.999999"),
    ],
)
def test_datetime_fsp_digits_are_truncated(fsp, expected):
    arr = pa.array([dt.datetime(2020, 1, 2, 3, 4, 5, 999999), None], NTZ)
    assert convert(arr, mysql("datetime", scale=fsp)) == [expected, None]


def test_datetime_ntz_is_rendered_as_is_whatever_the_time_zone():
    arr = pa.array([dt.datetime(2020, 1, 2, 3, 4, 5, 120000)], NTZ)
    assert convert(arr, mysql("datetime", scale=3), time_zone="Asia/Shanghai") == [
        "2020-01-02 03:04:05.120"
    ]


def test_datetime_from_instant_uses_time_zone():
    arr = pa.array([dt.datetime(2020, 1, 1, 20, 0, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    assert convert(arr, mysql("datetime"), time_zone="Asia/Shanghai") == ["2020-01-02 04:00:00"]


def test_datetime_before_epoch_and_other_units():
    arr = pa.array([-1], NTZ)
    assert convert(arr, mysql("datetime", scale=6)) == ["1969-12-31 23:59:59.999999"]
    assert convert(arr, mysql("datetime", scale=2)) == ["1969-12-31 23:59:59.99"]
    assert convert(pa.array([1500], pa.timestamp("ms")), mysql("datetime", scale=6)) == [
        "1970-01-01 00:00:01.500000"
    ]
    assert convert(pa.array([1], pa.timestamp("s")), mysql("datetime", scale=3)) == [
        "1970-01-01 00:00:01.000"
    ]
    assert convert(pa.array([1_123_456_789], pa.timestamp("ns")), mysql("datetime", scale=6)) == [
        "1970-01-01 00:00:01.123456"
    ]
    assert convert(pa.array([dt.date(2020, 1, 2)]), mysql("datetime", scale=1)) == [
        "2020-01-02 00:00:00.0"
    ]


def test_datetime_from_strings():
    kind = mysql("datetime", scale=3)
    arr = pa.array(["2020-01-02 03:04:05", "2020-01-02T03:04:05.123456", "0000-00-00 00:00:00"])
    assert convert(arr, kind) == [
        "2020-01-02 03:04:05.000",
        "2020-01-02 03:04:05.123",
        "0000-00-00 00:00:00.000",
    ]
    for bad in ("2020-13-01 00:00:00", "2020-01-02", "2020-01-02 24:00:00"):
        assert "is not a datetime" in convert_error(pa.array([bad]), kind)


def test_datetime_out_of_range():
    arr = pa.array([dt.datetime(9999, 12, 31, 23, 0, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    message = convert_error(arr, mysql("datetime"), time_zone="Asia/Shanghai")
    assert "out of range for datetime" in message


def test_timestamp_rendered_in_time_zone():
    instant = dt.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    arr = pa.array([instant, None], pa.timestamp("us", tz="UTC"))
    kind = mysql("timestamp", scale=3)
    assert convert(arr, kind) == ["2020-01-02 03:04:05.123", None]
    assert convert(arr, kind, time_zone="Asia/Shanghai") == ["2020-01-02 11:04:05.123", None]
    assert convert(arr, kind, time_zone="America/New_York") == ["2020-01-01 22:04:05.123", None]
    shanghai = arr.cast(pa.timestamp("us", tz="Asia/Shanghai"))
    assert convert(shanghai, mysql("timestamp")) == ["2020-01-02 03:04:05", None]


def test_timestamp_range():
    kind = mysql("timestamp", scale=6)
    ok = pa.array([1_000_000, 2147483647_999999], pa.timestamp("us", tz="UTC"))
    assert convert(ok, kind) == ["1970-01-01 00:00:01.000000", "2038-01-19 03:14:07.999999"]
    for bad in (0, 2147483648_000000):
        arr = pa.array([bad], pa.timestamp("us", tz="UTC"))
        assert "out of range for timestamp" in convert_error(arr, kind)


def test_timestamp_from_ntz_is_a_wall_clock_in_time_zone():
    kind = mysql("timestamp")
    # 1970-01-01 08:00:00 in Shanghai is the epoch: below TIMESTAMP's range
    early = pa.array([dt.datetime(1970, 1, 1, 8, 0, 0)], NTZ)
    assert "out of range for timestamp" in convert_error(early, kind, time_zone="Asia/Shanghai")
    assert convert(early, kind, time_zone="UTC") == ["1970-01-01 08:00:00"]


def test_unknown_time_zone_is_a_config_error():
    arr = pa.array([dt.datetime(2020, 1, 1, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    message = convert_error(arr, mysql("timestamp"), ConfigError, time_zone="Mars/Olympus")
    assert "option 'time-zone' is 'Mars/Olympus'" in message
    message = convert_error(pa.array(['{"a": 1}']), mysql("json"), ConfigError, time_zone="X/Y")
    assert "option 'time-zone'" in message


def test_datetime_from_int_is_a_schema_error():
    convert_error(pa.array([1]), mysql("datetime"), SchemaError)


def test_time_from_strings():
    kind = mysql("time", scale=3)
    arr = pa.array(["12:34:56.5", "-838:59:59", "838:59:59", "00:00:00", "-00:00:00.0001", None])
    assert convert(arr, kind) == [
        "12:34:56.500",
        "-838:59:59.000",
        "838:59:59.000",
        "00:00:00.000",
        "00:00:00.000",
        None,
    ]
    assert convert(pa.array(["1:02:03.999"]), mysql("time")) == ["01:02:03"]
    assert "out of range for time" in convert_error(pa.array(["839:00:00"]), kind)
    assert "is not a time" in convert_error(pa.array(["12:60:00"]), kind)
    assert "is not a time" in convert_error(pa.array(["noon"]), kind)


def test_time_from_duration_and_time64():
    kind = mysql("time", scale=6)
    durations = pa.array([dt.timedelta(hours=-25, microseconds=-5), dt.timedelta(0), None])
    assert convert(durations, kind) == ["-25:00:00.000005", "00:00:00.000000", None]
    assert convert(pa.array([1_500_000_000], pa.duration("ns")), mysql("time", scale=1)) == [
        "00:00:01.5"
    ]
    assert convert(pa.array([dt.time(1, 2, 3, 456789)]), mysql("time", scale=2)) == ["01:02:03.45"]
    too_long = pa.array([dt.timedelta(hours=839)])
    assert "out of range for time" in convert_error(too_long, kind)


# --- strings and binaries ---------------------------------------------------------------


def test_varchar_length_is_characters():
    kind = mysql("varchar", 5)
    assert convert(pa.array(["héllo", "", None]), kind) == ["héllo", "", None]
    message = convert_error(pa.array(["ok", "héllo!"]), kind)
    assert "value 'héllo!' is 6 characters long; varchar(5) allows at most 5" in message


def test_varchar_long_value_is_shortened_in_the_message():
    message = convert_error(pa.array(["x" * 1000]), mysql("varchar", 10))
    assert "... (1000 long)" in message and "x" * 100 not in message


def test_char_strips_trailing_spaces():
    assert convert(pa.array(["ab  ", " a", None]), mysql("char", 4)) == ["ab", " a", None]
    assert convert(pa.array(["abc   "]), mysql("char", 3)) == ["abc"]


def test_text_types():
    assert convert(pa.array(["x" * 70000], pa.large_string()), mysql("mediumtext")) == ["x" * 70000]
    assert convert(pa.array([b"caf\xc3\xa9"]), mysql("text")) == ["café"]
    assert convert(pa.array([12]), mysql("varchar", 4)) == ["12"]
    message = convert_error(pa.array(["é" * 200]), mysql("tinytext"))
    assert "is 400 bytes long; tinytext allows at most 255" in message
    assert "not valid UTF-8" in convert_error(pa.array([b"\xff"]), mysql("text"))
    convert_error(pa.array([1.5]), mysql("text"), SchemaError)


def test_binary_types():
    assert convert(pa.array([b"ab", b"", None]), mysql("varbinary", 4)) == [b"ab", b"", None]
    assert convert(pa.array([b"ab", b"abcd"]), mysql("binary", 4)) == [b"ab\x00\x00", b"abcd"]
    assert convert(pa.array(["é"]), mysql("blob")) == [b"\xc3\xa9"]
    fixed = pa.array([b"xy"], pa.binary(2))
    assert convert(fixed, mysql("binary", 2)) == [b"xy"]
    assert "is 5 bytes long; varbinary(4) allows at most 4" in convert_error(
        pa.array([b"abcde"]), mysql("varbinary", 4)
    )
    assert "allows at most 255" in convert_error(pa.array([b"x" * 256]), mysql("tinyblob"))
    convert_error(pa.array([1]), mysql("blob"), SchemaError)


# --- ENUM and SET -----------------------------------------------------------------------


def test_enum():
    kind = mysql("enum", elements=("a", "b", "c"))
    arr = pa.array(["a", "c", "B", "", None, "a"])
    assert convert(arr, kind) == [1, 3, 2, 0, None, 1]
    assert convert(pa.array([0, 3]), kind) == [0, 3]
    message = convert_error(pa.array(["a", "z"]), kind)
    assert "value 'z' is not a member of enum('a','b','c')" in message
    assert "out of range" in convert_error(pa.array([4]), kind)


def test_enum_with_empty_member():
    kind = mysql("enum", elements=("x", ""))
    assert convert(pa.array(["", "x"]), kind) == [2, 1]


def test_set():
    kind = mysql("set", elements=("a", "b", "c"))
    assert convert(pa.array(["a,c", "", "b", "C,a", None]), kind) == [5, 0, 2, 5, None]
    assert convert(pa.array([["a", "b"], [], None]), kind) == [3, 0, None]
    assert convert(pa.array([0, 7]), kind) == [0, 7]
    message = convert_error(pa.array(["a,x"]), kind)
    assert "value 'a,x' has 'x', which is not a member of set('a','b','c')" in message
    assert "out of range for set('a','b','c') (bitmask 0..7)" in convert_error(pa.array([8]), kind)


# --- JSON -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"b":1,"a":[1,2.0,"x",true,null]}', '{"a": [1, 2, "x", true, null], "b": 1}'),
        ("[]", "[]"),
        ("{}", "{}"),
        ('"s"', '"s"'),
        ("1.5", "1.5"),
        ("-0.0", "-0"),
        ("1e-7", "1e-7"),
        ("1.5e-10", "1.5e-10"),
        ("0.000001", "0.000001"),
        ("1e21", "1e+21"),
        ("123456789012345678901", "123456789012345680000"),
        ("1e20", "100000000000000000000"),
        ("18446744073709551615", "18446744073709551615"),
        ("18446744073709551616", "18446744073709552000"),
        ("-9223372036854775808", "-9223372036854775808"),
        ('{"k":{"z":1,"a":2},"B":0}', '{"B": 0, "k": {"a": 2, "z": 1}}'),
        ('{"a":1,"a":2}', '{"a": 2}'),
        ('"<&>\\u2028\\u0001\\n\\t\\"\\\\\\b"', '"<&>\\u2028\\u0001\\n\\t\\"\\\\\\u0008"'),
        ('"caf\\u00e9 \\ud83d\\ude00"', '"café 😀"'),
        ('"\\ud800x"', '"\ufffdx"'),
    ],
)
def test_json_from_text_is_canonicalised(text, expected):
    assert convert(pa.array([text]), mysql("json")) == [expected]


# TiDB `marshalFloat64To` / `jsonMarshalStringTo` as linked by TiCDC v8.5.0 (tidb module of
# Nov 2024, before the 2025 changes of pingcap/tidb#58888 and #58894).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.0", "1"),  # no `.0` for integral floats
        ("0.0", "0"),
        ("2.5", "2.5"),
        ("1e2", "100"),  # a float, written without exponent
        ("1.5e15", "1500000000000000"),  # 'f' up to 1e21, not MySQL's 1e15 cut-off
        ("999999999999999999999", "1e+21"),  # beyond uint64: float64
        ("-1e21", "-1e+21"),
        ("1e300", "1e+300"),
        ("1e-6", "0.000001"),  # 'e' only below 1e-6
        ("-1.5e-7", "-1.5e-7"),
        ("1e-100", "1e-100"),
        ("-0", "0"),  # an integer
        ('"\\f\\u001f\\u007f\\u2029"', '"\\u000c\\u001f\x7f\\u2029"'),
    ],
)
def test_json_go_number_and_string_rules(text, expected):
    assert convert(pa.array([text]), mysql("json")) == [expected]


def test_json_out_of_range_number_is_rejected():
    assert "cannot be stored in JSON" in convert_error(pa.array(["1E400"]), mysql("json"))


def test_json_nested_durations_keep_six_fraction_digits():
    kind = mysql("json")
    values = pa.array([[dt.timedelta(hours=-1, seconds=1)]], pa.list_(pa.duration("us")))
    assert convert(values, kind) == ['["-00:59:59.000000"]']
    assert convert(pa.array([[dt.time(1, 2, 3)]]), kind) == ['["01:02:03.000000"]']


def test_json_invalid_text():
    kind = mysql("json")
    for bad in ("{", "", "NaN", "[1,]", "{'a': 1}"):
        assert "is not valid JSON text" in convert_error(pa.array([bad]), kind)


def test_json_from_binary_text():
    assert convert(pa.array([b'{"b": 2, "a": 1}']), mysql("json")) == ['{"a": 1, "b": 2}']


def test_json_from_struct_map_and_list():
    kind = mysql("json")
    nested = pa.struct(
        [("z", pa.int64()), ("a", pa.list_(pa.float64())), ("m", pa.map_(pa.string(), pa.int32()))]
    )
    arr = pa.array(
        [{"z": 1, "a": [1.0, 0.5], "m": [("y", 1), ("x", 2)]}, None, {"z": None, "a": [], "m": []}],
        nested,
    )
    assert convert(arr, kind) == [
        '{"a": [1, 0.5], "m": {"x": 2, "y": 1}, "z": 1}',
        None,
        '{"a": [], "m": {}, "z": null}',
    ]
    ints = pa.array([[("b", 1)], [(2, 3)]][0:1], pa.map_(pa.string(), pa.int64()))
    assert convert(ints, kind) == ['{"b": 1}']
    int_keys = pa.array([[(2, "x"), (10, "y")]], pa.map_(pa.int64(), pa.string()))
    assert convert(int_keys, kind) == ['{"10": "y", "2": "x"}']
    assert convert(pa.array([["a", None]]), kind) == ['["a", null]']


def test_json_nested_temporal_decimal_and_binary_values():
    kind = mysql("json")
    fields = pa.struct(
        [
            ("d", pa.date32()),
            ("t", pa.timestamp("us", tz="UTC")),
            ("n", pa.decimal128(5, 2)),
            ("b", pa.binary()),
            ("f", pa.bool_()),
        ]
    )
    value = {
        "d": dt.date(2020, 1, 2),
        "t": dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC),
        "n": D("1.50"),
        "b": b"\x01",
        "f": False,
    }
    assert convert(pa.array([value], fields), kind, time_zone="Asia/Shanghai") == [
        '{"b": "base64:type253:AQ==", "d": "2020-01-02", "f": false, "n": 1.5, '
        '"t": "2020-01-02 11:04:05.000000"}'
    ]


def test_json_rejects_non_finite_numbers():
    message = convert_error(pa.array([[float("nan")]]), mysql("json"))
    assert "cannot be stored in JSON" in message


# --- schema problems --------------------------------------------------------------------


def test_unknown_mysql_type_is_a_schema_error():
    message = convert_error(pa.array([1]), mysql("geometry"), SchemaError)
    assert "MySQL type geometry, which the sink cannot write" in message


def test_type_aliases():
    assert convert(pa.array([1]), mysql("integer", unsigned=True)) == [1]
    assert convert(pa.array([D("1.5")], pa.decimal128(3, 1)), mysql("numeric", 5, 2)) == ["1.50"]
    assert convert(pa.array([1.5]), mysql("real")) == [1.5]


def test_invalid_fsp_and_decimal_are_schema_errors():
    convert_error(pa.array(["00:00:00"]), mysql("time", scale=7), SchemaError)
    convert_error(pa.array([1]), mysql("decimal", 70, 2), SchemaError)
    convert_error(pa.array([1]), mysql("bit", 65), SchemaError)


def test_chunked_and_sliced_input():
    batch = pa.record_batch({"id": [0, 1, 2, 3], "name": ["w", "x", "y", "z"], "age": [0, 1, 2, 3]})
    sliced = batch.slice(1, 2)
    assert [c.row for c in read(sliced)] == [(1, "x", 1), (2, "y", 2)]


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([None, "shop", "crm"]), st.integers(0, 40)),
        min_size=1,
        max_size=120,
    )
)
def test_rows_group_by_table_in_order_of_first_appearance(rows: list) -> None:
    """Each table's rows, in input order, as one batch; tables in the order they first
    appear; a null database falls back to the option (the same table as the named one)."""
    batch = pa.record_batch(
        {
            "id": list(range(len(rows))),
            "_database": pa.array([db for db, _ in rows], pa.string()),
            "_table": [f"t{n}" for _, n in rows],
        }
    )
    expected: dict[tuple[str, str], list[int]] = {}
    for position, (db, n) in enumerate(rows):
        expected.setdefault((db or "shop", f"t{n}"), []).append(position)

    def tables(db: str, tb: str) -> TableSchema:
        return TableSchema(db, tb, (Column("id", mysql("bigint"), nullable=False),), ())

    groups = read_change_batches(
        batch,
        layout=InputLayout(),
        tables=tables,
        default_database="shop",
        default_table=None,
        default_commit_ts=1,
        time_zone="UTC",
    )
    got = {(g.table.database, g.table.table): g.positions or list(range(g.rows)) for g in groups}
    assert list(got) == list(expected)
    assert got == expected
    for group in groups:
        ids = group.columns[0]
        assert list(ids.to_pylist() if isinstance(ids, pa.Array) else ids) == (
            group.positions or list(range(group.rows))
        )

"""The avro protocol's column-wise path (`AvroEncoder.encode_batch`, with the messages it
leaves to the row path taken from `encode_row`, as the writer does) gives exactly the
messages of the row path (`encode_row` per event, key-changing UPDATEs split): same keys,
values, sizes and row ends, the same registry requests, or the same error."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.batches import ARROW_FIELDS, COMMIT_TS, change_batches, write_plan
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.reference_table import make_batches, reference_plan, with_commit_ts
from tests.support.row_path import outcome, with_row_path
from tests.support.strategies import record_batches
from ticdc_sink.codec import EncodedBatch
from ticdc_sink.codec.avro import AvroEncoder
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch
from ticdc_sink.writer import key_column_indexes, split_key_update

_MODES = {
    "default": {},
    "strings": {
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
    },
    "extension": {"enable-tidb-extension": "true"},
    "strings+extension": {
        "enable-tidb-extension": "true",
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
    },
}


def _registry() -> FakeRegistry:
    # Ids of four non-zero bytes exercise the whole id in the Confluent header.
    return FakeRegistry(first_id=0x01020304)


def _avro_plan(with_table: bool, mode: str, **options: str) -> Any:
    return write_plan(
        with_table,
        protocol="avro",
        **{"schema-registry": "http://127.0.0.1:1"},
        **_MODES[mode],
        **options,
    )


def _row_path(encoder: AvroEncoder, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> Any:
    events = [e for c in batch.to_changes() for e in split_key_update(c, key_indexes)]
    messages = [encoder.encode_row(e) for e in events]
    ends, total = [], 0
    for change in batch.to_changes():
        total += len(split_key_update(change, key_indexes))
        ends.append(total)
    row_ends = ends if total != batch.rows else None
    return (
        [m.key for m in messages],
        [m.value for m in messages],
        [len(m.key or b"") + len(m.value or b"") + 36 for m in messages],
        row_ends,
    )


def _flat(encoded: EncodedBatch) -> Any:
    keys = encoded.keys if encoded.keys is not None else [encoded.key] * len(encoded.values)
    return (keys, encoded.values, encoded.sizes, encoded.row_ends)


def _batch_path(encoder: AvroEncoder, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> Any:
    """(the messages, whether the column-wise path rendered every one of them)."""
    encoded = encoder.encode_batch(batch, key_indexes)
    rendered = not encoded.row_path
    return _flat(with_row_path(encoded, encoder, batch, key_indexes)), rendered


def _compare(batches: list[pa.RecordBatch], plan: Any) -> int:
    """Both paths on every table batch; the number of batches the fast path rendered."""
    try:
        groups = change_batches(batches, plan)
    except InputError:
        return 0  # the input itself is bad: no encoder is involved
    encoders: dict[tuple[str, str], tuple[AvroEncoder, AvroEncoder, Any, Any]] = {}
    rendered = 0
    for batch in groups:
        table = batch.table
        entry = encoders.get((table.database, table.table))
        if entry is None:
            row_registry, batch_registry = _registry(), _registry()
            entry = encoders[(table.database, table.table)] = (
                AvroEncoder(plan.config.codec, table, topic="t", registry=row_registry),
                AvroEncoder(plan.config.codec, table, topic="t", registry=batch_registry),
                row_registry,
                batch_registry,
            )
        row_encoder, batch_encoder, row_registry, batch_registry = entry
        key_indexes = key_column_indexes(table)
        expected = outcome(_row_path, row_encoder, batch, key_indexes)
        result = outcome(_batch_path, batch_encoder, batch, key_indexes)
        actual = result if result[0] == "error" else ("ok", result[1][0])
        assert actual == expected
        assert batch_registry.calls == row_registry.calls
        assert batch_registry.texts == row_registry.texts
        rendered += actual[0] == "ok" and result[1][1]
    return rendered


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_path_gives_the_row_path_messages(with_table: bool, mode: str, data: Any) -> None:
    batches = data.draw(record_batches(with_table))
    _compare(batches, _avro_plan(with_table, mode))


@pytest.mark.parametrize("mode", list(_MODES))
def test_key_changing_updates_deletes_and_nulls(mode: str) -> None:
    rows = 50
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "u", "u", "d", "c"] * 10),
            "_commit_ts": pa.array(
                [(1 << 63) + i if i % 7 else i + 1 for i in range(rows)], pa.uint64()
            ),
            "_before": pa.array(
                [{"id": i + (i % 3 == 0)} if i % 5 in (1, 2) else None for i in range(rows)],
                pa.struct(ARROW_FIELDS),
            ),
        }
    )
    assert _compare([batch], _avro_plan(False, mode)) == 1


@pytest.mark.parametrize("mode", list(_MODES))
def test_every_type_with_values(mode: str) -> None:
    rows = 6
    values: dict[str, list[Any]] = {
        "c_tinyint": [-128, 127, 0, -1, 63, None],
        "c_int_u": [0, 2**32 - 1, 64, 8191, 8192, None],
        "c_bigint": [-(2**63), 2**63 - 1, -65, 1 << 40, 0, None],
        "c_bool": [True, False, True, None, False, True],
        "c_float": [1.5, -0.0, 3.4e38, 1e-45, None, 0.1],
        "c_double": [1e308, -0.0, 5e-324, None, 0.1, -2.5],
        "c_decimal": [
            Decimal("-0.0050"),
            Decimal("99999999.9999"),
            Decimal(0),
            None,
            Decimal("-99999999.9999"),
            Decimal("0.0128"),
        ],
        "c_decimal_wide": [
            Decimal("-1.0000000001"),
            Decimal("999999.9999999999"),
            None,
            Decimal(0),
            Decimal("-999999.9999999999"),
            Decimal("12.5"),
        ],
        "c_char": ["ab  ", "", None, "a", "é", "<"],
        "c_varchar": ["x" * 20, "中文", None, "", "a\x00b", "y" * 19],
        "c_text": ["t" * 200, "", None, "\u2028", "a", "b"],
        "c_binary": [b"\x00", b"abcd", None, b"", b"\xff\xfe", b"z"],
        "c_blob": [b"\x00" * 10, b"", None, b"x", b"\x80", b"q"],
        "c_date": [
            dt.date(1, 1, 1),
            dt.date(9999, 12, 31),
            None,
            dt.date(2020, 2, 29),
            dt.date(1970, 1, 1),
            dt.date(2000, 1, 1),
        ],
        "c_datetime": [
            dt.datetime(2020, 1, 2, 3, 4, 5, 123456),
            None,
            dt.datetime(1, 1, 1),
            dt.datetime(9999, 12, 31, 23, 59, 59),
            dt.datetime(2000, 1, 1),
            dt.datetime(2001, 1, 1),
        ],
        "c_timestamp": [
            dt.datetime(2020, 1, 2, tzinfo=dt.UTC),
            None,
            dt.datetime(1970, 1, 2, tzinfo=dt.UTC),
            dt.datetime(2037, 1, 1, tzinfo=dt.UTC),
            dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
            dt.datetime(2001, 1, 1, tzinfo=dt.UTC),
        ],
        "c_time": ["-837:59:59.123456", "00:00:00", None, "12:34:56.5", "1:02:03", "838:59:59"],
        "c_year": [0, 1901, 2155, None, 2000, 2024],
        "c_bit": [0, 31, 1, None, 16, 8],
        "c_enum": ["small", "large", None, "MEDIUM", "medium", "small"],
        "c_set": ["", "a,c", None, "a", "c", "a"],
        "c_json": ['{"a": 1}', "[]", None, '"x"', "null", "1.5"],
    }
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.array(values[f.name], f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c", "u", "c", "u", "d", "c"]),
            "_commit_ts": pa.array([5 << 18, 6 << 18, 7 << 18, 7 << 18, 8 << 18, 9 << 18]),
            "_before": pa.nulls(rows, pa.struct(ARROW_FIELDS)),
        }
    )
    assert _compare([batch], _avro_plan(False, mode)) == 1


def test_a_bad_value_raises_the_row_path_error() -> None:
    # ENUM '' is index 0, which the avro protocol rejects (types.ParseEnumValue)
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2], pa.int64()),
            **{f.name: pa.nulls(2, f.type) for f in ARROW_FIELDS[1:] if f.name != "c_enum"},
            "c_enum": pa.array(["small", ""]),
            "_op": pa.array(["c", "c"]),
            "_commit_ts": pa.array([1, 2]),
            "_before": pa.nulls(2, pa.struct(ARROW_FIELDS)),
        }
    )
    plan = _avro_plan(False, "default")
    (change_batch,) = change_batches([batch], plan)
    encoder = AvroEncoder(plan.config.codec, change_batch.table, topic="t", registry=_registry())
    key_indexes = key_column_indexes(change_batch.table)
    encoded = encoder.encode_batch(change_batch, key_indexes)
    assert encoded.row_path == [1]  # only the bad row; the other is rendered column-wise
    with pytest.raises(InputError, match="c_enum") as caught:
        with_row_path(encoded, encoder, change_batch, key_indexes)
    row_encoder = AvroEncoder(
        plan.config.codec, change_batch.table, topic="t", registry=_registry()
    )
    with pytest.raises(InputError) as expected:
        for change in change_batch.to_changes():
            row_encoder.encode_row(change)
    assert str(caught.value) == str(expected.value)


def test_the_benchmark_shapes() -> None:
    """bench_write's batches (10% deletes, 20% updates with `_before`, NULLs) in every
    mode: every batch takes the column-wise path and matches."""
    batches = with_commit_ts(make_batches(2000, size=500))
    for mode in _MODES.values():
        plan = reference_plan("avro", COMMIT_TS, **mode)
        assert _compare(batches, plan) == len(batches)


# --- hand-made batches: defaults (union order), NOT NULL, composite and unique keys, ------
# --- BIGINT UNSIGNED above 2^63, BIT(64), values as Arrow arrays or as lists, bad values --

_KEYED = (
    # name, MySQL type, nullable, default, mounter values, Arrow type (None: a list)
    ("k1", "int", False, None, st.integers(0, 3), pa.int32()),
    ("k2", "varchar(10)", False, None, st.sampled_from(["a", "b", "\u00e9\u4e2d"]), pa.string()),
    ("u1", "bigint unsigned", True, "5", st.integers(0, 2**64 - 1), pa.uint64()),
    ("u2", "bigint unsigned", False, None, st.integers(0, 2**64 - 1), None),
    ("i1", "int", True, "7", st.integers(-(2**31), 2**31 - 1), pa.int64()),
    ("i2", "smallint unsigned", True, None, st.integers(0, 65535), None),
    ("f1", "float", True, "1.5", st.floats(width=32, allow_nan=False), pa.float32()),
    ("f2", "double", False, "0.5", st.floats(allow_nan=False, allow_infinity=False), pa.float64()),
    ("d1", "decimal(10,2)", True, "1.50", st.decimals(-(10**8) + 1, 10**8 - 1, places=2), None),
    ("d2", "decimal(40,3)", True, None, st.decimals(-(10**30), 10**30, places=3), None),
    ("d3", "decimal(5,0)", False, None, st.decimals(-99999, 99999, places=0), pa.string()),
    ("b1", "bit(64)", True, "3", st.integers(0, 2**64 - 1), None),
    ("b2", "bit(1)", False, None, st.integers(0, 1), None),
    ("s1", "text", True, "x", st.text(max_size=70), None),
    ("s2", "longblob", True, None, st.binary(max_size=70), None),
    ("e1", "enum('a','b','c')", True, "b", st.integers(0, 3), None),
    ("e2", "set('a','b')", True, "a", st.integers(0, 3), None),
    ("t1", "datetime(6)", False, None, st.sampled_from(["2020-01-01 00:00:00.000001"]), None),
    ("j1", "json", True, None, st.sampled_from(['{"a": 1}', "[]", "\ud800"]), None),
)


def _keyed_table(key: tuple[str, ...], unique: tuple[str, ...]) -> Any:
    from ticdc_sink.ddl import parse_mysql_type
    from ticdc_sink.schema import Column, Index, TableSchema

    columns = tuple(
        Column(name, parse_mysql_type(type_text), nullable=nullable, default=default)
        for name, type_text, nullable, default, _, _ in _KEYED
    )
    indexes = []
    if key:
        indexes.append(Index("PRIMARY", key, unique=True, primary=True))
    if unique:
        indexes.append(Index(unique[0], unique, unique=True))
    return TableSchema("db", "keyed", columns, tuple(indexes), table_id=1, version=1)


def _mounter(spec: Any, value: Any) -> Any:
    type_text = spec[1]
    if value is None:
        return None
    if type_text.startswith("decimal"):
        return str(value)
    return value


@st.composite
def _keyed_batches(draw: Any, table: Any, bad: bool) -> ChangeBatch:
    rows = draw(st.integers(1, 12))

    def image() -> list[Any]:
        out = []
        for spec in _KEYED:
            nullable = spec[2] or (bad and draw(st.integers(0, 30)) == 0)
            value = draw((st.none() | spec[4]) if nullable else spec[4])
            out.append(_mounter(spec, value))
        return out

    images = [image() for _ in range(rows)]
    ops = draw(st.lists(st.sampled_from([0, 0, 1, 1, 2]), min_size=rows, max_size=rows))
    before_rows = [i for i, op in enumerate(ops) if op == 1 and draw(st.booleans())]
    befores = [image() for _ in before_rows]
    if not bad:
        # only what the converter hands over: ENUM 1..3, no lone surrogates
        for row in images + befores:
            if row[15] == 0:
                row[15] = 1
            if row[18] == "\ud800":
                row[18] = "[]"

    def column(j: int, values: list[Any]) -> Any:
        arrow = _KEYED[j][5]
        if arrow is None or (arrow == pa.string() and "\ud800" in values):
            return values
        return pa.array(values, arrow)

    commit = draw(st.none() | st.lists(st.integers(0, 2**64 - 1), min_size=rows, max_size=rows))
    return ChangeBatch(
        table=table,
        rows=rows,
        positions=None,
        op_codes=None if not any(ops) else pa.array(ops, pa.int8()),
        commit_ts=None if commit is None else pa.array(commit, pa.uint64()),
        default_commit_ts=draw(st.integers(0, 2**64 - 1)),
        columns=[column(j, [r[j] for r in images]) for j in range(len(_KEYED))],
        before_rows=before_rows,
        before_columns=[column(j, [r[j] for r in befores]) for j in range(len(_KEYED))]
        if before_rows
        else [],
    )


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize(
    ("key", "unique"),
    [(("k1", "k2"), ()), ((), ()), (("k1",), ("i1",))],
    ids=["composite key", "no key", "key and unique key"],
)
@pytest.mark.parametrize("bad", [False, True], ids=["valid", "bad values"])
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hand_made_batches(mode: str, key: Any, unique: Any, bad: bool, data: Any) -> None:
    from ticdc_sink.config import SinkConfig

    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t",
        "protocol": "avro",
        "schema-registry": "http://127.0.0.1:1",
        **_MODES[mode],
    }
    config = SinkConfig.from_options(options).codec
    table = _keyed_table(key, unique)
    batch = data.draw(_keyed_batches(table, bad))
    key_indexes = key_column_indexes(table)
    row_registry, batch_registry = _registry(), _registry()
    row_encoder = AvroEncoder(config, table, topic="t", registry=row_registry)
    batch_encoder = AvroEncoder(config, table, topic="t", registry=batch_registry)
    expected = outcome(_row_path, row_encoder, batch, key_indexes)
    result = outcome(_batch_path, batch_encoder, batch, key_indexes)
    actual = result if result[0] == "error" else ("ok", result[1][0])
    assert actual == expected
    assert batch_registry.calls == row_registry.calls
    assert batch_registry.texts == row_registry.texts
    if actual[0] == "ok" and not result[1][1]:
        assert bad  # the row path took messages: only for values the writers refuse

"""canal-json column-wise (`CanalJsonEncoder.encode_batch`) gives, message for message, what
the row path (`split_key_update`, then `encode_row` per event) gives: same values, keys,
sizes and row ends, or the same error; the row path is the reference."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from tests.support.batches import EDGE_COLUMNS as COLUMNS
from tests.support.hypothesis_profiles import examples
from tests.support.reference_table import make_batches, reference_plan
from tests.support.row_path import outcome, with_row_path
from ticdc_sink import tso
from ticdc_sink.codec.canal_json import CanalJsonEncoder
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.schema import Index
from ticdc_sink.writer import key_column_indexes, make_plan, split_key_update

COMMIT_TS = tso.compose(1_700_000_000_000)
BUILD_TS_MS = 1_700_000_000_123

# id is the primary key; `u_key` a unique key (a key column for the UPDATE split only).
COLUMN_TYPES = {
    "id": "bigint",
    "u_key": "int",
    **{name: spec[0] for name, spec in COLUMNS.items()},
}
_ARROW_FIELDS = [
    pa.field("id", pa.int64(), nullable=False),
    pa.field("u_key", pa.int32()),
    *(pa.field(name, spec[1]) for name, spec in COLUMNS.items()),
]
_SPARK_TABLE_FIELDS = [
    T.StructField("id", T.LongType(), nullable=False),
    T.StructField("u_key", T.IntegerType()),
    *(T.StructField(name, spec[2]) for name, spec in COLUMNS.items()),
]
_SPARK_SCHEMA = T.StructType(
    [
        *_SPARK_TABLE_FIELDS,
        T.StructField("_op", T.StringType()),
        T.StructField("_commit_ts", T.LongType()),
        T.StructField("_before", T.StructType(_SPARK_TABLE_FIELDS)),
    ]
)
_DECIMALS = {name for name, spec in COLUMNS.items() if pa.types.is_decimal(spec[1])}

# The option sets the tests run with: every canal-json option on and off.
OPTIONS: list[dict[str, str]] = [
    {},
    {"enable-tidb-extension": "true"},
    {"only-output-updated-columns": "true"},
    {"content-compatible": "true", "enable-tidb-extension": "true"},
    {"delete-only-output-handle-key-columns": "true"},
    {
        "delete-only-output-handle-key-columns": "true",
        "only-output-updated-columns": "true",
        "enable-tidb-extension": "true",
    },
    {"enable-tidb-extension": "true", "output-row-key": "true"},
    {
        "enable-tidb-extension": "true",
        "output-row-key": "true",
        "delete-only-output-handle-key-columns": "true",
        "output-raw-change-event": "true",
    },
]


def _config(options: dict[str, str], *, primary_key: bool = True) -> SinkConfig:
    base = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "database": "shop",
        "table": "users",
        "protocol": "canal-json",
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        "time-zone": "Asia/Shanghai",
        **options,
    }
    if not primary_key:  # no handle key: DELETEs with only the key columns carry none
        del base["primary-key"]
        base["force-replicate"] = "true"  # TiCDC writes such a table only with it
    return SinkConfig.from_options(base)


@st.composite
def _images(draw: Any, ids: Any) -> dict[str, Any]:
    image: dict[str, Any] = {"id": draw(ids), "u_key": draw(st.none() | st.integers(0, 2))}
    for name, spec in COLUMNS.items():
        value = draw(st.none() | spec[3])
        if name in _DECIMALS and value is not None:
            value = __import__("decimal").Decimal(value)
        image[name] = value
    return image


@st.composite
def _record_batches(draw: Any) -> pa.RecordBatch:
    ids = st.integers(0, 4)
    rows = draw(st.lists(_images(ids), min_size=1, max_size=8))
    ops = draw(st.lists(st.sampled_from("ccuud"), min_size=len(rows), max_size=len(rows)))
    befores = [draw(_images(ids)) if op == "u" else None for op in ops]
    columns: dict[str, Any] = {
        f.name: pa.array([r[f.name] for r in rows], f.type) for f in _ARROW_FIELDS
    }
    if draw(st.booleans()):
        columns["_op"] = pa.array(ops, pa.string())
    if draw(st.booleans()):
        commit = [COMMIT_TS + draw(st.integers(0, 3 << 18)) for _ in rows]
        columns["_commit_ts"] = pa.array(commit, pa.int64())
    columns["_before"] = pa.array(befores, pa.struct(_ARROW_FIELDS))
    return pa.RecordBatch.from_pydict(columns)


def _change_batch(config: SinkConfig, batch: pa.RecordBatch, *, unique: bool = True) -> ChangeBatch:
    plan = make_plan(config, _SPARK_SCHEMA, COMMIT_TS, batch_id=None)
    (group,) = read_change_batches(
        batch,
        layout=InputLayout(),
        tables=lambda d, t: plan.tables.schema_for(d, t),
        default_database=plan.tables.default_database,
        default_table=plan.tables.default_table,
        default_commit_ts=COMMIT_TS,
        time_zone=config.codec.time_zone,
    )
    if unique:
        index = Index("uk", ("u_key",), unique=True)
        group = attrs.evolve(
            group, table=attrs.evolve(group.table, indexes=(*group.table.indexes, index))
        )
    return group


def _as_lists(batch: ChangeBatch, which: list[bool]) -> ChangeBatch:
    """Some columns as Python lists of mounter values (what events gives for some types)."""

    def convert(columns: list[Any]) -> list[Any]:
        return [
            c.to_pylist() if isinstance(c, pa.Array) and listed else c
            for c, listed in zip(columns, which, strict=False)
        ]

    return attrs.evolve(
        batch, columns=convert(batch.columns), before_columns=convert(batch.before_columns)
    )


def _row_path(encoder: CanalJsonEncoder, batch: ChangeBatch, keys: tuple[int, ...]) -> Any:
    values, sizes, row_ends, split = [], [], [], False
    for change in batch.to_changes():
        events = split_key_update(change, keys)
        split = split or len(events) > 1
        for event in events:
            message = encoder.encode_row(event)
            assert message.key == b""
            values.append(message.value)
            sizes.append(len(message.value) + 36)
        row_ends.append(len(values))
    return values, sizes, row_ends if split else None


def _batch_path(encoder: CanalJsonEncoder, batch: ChangeBatch, keys: tuple[int, ...]) -> Any:
    encoded = with_row_path(encoder.encode_batch(batch, keys), encoder, batch, keys)
    n = len(encoded.values)
    message_keys = encoded.keys if encoded.keys is not None else [encoded.key] * n
    assert message_keys == [b""] * n
    return encoded.values, encoded.sizes, encoded.row_ends


def _check(config: SinkConfig, batch: ChangeBatch) -> None:
    schema = batch.table
    keys = key_column_indexes(schema)
    row = CanalJsonEncoder(config.codec, schema, build_ts_ms=BUILD_TS_MS)
    fast = CanalJsonEncoder(config.codec, schema, build_ts_ms=BUILD_TS_MS)
    expected = outcome(lambda: _row_path(row, batch, keys))
    assert outcome(lambda: _batch_path(fast, batch, keys)) == expected


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_path_sends_what_the_row_path_sends(options: dict[str, str], data: Any) -> None:
    # output-row-key needs the integer handle (`id`), the primary key
    keyed = "output-row-key" in options or data.draw(st.booleans())
    config = _config(options, primary_key=keyed)
    try:
        batch = _change_batch(config, data.draw(_record_batches()), unique=data.draw(st.booleans()))
    except InputError:
        return  # not a batch the writer would encode
    _check(config, batch)
    listed = data.draw(st.lists(st.booleans(), min_size=len(batch.columns)))
    _check(config, _as_lists(batch, listed))


def test_invalid_utf8_text_and_refused_values_match_the_row_path() -> None:
    config = _config({"enable-tidb-extension": "true"})
    record = pa.RecordBatch.from_pydict(
        {f.name: pa.nulls(2, f.type) if f.name != "id" else pa.array([1, 2]) for f in _ARROW_FIELDS}
    )
    batch = _change_batch(config, record)
    position = batch.table.column_position
    columns = list(batch.columns)
    # Text bytes with invalid UTF-8 (easyjson writes one \ufffd per bad byte), a str JSON.
    columns[position("c_text")] = [b"ok\xff<\xe2\x80", "é\u2028"]
    columns[position("c_json")] = ['{"k": "\\u0000"}', None]
    _check(config, attrs.evolve(batch, columns=columns))
    # A value the row path refuses: the same InputError.
    columns[position("c_int_u")] = [1, "2"]
    bad = attrs.evolve(batch, columns=columns)
    keys = key_column_indexes(batch.table)
    encoder = CanalJsonEncoder(config.codec, batch.table, build_ts_ms=1)
    encoded = encoder.encode_batch(bad, keys)
    assert encoded.row_path == [1]  # the row with the refused value, only
    with pytest.raises(InputError):
        with_row_path(encoded, encoder, bad, keys)
    _check(config, bad)


def test_an_update_without_old_row_fails_as_in_the_row_path() -> None:
    config = _config({})
    record = pa.RecordBatch.from_pydict(
        {
            **{
                f.name: pa.nulls(3, f.type) if f.name != "id" else pa.array([1, 2, 3])
                for f in _ARROW_FIELDS
            },
            "_op": pa.array(["c", "u", "d"]),
            "_before": pa.nulls(3, pa.struct(_ARROW_FIELDS)),
        }
    )
    batch = _change_batch(config, record)
    keys = key_column_indexes(batch.table)
    encoder = CanalJsonEncoder(config.codec, batch.table, build_ts_ms=1)
    encoded = encoder.encode_batch(batch, keys)
    assert encoded.row_path == [1]  # the UPDATE, only
    with pytest.raises(InputError, match="has no old row"):
        with_row_path(encoded, encoder, batch, keys)
    _check(config, batch)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_the_benchmark_shapes_match(options: dict[str, str]) -> None:
    record = make_batches(600, size=300)[1]
    # Key-changing updates too: some old ids differ from the new ones.
    before = record.column("_before")
    ids = pc.add(before.field("id"), pa.array([int(i % 7 == 0) for i in range(300)], pa.int64()))
    fields = [ids if name == "id" else before.field(name) for name in before.type.names]
    record = record.set_column(
        record.schema.get_field_index("_before"),
        "_before",
        pa.StructArray.from_arrays(
            fields, names=before.type.names, mask=pc.invert(before.is_valid())
        ),
    )
    record = record.append_column(
        "_commit_ts", pa.array(range(COMMIT_TS, COMMIT_TS + 300), pa.int64())
    )
    plan = reference_plan("canal-json", COMMIT_TS, **options)
    config = plan.config
    (batch,) = read_change_batches(
        record,
        layout=InputLayout(),
        tables=plan.tables.schema_for,
        default_database=plan.tables.default_database,
        default_table=plan.tables.default_table,
        default_commit_ts=COMMIT_TS,
        time_zone="UTC",
    )
    _check(config, batch)
    encoded = CanalJsonEncoder(config.codec, batch.table, build_ts_ms=1).encode_batch(
        batch, key_column_indexes(batch.table)
    )
    assert encoded is not None and encoded.row_ends is not None


def test_an_empty_batch_has_no_messages() -> None:
    config = _config({})
    record = pa.RecordBatch.from_pydict(
        {f.name: pa.array([1]) if f.name == "id" else pa.nulls(1, f.type) for f in _ARROW_FIELDS}
    )
    batch = _change_batch(config, record)
    empty = attrs.evolve(batch, rows=0, columns=[c[:0] for c in batch.columns])
    _check(config, empty)

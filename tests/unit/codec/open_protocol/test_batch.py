"""open-protocol column-wise (`OpenProtocolEncoder.encode_batch`) gives, message for
message, what the row path (`split_key_update`, then `encode_row` per event) gives: same
keys, values, sizes and row ends, or the same error; the row path is the reference."""

from __future__ import annotations

import decimal
import json
from typing import Any

import attrs
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from tests.support.batches import EDGE_COLUMNS as COLUMNS
from tests.support.hypothesis_profiles import examples
from tests.support.row_path import with_row_path
from ticdc_sink import tso
from ticdc_sink.codec.open_protocol import OpenProtocolEncoder
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.schema import Index
from ticdc_sink.writer import key_column_indexes, make_plan, split_key_update

COMMIT_TS = tso.compose(1_700_000_000_000)

COLUMN_TYPES = {"id": "bigint", "u_key": "int", **{n: spec[0] for n, spec in COLUMNS.items()}}
ARROW_FIELDS = [
    pa.field("id", pa.int64(), nullable=False),
    pa.field("u_key", pa.int32()),
    *(pa.field(name, spec[1]) for name, spec in COLUMNS.items()),
]
SPARK_FIELDS = [
    T.StructField("id", T.LongType(), nullable=False),
    T.StructField("u_key", T.IntegerType()),
    *(T.StructField(name, spec[2]) for name, spec in COLUMNS.items()),
]
SPARK_SCHEMA = T.StructType(
    [
        *SPARK_FIELDS,
        T.StructField("_op", T.StringType()),
        T.StructField("_commit_ts", T.LongType()),
        T.StructField("_before", T.StructType(SPARK_FIELDS)),
    ]
)
DECIMALS = {name for name, spec in COLUMNS.items() if pa.types.is_decimal(spec[1])}

# Every option that changes open-protocol's rows, on and off.
OPTIONS: list[dict[str, str]] = [
    {},
    {"only-output-updated-columns": "true"},
    {"open-output-old-value": "false", "large-message-handle-compression": "snappy"},
    {"delete-only-output-handle-key-columns": "true", "only-output-updated-columns": "true"},
]


def config_for(options: dict[str, str]) -> SinkConfig:
    return SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t",
            "database": "shop",
            "table": "users",
            "protocol": "open-protocol",
            "primary-key": "id",
            "column-types": json.dumps(COLUMN_TYPES),
            **options,
        }
    )


@st.composite
def images(draw: Any, ids: Any) -> dict[str, Any]:
    image: dict[str, Any] = {"id": draw(ids), "u_key": draw(st.none() | st.integers(0, 2))}
    for name, spec in COLUMNS.items():
        value = draw(st.none() | spec[3])
        image[name] = decimal.Decimal(value) if name in DECIMALS and value is not None else value
    return image


@st.composite
def record_batches(draw: Any) -> pa.RecordBatch:
    ids = st.integers(0, 4)
    rows = draw(st.lists(images(ids), min_size=1, max_size=8))
    ops = draw(st.lists(st.sampled_from("ccuud"), min_size=len(rows), max_size=len(rows)))
    befores = [draw(st.none() | images(ids)) if op == "u" else None for op in ops]
    columns: dict[str, Any] = {
        f.name: pa.array([r[f.name] for r in rows], f.type) for f in ARROW_FIELDS
    }
    columns["_op"] = pa.array(ops, pa.string())
    if draw(st.booleans()):
        commit = [COMMIT_TS + draw(st.integers(0, 3 << 18)) for _ in rows]
        columns["_commit_ts"] = pa.array(commit, pa.int64())
    columns["_before"] = pa.array(befores, pa.struct(ARROW_FIELDS))
    return pa.RecordBatch.from_pydict(columns)


def change_batch(config: SinkConfig, record: pa.RecordBatch) -> ChangeBatch:
    plan = make_plan(config, SPARK_SCHEMA, COMMIT_TS, batch_id=None)
    (group,) = read_change_batches(
        record,
        layout=InputLayout(),
        tables=plan.tables.schema_for,
        default_database=plan.tables.default_database,
        default_table=plan.tables.default_table,
        default_commit_ts=COMMIT_TS,
        time_zone=config.codec.time_zone,
    )
    index = Index("uk", ("u_key",), unique=True)
    return attrs.evolve(
        group, table=attrs.evolve(group.table, indexes=(*group.table.indexes, index))
    )


def outcome(run: Any) -> Any:
    try:
        return ("ok", run())
    except InputError as exc:  # same error, same words
        return ("error", str(exc))


def row_path(encoder: OpenProtocolEncoder, batch: ChangeBatch, keys: tuple[int, ...]) -> Any:
    messages, row_ends, split = [], [], False
    for change in batch.to_changes():
        events = split_key_update(change, keys)
        split = split or len(events) > 1
        for event in events:
            m = encoder.encode_row(event)
            messages.append((m.key, m.value, len(m.key or b"") + len(m.value or b"") + 36))
        row_ends.append(len(messages))
    return messages, row_ends if split else None


def batch_path(encoder: OpenProtocolEncoder, batch: ChangeBatch, keys: tuple[int, ...]) -> Any:
    encoded = with_row_path(encoder.encode_batch(batch, keys), encoder, batch, keys)
    n = len(encoded.values)
    message_keys = encoded.keys if encoded.keys is not None else [encoded.key] * n
    assert encoded.sizes is not None
    return list(zip(message_keys, encoded.values, encoded.sizes, strict=True)), encoded.row_ends


def check(config: SinkConfig, batch: ChangeBatch) -> None:
    keys = key_column_indexes(batch.table)
    row = OpenProtocolEncoder(config.codec, batch.table)
    fast = OpenProtocolEncoder(config.codec, batch.table)
    assert outcome(lambda: batch_path(fast, batch, keys)) == outcome(
        lambda: row_path(row, batch, keys)
    )


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_path_sends_what_the_row_path_sends(options: dict[str, str], data: Any) -> None:
    config = config_for(options)
    try:
        batch = change_batch(config, data.draw(record_batches()))
    except InputError:
        return  # not a batch the writer would encode
    check(config, batch)


def test_refused_values_and_updates_without_old_rows_go_to_the_row_path() -> None:
    config = config_for({})
    record = pa.RecordBatch.from_pydict(
        {
            **{
                f.name: pa.nulls(3, f.type) if f.name != "id" else pa.array([1, 2, 3])
                for f in ARROW_FIELDS
            },
            "_op": pa.array(["c", "u", "d"]),
            "_before": pa.nulls(3, pa.struct(ARROW_FIELDS)),
        }
    )
    batch = change_batch(config, record)
    keys = key_column_indexes(batch.table)
    encoder = OpenProtocolEncoder(config.codec, batch.table)
    encoded = encoder.encode_batch(batch, keys)
    assert encoded.row_path == [1]  # the UPDATE without `_before`, only
    with pytest.raises(InputError, match="has no old row"):
        with_row_path(encoded, encoder, batch, keys)
    columns = list(batch.columns)
    columns[batch.table.column_position("c_bigint")] = [None, None, "x"]
    bad = attrs.evolve(
        batch,
        columns=columns,
        op_codes=None,
        before_rows=[],
        before_columns=[c[:0] for c in batch.before_columns],
    )
    assert encoder.encode_batch(bad, keys).row_path == [2]
    check(config, bad)

"""avro (Confluent) records -> record batches a run at a time: the column-wise twin of the
row path (`AvroDecoder.decode_message`, then `rows.RowBatchBuilder`) for avro topics.

The row path builds a dict per record with fastavro, types it into a `DecodedRow`, and the
row builder puts it into column lists. Here a run of records whose writer schemas fit the
read is read by a reader generated per schema (`codec.avro_binary`): the bodies of one schema
joined and read into column lists in one pass, each column then typed as a whole where
Arrow gives exactly the row path's value (integers, floats, text checked as UTF-8, bytes,
decimals of precision up to 38 from their unscaled integers), one by one through the
decoder's own converters elsewhere (ENUM, SET, BIT, BIGINT UNSIGNED, DECIMAL as text).

A record joins a run (`AvroRun.extend`) when it is Confluent-framed with a value schema
whose columns all carry a `tidb_type` and are the read's columns, of a selected table, and
a key (if any) of a schema the generated readers read; a tombstone (no value) when its
key schema's columns are among the read's. The row path stays the reference: when
anything in a run is unusual (a body that does not read, a checksum to verify, an op
TiCDC does not write, a commit ts beyond 2^63, a value a cast refuses), `take` gives no
batch and the caller decodes the run's records one by one, so errors, skipped messages
and their order are the row path's. Replays are dropped by the commit ts rule alone:
the avro decoder knows no table's keys, so the row path compares no identities either.

Knows Arrow, the avro decoder's writer schemas (`writer_schema`, by the lookup the decoder
gives: this module never imports the decoder) and table schemas; nothing of Spark or
Kafka (records arrive as `read.record.Record`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, chain, repeat
from operator import add, itemgetter
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec.avro import (
    CONFLUENT_MAGIC,
    TICDC_BEFORE,
    TIDB_COMMIT_TS,
    TIDB_OP,
    TIDB_ROW_LEVEL_CHECKSUM,
)
from ticdc_sink.codec.avro.writer_schema import Converter, WriterSchema
from ticdc_sink.codec.avro_binary import Leaf, RecordReader, record_reader
from ticdc_sink.errors import DecodeError
from ticdc_sink.read.record import Record
from ticdc_sink.read.rows import BEFORE, arrow_schema, record_columns, value_converter
from ticdc_sink.schema import Column, TableSchema

__all__ = ["AvroRun"]

_OPS = {b"c": "INSERT", b"u": "UPDATE", b"d": "DELETE"}
_INTEGERS = frozenset({"INT", "INT UNSIGNED", "BIGINT", "YEAR"})
_TEXTS = frozenset({"TEXT", "JSON", "DATE", "DATETIME", "TIMESTAMP", "TIME", "TiDBVECTORFloat32"})
# What failing to take a run raises: the row path then decodes it.
_REFUSED = (ValueError, TypeError, OverflowError, LookupError, struct.error, pa.ArrowException)
# A record's key and value in the plain tuple of its fields a run holds (`AvroRun._held`).
_KEY = itemgetter(Record._fields.index("key"))
_VALUE = itemgetter(Record._fields.index("value"))

Finisher = Callable[[list[Any]], pa.Array]
# The most digits of a decimal whose unscaled integers all fit 64 bits, and the decimal an
# int64 array is cast to first (Arrow casts int64 only to a precision of 19 or more).
_INT64_DIGITS = 18
_DECIMAL_38 = pa.decimal128(38, 0)
#: A record's key frame and value frame (magic byte and schema id; None: no key, no value).
_Frames = tuple[bytes | None, bytes | None]


def _tidb_type(leaf: Leaf) -> str | None:
    kind = leaf.schema
    params = kind.get("connect.parameters") if isinstance(kind, dict) else None
    found = params.get("tidb_type") if isinstance(params, dict) else None
    return found if isinstance(found, str) else None


def _finisher(leaf: Leaf, convert: Converter, column: Column, arrow_type: pa.DataType) -> Finisher:
    """How a column's raw values (`codec.avro_binary`) become its Arrow array, as the row path
    types them: the decoder's `convert`, then `rows.value_converter`, then Arrow.

    Raises:
        ValueError: a field this path leaves to the row path (a decimal it cannot build).
    """
    tidb = _tidb_type(leaf)
    kind = leaf.kind
    plain = value_converter(column) is None
    if plain and tidb in _INTEGERS and kind in ("int", "long"):
        return lambda values: pa.array(values, arrow_type)
    if plain and tidb in ("FLOAT", "DOUBLE") and kind in ("float", "double"):
        return lambda values: pa.array(values, arrow_type)
    if plain and tidb in _TEXTS and kind == "string" and arrow_type == pa.string():
        return lambda values: pa.array(values, pa.binary()).cast(pa.string())
    if plain and tidb == "BLOB" and kind == "bytes" and arrow_type == pa.binary():
        return lambda values: pa.array(values, pa.binary())
    logical = leaf.schema.get("logicalType") if isinstance(leaf.schema, dict) else None
    if logical == "decimal":
        # fastavro's Decimal of the unscaled integer, exact up to its precision; Arrow
        # refuses an integer of more digits, as it refuses that Decimal in the row path.
        precision, scale = leaf.schema["precision"], leaf.schema.get("scale", 0)
        if not (plain and tidb == "DECIMAL" and arrow_type == pa.decimal128(precision, scale)):
            raise ValueError("a decimal the column-wise path does not build")
        whole = pa.decimal128(precision, 0)
        # Arrow builds 64-bit integers from Python's a few times faster than decimals: a
        # precision of up to 18 digits is built as those, then cast (a value of more digits
        # than the precision is refused either way).
        through = pa.int64() if precision <= _INT64_DIGITS else None

        def decimals(values: list[Any]) -> pa.Array:
            if b"" in values:
                raise ValueError("an empty decimal")  # fastavro's reading is not vouched for
            unscaled = [
                None if v is None else int.from_bytes(v, "big", signed=True) for v in values
            ]
            if through is None:
                return pa.array(unscaled, whole).view(arrow_type)
            return pa.array(unscaled, through).cast(_DECIMAL_38).cast(whole).view(arrow_type)

        return decimals
    output = value_converter(column)
    text = kind == "string"

    def one_by_one(values: list[Any]) -> pa.Array:
        typed = []
        for value in values:
            if value is not None:
                value = convert(value.decode() if text else value)
                if output is not None:
                    value = output(value)
            typed.append(value)
        return pa.array(typed, arrow_type)

    return one_by_one


@attrs.frozen
class _Image:
    """Where the read's columns are in a reader's leaves: per output column, the leaf (or
    None: not in the record) and its finisher."""

    leaves: tuple[int | None, ...]
    finishers: tuple[Finisher | None, ...]

    def arrays(
        self, columns: list[list[Any]], rows: int, types: Sequence[pa.DataType]
    ) -> list[pa.Array]:
        return [
            pa.nulls(rows, t) if i is None or f is None else f(columns[i])
            for i, f, t in zip(self.leaves, self.finishers, types, strict=True)
        ]


@attrs.frozen
class _ValuePlan:
    """A value schema a run takes: its reader, the columns of the row and of
    `_ticdc_before`, and the leaves of the extension fields (None: absent)."""

    reader: RecordReader
    database: str
    table: str
    image: _Image
    before: _Image | None
    before_present: int | None
    op: int | None
    commit_ts: int | None
    checksum: int | None


@attrs.frozen
class _KeyPlan:
    """A key schema: its reader, and for a tombstone the read's columns from it (None:
    its columns are not all the read's)."""

    reader: RecordReader
    database: str
    table: str
    image: _Image | None


def _image(
    schema: WriterSchema,
    leaves: dict[tuple[str, ...], int],
    all_leaves: Sequence[Leaf],
    output: TableSchema,
    types: Sequence[pa.DataType],
    prefix: tuple[str, ...] = (),
) -> _Image:
    converters = dict(schema.columns)
    found: list[int | None] = []
    finishers: list[Finisher | None] = []
    for column, arrow_type in zip(output.columns, types, strict=True):
        index = leaves.get((*prefix, column.name)) if column.name in converters else None
        found.append(index)
        finishers.append(
            None
            if index is None
            else _finisher(all_leaves[index], converters[column.name], column, arrow_type)
        )
    return _Image(tuple(found), tuple(finishers))


class AvroRun:
    """Consecutive avro records whose schemas fit the read (`extend`), turned into one
    record batch of `arrow_schema(output)` by `take`. Single-threaded: one per task."""

    def __init__(
        self,
        writer_schema: Callable[[int], WriterSchema],
        output: TableSchema,
        *,
        selected: Callable[[str, str], bool],
        kafka_columns: bool,
        topic: str,
        headers: bool = False,
        max_schemas: int = 1024,
    ) -> None:
        """`writer_schema(id)` gives the writer schema of a registry id as the decoder
        reads it (`AvroDecoder.writer_schema`), raising DecodeError for one it cannot
        read; `selected(database, table)`: whether the read takes rows of that table."""
        self.schema = arrow_schema(output, kafka_columns=kafka_columns, headers=headers)
        self.kafka_columns = kafka_columns
        self.headers = headers
        self.topic = topic
        self._writer_schema = writer_schema
        self._output = output
        self._selected = selected
        self._names = frozenset(output.column_names)
        self._types = [self.schema.field(c.name).type for c in output.columns]
        self._before_type = self.schema.field(BEFORE).type
        self._max_schemas = max_schemas
        # Plans by the frame (magic byte and schema id) of the records they read.
        self._values: dict[bytes, _ValuePlan | None] = {}
        self._keys: dict[bytes, _KeyPlan | None] = {}
        # Whether records of a (key frame, value frame) fit (`_fits`, asked once per pair,
        # not per record).
        self._fit: dict[_Frames, bool] = {}
        # The run's records as plain tuples of their fields. A Record (a tuple subclass)
        # stays tracked by Python's garbage collector, a plain tuple of bytes and ints does
        # not: held until `take`, Records reached the collector's oldest generation and set
        # off its full collections, 7 in a read of 200 000 records, a sixth of its CPU (2
        # or 3 with plain tuples).
        self._held: list[tuple[Any, ...]] = []
        self._frames: list[_Frames] = []  # each held record's, in order

    def __len__(self) -> int:
        return len(self._held)

    def extend(self, records: Sequence[Record], start: int, room: int) -> int:
        """Add `records` from `start` on while they fit, at most `room` of them; the index
        of the first not added (`len(records)`: all were). Whether a record fits follows
        from its frames alone: asked in the records' order, once per pair of frames, and of
        none past the first that does not fit (a schema is looked up where the record-by-
        record read would)."""
        chunk = records[start : start + room]
        frames = [
            (key[:5] if key else None, value[:5] if value else None)
            for key, value in zip(map(_KEY, chunk), map(_VALUE, chunk), strict=True)
        ]
        fit = self._fit
        taken = len(chunk)
        for pair in dict.fromkeys(frames):  # each pair once, in the order first met
            if not (fit[pair] if pair in fit else self._fits(pair)):
                taken = frames.index(pair)
                break
        self._held += map(tuple, chunk[:taken])
        self._frames += frames[:taken]
        return start + taken

    def _fits(self, pair: _Frames) -> bool:
        """Whether records of a (key frame, value frame) may join the run (module
        docstring), remembered."""
        key, value = pair
        key_plan = self._key_plan(key) if key else None
        if key and key_plan is None:
            found = False
        elif value:
            found = self._value_plan(value) is not None
        else:
            found = key_plan is not None and key_plan.image is not None
        if len(self._fit) >= self._max_schemas:
            self._fit.clear()
        self._fit[pair] = found
        return found

    def take(
        self, admit: Callable[[Sequence[int]], list[bool]] | None = None
    ) -> tuple[list[Record], pa.RecordBatch | None]:
        """The run's record batch (the rows whose commit ts `admit` admits, given them all
        at once: `replay.ReplayFilter.admit_commit_ts_each`) and no records, and an empty
        run; or, when the row path must decode the records (module docstring), the run's
        records and no batch, and `admit` has then seen none of them."""
        held, self._held = self._held, []
        frames, self._frames = self._frames, []
        try:
            batch, commit_ts, back = self._batch(held, frames)
        except _REFUSED:
            return [Record._make(fields) for fields in held], None
        if admit is not None:
            admitted = admit(commit_ts)
            if not all(admitted):
                mask = pa.array(admitted, pa.bool_())
                batch = batch.filter(mask if back is None else mask.take(back))
        return [], batch

    # --- schemas -----------------------------------------------------------------------

    def _schema_id(self, data: bytes) -> int | None:
        if len(data) < 5 or data[0] != CONFLUENT_MAGIC:
            return None
        return int.from_bytes(data[1:5], "big", signed=True)

    def _writer(self, schema_id: int) -> tuple[WriterSchema, RecordReader] | None:
        try:
            schema = self._writer_schema(schema_id)
        except DecodeError:
            return None  # the row path raises it where the record is
        reader = record_reader(schema.schema)
        if reader is None or any(t is None for t in schema.types):
            return None
        return schema, reader

    def _remember(self, plans: dict[bytes, Any], frame: bytes, plan: Any) -> Any:
        """Keep `plan` under its record's frame (magic byte and schema id)."""
        if len(plans) >= self._max_schemas:
            plans.clear()
            self._fit.clear()  # a pair whose plan is gone is asked again
        plans[frame] = plan
        return plan

    def _key_plan(self, key: bytes) -> _KeyPlan | None:
        frame = key[:5]
        if frame in self._keys:
            return self._keys[frame]
        schema_id = self._schema_id(key)
        if schema_id is None:
            return None
        plan = None
        found = self._writer(schema_id)
        if found is not None:
            schema, reader = found
            leaves = {leaf.path: i for i, leaf in enumerate(reader.leaves)}
            image = None
            names = [name for name, _ in schema.columns]
            if set(names) <= self._names and self._selected(schema.database, schema.table):
                try:
                    image = _image(schema, leaves, reader.leaves, self._output, self._types)
                except ValueError:
                    image = None
            plan = _KeyPlan(reader, schema.database, schema.table, image)
        return self._remember(self._keys, frame, plan)

    def _value_plan(self, value: bytes) -> _ValuePlan | None:
        frame = value[:5]
        if frame in self._values:
            return self._values[frame]
        schema_id = self._schema_id(value)
        if schema_id is None:
            return None
        return self._remember(self._values, frame, self._new_value_plan(schema_id))

    def _new_value_plan(self, schema_id: int) -> _ValuePlan | None:
        found = self._writer(schema_id)
        if found is None:
            return None
        schema, reader = found
        names = [name for name, _ in schema.columns]
        if set(names) != self._names or len(names) != len(self._names):
            return None
        if not self._selected(schema.database, schema.table):
            return None
        leaves = {leaf.path: i for i, leaf in enumerate(reader.leaves)}
        before_present = leaves.get((TICDC_BEFORE,))
        before = None
        if before_present is not None:
            # The row path types the before record with the value's columns: its fields
            # must be those, of the same types.
            fields = {f["name"]: f for f in schema.schema["fields"]}
            union = fields[TICDC_BEFORE]["type"]
            record = next(m for m in union if m != "null")
            if record.get("fields") != [fields[name] for name in names]:
                return None
        try:
            image = _image(schema, leaves, reader.leaves, self._output, self._types)
            if before_present is not None:
                before = _image(
                    schema, leaves, reader.leaves, self._output, self._types, (TICDC_BEFORE,)
                )
        except ValueError:
            return None
        return _ValuePlan(
            reader,
            schema.database,
            schema.table,
            image,
            before,
            before_present,
            leaves.get((TIDB_OP,)),
            leaves.get((TIDB_COMMIT_TS,)),
            leaves.get((TIDB_ROW_LEVEL_CHECKSUM,)),
        )

    # --- the batch ---------------------------------------------------------------------

    def _batch(
        self, held: list[tuple[Any, ...]], frames: list[_Frames]
    ) -> tuple[pa.RecordBatch, list[int], pa.Array | None]:
        """The batch of the records `held` (as tuples of their fields, with their
        `frames`); each row's commit ts, by schema (the groups' order); and where each
        row of the batch is in that order (None: the same order, one schema).

        Raises:
            ValueError, ...: anything the row path must decide (module docstring).
        """
        # Records by schema: (key schema, value schema) of a row, (key schema, None) of a
        # tombstone; each group read at once, the groups' rows then put back in order.
        key_bytes: list[bytes] = list(map(_KEY, held))
        value_bytes: list[bytes] = list(map(_VALUE, held))
        groups: dict[_Frames, list[int]] = {}
        single = len(set(frames)) == 1
        if single:
            groups[frames[0]] = list(range(len(frames)))
        else:
            for i, pair in enumerate(frames):
                groups.setdefault(pair, []).append(i)
        parts: list[list[pa.Array]] = []
        order: list[int] = []
        commit_ts: list[int] = []
        for (key_id, value_id), indexes in groups.items():
            # The records of a frame have the bytes framed (`_frames`): none is None.
            keys = None
            if key_id is not None:
                key_plan = self._keys[key_id]
                assert key_plan is not None  # _fits took it
                framed = key_bytes if single else list(map(key_bytes.__getitem__, indexes))
                keys = key_plan.reader.read(*_joined(framed))
            if value_id is None:
                assert key_id is not None and keys is not None
                part, stamps = self._tombstones(self._keys[key_id], keys, len(indexes))
            else:
                plan = self._values[value_id]
                assert plan is not None
                framed = value_bytes if single else list(map(value_bytes.__getitem__, indexes))
                columns = plan.reader.read(*_joined(framed))
                part, stamps = self._rows(plan, columns, len(indexes))
            parts.append(part)
            order += indexes
            commit_ts += stamps
        back = None
        if len(parts) == 1:
            arrays = parts[0]
        else:
            back = pa.array(sorted(range(len(order)), key=order.__getitem__), pa.int64())
            arrays = [
                pa.concat_arrays(list(pieces)).take(back) for pieces in zip(*parts, strict=True)
            ]
        records = (
            [Record._make(fields) for fields in held] if self.kafka_columns or self.headers else []
        )
        arrays += record_columns(
            records, self.topic, kafka_columns=self.kafka_columns, headers=self.headers
        )
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema), commit_ts, back

    def _rows(
        self, plan: _ValuePlan, columns: list[list[Any]], rows: int
    ) -> tuple[list[pa.Array], list[int]]:
        if plan.checksum is not None and any(columns[plan.checksum]):
            raise ValueError("a row checksum to verify")  # the row path verifies it
        if plan.op is None:
            ops = ["INSERT"] * rows
        else:
            ops = list(map(_OPS.__getitem__, columns[plan.op]))  # KeyError: not c, u or d
        commit_ts = [0] * rows if plan.commit_ts is None else columns[plan.commit_ts]
        if min(commit_ts) < 0:  # a group has a row
            raise ValueError("a commit ts beyond 2^63")
        image = plan.image.arrays(columns, rows, self._types)
        before = None
        if plan.before is not None and plan.before_present is not None:
            present = columns[plan.before_present]
            deletes = [op == "DELETE" for op in ops]
            if any(d and not p for d, p in zip(deletes, present, strict=True)):
                raise ValueError("a DELETE without its before image")
            old = plan.before.arrays(columns, rows, self._types)
            if any(deletes):
                mask = pa.array(deletes, pa.bool_())
                image = [pc.if_else(mask, o, new) for o, new in zip(old, image, strict=True)]
            updates = [op == "UPDATE" and p for op, p in zip(ops, present, strict=True)]
            if any(updates):
                before = pa.StructArray.from_arrays(
                    old,
                    fields=list(self._before_type),
                    mask=pa.array([not u for u in updates], pa.bool_()),
                )
        elif "DELETE" in ops:
            raise ValueError("a DELETE without its before image")
        if before is None:
            before = pa.nulls(rows, self._before_type)
        return [
            *image,
            pa.array(ops, pa.string()),
            pa.array(commit_ts, pa.int64()),
            before,
            pa.array([plan.database] * rows, pa.string()),
            pa.array([plan.table] * rows, pa.string()),
        ], commit_ts

    def _tombstones(
        self, plan: _KeyPlan | None, columns: list[list[Any]], rows: int
    ) -> tuple[list[pa.Array], list[int]]:
        assert plan is not None and plan.image is not None  # _fits took it
        return [
            *plan.image.arrays(columns, rows, self._types),
            pa.array(["DELETE"] * rows, pa.string()),
            pa.array([0] * rows, pa.int64()),
            pa.nulls(rows, self._before_type),
            pa.array([plan.database] * rows, pa.string()),
            pa.array([plan.table] * rows, pa.string()),
        ], [0] * rows


def _joined(framed: list[bytes]) -> tuple[bytes, Iterator[tuple[int, int]]]:
    """Framed records as one buffer and each body's (start, end) in it, to be read once:
    a record ends where the lengths so far add up to, its body begins 5 bytes (its
    frame) after the end of the one before."""
    ends = list(accumulate(map(len, framed)))
    starts = map(add, chain((0,), ends), repeat(5))
    return b"".join(framed), zip(starts, ends, strict=False)

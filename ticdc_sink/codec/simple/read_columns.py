"""Simple rows -> record batches a run at a time, for a read (`read.scan`): the
column-wise twin of the read's row path, `read.rows.RowBatchBuilder`, for the messages
that are nothing but a row change. A read's task gets a run from the decoder
(`SimpleDecoder.column_run`), which is what makes a decoder column-wise to the read side
(`read.scan.ColumnwiseDecoder`).

A read spends most of its time on rows: a `DecodedRow` per message, its values typed one
by one, then put into column lists by the row builder. Here the decoder only checks a
message's envelope (`SimpleDecoder.plain_row`: an INSERT/UPDATE/DELETE of a known schema
version, no checksum, handle key or claim check) and the run of such messages becomes one
record batch of `rows.arrow_schema`, column by column. Simple JSON: each column's raw
values in one list, checked and cast by Arrow where Arrow gives exactly the row path's
value (integers and floats from their text, checked against Go's number text first, since
Arrow also takes "0x10"; DECIMALs; text), typed one by one by the decoder's own parser
(`SimpleDecoder.parser`) elsewhere (TIMESTAMP's {"location","value"}, base64, SET,
DECIMAL beyond 38 digits). Simple Avro: the values come typed; a column whose parser only
checks their Python type goes to Arrow whole once that type is checked, DECIMAL text is
cast as JSON's, every other column is typed one by one by that parser.

The row path stays the reference: when anything in a run is unusual (a value a cast or
parser refuses, a column the schema does not have), `SimpleRun.take` gives no batch and
the caller decodes the run's messages one by one, so errors, skipped messages and their
order are the row path's. Tests check that both paths give the same table.

Knows Arrow, table schemas, the Simple decoder's plain rows and the read side's output
(`read.rows`); nothing of Spark or Kafka (records arrive as `read.record.Record`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import pyarrow as pa

from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.codec.text_arrays import (
    DECIMAL,
    INTEGER,
    NUMBER,
    UNSIGNED,
    decimals,
    enum_members,
    float32s,
    matches,
)
from ticdc_sink.decode import PlainRow
from ticdc_sink.read.record import Record
from ticdc_sink.read.rows import BEFORE, arrow_schema, record_columns, value_converter
from ticdc_sink.schema import Column, TableSchema

__all__ = ["SimpleRun", "ValueParsers"]

# Simple JSON holds numbers as text (tiflow simple/message.go writes them as strings), in
# Go's forms: `codec.text_arrays` casts them.
_TEXT_KINDS = frozenset(
    {
        ValueKind.DATE,
        ValueKind.DATETIME,
        ValueKind.TIME,
        ValueKind.JSON,
        ValueKind.VECTOR,
        ValueKind.TEXT,
    }
)
# Avro values the row path's parser gives back as they are once their Python type is
# checked (kind -> that type): such a column goes to Arrow whole.
_AVRO_AS_READ: dict[ValueKind, type] = {
    ValueKind.INT: int,
    ValueKind.FLOAT32: float,
    ValueKind.FLOAT64: float,
    ValueKind.BINARY: bytes,
    **dict.fromkeys(_TEXT_KINDS, str),
}
_NONE = type(None)
# What failing to take a column raises: the row path then decodes the run.
_REFUSED = (ValueError, TypeError, OverflowError, pa.ArrowException)


class ValueParsers(Protocol):
    """What a run takes of the decoder whose plain rows it builds (`SimpleDecoder`):
    its encoding and its parser of a column's raw values. The decoder offers the run
    (`SimpleDecoder.column_run`), and this module never imports the decoder."""

    @property
    def encoding_format(self) -> str: ...

    def parser(self, column: Column) -> Callable[[Any], Any]: ...


class _ColumnReader:
    """One output column: its raw values -> an Arrow array of its output type."""

    def __init__(self, column: Column, arrow_type: pa.DataType, decoder: ValueParsers) -> None:
        self.name = column.name
        self.kind = value_kind(column)
        self.type = arrow_type
        self.parse = decoder.parser(column)
        self.convert: Callable[[Any], Any] | None = value_converter(column)
        self.members: pa.Array | None = None
        if self.kind is ValueKind.ENUM:
            self.members = pa.array(["", *column.type.elements], pa.string())
        pattern = {
            ValueKind.INT: INTEGER,
            ValueKind.UINT: INTEGER,
            ValueKind.BIT: INTEGER,
            ValueKind.ENUM: INTEGER,
            ValueKind.FLOAT32: NUMBER,
            ValueKind.FLOAT64: NUMBER,
            ValueKind.DECIMAL: DECIMAL,
        }.get(self.kind)
        # Avro values come typed (as fastavro reads them): one by one through the row
        # path's parser, which checks their Python types as Arrow would not (bytes for a
        # string), but where a type check is all it does.
        self.one_by_one = decoder.encoding_format == "avro"
        self.avro_type = _AVRO_AS_READ.get(self.kind) if self.convert is None else None
        if self.kind is ValueKind.UINT and column.type.base == "bigint":
            pattern = UNSIGNED  # below 0 (never from TiCDC) the converter wraps it
        elif not (self.convert is None or self.kind is ValueKind.ENUM):
            pattern = None  # SET, DECIMAL beyond 38 digits: one by one
        self.pattern = pattern

    def array(self, values: Sequence[Any]) -> pa.Array:
        """The column of `values` (raw values, None for null or absent).

        Raises:
            ValueError, TypeError, OverflowError, pyarrow.ArrowException: a value the
                row path would refuse, or one this path leaves to it.
        """
        if self.one_by_one:
            types = set(map(type, values))
            types.discard(_NONE)
            kind = self.avro_type
            if kind is not None and types <= {kind}:
                return pa.array(values, self.type)
            if self.kind is ValueKind.DECIMAL and self.pattern is not None and types <= {str}:
                cast = self._from_text(values, self.pattern)  # DECIMAL text, as JSON's
                if cast is not None:
                    return cast
            return self._one_by_one(values)
        if self.kind in _TEXT_KINDS:
            return pa.array(values, pa.string())  # refuses anything but str and None
        if self.pattern is not None:
            cast = self._from_text(values, self.pattern)
            if cast is not None:
                return cast
        return self._one_by_one(values)

    def _from_text(self, values: Sequence[Any], pattern: str) -> pa.Array | None:
        """The column cast by Arrow from its values' text where `pattern` vouches that the
        cast gives the row path's values; None: one by one. A cast's error: the run goes
        the row path."""
        strings = pa.array(values, pa.string())
        if not matches(strings, pattern):
            return None
        return self._cast(strings)

    def _cast(self, strings: pa.Array) -> pa.Array | None:
        if self.kind is ValueKind.DECIMAL:
            return decimals(strings, self.type)  # None: one by one
        if self.kind is ValueKind.FLOAT32:
            return float32s(strings)
        if self.kind is ValueKind.ENUM:
            assert self.members is not None
            return enum_members(strings, self.members)
        return strings.cast(self.type)

    def _one_by_one(self, values: Sequence[Any]) -> pa.Array:
        parse, convert = self.parse, self.convert
        if convert is None:
            typed = [None if v is None else parse(v) for v in values]
        else:
            typed = [None if v is None else convert(parse(v)) for v in values]
        return pa.array(typed, self.type)


class SimpleRun:
    """Consecutive plain rows (`SimpleDecoder.plain_row`) of tables with the read's
    columns, turned into one record batch of `arrow_schema(output)` by `take`.
    Single-threaded: one per task."""

    def __init__(
        self,
        decoder: ValueParsers,
        output: TableSchema,
        *,
        kafka_columns: bool,
        topic: str,
        headers: bool = False,
    ) -> None:
        self.schema = arrow_schema(output, kafka_columns=kafka_columns, headers=headers)
        self.kafka_columns = kafka_columns
        self.headers = headers
        self.topic = topic
        self._names = frozenset(output.column_names)
        self._columns = [
            _ColumnReader(column, self.schema.field(column.name).type, decoder)
            for column in output.columns
        ]
        names = output.column_names
        self._getter = operator.itemgetter(*names) if len(names) > 1 else None
        self._before_type = self.schema.field(BEFORE).type
        self.rows: list[PlainRow] = []
        self.records: list[Record] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, row: PlainRow, record: Record) -> None:
        """Add a plain row; `record` is the message it came from."""
        self.rows.append(row)
        self.records.append(record)

    def take(self) -> tuple[list[Record], pa.RecordBatch | None]:
        """The run's records and its record batch, and an empty run; the batch is None
        when the row path must decode the records (module docstring)."""
        rows, records = self.rows, self.records
        self.rows, self.records = [], []
        try:
            return records, self._batch(rows, records)
        except _REFUSED:
            return records, None

    def _batch(self, rows: list[PlainRow], records: list[Record]) -> pa.RecordBatch:
        names = self._names
        # plain_row's rows: an INSERT and an UPDATE carry data, a DELETE old
        images = cast(
            list[dict[str, Any]], [row.old if row.op == "DELETE" else row.data for row in rows]
        )
        befores = [row.old if row.op == "UPDATE" else None for row in rows]
        for image in (*images, *befores):
            if image is not None and not names.issuperset(image):
                raise ValueError("a column the table schema does not have")
        columns = zip(self._columns, self._values(images), strict=True)
        arrays = [c.array(values) for c, values in columns]
        arrays += [
            pa.array([row.op for row in rows], pa.string()),
            pa.array([row.commit_ts for row in rows], pa.int64()),
            self._before(befores),
            pa.array([row.database for row in rows], pa.string()),
            pa.array([row.table for row in rows], pa.string()),
        ]
        arrays += record_columns(
            records, self.topic, kafka_columns=self.kafka_columns, headers=self.headers
        )
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _values(self, images: list[dict[str, Any]]) -> list[Sequence[Any]]:
        """Each column's values in `images` (None where absent): at once where every image
        has every column (the usual row), else one by one."""
        getter = self._getter
        if getter is not None and set(map(len, images)) == {len(self._names)}:
            return list(zip(*map(getter, images), strict=True))  # keys: the columns
        return [[image.get(c.name) for image in images] for c in self._columns]

    def _before(self, befores: list[dict[str, Any] | None]) -> pa.Array:
        # The columns of the rows with a before image (UPDATEs with old), then put in
        # place, null elsewhere.
        present = [before for before in befores if before is not None]
        if not present:
            return pa.nulls(len(befores), self._before_type)
        places, count = [], 0
        for before in befores:
            places.append(None if before is None else count)
            count += before is not None
        index = pa.array(places, pa.int64())
        children = [
            c.array(values).take(index)
            for c, values in zip(self._columns, self._values(present), strict=True)
        ]
        return pa.StructArray.from_arrays(
            children, fields=list(self._before_type), mask=index.is_null()
        )

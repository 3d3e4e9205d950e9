"""canal-json rows -> record batches a run at a time, for a read (`read.scan`): the
column-wise twin of the row path (`CanalJsonDecoder.decode_message`, then
`rows.RowBatchBuilder`) for canal-json topics.

The row path parses a message, types each value by its column's parser (`parsers`), builds
a `DecodedRow`, and the row builder puts it into column lists. Here a run of row messages
is parsed once each (`CanalJsonRun.fits`), and each column's text values become its Arrow
array at once: checked and cast by Arrow where Arrow gives exactly the parser's value
(integers, ENUM indexes, floats and DECIMALs from their text, checked against the forms Go
writes first, `codec.text_arrays`; text), through the parser one by one elsewhere
(binary, SET, BIGINT UNSIGNED, a parser the output's column type does not match).

A message joins a run when it is a row the row path would give as it is: INSERT, UPDATE
or DELETE of a table the read selects, its images lists of one object whose column names
are exactly the read's (an UPDATE's old values among them), no claim check or handle key
only, and the same `mysqlType` and `sqlType` as the run's other rows. The row path stays
the reference: when anything in a run is unusual (a value that is not text, one a parser
or cast refuses, a column with no type), `take` gives no batch and the caller decodes the
run's messages one by one, so errors, skipped messages and their order are the row path's.
Replays are dropped by the commit ts rule alone, as the row path drops them: the decoder
knows no table's keys.

Knows Arrow, canal-json's envelope and the read side's output (`read.rows`); nothing of
Spark or Kafka (records arrive as `read.record.Record`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec.canal_json.parsers import (
    Parser,
    parse_decimal,
    parse_float32,
    parse_integer,
    parse_text,
    parser_for,
)
from ticdc_sink.codec.compression import Compression, decompress
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.codec.text_arrays import (
    DECIMAL,
    INTEGER,
    NUMBER,
    decimal_texts,
    decimals,
    enum_members,
    float32s,
    matches,
)
from ticdc_sink.errors import DecodeError
from ticdc_sink.read.record import Record
from ticdc_sink.read.rows import BEFORE, arrow_schema, record_columns, value_converter
from ticdc_sink.schema import Column, TableSchema

__all__ = ["CanalJsonRun"]

_OPS = frozenset({"INSERT", "UPDATE", "DELETE"})
# What failing to take a run raises: the row path then decodes it.
_REFUSED = (ValueError, TypeError, OverflowError, LookupError, pa.ArrowException)


def _parser(mysql_type: Any, sql_type: Any) -> Parser:
    """The parser the decoder takes for a column with these type entries.

    Raises:
        ValueError: entries the decoder refuses (it raises DecodeError for them).
    """
    if mysql_type is not None and not isinstance(mysql_type, str):
        raise ValueError("a mysqlType entry that is not text")
    if sql_type is not None and not isinstance(sql_type, int):
        raise ValueError("a sqlType entry that is not an integer")
    return parser_for(mysql_type, sql_type)


class _TextColumn:
    """One output column: its text values -> an Arrow array of its output type, as the
    parser and then the row builder (`rows.value_converter`, Arrow) make it."""

    def __init__(self, column: Column, arrow_type: pa.DataType) -> None:
        self.name = column.name
        self.type = arrow_type
        self.kind = value_kind(column)
        self.convert: Callable[[Any], Any] | None = value_converter(column)
        self.members: pa.Array | None = None
        if self.kind is ValueKind.ENUM:
            self.members = pa.array(["", *column.type.elements], pa.string())

    def array(self, values: list[Any], parse: Parser | None) -> pa.Array:
        """The column of `values` (text, None for null) typed by `parse` (None: the
        column has no type entries, so every value must be null).

        Raises:
            ValueError, TypeError, OverflowError, pyarrow.ArrowException: a value the
                row path would refuse, or one this path leaves to it.
        """
        strings = pa.array(values, pa.string())  # refuses anything but str and None
        if strings.null_count == len(strings):
            return pa.nulls(len(strings), self.type)
        if parse is None:
            raise ValueError("a value of a column with no type entry")
        cast = self._cast(strings, parse)
        if cast is not None:
            return cast
        convert = self.convert
        if convert is None:
            typed = [None if v is None else parse(v) for v in values]
        else:
            typed = [None if v is None else convert(parse(v)) for v in values]
        return pa.array(typed, self.type)

    def _cast(self, strings: pa.Array, parse: Parser) -> pa.Array | None:
        """The column cast by Arrow where that gives the parser's values (then the row
        builder's), else None."""
        arrow, plain = self.type, self.convert is None
        if parse is parse_text and plain and arrow == pa.string():
            return strings
        if parse is parse_integer and matches(strings, INTEGER):
            if self.kind is ValueKind.ENUM:
                assert self.members is not None
                return enum_members(strings, self.members)
            if plain and pa.types.is_integer(arrow):
                return strings.cast(arrow)
        if parse is float and plain and arrow == pa.float64() and matches(strings, NUMBER):
            return strings.cast(arrow)
        if parse is parse_float32 and plain and arrow == pa.float32() and matches(strings, NUMBER):
            return float32s(strings)
        if parse is parse_decimal and matches(strings, DECIMAL):
            if plain and pa.types.is_decimal(arrow):
                return decimals(strings, arrow)
            if self.convert is str and arrow == pa.string():  # beyond 38 digits
                return decimal_texts(strings)
        return None


class CanalJsonRun:
    """Consecutive canal-json row messages that fit the read (`fits`), turned into one
    record batch of `arrow_schema(output)` by `take`. Single-threaded: one per task."""

    def __init__(
        self,
        output: TableSchema,
        *,
        compression: Compression,
        selected: Callable[[str, str], bool],
        kafka_columns: bool,
        topic: str,
        headers: bool = False,
    ) -> None:
        """`compression`: the decoder's (`large-message-handle-compression`);
        `selected(database, table)`: whether the read takes rows of that table."""
        self.schema = arrow_schema(output, kafka_columns=kafka_columns, headers=headers)
        self.kafka_columns = kafka_columns
        self.headers = headers
        self.topic = topic
        self._compression = compression
        self._selected = selected
        self._names = output.column_names
        self._name_set = frozenset(output.column_names)
        self._columns = [
            _TextColumn(column, self.schema.field(column.name).type) for column in output.columns
        ]
        self._before_type = self.schema.field(BEFORE).type
        self._parsers: dict[tuple[Any, Any], Parser | None] = {}
        self._parsed: tuple[Record, dict[str, Any]] | None = None
        self._no_old = (None,) * len(self._names)
        self._clear()

    def _clear(self) -> None:
        # The run's rows as tuples of their text values, not the parsed messages: Python's
        # garbage collector stops tracking a tuple of strings, and walks every dict held.
        self.records: list[Record] = []
        self._ops: list[str] = []
        self._commit_ts: list[int] = []
        self._databases: list[str] = []
        self._tables: list[str] = []
        self._values: list[tuple[Any, ...]] = []
        self._olds: list[tuple[Any, ...]] = []  # an UPDATE's old row, else `_no_old`
        self._updates: list[bool] = []
        self._types: tuple[Any, Any] | None = None  # the first row's mysqlType, sqlType

    def __len__(self) -> int:
        return len(self.records)

    def fits(self, record: Record) -> bool:
        """Whether `record` may join the run (module docstring)."""
        self._parsed = None
        value = record.value
        if value is None:
            return False
        try:
            if self._compression is not Compression.NONE:
                value = decompress(self._compression, value)
            message = orjson.loads(value)
        except (orjson.JSONDecodeError, DecodeError):
            return False
        if type(message) is not dict:
            return False
        get = message.get
        kind, extension = get("type"), get("_tidb")
        if type(kind) is not str or kind not in _OPS or get("isDdl") is True:
            return False
        if extension is None:
            extension = {}
        elif type(extension) is not dict:
            return False
        commit_ts, build_ts = extension.get("commitTs", 0), get("ts", 0)
        database, table = get("database"), get("table")
        data, old = get("data"), get("old")
        if not (
            type(commit_ts) is int
            and commit_ts >= 0
            and isinstance(build_ts, int)
            and type(database) is str
            and type(table) is str
            and extension.get("claimCheckLocation") is None
            and extension.get("onlyHandleKey") is not True
            and type(data) is list
            and len(data) == 1
            and type(data[0]) is dict
            and data[0].keys() == self._name_set
            and (kind != "UPDATE" or _old_fits(old, self._name_set))
            and self._selected(database, table)
        ):
            return False
        types = (get("mysqlType"), get("sqlType"))
        if self._types is not None and types != self._types:
            return False  # one set of type entries a run: a column has one parser
        self._parsed = (record, message)
        return True

    def extend(self, records: Sequence[Record], start: int, room: int) -> int:
        """Add `records` from `start` on while they fit, at most `room` of them; the index
        of the first not added (`len(records)`: all were)."""
        end = min(len(records), start + room)
        for at in range(start, end):
            record = records[at]
            if not self.fits(record):
                return at
            self.add(record)
        return end

    def add(self, record: Record) -> None:
        """Add a record that `fits` (the last one asked about)."""
        assert self._parsed is not None and self._parsed[0] is record
        message = self._parsed[1]
        self._parsed = None
        if self._types is None:
            self._types = (message.get("mysqlType"), message.get("sqlType"))
        kind = message["type"]
        self.records.append(record)
        self._ops.append(kind)
        self._commit_ts.append((message.get("_tidb") or {}).get("commitTs", 0))
        self._databases.append(message["database"])
        self._tables.append(message["table"])
        image = message["data"][0]
        self._values.append(tuple(map(image.__getitem__, self._names)))
        update = kind == "UPDATE"
        self._updates.append(update)
        if update:  # the values its old row does not list: the new image's, as the decoder
            old = message["old"][0]
            self._olds.append(tuple(old[n] if n in old else image[n] for n in self._names))
        else:
            self._olds.append(self._no_old)

    def take(
        self, admit: Callable[[Sequence[int]], list[bool]] | None = None
    ) -> tuple[list[Record], pa.RecordBatch | None]:
        """The run's record batch (the rows whose commit ts `admit` admits, given them all
        at once: `replay.ReplayFilter.admit_commit_ts_each`) and no records, and an empty
        run; or, when the row path must decode the records (module docstring), the run's
        records and no batch, and `admit` has then seen none of them."""
        records, commit_ts = self.records, self._commit_ts
        try:
            batch = self._batch()
        except _REFUSED:
            return records, None
        finally:
            self._clear()
        if admit is not None:
            admitted = admit(commit_ts)
            if not all(admitted):
                batch = batch.filter(pa.array(admitted, pa.bool_()))
        return [], batch

    def _parsers_of(self, types: tuple[Any, Any]) -> list[Parser | None]:
        """Each output column's parser, by the run's type entries (None: no entry)."""
        mysql_types, sql_types = types
        if mysql_types is None:
            mysql_types = {}
        if sql_types is None:
            sql_types = {}
        if type(mysql_types) is not dict or type(sql_types) is not dict:
            raise ValueError("type entries that are not objects")
        found = []
        for name in self._names:
            key = (mysql_types.get(name), sql_types.get(name))
            if key not in self._parsers:
                if len(self._parsers) >= 4096:
                    self._parsers.clear()
                try:
                    self._parsers[key] = _parser(*key)
                except ValueError:
                    if key != (None, None):
                        raise
                    self._parsers[key] = None
            found.append(self._parsers[key])
        return found

    def _batch(self) -> pa.RecordBatch:
        """The run's batch.

        Raises:
            ValueError, ...: anything the row path must decide (module docstring).
        """
        assert self._types is not None  # a row was added
        parsers = self._parsers_of(self._types)
        records = self.records
        readers = list(zip(self._columns, parsers, strict=True))
        values = zip(*self._values, strict=True)
        arrays = [c.array(list(v), parse) for (c, parse), v in zip(readers, values, strict=True)]
        if any(self._updates):
            olds = zip(*self._olds, strict=True)
            before = pa.StructArray.from_arrays(
                [c.array(list(v), parse) for (c, parse), v in zip(readers, olds, strict=True)],
                fields=list(self._before_type),
                mask=pc.invert(pa.array(self._updates, pa.bool_())),
            )
        else:
            before = pa.nulls(len(records), self._before_type)
        arrays += [
            pa.array(self._ops, pa.string()),
            pa.array(self._commit_ts, pa.int64()),
            before,
            pa.array(self._databases, pa.string()),
            pa.array(self._tables, pa.string()),
        ]
        arrays += record_columns(
            records, self.topic, kafka_columns=self.kafka_columns, headers=self.headers
        )
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _old_fits(old: Any, names: frozenset[str]) -> bool:
    """An UPDATE's `old`: a list of one object of some of the read's columns."""
    return type(old) is list and len(old) == 1 and type(old[0]) is dict and old[0].keys() <= names

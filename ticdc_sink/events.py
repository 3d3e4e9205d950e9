"""Protocol-neutral change events: what a DataFrame row means, before any encoding.

The model every layer imports: `Op`, `RowChange` (one row change of one table),
`ChangeBatch` (the changes of one table in one record batch, column by column), and TiCDC's
split of a key-changing UPDATE (`split_key_update`). Values inside events are TiCDC's
"mounter values" in Python form (reference §1.4), one per table column in definition
order:

    integer types, YEAR, ENUM (1-based index), SET (bitmask), BIT  -> int
    FLOAT, DOUBLE                                                   -> float
    DECIMAL                  -> str with exactly `scale` fraction digits ("-1.50")
    DATE / DATETIME / TIMESTAMP / TIME -> str ("2020-01-02", "2020-01-02 03:04:05.120",
                                TIMESTAMP rendered in the sink's time zone, TIME "-838:59:59")
    JSON                     -> str, TiDB canonical JSON text ({"a": 1, "b": [1, 2]})
    CHAR/VARCHAR/TEXT        -> str
    BINARY/VARBINARY/BLOB    -> bytes
    NULL                     -> None

How a DataFrame's rows become events is the input contract's (`input_batch`); how each
Arrow column becomes mounter values, the conversion's (`convert`). This module knows Arrow
and MySQL values; it knows nothing of Spark sessions, Kafka or any wire format.
"""

from __future__ import annotations

import datetime as dt
import enum
import zoneinfo
from typing import Any, TypeAlias

import attrs
import pyarrow as pa

from ticdc_sink.errors import ConfigError
from ticdc_sink.schema import TableSchema

__all__ = [
    "OP_DELETE",
    "OP_INSERT",
    "OP_UPDATE",
    "ChangeBatch",
    "ConvertedColumn",
    "Op",
    "RowChange",
    "split_key_update",
    "zone_info",
]


class Op(enum.Enum):
    """The kind of a row change, named as the Simple and Canal protocols name it."""

    INSERT = "INSERT"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


@attrs.frozen
class RowChange:
    """One row change of one table.

    `row` is the new image (INSERT, UPDATE) and `before` the old image (UPDATE when the
    input has `_before`, DELETE always: for a DELETE the deleted row is `before` and `row`
    is None), as TiCDC's Columns / PreColumns. `split` marks the DELETE and the INSERT
    that `split_key_update` made of one UPDATE (their row checksums differ from a plain
    DELETE's and INSERT's; equality ignores it).
    """

    table: TableSchema
    op: Op
    commit_ts: int
    row: tuple[Any, ...] | None
    before: tuple[Any, ...] | None = None
    split: bool = attrs.field(default=False, eq=False)


def split_key_update(change: RowChange, key_indexes: tuple[int, ...]) -> tuple[RowChange, ...]:
    """TiCDC's Kafka sink splits an UPDATE that changes a unique or handle key into a
    DELETE of the old row and an INSERT of the new one (tiflow `cdc/model/sink.go`,
    `trySplitAndSortUpdateEvent`). TiCDC compares the values' string forms; two values of
    one column are equal as strings exactly when they are equal here."""
    if change.op is not Op.UPDATE or change.before is None:
        return (change,)
    row, before = change.row, change.before
    assert row is not None
    if any(row[i] != before[i] for i in key_indexes):
        return (
            attrs.evolve(change, op=Op.DELETE, row=None, split=True),
            attrs.evolve(change, op=Op.INSERT, before=None, split=True),
        )
    return (change,)


# A converted column: an Arrow array where pyarrow computed the values (its `to_pylist()`
# gives the mounter values), else a list of them.
ConvertedColumn: TypeAlias = pa.Array | list[Any]

# Op codes of `ChangeBatch.op_codes`.
OP_INSERT, OP_UPDATE, OP_DELETE = 0, 1, 2
_OP_BY_CODE = (Op.INSERT, Op.UPDATE, Op.DELETE)


@attrs.frozen(eq=False)
class ChangeBatch:
    """The changes of one table in one record batch, column by column, for encoders
    that render whole columns; `to_changes` zips them into `RowChange`s for the row path.

    `columns` holds, per table column, the converted values (mounter values, module
    docstring) of every row's image (the new row, or the deleted row for a DELETE), as
    an Arrow array or a list; `before_columns` the old images of the UPDATE rows listed
    in `before_rows` (indexes into this batch's rows). `positions` are the rows'
    positions in the record batch (None: all of them, in order).
    """

    table: TableSchema
    rows: int
    positions: list[int] | None
    op_codes: pa.Array | None  # int8 OP_INSERT / OP_UPDATE / OP_DELETE per row; None: all INSERT
    commit_ts: pa.Array | None  # integer per row; None: every row has default_commit_ts
    default_commit_ts: int
    columns: list[ConvertedColumn]
    before_rows: list[int]
    before_columns: list[ConvertedColumn]
    # The UPDATE rows (ascending) split into DELETE + INSERT, when decided before the
    # columns were narrowed by a column selection (on the whole row, as TiCDC decides it);
    # None: decided from the key columns given to `to_events` / `codec.batch.key_changed`.
    split_rows: tuple[int, ...] | None = None

    def commit_ts_list(self) -> list[int]:
        if self.commit_ts is None:
            return [self.default_commit_ts] * self.rows
        return self.commit_ts.to_pylist()

    def to_events(self, key_indexes: tuple[int, ...]) -> list[RowChange]:
        """The row path's events, in message order: every row, with UPDATEs that change
        a key column split (`split_key_update`, or `split_rows` when set)."""
        if self.split_rows is None:
            return [
                e for change in self.to_changes() for e in split_key_update(change, key_indexes)
            ]
        split = set(self.split_rows)
        events = []
        for i, change in enumerate(self.to_changes()):
            if i in split:
                events.append(attrs.evolve(change, op=Op.DELETE, row=None))
                events.append(attrs.evolve(change, op=Op.INSERT, before=None))
            else:
                events.append(change)
        return events

    def to_changes(self) -> list[RowChange]:
        """Every row as a RowChange, in order."""
        table, rows = self.table, self.rows
        lists = [_to_list(c) for c in self.columns]
        images = list(zip(*lists, strict=True)) if lists else [()] * rows
        if self.op_codes is None:
            if self.commit_ts is None:
                ts = self.default_commit_ts
                return [RowChange(table, Op.INSERT, ts, image) for image in images]
            return [
                RowChange(table, Op.INSERT, ts, image)
                for ts, image in zip(self.commit_ts_list(), images, strict=True)
            ]
        befores: list[tuple[Any, ...] | None] = [None] * rows
        if self.before_rows:
            old = [_to_list(c) for c in self.before_columns]
            for position, image in zip(self.before_rows, zip(*old, strict=True), strict=True):
                befores[position] = image
        changes = []
        for code, ts, image, before in zip(
            self.op_codes.to_pylist(), self.commit_ts_list(), images, befores, strict=True
        ):
            op = _OP_BY_CODE[code]
            if op is Op.DELETE:
                changes.append(RowChange(table, op, ts, None, image))
            elif op is Op.UPDATE:
                changes.append(RowChange(table, op, ts, image, before))
            else:
                changes.append(RowChange(table, op, ts, image))
        return changes


def _to_list(values: ConvertedColumn) -> list[Any]:
    return values.to_pylist() if isinstance(values, pa.Array) else values


def zone_info(name: str) -> dt.tzinfo:
    """The zone of the `time-zone` option.

    Raises:
        ConfigError: not an IANA zone name.
    """
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(
            f"option 'time-zone' is {name!r}, which is not a known time zone; use an IANA "
            "name such as UTC or Asia/Shanghai",
            option="time-zone",
            value=name,
        ) from exc

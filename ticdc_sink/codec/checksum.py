"""TiCDC's row checksum (`[integrity] integrity-check-level = "correctness"`): the
column-level CRC32 that TiCDC v8.5 writes in Simple's `checksum` object and Avro's
`_tidb_row_level_checksum` field.

What TiCDC writes, whatever checksum version the upstream TiDB stored, is the column-level
checksum its mounter recomputes after verifying the row (tiflow `cdc/entry/mounter.go`,
`calculateColumnChecksum`): TiDB's `rowcodec.RowData.Checksum` (`pkg/util/rowcodec/common.go`)
over the row's columns sorted by column ID, each non-NULL column appending
`appendDatumForChecksum`'s bytes to one running IEEE CRC32 (NULLs append nothing). tiflow's
consumer recomputes it from the message values (`pkg/sink/codec/common/verify_checksum.go`,
`buildChecksumBytes`), and so does this module, from the same mounter values (events.py):

    integer types, YEAR, ENUM (index), SET (bitmask), BIT   8 bytes, little-endian uint64
                                                           (signed values two's complement)
    FLOAT, DOUBLE    the float64 bits, little-endian (FLOAT widened from float32); NaN and
                     infinity count as 0
    CHAR/VARCHAR/TEXT, BINARY/VARBINARY/BLOB   uint32 little-endian length, then the bytes
                     (text as UTF-8)
    DECIMAL, DATE, DATETIME, TIME, JSON   length, then the mounter text
    TIMESTAMP        length, then the value converted from the sink's time zone to UTC as
                     Go's `time.Date` does (TiDB `Time.ConvertTimeZone`), same fraction digits

Rows carry no TiDB column IDs: the writer (`writer.table`, `ddl`) numbers the columns 1,
2, ... in the order of `table-ddl` or the DataFrame, which is TiDB's column-ID order only
while the table has no `ADD COLUMN ... FIRST/AFTER` (a new, higher ID placed before older
columns) nor a column-type change that rewrote the column (a new ID in the old place) in
its history.

VECTOR columns are refused: tiflow's consumer and TiDB serialise them differently from the
text this sink holds, and no test vector settles it.

Knows MySQL values and CRC32; no wire format, no Kafka, no Spark.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import struct
import zlib
import zoneinfo
from collections.abc import Callable, Collection, Sequence
from typing import Any

import attrs
import pyarrow as pa

from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.errors import InputError, SchemaError
from ticdc_sink.events import OP_DELETE, OP_INSERT, ChangeBatch, Op, RowChange
from ticdc_sink.schema import TableSchema

__all__ = ["CHECKSUM_VERSION", "RowChecksum", "TableChecksum", "checksum_bytes"]

#: The `version` written. TiCDC copies the checksum version of the row format the upstream
#: TiDB stored (0: column-level checksum, TiDB 7.1-8.2; 1 and 2: raw-bytes checksums of
#: later TiDBs), while the value it writes is always the column-level checksum. Rows here
#: come from no TiDB; 0 says what the value is.
CHECKSUM_VERSION = 0

_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_F32 = struct.Struct("<f")
_LENGTH = struct.Struct("<I")
_MASK64 = (1 << 64) - 1

Appender = Callable[[Any], bytes]


@attrs.frozen
class RowChecksum:
    """What TiCDC's `integrity.Checksum` carries for one message: the checksum of the new
    image (`current`) and of the old one (`previous`), 0 where there is no such image."""

    current: int
    previous: int
    version: int = CHECKSUM_VERSION
    corrupted: bool = False


def _integer(value: Any) -> bytes:
    return _U64.pack(int(value) & _MASK64)


def _float32(value: float) -> bytes:
    if math.isinf(value) or math.isnan(value):
        return _F64.pack(0.0)
    return _F64.pack(_F32.unpack(_F32.pack(value))[0])


def _float64(value: float) -> bytes:
    if math.isinf(value) or math.isnan(value):
        return _F64.pack(0.0)
    return _F64.pack(value)


def _length_value(data: bytes) -> bytes:
    return _LENGTH.pack(len(data)) + data


def _text(value: Any) -> bytes:
    if isinstance(value, str):
        return _length_value(value.encode("utf-8"))
    if isinstance(value, bytes | bytearray | memoryview):
        return _length_value(bytes(value))
    raise TypeError(f"expected a str or bytes, got {type(value).__name__}")


_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d+)?")
_EPOCH = dt.datetime(1970, 1, 1)


def _to_utc_text(local: str, zone: dt.tzinfo) -> str:
    """A TIMESTAMP's wall-clock text in `zone` as UTC text, the fraction digits kept.

    Follows Go's `time.Date` (TiDB `Time.ConvertTimeZone` -> `GoTime`), which picks the
    offset in force at the wall clock read as UTC, unless the instant that gives lies
    outside that offset's span, then the offset at that instant: in a repeated hour it
    takes the earlier instant west of Greenwich and the later one east of it, so no
    "fold" rule of Python's would do. The zero date is left as it is, as TiDB does.
    """
    match = _TIMESTAMP.fullmatch(local)
    if match is None:
        raise ValueError(f"{local!r} is not a 'YYYY-MM-DD hh:mm:ss[.fraction]' timestamp")
    fraction = match.group(7) or ""
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    if (year, month, day) == (0, 0, 0):
        return local
    wall = int((dt.datetime(year, month, day, hour, minute, second) - _EPOCH).total_seconds())

    def offset_at(instant: int) -> int:
        at = dt.datetime.fromtimestamp(instant, dt.UTC).astimezone(zone).utcoffset()
        return 0 if at is None else int(at.total_seconds())

    instant = wall - offset_at(wall - offset_at(wall))
    utc = _EPOCH + dt.timedelta(seconds=instant)
    return utc.strftime("%Y-%m-%d %H:%M:%S") + fraction


def _timestamp(zone: dt.tzinfo | None) -> Appender:
    if zone is None:
        return _text

    def append(value: Any) -> bytes:
        if not isinstance(value, str):
            raise TypeError(f"expected a str, got {type(value).__name__}")
        return _length_value(_to_utc_text(value, zone).encode("ascii"))

    return append


_APPENDERS: dict[ValueKind, Appender] = {
    ValueKind.INT: _integer,
    ValueKind.UINT: _integer,
    ValueKind.ENUM: _integer,
    ValueKind.SET: _integer,
    ValueKind.BIT: _integer,
    ValueKind.FLOAT32: _float32,
    ValueKind.FLOAT64: _float64,
    ValueKind.DECIMAL: _text,
    ValueKind.DATE: _text,
    ValueKind.DATETIME: _text,
    ValueKind.TIME: _text,
    ValueKind.JSON: _text,
    ValueKind.TEXT: _text,
    ValueKind.BINARY: _text,
}


@functools.lru_cache(maxsize=64)
def _zone(time_zone: str) -> dt.tzinfo | None:
    # TiDB converts only when the zone is not time.UTC (LoadLocation("UTC") is time.UTC).
    if time_zone.upper() == "UTC":
        return None
    return zoneinfo.ZoneInfo(time_zone)


def checksum_bytes(kind: ValueKind, value: Any, time_zone: str = "UTC") -> bytes:
    """The bytes one non-NULL mounter value of `kind` adds to the row checksum (TiDB
    `appendDatumForChecksum`); for tests and for reading the module docstring's table.

    Raises:
        TypeError, ValueError, OverflowError: the value does not fit its kind.
    """
    if kind is ValueKind.TIMESTAMP:
        return _timestamp(_zone(time_zone))(value)
    return _APPENDERS[kind](value)


def _update_integers(crcs: list[int], values: pa.Array) -> None:
    """`_integer` for a whole Arrow integer (or boolean) column: its values as 8-byte
    little-endian words made by numpy at once, each fed to its row's CRC."""
    if pa.types.is_boolean(values.type):
        values = values.cast(pa.int8())
    # a cast to uint64 keeps a negative int64's two's complement bits, as Go's GetUint64
    words = values.fill_null(0).to_numpy(zero_copy_only=False).astype("<u8")
    data = memoryview(words.tobytes())
    valid = None if values.null_count == 0 else values.is_valid().to_pylist()
    crc32 = zlib.crc32
    for i in range(len(crcs)):
        if valid is None or valid[i]:
            crcs[i] = crc32(data[8 * i : 8 * i + 8], crcs[i])


class TableChecksum:
    """The row checksum of one table, compiled once: per column, in column-ID order, the
    function giving its bytes. `of_row` is the row path; `of_columns` computes a batch
    column by column (one running CRC per row, each column's values in one loop), the same
    numbers."""

    def __init__(self, table: TableSchema, *, time_zone: str) -> None:
        """Compile the table.

        Raises:
            SchemaError: a VECTOR column (module docstring).
        """
        self.table = table
        appenders: list[tuple[int, Appender]] = []
        zone = _zone(time_zone)
        for position, column in enumerate(table.columns):
            kind = value_kind(column)
            if kind is ValueKind.VECTOR:
                raise SchemaError(
                    f"column {column.name} of {table.database}.{table.table} is a VECTOR, "
                    "which the row checksum does not cover here; drop the column or set "
                    "integrity-check-level to none",
                    column=column.name,
                )
            append = _timestamp(zone) if kind is ValueKind.TIMESTAMP else _APPENDERS[kind]
            appenders.append((position, append))
        order = sorted(range(len(appenders)), key=lambda i: table.columns[i].column_id)
        self._appenders = [appenders[i] for i in order]

    def of_row(self, row: Sequence[Any] | None) -> int:
        """The checksum of one image (0 for none).

        Raises:
            InputError: a value that does not fit its column.
        """
        if row is None:
            return 0
        crc = 0
        for position, append in self._appenders:
            value = row[position]
            if value is not None:
                crc = zlib.crc32(self._bytes(append, position, value), crc)
        return crc

    def of_columns(self, columns: Sequence[Sequence[Any]], rows: int) -> list[int]:
        """The checksums of `rows` images given column by column (each an Arrow array or a
        sequence of the column's values, None for NULL, in table column order).

        Raises:
            InputError: a value that does not fit its column.
        """
        crcs = [0] * rows
        crc32 = zlib.crc32
        for position, append in self._appenders:
            values = columns[position]
            if (
                append is _integer
                and isinstance(values, pa.Array)
                and (pa.types.is_integer(values.type) or pa.types.is_boolean(values.type))
            ):
                _update_integers(crcs, values)
                continue
            if isinstance(values, pa.Array):
                values = values.to_pylist()
            try:
                for i, value in enumerate(values):
                    if value is not None:
                        crcs[i] = crc32(append(value), crcs[i])
            except (TypeError, ValueError, OverflowError):
                for value in values:  # the row path's error, naming the value
                    if value is not None:
                        self._bytes(append, position, value)
                raise
        return crcs

    def of_columns_refusing(
        self, columns: Sequence[Sequence[Any]], rows: int, refused: set[int]
    ) -> list[int]:
        """`of_columns`, or, when a value does not fit, row by row with the rows that
        fail added to `refused` (their checksum left 0), for the column-wise encoders to
        leave those rows to the row path, which raises the error."""
        try:
            return self.of_columns(columns, rows)
        except InputError:
            pass
        lists = [c.to_pylist() if isinstance(c, pa.Array) else c for c in columns]
        crcs = [0] * rows
        for row in range(rows):
            try:
                crcs[row] = self.of_row([values[row] for values in lists])
            except InputError:
                refused.add(row)
        return crcs

    def of_change(self, change: RowChange) -> RowChecksum | None:
        """The checksums a message of `change` carries: `current` of the new image (INSERT,
        UPDATE), `previous` of the old one (UPDATE, DELETE); both 0 for the halves of a
        split key-changing UPDATE (`RowChange.split`): tiflow `cdc/model/sink.go`
        `SplitUpdateEvent` copies the event by value, so both halves share one
        `*integrity.Checksum`, and zeroing the DELETE's `Current` and then the INSERT's
        `Previous` zeroes both fields for both messages.

        None when both are 0 (no column holds a value, or a CRC of 0): tiflow's mounter
        (`mountRowKVEntry`) then attaches no checksum and the message carries none.

        Raises:
            InputError: see of_row.
        """
        if change.split:
            return RowChecksum(0, 0)
        current = 0 if change.op is Op.DELETE else self.of_row(change.row)
        previous = 0 if change.op is Op.INSERT else self.of_row(change.before)
        if current == 0 and previous == 0:
            return None
        return RowChecksum(current, previous)

    def of_batch(
        self, batch: ChangeBatch, split_rows: Collection[int], refused: set[int]
    ) -> list[RowChecksum | None]:
        """`of_change` for every message of `batch`, column-wise: one per row, two (both
        zeroed) for a row in `split_rows` (a key-changing UPDATE sent as DELETE + INSERT).
        The rows with a value the checksum refuses join `refused` (their checksums left
        0), for the column-wise encoders to leave them to the row path, which raises."""
        images = self.of_columns_refusing(batch.columns, batch.rows, refused)
        olds = [0] * batch.rows
        if batch.op_codes is not None and batch.before_rows:
            before_refused: set[int] = set()
            before = self.of_columns_refusing(
                batch.before_columns, len(batch.before_rows), before_refused
            )
            refused.update(batch.before_rows[j] for j in before_refused)
            for row, crc in zip(batch.before_rows, before, strict=True):
                olds[row] = crc
        ops = [OP_INSERT] * batch.rows if batch.op_codes is None else batch.op_codes.to_pylist()
        zeroed = RowChecksum(0, 0)
        out: list[RowChecksum | None] = []
        for row, op in enumerate(ops):
            if row in split_rows:
                out += [zeroed, zeroed]
                continue
            if op == OP_DELETE:
                current, previous = 0, images[row]
            elif op == OP_INSERT:
                current, previous = images[row], 0
            else:
                current, previous = images[row], olds[row]
            out.append(RowChecksum(current, previous) if current or previous else None)
        return out

    def _bytes(self, append: Appender, position: int, value: Any) -> bytes:
        try:
            return append(value)
        except (TypeError, ValueError, OverflowError) as exc:
            column = self.table.columns[position]
            name = f"{self.table.database}.{self.table.table}"
            raise InputError(
                f"column {column.name} of {name} ({column.type.base}) cannot take "
                f"{value!r:.80} for the row checksum: {exc}",
                table=name,
                column=column.name,
                value=value,
            ) from exc

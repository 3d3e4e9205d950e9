"""The avro protocol's row path: `encode_row`, one message per row change, the reference the
column-wise path (`batch`) matches byte for byte.

Per table the encoder builds one writer function per column and, from them, one generated
function that writes a whole record (small ints, str and float values inline, the union
branch bytes as constants): no dict per row, no schema lookup, no union resolution per
value. `tests/unit/codec/avro/test_encoder.py` checks the bytes against fastavro's writer.
Messages: key = Confluent-framed record of the handle-key columns (None without a handle
key); value = Confluent-framed record of the new image, None (a tombstone) for DELETE,
with the `_tidb_*` extension fields under `enable-tidb-extension` (and the row checksum
fields, the value columns in column-ID order, with `integrity-check-level=correctness`:
`schema`). `len(key) + len(value)
+ 36 > max-message-bytes` raises MessageTooLargeError: Avro has no large-message handling
(tiflow AppendRowChangedEvent).

With `avro-include-before-value` (pingcap/ticdc master `arvo.go` `encodeValue`): after the
columns, `_ticdc_before` (union branch 0 for null, branch 1 and the old row's record for
UPDATE and DELETE), then `_tidb_op` (`c`, `u`, `d`) with or without the other extension
fields; a DELETE has a value, the deleted row in both places, and carries the old row's
checksum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ticdc_sink.codec import RECORD_OVERHEAD, Message
from ticdc_sink.codec.avro.framing import SchemaHeaders
from ticdc_sink.codec.avro.schema import modes, null_first, value_columns
from ticdc_sink.codec.avro.values import (
    BYTES_OF,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    Writer,
    checksum_fields,
    pack_double,
    pack_float,
    value_writer,
    varint,
    write_double,
    write_float,
    write_int32,
    write_int64,
    write_plain_str,
    write_str,
    write_uint64_wrapped,
)
from ticdc_sink.codec.checksum import TableChecksum
from ticdc_sink.codec.common import handle_key_text, short_repr
from ticdc_sink.errors import InputError, MessageTooLargeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import Column, TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["AvroRowEncoder"]

# `_tidb_op` (an Avro string of one character) per operation (tiflow `getOperation`;
# "d" is pingcap/ticdc's, written with avro-include-before-value).
_OP_INSERT, _OP_UPDATE, _OP_DELETE = b"\x02c", b"\x02u", b"\x02d"
_OPS = {Op.INSERT: _OP_INSERT, Op.UPDATE: _OP_UPDATE, Op.DELETE: _OP_DELETE}


def _not_null(write: Writer) -> Writer:
    def checked(value: Any) -> bytes:
        if value is None:
            raise ValueError("NULL in a NOT NULL column")
        return write(value)

    return checked


def _nullable(write: Writer, null_is_first: bool) -> Writer:
    # ["null", T]: null is branch 0, the value branch 1; [T, "null"]: the other way round.
    null_branch, value_branch = (b"\x00", b"\x02") if null_is_first else (b"\x02", b"\x00")

    def union(value: Any) -> bytes:
        if value is None:
            return null_branch
        return value_branch + write(value)

    return union


def _writers(
    columns: list[tuple[int, Column]], decimal_string: bool, unsigned_string: bool
) -> list[tuple[int, Writer]]:
    """Per column (row position, writer of the field including its union branch)."""
    out = []
    for position, column in columns:
        write = value_writer(column, decimal_string, unsigned_string)
        if column.nullable:
            write = _nullable(
                write, null_is_first=null_first(column, decimal_string, unsigned_string)
            )
        else:
            write = _not_null(write)
        out.append((position, write))
    return out


# Writers whose common inputs the compiled body writes inline (see `_compile_body`).
_INT_RANGES: dict[Writer, tuple[int, int]] = {
    write_int32: (INT32_MIN, INT32_MAX),
    write_int64: (INT64_MIN, INT64_MAX),
    write_uint64_wrapped: (0, INT64_MAX),  # beyond: the writer wraps
}
_INT_WRITERS = frozenset(_INT_RANGES)
_STR_WRITERS = frozenset({write_str, write_plain_str})
# zig-zag varints of -64..63: one byte each
_SMALL_LONGS = [BYTES_OF[(n << 1) ^ (n >> 63)] for n in range(-64, 64)]


def _compile_body(
    columns: list[tuple[int, Column]], decimal_string: bool, unsigned_string: bool
) -> Callable[[tuple[Any, ...]], bytes]:
    """One function writing a record's fields for a row, generated once per table.

    Per row this costs one call instead of two or three per column (no union closure, and
    small ints and str values are written inline); other values go to the column's
    writer. It raises on a bad value without saying which column: the row encoder then
    finds the culprit with the per-column writers of `_writers`. The code is built
    from constants and column positions only, never from names or values.
    """
    namespace: dict[str, Any] = {
        "S": _SMALL_LONGS,
        "B": BYTES_OF,
        "V": varint,
        "D": pack_double,
        "F": pack_float,
    }
    lines = ["def body(row):", "    out = []", "    add = out.append"]
    for j, (position, column) in enumerate(columns):
        write = value_writer(column, decimal_string, unsigned_string)
        namespace[f"w{j}"] = write
        lines.append(f"    v = row[{position}]")
        indent = "    "
        if column.nullable:
            first = null_first(column, decimal_string, unsigned_string)
            null_branch, value_branch = (b"\x00", b"\x02") if first else (b"\x02", b"\x00")
            namespace[f"n{j}"], namespace[f"p{j}"] = null_branch, value_branch
            lines += ["    if v is None:", f"        add(n{j})", "    else:", f"        add(p{j})"]
            indent = "        "
        if write in _INT_WRITERS:
            low, high = _INT_RANGES[write]
            lines += [
                f"{indent}if type(v) is int and -64 <= v < 64:",
                f"{indent}    add(S[v + 64])",
                f"{indent}elif type(v) is int and {low} <= v <= {high}:",
                f"{indent}    add(V(v))",
                f"{indent}else:",
                f"{indent}    add(w{j}(v))",
            ]
        elif write is write_double or write is write_float:
            lines += [
                f"{indent}if type(v) is float and v - v == 0.0:",  # finite
                f"{indent}    add({'D' if write is write_double else 'F'}(v))",
                f"{indent}else:",
                f"{indent}    add(w{j}(v))",
            ]
        elif write in _STR_WRITERS:
            lines += [
                f"{indent}if type(v) is str:",
                f"{indent}    d = v.encode()",
                f"{indent}    n = len(d)",
                f"{indent}    add(B[n << 1] if n < 64 else V(n))",
                f"{indent}    add(d)",
                f"{indent}else:",
                f"{indent}    add(w{j}(v))",
            ]
        else:
            lines.append(f"{indent}add(w{j}(v))")
    lines.append("    return b''.join(out)")
    exec(compile("\n".join(lines), "<ticdc_sink.codec.avro body>", "exec"), namespace)
    return namespace["body"]


class AvroRowEncoder:
    """The avro protocol's `encode_row` for one table: the compiled key and value bodies,
    the Confluent headers (shared with the column-wise path) and the size check."""

    def __init__(self, config: CodecConfig, table: TableSchema, headers: SchemaHeaders) -> None:
        """Compile the table's bodies.

        Raises:
            SchemaError: a column type the protocol cannot carry (or, with the row
                checksum, one the checksum does not cover).
        """
        self.table = table
        self._headers = headers
        self._key_header: bytes | None = None
        self._value_header: bytes | None = None
        self._extension = config.enable_tidb_extension
        self._include_before = config.avro_include_before_value
        self._limit = config.max_message_bytes
        self._has_key = bool(table.handle_key_indexes)
        self._tail_ts = -1
        self._tail_pair = (b"", b"")
        self._name = f"{table.database}.{table.table}"
        self._width = len(table.columns)
        decimal_string, unsigned_string = modes(config)
        self._checksum = (
            TableChecksum(table, time_zone=config.time_zone)
            if config.row_checksum and self._extension
            else None
        )
        values = [(i, table.columns[i]) for i in value_columns(config, table)]
        key_columns = [(i, table.columns[i]) for i in table.handle_key_indexes]
        self._value_writers = _writers(values, decimal_string, unsigned_string)
        self._key_writers = _writers(key_columns, decimal_string, unsigned_string)
        self._value_body = _compile_body(values, decimal_string, unsigned_string)
        self._key_body = _compile_body(key_columns, decimal_string, unsigned_string)

    def _fetch_key_header(self) -> bytes:
        self._key_header = self._headers.key()
        return self._key_header

    def _fetch_value_header(self) -> bytes:
        self._value_header = self._headers.value()
        return self._value_header

    def _culprit(self, row: tuple[Any, ...], writers: list[tuple[int, Writer]]) -> InputError:
        """The error naming the column whose value the compiled body could not write."""
        for i, write in writers:
            column = self.table.columns[i]
            try:
                write(row[i])
            except (TypeError, ValueError, OverflowError) as exc:
                return InputError(
                    f"column {column.name} of {self._name} ({column.type.to_sql()}) cannot "
                    f"take {short_repr(row[i])}: {exc}",
                    table=self._name,
                    column=column.name,
                    value=row[i],
                )
        raise AssertionError("unreachable: a writer failed only once")  # pragma: no cover

    def _bad_image(self, change: RowChange) -> InputError:
        image = change.before if change.op is Op.DELETE else change.row
        if image is None:
            which = "before (the deleted row)" if change.op is Op.DELETE else "row"
            return InputError(
                f"a {change.op.value} of {self._name} has no {which} image", table=self._name
            )
        return InputError(
            f"a row of {self._name} has {len(image)} values; the table has {self._width} columns",
            table=self._name,
        )

    def _tail(self, commit_ts: int) -> tuple[bytes, bytes]:
        """The extension fields for INSERT and UPDATE at `commit_ts`; rows of one
        transaction (or micro-batch) share them, so the last pair is kept."""
        if commit_ts != self._tail_ts:
            rest = self._rest(commit_ts)
            self._tail_pair = (_OP_INSERT + rest, _OP_UPDATE + rest)
            self._tail_ts = commit_ts
        return self._tail_pair

    @staticmethod
    def _rest(commit_ts: int) -> bytes:
        """`_tidb_commit_ts` (int64 of the TSO) and `_tidb_commit_physical_time`."""
        ts = commit_ts - (1 << 64) if commit_ts > INT64_MAX else commit_ts  # int64()
        return varint(ts) + varint(commit_ts >> 18)

    def _before_value(self, change: RowChange, image: tuple[Any, ...]) -> bytes:
        """The value record of `change` with avro-include-before-value: the columns of
        `image`, `_ticdc_before` (the old row of an UPDATE or DELETE), `_tidb_op`, and the
        other extension fields with enable-tidb-extension."""
        op = change.op
        old: tuple[Any, ...] | None = None
        if op is Op.UPDATE:
            old = change.before
            if old is None:
                raise InputError(
                    f"an UPDATE of {self._name} has no old row; avro-include-before-value "
                    "writes it in `_ticdc_before`: give the `_before` column (or send DELETE "
                    "+ INSERT)",
                    table=self._name,
                )
            if len(old) != self._width:
                raise InputError(
                    f"the old row of an UPDATE of {self._name} has {len(old)} values; the "
                    f"table has {self._width} columns",
                    table=self._name,
                )
        elif op is Op.DELETE:
            old = image
        parts = [self._value_header or self._fetch_value_header(), self._body(image)]
        parts.append(b"\x00" if old is None else b"\x02" + self._body(old))
        parts.append(_OPS[op])
        if self._extension:
            parts.append(self._rest(change.commit_ts))
            if self._checksum is not None:
                checksum = self._checksum.of_change(change)
                parts.append(checksum_fields(checksum, delete=op is Op.DELETE))
        return b"".join(parts)

    def _body(self, image: tuple[Any, ...]) -> bytes:
        try:
            return self._value_body(image)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._culprit(image, self._value_writers) from exc

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change.

        Raises:
            InputError: a value that does not fit its column (or NULL in a NOT NULL one),
                or, with the row checksum, that the checksum cannot take.
            MessageTooLargeError: key + value + 36 above max-message-bytes.
            ConfigError: the encoder has no registry.
            RegistryError: from the registry, when fetching a schema id.
        """
        op = change.op
        image = change.before if op is Op.DELETE else change.row
        if image is None or len(image) != self._width:
            raise self._bad_image(change)
        key: bytes | None = None
        if self._has_key:
            try:
                body = self._key_body(image)
            except (TypeError, ValueError, OverflowError) as exc:
                raise self._culprit(image, self._key_writers) from exc
            key = (self._key_header or self._fetch_key_header()) + body
        value: bytes | None = None
        if self._include_before:
            value = self._before_value(change, image)
        elif op is not Op.DELETE:
            body = self._body(image)
            header = self._value_header or self._fetch_value_header()
            if self._extension:
                insert_tail, update_tail = self._tail(change.commit_ts)
                value = header + body + (insert_tail if op is Op.INSERT else update_tail)
                if self._checksum is not None:
                    value += checksum_fields(self._checksum.of_change(change))
            else:
                value = header + body
        size = (0 if key is None else len(key)) + (0 if value is None else len(value))
        if size + RECORD_OVERHEAD > self._limit:
            raise MessageTooLargeError(
                table=self._name,
                key=handle_key_text(self.table, image),
                size=size + RECORD_OVERHEAD,
                limit=self._limit,
            )
        return Message(key=key, value=value, commit_ts=change.commit_ts, rows=1)

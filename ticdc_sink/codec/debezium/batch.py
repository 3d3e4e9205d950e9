"""Debezium, a record batch at a time: the same bytes as `row.DebeziumRowEncoder.encode_row`,
built
column by column with pyarrow compute instead of string joins per row.

Per column, once per batch: every row's value text (integers and doubles cast to strings by
Arrow, DATE / DATETIME / TIMESTAMP / TIME parsed by Arrow into the row path's numbers or
zoned strings, strings quoted, and only the values that need escaping -- found by a scan
of the column's bytes -- escaped one by one through `gotext.jsoniter_quote`). Per row, in C: one
join of the envelope pieces (the `source` object around the commit ts, the op header) with
the image's value texts between their constant `"name":` prefixes and the table's `schema`
part (built once, then only copied); an UPDATE's `before` object rides in its op header.
Keys are a join of the handle-key texts. An UPDATE that changes a key column (DELETE +
INSERT, as `events.split_key_update`) takes index arrays over whole objects instead.

Python touches a single value only where Arrow cannot give the row path's exact text: floats
Arrow writes with an exponent (jsoniter's is `1e-07`), DATE/DATETIME years below 100 and
zero dates, TIMESTAMP wall clocks in a time-zone gap or overlap, ENUM/SET/BIT (per distinct
value), binary (base64), values of another form than the mounter's usual one. Those go
through the row path's own renderer. The messages of a row with a value the renderer
refuses, with text Arrow cannot hold (invalid UTF-8 read with "surrogateescape"), with a
NULL whose default TiCDC cannot encode, or an UPDATE without the old row the options
need, are left to the row path (`EncodedBatch.row_path`), which raises its error or
renders them; commit ts that are no TSO send the whole batch there, decided up front.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.codec import EncodedBatch
from ticdc_sink.codec.batch import (
    key_changed_rows,
    re2_class,
    row_messages,
    row_path_batch,
    string_bytes,
    wrap_strings,
)
from ticdc_sink.codec.debezium.table import DebeziumTable
from ticdc_sink.codec.debezium.temporal import MIN_TIMESTAMP
from ticdc_sink.codec.debezium.values import INT_RANGE, DebeziumColumn
from ticdc_sink.codec.mysql import ValueKind
from ticdc_sink.events import OP_DELETE, OP_INSERT, OP_UPDATE, ChangeBatch
from ticdc_sink.gotext import JSONITER_ESCAPED, jsoniter_quote

__all__ = ["DebeziumBatchEncoder"]

_TEXT = pa.large_string()
_EMPTY = pa.scalar("", _TEXT)
_CHUNK = 2048  # messages joined at a time
# Bytes that may start something jsoniter escapes (all ASCII); UTF-8 multi-byte sequences
# never hold a byte below 0x80, so a byte scan is exact.
_SAFE_BYTES = bytes(b for b in range(256) if chr(b) not in JSONITER_ESCAPED)
_NEEDS_ESCAPE = re2_class(JSONITER_ESCAPED)
_MIN_TIMESTAMP_TEXT = "{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}".format(*MIN_TIMESTAMP[:6])
_TIME_PATTERN = r"^(?P<sign>-?)(?P<h>\d{1,7}):(?P<m>\d{1,2}):(?P<s>\d{1,2})(?:\.(?P<f>\d{0,9}))?$"
_STRING_KINDS = frozenset({ValueKind.TEXT, ValueKind.JSON, ValueKind.VECTOR})
_DISTINCT_KINDS = frozenset({ValueKind.ENUM, ValueKind.SET, ValueKind.BIT})
# Kinds whose mounter values are strings (lists when events.py parsed them one by one).
_TEXT_INPUT_KINDS = _STRING_KINDS | {
    ValueKind.DECIMAL,
    ValueKind.DATE,
    ValueKind.DATETIME,
    ValueKind.TIMESTAMP,
    ValueKind.TIME,
}


# what the row path's renderers raise for a value TiCDC cannot encode
_REFUSED = (TypeError, ValueError, OverflowError, AttributeError)


def _text(value: Any) -> Any:
    return pa.scalar(value, _TEXT) if isinstance(value, str) else value


def _join(*parts: Any) -> pa.Array:
    """Element-wise concatenation (a null part makes the result null)."""
    return pc.binary_join_element_wise(*map(_text, parts), _EMPTY)


def _is_string(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(mask).as_py())


def _may_need_escaping(strings: pa.Array) -> bool:
    return bool(string_bytes(strings).translate(None, _SAFE_BYTES))


class _ColumnText:
    """One column's value texts (JSON, without the `"name":` prefix) for a whole batch,
    NULL already replaced by what the row path writes for it. `refused` lists the rows of
    the last `texts` call whose value only the row path can write (placeholders in their
    place)."""

    def __init__(self, column: DebeziumColumn, zone: Any) -> None:
        self.column = column
        self.kind = column.kind
        self.render: Callable[[Any], str] = column.render
        self.prefix = column.prefix
        t = column.column.type
        self.base = t.base
        self.fsp = t.fsp
        self.zone = zone
        # DECIMAL(p<=15, s<=6) as events.py writes it ("-12.50", exactly s fraction digits):
        # at most 15 significant digits read as a double come back as those digits, so
        # jsoniter's text is the decimal without trailing fraction zeros (see _decimals).
        self.short_decimal = (t.length or 10) <= 15 and t.scale <= 6
        self.scale = t.scale
        self.zone_name = getattr(zone, "key", None)
        null_text = column.null_text
        self.null = None if null_text is None else pa.scalar(null_text[len(self.prefix) :], _TEXT)
        self.refused: list[int] = []

    # -- whole column ---------------------------------------------------------------------

    def texts(self, values: pa.Array | list[Any]) -> tuple[pa.Array, bool]:
        """(every row's value text, whether it is complete JSON). Not complete: a string
        column without NULL or anything to escape, whose quotes the caller folds into the
        constant parts around it (two slice replacements a row saved). The rows left to
        the row path are in `refused` afterwards."""
        self.refused = []
        if self.kind in _STRING_KINDS:
            strings = self._strings(values)
            if strings is not None and not strings.null_count:
                if not _may_need_escaping(strings):
                    return strings, False
                return self._quoted(strings), True
        return self._texts(values), True

    def _strings(self, values: pa.Array | list[Any]) -> pa.Array | None:
        if isinstance(values, pa.Array):
            return values.cast(_TEXT) if _is_string(values.type) else None
        if not all(type(v) is str for v in values):
            return None
        try:
            return pa.array(values, _TEXT)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
            return None  # a lone surrogate: value by value

    def _texts(self, values: pa.Array | list[Any]) -> pa.Array:
        out = None
        if isinstance(values, pa.Array):
            if values.null_count == len(values):
                out = pa.nulls(len(values), _TEXT)
            else:
                try:
                    if self.kind is ValueKind.DECIMAL and self.short_decimal:
                        out = self._decimals(values)
                    else:
                        out = self._arrow(values)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    out = None
        elif self.kind in _DISTINCT_KINDS:
            out = self._distinct(values)
        elif self.kind in _TEXT_INPUT_KINDS and all(type(v) is str or v is None for v in values):
            try:
                strings = pa.array(values, _TEXT)
            except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
                strings = None  # a lone surrogate: value by value
            if strings is None:
                out = None
            elif self.kind in _STRING_KINDS:
                out = self._quoted(strings)
            else:
                try:
                    out = self._arrow(strings)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    out = None
        elif self.kind is ValueKind.BINARY:
            out = self._base64(values)
        if out is None:
            out = self._per_value(values.to_pylist() if isinstance(values, pa.Array) else values)
        if out.type != _TEXT:
            out = out.cast(_TEXT)
        if out.null_count:
            if self.null is None:
                # NULL whose default TiCDC cannot encode: the row path raises its error
                self.refused += np.flatnonzero(
                    out.is_null().to_numpy(zero_copy_only=False)
                ).tolist()
                out = pc.fill_null(out, "null")
            else:
                out = pc.coalesce(out, self.null)
        return out

    def _per_value(self, values: list[Any], rows: np.ndarray | None = None) -> pa.Array:
        """The row renderer's text of each value (`rows`: their rows in the batch, when
        not all of it). A value it refuses, or text Arrow cannot hold, is NULL here and
        its row in `refused`."""
        render = self.render
        try:
            texts = [None if v is None else render(v) for v in values]
        except _REFUSED:
            texts = []
            for k, value in enumerate(values):
                try:
                    texts.append(None if value is None else render(value))
                except _REFUSED:
                    texts.append(None)
                    self.refused.append(k if rows is None else int(rows[k]))
        try:
            return pa.array(texts, _TEXT)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
            pass
        # Lone surrogates (text bytes with invalid UTF-8): the row path writes those bytes.
        for k, text in enumerate(texts):
            if text is not None and not text.isascii() and not _utf8(text):
                texts[k] = None
                self.refused.append(k if rows is None else int(rows[k]))
        return pa.array(texts, _TEXT)

    def _fix(self, out: pa.Array, mask: pa.Array, values: pa.Array) -> pa.Array:
        """`out` with the rows of `mask` rendered one by one from `values` (the mounter
        values) by the row renderer."""
        if mask.null_count:
            mask = pc.fill_null(mask, True)
        if not _any(mask):
            return out
        rows = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
        fixed = self._per_value(values.filter(mask).to_pylist(), rows)
        return pc.replace_with_mask(out, mask, fixed)

    def _arrow(self, values: pa.Array) -> pa.Array | None:
        kind, arrow = self.kind, values.type
        if pa.types.is_string(arrow):
            values = values.cast(_TEXT)
            arrow = _TEXT
        if kind in (ValueKind.INT, ValueKind.UINT) and pa.types.is_integer(arrow):
            return self._integers(values)
        if kind is ValueKind.FLOAT64 and pa.types.is_float64(arrow):
            return self._floats(values, values)
        if kind is ValueKind.FLOAT32 and pa.types.is_float32(arrow):
            return self._floats(values, values)
        if kind in _STRING_KINDS and _is_string(arrow):
            return self._quoted(values)
        if not _is_string(arrow):
            return None
        if kind is ValueKind.DECIMAL:
            return self._floats(pc.cast(values, pa.float64()), values)
        if kind is ValueKind.DATE:
            return self._dates(values)
        if kind is ValueKind.DATETIME:
            return self._datetimes(values)
        if kind is ValueKind.TIMESTAMP and (self.zone is None or self.zone_name is not None):
            return self._timestamps(values)
        if kind is ValueKind.TIME:
            return self._times(values)
        return None

    # -- kinds ----------------------------------------------------------------------------

    def _integers(self, values: pa.Array) -> pa.Array:
        arrow = values.type
        if self.base == "year":
            return pc.cast(values, _TEXT)
        low, high, uhigh = INT_RANGE[self.base]
        if self.kind is ValueKind.UINT:
            if self.base == "bigint" and pa.types.is_uint64(arrow):
                # int64(v): 2^64-1 -> -1, above 2^63-1 -> v - 2^64, as the renderer.
                return pc.cast(values.view(pa.int64()), _TEXT)
            low, high = 0, (uhigh if self.base != "bigint" else high)
        minimum, maximum = pc.min_max(values).values()
        if minimum.as_py() is not None and (minimum.as_py() < low or maximum.as_py() > high):
            text = pc.cast(values, _TEXT)
            out_of_range = pc.or_(pc.less(values, low), pc.greater(values, high))
            return self._fix(text, out_of_range, values)
        return pc.cast(values, _TEXT)

    def _floats(self, doubles: pa.Array, values: pa.Array) -> pa.Array:
        # Arrow writes Go's shortest digits in plain form where jsoniter does, and an
        # exponent (`1e-7`, `1e+16`) where jsoniter writes `1e-07` or plain digits.
        text = pc.cast(doubles, _TEXT)
        return self._fix(text, pc.match_substring(text, "e"), values)

    def _decimals(self, strings: pa.Array) -> pa.Array | None:
        """An Arrow column of events.py's DECIMAL strings (canonical: only those, never a
        list, which may hold other spellings) without a round trip through doubles:
        `jsoniter_float(float(v))` of <= 15 significant digits is the decimal itself, its
        trailing fraction zeros (and point) dropped; magnitudes stay within 1e-6..1e15,
        where jsoniter writes no exponent."""
        if not _is_string(strings.type):
            return None
        if not self.scale:
            return strings.cast(_TEXT)
        trimmed = pc.utf8_rtrim(strings.cast(_TEXT), characters="0")
        return pc.utf8_rtrim(trimmed, characters=".")

    def _quoted(self, strings: pa.Array) -> pa.Array:
        out = wrap_strings(strings, '"', '"')
        if _may_need_escaping(strings):
            needs = pc.fill_null(pc.match_substring_regex(strings, _NEEDS_ESCAPE), False)
            if _any(needs):
                escaped = [jsoniter_quote(v) for v in strings.filter(needs).to_pylist()]
                out = pc.replace_with_mask(out, needs, pa.array(escaped, _TEXT))
        return out

    def _odd_dates(self, strings: pa.Array, length: int) -> pa.Array:
        """Rows the Arrow parse may not read as the renderer does: other lengths, years
        below 100 (two-digit-year rule) and zero dates. (A `T` between date and time, which
        Arrow also reads, takes the renderer's regex path there: the same numbers.)"""
        odd = pc.or_(
            pc.not_equal(pc.binary_length(strings), length),
            pc.starts_with(strings, "00"),
        )
        return pc.fill_null(odd, False)

    def _parsed(self, strings: pa.Array, length: int, unit: str) -> tuple[pa.Array, pa.Array]:
        """(timestamps or dates parsed by Arrow, mask of the rows left to the renderer)."""
        odd = self._odd_dates(strings, length)
        ok = strings
        if _any(odd):
            ok = pc.if_else(odd, pa.scalar("1970-01-01 00:00:00"[:length]), strings)
        target = pa.date32() if unit == "date" else pa.timestamp("us")
        return pc.cast(ok, target), odd

    def _dates(self, strings: pa.Array) -> pa.Array:
        dates, odd = self._parsed(strings, 10, "date")
        text = pc.cast(pc.cast(dates, pa.int32()), _TEXT)
        return self._fix(text, odd, strings)

    def _datetimes(self, strings: pa.Array) -> pa.Array:
        fsp = self.fsp
        stamps, odd = self._parsed(strings, 19 + (fsp + 1 if fsp else 0), "us")
        micros = pc.cast(stamps, pa.int64())
        if fsp <= 3:
            # floor(micros / 1000): Arrow's division truncates toward zero.
            negative = pc.less(micros, 0)
            if _any(negative):
                micros = pc.if_else(negative, pc.subtract(micros, 999), micros)
            micros = pc.divide(micros, 1000)
        return self._fix(pc.cast(micros, _TEXT), odd, strings)

    def _timestamps(self, strings: pa.Array) -> pa.Array:
        fsp = self.fsp
        width = 1 + fsp if fsp else 0
        stamps, odd = self._parsed(strings, 19 + width, "us")
        # Before TiDB's minimum (a wall clock compare, as the renderer): the renderer.
        odd = pc.or_(odd, pc.fill_null(pc.less(strings, _MIN_TIMESTAMP_TEXT), False))
        if self.zone is None:
            text = pc.binary_replace_slice(strings, start=10, stop=11, replacement="T")
        else:
            early = pc.assume_timezone(
                stamps, self.zone_name, ambiguous="earliest", nonexistent="earliest"
            )
            late = pc.assume_timezone(
                stamps, self.zone_name, ambiguous="latest", nonexistent="latest"
            )
            # A wall clock in a gap or an overlap: Python's fold=0 reading, one by one.
            odd = pc.or_(odd, pc.not_equal(early, late))
            utc = pc.cast(pc.cast(early, pa.timestamp("us")), _TEXT)
            text = pc.binary_replace_slice(
                pc.utf8_slice_codeunits(utc, 0, 19 + width), start=10, stop=11, replacement="T"
            )
        return self._fix(wrap_strings(text, '"', 'Z"'), odd, strings)

    def _times(self, strings: pa.Array) -> pa.Array:
        parts = pc.extract_regex(strings, _TIME_PATTERN)
        odd = pc.fill_null(pc.is_null(parts), True)
        if _any(odd):
            parts = pc.extract_regex(pc.if_else(odd, pa.scalar("00:00:00"), strings), _TIME_PATTERN)
        h, m, s = (pc.cast(parts.field(f), pa.int64()) for f in ("h", "m", "s"))
        fraction = pc.cast(
            pc.utf8_slice_codeunits(pc.utf8_rpad(parts.field("f"), 6, "0"), 0, 6), pa.int64()
        )
        seconds = pc.add_checked(
            pc.add_checked(pc.multiply_checked(h, 3600), pc.multiply(m, 60)), s
        )
        micros = pc.add_checked(pc.multiply_checked(seconds, 1_000_000), fraction)
        micros = pc.if_else(pc.equal(parts.field("sign"), "-"), pc.negate(micros), micros)
        return self._fix(pc.cast(micros, _TEXT), odd, strings)

    def _distinct(self, values: list[Any]) -> pa.Array | None:
        """ENUM / SET / BIT: each distinct value rendered once (None: a value the
        renderer refuses; the caller renders value by value)."""
        render = self.render
        memo: dict[Any, str] = {}
        out: list[str | None] = []
        try:
            for v in values:
                if v is None:
                    out.append(None)
                    continue
                key = (type(v), v)
                text = memo.get(key)
                if text is None:
                    text = memo[key] = render(v)
                out.append(text)
        except _REFUSED:
            return None
        return pa.array(out, _TEXT)

    def _base64(self, values: list[Any]) -> pa.Array | None:
        if not all(type(v) is bytes or v is None for v in values):
            return None
        encode = base64.b64encode
        texts = pa.array([None if v is None else encode(v) for v in values], pa.large_binary())
        return wrap_strings(texts.cast(_TEXT), '"', '"')


def _parts(separators: list[str], texts: list[tuple[pa.Array, bool]], end: str) -> list[Any]:
    """separator, text, separator, text, ..., end for a join; a text still to be quoted
    gets its quotes in the constant strings on either side."""
    parts: list[Any] = []
    pending = ""
    for separator, (text, complete) in zip(separators, texts, strict=True):
        if complete:
            parts += (pending + separator, text)
            pending = ""
        else:
            parts += (pending + separator + '"', text)
            pending = '"'
    parts.append(pending + end)
    return parts


class DebeziumBatchEncoder:
    """The column-wise side of one table's Debezium messages."""

    def __init__(self, table: DebeziumTable) -> None:
        columns = table.columns
        self.columns = [_ColumnText(c, table.zone) for c in columns]
        self.old_value = table.old_value
        # `{"name":` / `,"name":` around each value text.
        self.separators = [("," if i else "{") + c.prefix for i, c in enumerate(columns)]
        self.key_positions = table.key_positions
        key_columns = [columns[i] for i in self.key_positions]
        key_seps = [c.prefix for c in key_columns]
        key_seps = ['{"payload":{' + p if i == 0 else "," + p for i, p in enumerate(key_seps)]
        self.key_separators = key_seps
        self.key_tail = "}" + table.key_schema + "}"
        # The key of every message of a table without handle key.
        self.key_constant = ('{"payload":{' + self.key_tail).encode()
        head, middle, tail = table.source_parts
        self.source_head = '{"payload":{"source":' + head
        self.source_middle = middle
        self.source_tail = tail + table.ts_ms
        self.value_tail = "}" + table.value_schema + "}"
        update = '"op":"u","before":' if self.old_value else '"op":"u","after":'
        heads = [""] * 3
        heads[OP_INSERT] = '"op":"c","before":null,"after":'
        heads[OP_UPDATE] = update
        heads[OP_DELETE] = '"op":"d","after":null,"before":'
        self.heads = pa.array(heads, _TEXT)
        self.head_texts = heads
        self._opened_heads: dict[str, pa.Array] = {}
        self.insert_head = heads[OP_INSERT]
        self._aranges: dict[int, pa.Array] = {}

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every row of `batch`; those only the row path can write are
        listed in `row_path` (a table without columns, or commit ts that are no TSO, send
        the whole batch there)."""
        ts = self._commit_ts(batch)
        if not self.columns or batch.rows == 0 or ts is None:
            return row_path_batch(batch, key_indexes, sized=False)
        return self._encode(batch, key_indexes, *ts)

    @staticmethod
    def _commit_ts(batch: ChangeBatch) -> tuple[Any, Any] | None:
        """(`source.ts_ms`, `source.commit_ts`) texts: one literal each or one per row;
        None when a commit ts is no TSO (the row path raises its error)."""
        if batch.commit_ts is None:
            ts = batch.default_commit_ts
            if not 0 <= ts < 2**64:
                return None
            return str(ts >> 18), str(ts)
        ts_array = batch.commit_ts
        if ts_array.null_count or (pc.min(ts_array).as_py() or 0) < 0:
            return None
        return pc.cast(pc.shift_right(ts_array, 18), _TEXT), pc.cast(ts_array, _TEXT)

    # -- column-wise ----------------------------------------------------------------------

    def _texts(
        self, columns: list[Any], refused: set[int]
    ) -> tuple[list[tuple[pa.Array, bool]], pa.Array | None]:
        """(every column's value texts, the whole key message of each image, None for a
        table without handle key); the images with a value left to the row path are
        added to `refused`."""
        texts = []
        for column, values in zip(self.columns, columns, strict=True):
            texts.append(column.texts(values))
            refused.update(column.refused)
        keys = None
        if self.key_positions:
            key_texts = [texts[i] for i in self.key_positions]
            keys = _join(*_parts(self.key_separators, key_texts, self.key_tail))
        return texts, keys

    def _objects(self, columns: list[Any], refused: set[int]) -> tuple[pa.Array, pa.Array | None]:
        """(the `{"a":..,"b":..}` object of each image, its key message or None)."""
        texts, keys = self._texts(columns, refused)
        return _join(*_parts(self.separators, texts, "}")), keys

    def _heads(self, opening: str) -> pa.Array:
        """The op headers by op code, each followed by `opening` (the image's first part)."""
        heads = self._opened_heads.get(opening)
        if heads is None:
            heads = pa.array([h + opening for h in self.head_texts], _TEXT)
            self._opened_heads[opening] = heads
        return heads

    def _encode(
        self, batch: ChangeBatch, key_indexes: tuple[int, ...], ts_ms: Any, ts_text: Any
    ) -> EncodedBatch:
        n = batch.rows
        ops = batch.op_codes
        before_rows = batch.before_rows
        refused: set[int] = set()
        if ops is not None and self.old_value:
            updates = pc.equal(ops, OP_UPDATE)
            if pc.sum(updates).as_py() != len(before_rows):
                # an UPDATE without `_before`: the row path raises its error
                missing = updates.to_numpy(zero_copy_only=False).copy()
                missing[np.asarray(before_rows, np.int64)] = False
                refused.update(np.flatnonzero(missing).tolist())
        before_refused: set[int] = set()
        texts, keys = self._texts(batch.columns, refused)
        split = key_changed_rows(batch, key_indexes) if ops is not None else []
        row_ends = None
        if not split:
            # One message per row: the image's column parts go straight into the message
            # join (no object array in between); the op header carries the image's opening,
            # and an UPDATE's `before` object when it has one.
            image_parts = _parts(self.separators, texts, "}" + self.value_tail)
            opening = image_parts[0]
            if ops is None:
                head: Any = self.insert_head + opening
            else:
                head = self._heads(opening).take(ops)
                if before_rows and self.old_value:
                    befores, _ = self._objects(batch.before_columns, before_refused)
                    pairs = _join(self.head_texts[OP_UPDATE], befores, ',"after":' + opening)
                    rows = pa.array(before_rows, pa.int64())
                    mask = pc.is_in(self._arange(n), value_set=rows)
                    head = pc.replace_with_mask(head, mask, pairs)
            body_parts = [head, *image_parts[1:]]
        else:
            images = _join(*_parts(self.separators, texts, "}"))
            befores, before_keys = self._objects(batch.before_columns, before_refused)
            body, keys, head, ts_ms, ts_text, row_ends = self._split_messages(
                batch, set(split), images, keys, befores, before_keys, ts_ms, ts_text
            )
            body_parts = [head, body, self.value_tail]
        parts = [
            self.source_head,
            ts_ms,
            self.source_middle,
            ts_text,
            self.source_tail,
            *body_parts,
        ]
        # In chunks: with the `schema` part a message is kilobytes, and the joined buffer
        # of a whole batch would be tens of megabytes (reused buffers stay warm in cache).
        value_list: list[bytes | None] = []
        count = n if row_ends is None else row_ends[-1]
        for start in range(0, count, _CHUNK):
            chunk = [p.slice(start, _CHUNK) if isinstance(p, pa.Array) else p for p in parts]
            value_list += _join(*chunk).cast(pa.large_binary()).to_pylist()
        refused.update(before_rows[j] for j in before_refused)
        row_path = row_messages(refused, row_ends)
        if keys is None:
            return EncodedBatch(
                values=value_list,
                sizes=None,
                key=self.key_constant,
                row_ends=row_ends,
                row_path=row_path,
            )
        key_list = keys.cast(pa.large_binary()).to_pylist()
        return EncodedBatch(
            values=value_list, sizes=None, keys=key_list, row_ends=row_ends, row_path=row_path
        )

    def _split_messages(
        self,
        batch: ChangeBatch,
        split: set[int],
        images: pa.Array,
        image_keys: pa.Array | None,
        befores: pa.Array,
        before_keys: pa.Array | None,
        ts_ms: Any,
        ts_text: Any,
    ) -> tuple[pa.Array, pa.Array | None, pa.Array, Any, Any, list[int]]:
        """Messages when some UPDATEs change a key column (events.split_key_update): such a
        row is a DELETE of its old image, then an INSERT of the new one."""
        n = batch.rows
        assert batch.op_codes is not None
        before_of: dict[int, int] = {row: j for j, row in enumerate(batch.before_rows)}
        objects = pa.concat_arrays([images, befores])
        pairs = None
        if self.old_value and batch.before_rows:
            rows = pa.array(batch.before_rows, pa.int64())
            pairs = _join(befores, ',"after":', images.take(rows))
            objects = pa.concat_arrays([objects, pairs])
        ops_out: list[int] = []
        body_idx: list[int] = []
        key_idx: list[int] = []
        event_rows: list[int] = []
        row_ends: list[int] = []
        for i, op in enumerate(batch.op_codes.to_pylist()):
            if i in split:
                j = before_of[i]
                ops_out += (OP_DELETE, OP_INSERT)
                body_idx += (n + j, i)
                key_idx += (n + j, i)
                event_rows += (i, i)
            else:
                ops_out.append(op)
                j = before_of.get(i, -1)
                if op == OP_UPDATE and pairs is not None and j >= 0:
                    body_idx.append(n + len(befores) + j)
                else:
                    body_idx.append(i)
                key_idx.append(i)
                event_rows.append(i)
            row_ends.append(len(ops_out))
        body = objects.take(pa.array(body_idx, pa.int64()))
        keys = None
        if image_keys is not None and before_keys is not None:
            keys = pa.concat_arrays([image_keys, before_keys]).take(pa.array(key_idx, pa.int64()))
        head = self.heads.take(pa.array(ops_out, pa.int8()))
        if isinstance(ts_ms, pa.Array):
            taken = pa.array(event_rows, pa.int64())
            ts_ms, ts_text = ts_ms.take(taken), ts_text.take(taken)
        return body, keys, head, ts_ms, ts_text, row_ends

    def _arange(self, n: int) -> pa.Array:
        rows = self._aranges.get(n)
        if rows is None:
            if len(self._aranges) > 8:
                self._aranges.clear()
            rows = self._aranges[n] = pa.array(range(n), pa.int64())
        return rows


def _utf8(text: str) -> bool:
    """Whether `text` is valid UTF-8 once encoded (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

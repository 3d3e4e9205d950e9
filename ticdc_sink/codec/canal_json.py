"""TiCDC's canal-json protocol (reference §9): DML messages, WATERMARK and DDL.

Bytes follow tiflow `pkg/sink/codec/canal/canal_json_row_event_encoder.go`
(`newJSONMessageForDML`, hand-written with easyjson's `jwriter`), `canal_entry.go`
(`formatValue`, `getJavaSQLType`), `canal_json_message.go` (the WATERMARK / DDL struct,
marshalled with goccy/go-json), `internal/java.go` (Java SQL type codes) and
`utils/mysql_types.go` (`GetMySQLType`).

A DML value is, in this order (`old` before `data`, unlike the docs' examples):

    {"id":0,"database":…,"table":…,"pkNames":[…],"isDdl":false,"type":"INSERT",
     "es":<commitTs >> 18>,"ts":<build ts ms>,"sql":"","sqlType":{…},"mysqlType":{…},
     "old":…,"data":[{…}][,"_tidb":{"commitTs":…[,"onlyHandleKey":true]}]}

Choices where TiCDC is not deterministic or reads the clock:

* `ts` is TiCDC's `time.Now()`; here it is `build_ts_ms`, given by the caller, so that a
  replayed batch writes byte-identical messages (the WATERMARK and DDL `ts` likewise).
* `mysqlType` is a Go map that tiflow walks in Go's random map order; this encoder writes
  it, like `sqlType`, in column order. Consumers read it as a JSON object, so only the
  byte order differs between two TiCDC runs anyway.

Every value is a JSON string (NULL is `null`): integers, ENUM index, SET bitmask and BIT
as decimal text, FLOAT/DOUBLE in Go's shortest `'f'` form (NaN/±Inf as `0`, as TiCDC's
mounter replaces them), DECIMAL/temporal/JSON/VECTOR/text as is, binary bytes as
ISO-8859-1 characters (byte b -> U+00bb). Strings are escaped as easyjson's
`Writer.String` does (goccy/go-json agrees for the WATERMARK and DDL messages): `"` `\\`
`\\t` `\\n` `\\r` short, every other C0 control `\\u00xx` (so `\\b` is `\\u0008`), `<` `>`
`&` and U+2028/U+2029 escaped, each byte of invalid UTF-8 `\\ufffd`.

The encoder compiles a table once: the message head per operation (with `pkNames`),
`sqlType` (unless an unsigned integer column can be promoted by its value) and `mysqlType`
are constant bytes, and each column gets one renderer. Per row, the renderers turn the
values into text, orjson writes each image in one call, and a byte pass (usually one
translate and one memchr) patches the few places where orjson escapes differently from
easyjson; `gotext.easyjson_quote` is the slow, character-by-character path for invalid
UTF-8.

DDL messages (`encode_ddl`, tiflow `newJSONMessageForDDL`): CREATE for a new table, ALTER
for a changed one; TiCDC sends them to partition 0 only (reference §4).

Large messages (key + value + 36 above `max-message-bytes`): `none` raises
MessageTooLargeError; `handle-key-only` re-encodes with the handle-key columns and
`"_tidb":{…,"onlyHandleKey":true}` (config validation ensures the TiDB extension is on);
`claim-check` writes the full message to the injected store (`codec.claim_check`), then
sends the handle-key columns with `"_tidb":{…,"claimCheckLocation":"…"}` and no
`onlyHandleKey` (tiflow `newClaimCheckLocationMessage`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ticdc_sink.codec import RECORD_OVERHEAD, ClaimCheckStore, Message
from ticdc_sink.codec.common import short_repr
from ticdc_sink.codec.large_message import ROW_KEY, divert
from ticdc_sink.codec.mysql import (
    ValueKind,
    bit_text,
    float_text,
    str_value,
    value_kind,
)
from ticdc_sink.config import CodecConfig
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import easyjson_quote
from ticdc_sink.schema import INTEGER_TYPES, Column, MySQLType, TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec import EncodedBatch
    from ticdc_sink.codec._canal_json_batch import CanalJsonBatchEncoder
    from ticdc_sink.events import ChangeBatch

__all__ = [
    "WATERMARK_TYPE",
    "CanalJsonEncoder",
    "encode_watermark",
    "full_mysql_type",
    "java_sql_type",
    "mysql_type",
]


WATERMARK_TYPE = "TIDB_WATERMARK"

Renderer = Callable[[Any], str]


# --- mysqlType and sqlType (tiflow utils/mysql_types.go, canal/canal_entry.go) ------------


def _unsigned_flag(t: MySQLType) -> bool:
    # TiDB sets UNSIGNED with ZEROFILL on numeric types.
    return t.unsigned or t.zerofill


def _with_flags(text: str, t: MySQLType) -> str:
    # tiflow utils/field_types.go withUnsigned4MySQLType / withZerofill4MySQLType, and
    # TiDB ColumnInfo.GetTypeDesc: no " unsigned" for bit and year, no " zerofill" for year.
    if _unsigned_flag(t) and t.base not in ("bit", "year"):
        text += " unsigned"
    if t.zerofill and t.base != "year":
        text += " zerofill"
    return text


def mysql_type(column: Column) -> str:
    """The `mysqlType` entry TiCDC writes by default: TiDB's `TypeToStr` name plus
    ` unsigned` / ` zerofill` (tiflow `utils.GetMySQLType(col, false)`)."""
    return _with_flags(column.type.base, column.type)


_OUTPUT_FORMAT = str.maketrans({"\0": "\\0", "'": "''", "\n": "\\n", "\r": "\\r"})
_LENGTH_SHOWN = INTEGER_TYPES | {"bit", "char", "varchar", "binary", "varbinary", "year"}
_DEFAULT_FLOAT_FLEN = {"float": 12, "double": 22}


def full_mysql_type(column: Column) -> str:
    """The `mysqlType` entry with `content-compatible=true`: TiDB's
    `ColumnInfo.GetTypeDesc()` (`FieldType.CompactStr` plus the flags), e.g. `int(11)`,
    `int(10) unsigned`, `decimal(10,4)`, `varchar(16)`, `enum('a','b')`, `datetime(3)`,
    `float(10,3)`, `year(4)`; text, blob, json, date and fsp-0 temporal types carry no
    parameters. Integer display widths are shown (TiDB's default
    `TiDBStrictIntegerDisplayWidth=false`)."""
    t = column.type
    base = t.base
    if base in ("enum", "set"):
        elements = "','".join(e.translate(_OUTPUT_FORMAT) for e in t.elements)
        text = f"{base}('{elements}')"
    elif base in ("datetime", "timestamp", "time"):
        text = f"{base}({t.fsp})" if t.fsp else base
    elif base in _DEFAULT_FLOAT_FLEN:
        # Shown only when the scale is given: float(10,3); float and float(10) are "float".
        if t.decimal:
            flen = t.length if t.length is not None else _DEFAULT_FLOAT_FLEN[base]
            text = f"{base}({flen},{t.decimal})"
        else:
            text = base
    elif base == "decimal":
        text = f"decimal({t.length if t.length is not None else 10},{t.scale})"
    elif base in _LENGTH_SHOWN:
        text = f"{base}({t.flen})"
    elif base == "vector" and t.length is not None:
        text = f"vector({t.length})"
    else:
        text = base
    return _with_flags(text, t)


# java.sql.Types codes (tiflow internal/java.go MySQLType2JavaType).
_JAVA_TYPES: dict[str, int] = {
    "tinyint": -6,  # TINYINT
    "smallint": 5,  # SMALLINT
    "mediumint": 4,  # INTEGER
    "int": 4,
    "bigint": -5,  # BIGINT
    "float": 7,  # REAL
    "double": 8,  # DOUBLE
    "decimal": 3,  # DECIMAL
    "date": 91,
    "time": 92,
    "datetime": 93,  # TIMESTAMP
    "timestamp": 93,
    "year": 12,  # VARCHAR
    "enum": 4,
    "set": -7,  # BIT
    "bit": -7,
    "json": 12,
    "vector": 12,
    "char": 1,  # CHAR
    "varchar": 12,
    "tinytext": 2005,  # CLOB
    "text": 2005,
    "mediumtext": 2005,
    "longtext": 2005,
    "binary": 2004,  # BLOB: every string type with the binary charset
    "varbinary": 2004,
    "tinyblob": 2004,
    "blob": 2004,
    "mediumblob": 2004,
    "longblob": 2004,
}
# Unsigned integers whose value does not fit the signed Java type move one type up
# (tiflow canal_entry.go getJavaSQLType); MEDIUMINT UNSIGNED always fits INTEGER.
_PROMOTIONS: dict[str, tuple[int, int]] = {
    "tinyint": (127, 5),
    "smallint": (32767, 4),
    "int": (2147483647, -5),
    "bigint": (9223372036854775807, 3),
}


def _promotion(column: Column) -> tuple[int, int] | None:
    t = column.type
    if not _unsigned_flag(t):
        return None
    return _PROMOTIONS.get(t.base)


def java_sql_type(column: Column, value: Any = None) -> int:
    """The `sqlType` code of a column holding `value` (None: the column's base code)."""
    code = _JAVA_TYPES[column.type.base]
    promotion = _promotion(column)
    if promotion is not None and value is not None and value > promotion[0]:
        return promotion[1]
    return code


# --- value rendering (tiflow canal_entry.go formatValue) --------------------------------
# Renderers return the value's text; orjson writes an image's texts as JSON strings in one
# call and `_easyjson` fixes the few places where orjson's escaping differs from easyjson's.


def _text_value(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        # Go's string([]byte): easyjson writes each invalid UTF-8 byte as \ufffd; the
        # surrogates "surrogateescape" leaves for them make orjson refuse the image, and
        # the slow path (`easyjson_quote`) writes them.
        return bytes(value).decode("utf-8", "surrogateescape")
    raise TypeError(f"expected a str, got {type(value).__name__}")


def _binary_value(value: Any) -> str:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    # tiflow decodes binary bytes as ISO-8859-1 (charmap.ISO8859_1): byte b -> U+00bb.
    return bytes(value).decode("latin-1")


_RENDERERS: dict[ValueKind, Renderer] = {
    # int.__repr__ refuses anything but an int (bools print as 1/0, as Go's mounter has).
    ValueKind.INT: int.__repr__,
    ValueKind.UINT: int.__repr__,
    ValueKind.ENUM: int.__repr__,
    ValueKind.SET: int.__repr__,
    ValueKind.BIT: bit_text,
    ValueKind.FLOAT32: float_text(32),
    ValueKind.FLOAT64: float_text(64),
    ValueKind.DECIMAL: str_value,
    ValueKind.DATE: str_value,
    ValueKind.DATETIME: str_value,
    ValueKind.TIMESTAMP: str_value,
    ValueKind.TIME: str_value,
    ValueKind.JSON: str_value,
    ValueKind.VECTOR: str_value,
    ValueKind.TEXT: _text_value,
    ValueKind.BINARY: _binary_value,
}

# orjson and easyjson agree on `"` `\\` `\n` `\r` `\t`, lowercase `\u00xx` for the other
# C0 controls, raw DEL and raw non-ASCII. orjson writes `\b` `\f` short and `<` `>` `&`
# U+2028 U+2029 raw; easyjson escapes them. Escape pairs are matched first, so `\\b` (an
# escaped backslash, then "b") is left alone; `<` `>` `&` and U+2028/9 only occur inside
# strings, so the byte replacement is exact.
_ORJSON_DIFFERENCES = re.compile(rb"\\.|[<>&]|\xe2\x80[\xa8\xa9]", re.DOTALL)
_EASYJSON = {
    b"\\b": b"\\u0008",
    b"\\f": b"\\u000c",
    b"<": b"\\u003c",
    b">": b"\\u003e",
    b"&": b"\\u0026",
    b"\xe2\x80\xa8": b"\\u2028",
    b"\xe2\x80\xa9": b"\\u2029",
}


def _easyjson_match(match: re.Match[bytes]) -> bytes:
    text = match.group()
    return _EASYJSON.get(text, text)


# Bytes that may start a difference, all mapped to `<`: one translate and one memchr decide
# (measured ~3x cheaper than seven substring tests) whether the exact checks run at all.
_SUSPECTS = bytes.maketrans(b"<>&\\\xe2", b"<<<<<")


def _easyjson(out: bytes) -> bytes:
    """orjson output with easyjson's escaping."""
    if b"<" not in out.translate(_SUSPECTS):
        return out
    if (
        b"<" in out
        or b">" in out
        or b"&" in out
        or b"\\b" in out
        or b"\\f" in out
        or b"\xe2\x80\xa8" in out
        or b"\xe2\x80\xa9" in out
    ):
        return _ORJSON_DIFFERENCES.sub(_easyjson_match, out)
    return out


def _image_json(values: dict[str, str | None]) -> bytes:
    """`[{"name":"text",…}]` as easyjson writes it."""
    try:
        return _easyjson(orjson.dumps([values]))
    except orjson.JSONEncodeError:  # lone surrogates: invalid UTF-8 in text bytes
        body = ",".join(
            easyjson_quote(name) + ":" + ("null" if text is None else easyjson_quote(text))
            for name, text in values.items()
        )
        return ("[{" + body + "}]").encode()


# (column name, position in the row, renderer)
_Entry = tuple[str, int, Renderer]


class _Layout:
    """The constant text of one column selection (all columns, or the handle key only)."""

    def __init__(self, table: TableSchema, positions: list[int], entries: list[_Entry]) -> None:
        columns = [table.columns[i] for i in positions]
        self.entries = [entries[i] for i in positions]
        # (position, quoted key + ":", threshold, promoted code, base code)
        self.promotions: list[tuple[int, str, int, int, int]] = []
        codes: list[tuple[str, int]] = []
        for i, column in zip(positions, columns, strict=True):
            key = easyjson_quote(column.name) + ":"
            code = java_sql_type(column)
            codes.append((key, code))
            promotion = _promotion(column)
            if promotion is not None:
                self.promotions.append((i, key, promotion[0], promotion[1], code))
        self.codes = codes
        # tiflow writes `null` for an empty sqlType; mysqlType is a non-nil map: `{}`.
        self.sql_type = (
            "{" + ",".join(f"{key}{code}" for key, code in codes) + "}" if codes else "null"
        ).encode()

    def sql_type_for(self, image: tuple[Any, ...]) -> bytes:
        """`sqlType` for an image: the constant text unless an unsigned value is promoted."""
        if not self.promotions:
            return self.sql_type
        promoted: dict[str, int] = {}
        for i, key, threshold, code, _ in self.promotions:
            value = image[i]
            if value is not None and value > threshold:
                promoted[key] = code
        if not promoted:
            return self.sql_type
        text = ",".join(f"{key}{promoted.get(key, code)}" for key, code in self.codes)
        return ("{" + text + "}").encode()


class CanalJsonEncoder:
    """The canal-json encoder of one table, built once and reused for every row."""

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        build_ts_ms: int,
        claim_check: ClaimCheckStore | None = None,
    ) -> None:
        """Compile the table; every message carries `build_ts_ms` as `ts`. `claim_check`
        stores the messages `large-message-handle-option=claim-check` diverts.

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self._claim_check = claim_check
        self.config = config
        self.table = table
        self.build_ts_ms = build_ts_ms
        self._name = f"{table.database}.{table.table}"
        # content-compatible implies only-output-updated-columns (tiflow common/config.go).
        self._only_updated = config.only_output_updated_columns or config.content_compatible
        self._delete_key_only = config.delete_only_output_handle_key_columns
        self._extension = config.enable_tidb_extension
        columns = table.columns
        entries: list[_Entry] = [
            (c.name, i, _RENDERERS[value_kind(c)]) for i, c in enumerate(columns)
        ]
        type_of = full_mysql_type if config.content_compatible else mysql_type
        all_positions = list(range(len(columns)))
        handle = set(table.handle_key)
        key_positions = [i for i, c in enumerate(columns) if c.name in handle]
        self._layouts = {
            False: _Layout(table, all_positions, entries),
            True: _Layout(table, key_positions, entries),
        }
        self._mysql_types = {
            only_key: (
                ',"mysqlType":{'
                + ",".join(
                    f"{easyjson_quote(columns[i].name)}:{easyjson_quote(type_of(columns[i]))}"
                    for i in positions
                )
                + '},"old":'
            ).encode()
            for only_key, positions in ((False, all_positions), (True, key_positions))
        }
        primary = set(table.primary_key)
        pk_names = (
            "[" + ",".join(easyjson_quote(c.name) for c in columns if c.name in primary) + "]"
        )
        prefix = (
            f'{{"id":0,"database":{easyjson_quote(table.database)},"table":{easyjson_quote(table.table)},'
            f'"pkNames":{pk_names},"isDdl":false,"type":'
        )
        self._heads = {op: f'{prefix}"{op.value}","es":'.encode() for op in Op}
        self._middle = f',"ts":{build_ts_ms},"sql":"","sqlType":'.encode()
        self._batch_encoder: CanalJsonBatchEncoder | None = None

    # -- rows ------------------------------------------------------------------------------

    def encode_row(self, change: RowChange) -> Message:
        """The DML message of one row change; the Kafka key is empty.

        Raises:
            InputError: a value that does not fit its column, a row of the wrong width, or
                an UPDATE without its old row (canal-json always carries `old`).
            MessageTooLargeError: above max-message-bytes and the policy cannot help.
        """
        value = self._marshal(change, too_large=False)
        limit = self.config.max_message_bytes
        size = len(value) + RECORD_OVERHEAD
        if size <= limit:
            return Message(key=ROW_KEY, value=value, commit_ts=change.commit_ts, rows=1)
        return divert(
            self.config,
            self.table,
            change,
            value,
            lambda location: self._marshal(change, too_large=True, claim_check_location=location),
            store=self._claim_check,
            protocol="canal-json",
        )

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch | None:
        """The messages of a whole batch of this table, rendered column-wise
        (`codec._canal_json_batch`): what `encode_row` gives for each event, without the
        large-message policy (the writer re-encodes oversized messages through
        `encode_row`). None: the row path takes the batch.

        Raises:
            InputError: as `encode_row` raises it for the batch's first bad event.
        """
        if self._batch_encoder is None:
            from ticdc_sink.codec._canal_json_batch import CanalJsonBatchEncoder

            self._batch_encoder = CanalJsonBatchEncoder(self)
        return self._batch_encoder.encode_batch(batch, key_indexes)

    def encode_bootstrap(self) -> None:
        """canal-json has no bootstrap message."""
        return None

    def encode_ddl(self, previous: TableSchema | None, query: str, commit_ts: int) -> Message:
        """A DDL message for this table (tiflow `newJSONMessageForDDL`): type CREATE when
        `previous` is None, else ALTER; null key, for partition 0 only (reference §4)."""
        kind = "CREATE" if previous is None else "ALTER"
        text = (
            f'{{"id":0,"database":{easyjson_quote(self.table.database)},'
            f'"table":{easyjson_quote(self.table.table)},"pkNames":null,"isDdl":true,"type":"{kind}",'
            f'"es":{commit_ts >> 18},"ts":{self.build_ts_ms},"sql":{easyjson_quote(query)},'
            '"sqlType":null,"mysqlType":null,"data":null,"old":null'
        )
        if self._extension:
            text += f',"_tidb":{{"commitTs":{commit_ts}}}' if commit_ts else ',"_tidb":{}'
        return Message(key=None, value=(text + "}").encode(), commit_ts=commit_ts, rows=0)

    def _marshal(
        self, change: RowChange, *, too_large: bool, claim_check_location: str = ""
    ) -> bytes:
        """tiflow newJSONMessageForDML; `too_large` is its `messageTooLarge`, and a
        `claim_check_location` replaces the `onlyHandleKey` marker."""
        op = change.op
        only_key = too_large or (op is Op.DELETE and self._delete_key_only)
        layout = self._layouts[only_key]
        if op is Op.DELETE:
            image = self._image(change.before, "before")
            old = b"null"
            data = self._render(image, layout.entries)
        elif op is Op.INSERT:
            image = self._image(change.row, "row")
            old = b"null"
            data = self._render(image, layout.entries)
        else:
            image = self._image(change.row, "row")
            before = change.before
            if before is None:
                raise InputError(
                    f"an UPDATE of {self._name} has no old row; canal-json writes the old "
                    "values in `old`: give the `_before` column (or send DELETE + INSERT)",
                    table=self._name,
                )
            before = self._image(before, "before")
            if self._only_updated:
                old = self._render_changed(before, image, layout.entries)
            else:
                old = self._render(before, layout.entries)
            data = self._render(image, layout.entries)
        commit_ts = change.commit_ts
        if self._extension:
            if claim_check_location:
                marker = b',"claimCheckLocation":' + easyjson_quote(claim_check_location).encode()
            else:
                marker = b',"onlyHandleKey":true' if too_large else b""
            tail = b',"_tidb":{"commitTs":%d%b}}' % (commit_ts, marker)
        else:
            tail = b"}"
        return b"".join(
            (
                self._heads[op],
                b"%d" % (commit_ts >> 18),
                self._middle,
                layout.sql_type_for(image),
                self._mysql_types[only_key],
                old,
                b',"data":',
                data,
                tail,
            )
        )

    def _image(self, image: tuple[Any, ...] | None, what: str) -> tuple[Any, ...]:
        width = len(self.table.columns)
        if image is None or len(image) != width:
            got = "no values" if image is None else f"{len(image)} values"
            raise InputError(
                f"a row change of {self._name} has {got} in its {what} image; the table "
                f"has {width} columns",
                table=self._name,
            )
        return image

    def _render(self, image: tuple[Any, ...], entries: list[_Entry]) -> bytes:
        try:
            values = {
                name: None if (v := image[i]) is None else render(v) for name, i, render in entries
            }
        except (TypeError, ValueError, OverflowError, AttributeError):
            error = self._value_error(image)
            raise error from error.__cause__
        return _image_json(values)

    def _render_changed(
        self, before: tuple[Any, ...], after: tuple[Any, ...], entries: list[_Entry]
    ) -> bytes:
        # tiflow shouldIgnoreColumn / codec.IsColumnValueEqual: an old value equal to the new
        # one is left out. Values are compared by their rendered text, which is equal exactly
        # when the Go values are (float32 included), except -0 vs 0 (kept here; Go drops it).
        values: dict[str, str | None] = {}
        try:
            for name, i, render in entries:
                old = before[i]
                old_text = None if old is None else render(old)
                new = after[i]
                if old_text != (None if new is None else render(new)):
                    values[name] = old_text
        except (TypeError, ValueError, OverflowError, AttributeError):
            error = self._value_error(after, before)
            raise error from error.__cause__
        return _image_json(values)

    def _value_error(self, *images: tuple[Any, ...]) -> InputError:
        """The error naming the first value a renderer refuses (looked for only after a
        render failed, so the fast path stays free of per-value error handling)."""
        for image in images:
            for _, i, render in self._layouts[False].entries:
                value = image[i]
                try:
                    if value is not None:
                        render(value)
                except (TypeError, ValueError, OverflowError, AttributeError) as exc:
                    column = self.table.columns[i]
                    error = InputError(
                        f"column {column.name} of {self._name} ({column.type.base}) cannot "
                        f"take {short_repr(value)}: {exc}",
                        table=self._name,
                        column=column.name,
                        value=value,
                    )
                    error.__cause__ = exc
                    return error
        return InputError(f"a row of {self._name} cannot be encoded", table=self._name)


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The TIDB_WATERMARK message (tiflow `newJSONMessage4CheckpointEvent`, goccy/go-json in
    struct order), or None without enable-tidb-extension, as TiCDC sends none then. Null
    key (tiflow's sync producer path)."""
    if not config.enable_tidb_extension:
        return None
    # `watermarkTs` is `omitempty` in tiflow's tidbExtension struct.
    extension = f'{{"watermarkTs":{commit_ts}}}' if commit_ts else "{}"
    value = (
        f'{{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,'
        f'"type":"{WATERMARK_TYPE}","es":{commit_ts >> 18},"ts":{build_ts_ms},"sql":"",'
        f'"sqlType":null,"mysqlType":null,"data":null,"old":null,"_tidb":{extension}}}'
    )
    return Message(key=None, value=value.encode(), commit_ts=commit_ts)

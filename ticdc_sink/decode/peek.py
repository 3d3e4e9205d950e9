"""What a stream's driver needs of a row message, read without decoding its values
(`RowPeek`): the op, table, commit ts and schema version, and whether the values would be
typed.

A streaming read's driver places watermark cuts and watches for schema changes
(`read.stream`); the rows' values are the tasks' to decode (typing them costs 40 to 80 µs
a message). A peek answers only when it is certain, else it gives None and the caller
decodes the message as usual: a watermark, DDL or BOOTSTRAP message, a claim-check,
handle-key-only or checksummed row, any field of an unexpected type.

- Simple JSON, canal-json: the message is parsed (orjson, as the decoder parses it, so
  the same fields win) and the envelope checked as the decoder checks it; no value is
  typed.
- debezium: the message matches, from its first byte, the compact form TiCDC's encoder
  writes (the payload's fields in their order, every string a valid JSON string token,
  the images' values scalars), read by a regular expression over its structure, never by
  searching for text among the values; the schema part that follows, the larger part of
  the message and the same text for every row of a table, is parsed once per text.

What a peek does not check, the tasks' decode does: a value its column's type refuses,
bytes inside a debezium value that are not UTF-8. The decoders offer their protocol's
peek as `peek_row`, with their options applied (compression, the schemas a Simple
decoder knows).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import attrs
import orjson

from ticdc_sink.codec.simple.values import PROTOCOL_VERSION
from ticdc_sink.events import Op

__all__ = [
    "RowPeek",
    "SimpleRowFields",
    "canal_json_row",
    "debezium_row",
    "simple_json_row",
    "simple_row_fields",
]

#: A row's new and old images as the message holds them (`RowPeek.images`).
Images = tuple[dict[str, Any] | None, dict[str, Any] | None]


@attrs.frozen
class RowPeek:
    """A row message as a peek read it: the facts of `DecodedRow` that need no value
    decoded. `typed` is whether the decoder would type the values (a Simple row of a
    schema version it knows; a debezium row with its `schema` part). `images`, where the
    decoder compares the values as the message holds them (Simple), are `data` and `old`
    so, for the replay rule's identical-row check (`read.replay`); else None."""

    op: Op
    commit_ts: int
    database: str
    table: str
    schema_version: int = 0
    typed: bool = True
    images: Images | None = attrs.field(default=None, eq=False, repr=False)


# --- JSON tokens, as TiCDC's encoders write them ----------------------------------------

#: A JSON string token: no raw control character, only JSON's escapes.
_STR = rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
#: JSON numbers: integers as Go writes them, and any number.
_INT = rb"-?(?:0|[1-9][0-9]*)"
_UINT = rb"(?:0|[1-9][0-9]*)"
_NUM = _INT + rb"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"


def _text(token: bytes) -> str | None:
    """The str of a JSON string token (None: not UTF-8, which a decode refuses too)."""
    try:
        if b"\\" not in token:
            return token[1:-1].decode()
        text = orjson.loads(token)
    except (UnicodeDecodeError, orjson.JSONDecodeError):
        return None
    return text if isinstance(text, str) else None


# --- Simple, JSON encoding ----------------------------------------------------------------

_OPS = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE}
#: A Simple row message's envelope (`simple_row_fields`): its type (INSERT, UPDATE or
#: DELETE), commit ts, database, table, schema version, and `data` and `old` as it holds
#: them.
SimpleRowFields = tuple[str, int, str, str, int, dict[str, Any] | None, dict[str, Any] | None]


def simple_row_fields(message: Any) -> SimpleRowFields | None:
    """The envelope of a parsed Simple message (JSON's object, Avro's DML payload) that
    `SimpleDecoder.decode_message` gives as a row and nothing more: no checksum to
    verify, no handle-key-only or claim-check row, the images an INSERT (data), UPDATE
    (data, maybe old) or DELETE (old) carries, every field of the expected type. None for
    anything else. Shared by `simple_json_row` and `SimpleDecoder.plain_row`."""
    if type(message) is not dict:
        return None
    get = message.get
    kind, data, old = get("type"), get("data"), get("old")
    if kind == "INSERT":
        images_fit = type(data) is dict and old is None
    elif kind == "UPDATE":
        images_fit = type(data) is dict and (old is None or type(old) is dict)
    elif kind == "DELETE":
        images_fit = data is None and type(old) is dict
    else:
        return None
    database, table = get("database", ""), get("table", "")
    commit_ts, version = get("commitTs"), get("schemaVersion", 0)
    if not (
        images_fit
        and get("version") == PROTOCOL_VERSION
        and type(commit_ts) is int
        and type(version) is int
        and type(database) is str
        and type(table) is str
        and get("checksum") is None
        and get("handleKeyOnly") is not True
        and get("claimCheckLocation") is None
    ):
        return None
    return kind, commit_ts, database, table, version, data, old


def simple_json_row(value: bytes) -> RowPeek | None:
    """A Simple JSON row message (`simple_row_fields`); None for anything else. The JSON is
    parsed (orjson, as the decoder parses it: the same fields win) and nothing typed;
    `typed` is left True, the decoder knows whether it has the schema. `images` are the
    images as the message holds them."""
    try:
        fields = simple_row_fields(orjson.loads(value))
    except orjson.JSONDecodeError:
        return None
    if fields is None:
        return None
    kind, commit_ts, database, table, version, data, old = fields
    return RowPeek(_OPS[kind], commit_ts, database, table, version, images=(data, old))


# --- canal-json ---------------------------------------------------------------------------


def canal_json_row(value: bytes) -> RowPeek | None:
    """A canal-json row message without claim check: `data` (and an UPDATE's `old`) a
    list of one object, the commit ts from the TiDB extension (0 without it, as the
    decoder reads it); None for anything else. Parsed as `simple_json_row`."""
    try:
        message = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if type(message) is not dict:
        return None
    get = message.get
    kind = get("type")
    op = _OPS.get(kind) if type(kind) is str else None
    extension = get("_tidb") or {}
    if op is None or get("isDdl") is True or type(extension) is not dict:
        return None
    commit_ts, build_ts = extension.get("commitTs", 0), get("ts", 0)
    database, table = get("database"), get("table")
    if not (
        type(commit_ts) is int
        and commit_ts >= 0
        and type(build_ts) is int
        and type(database) is str
        and type(table) is str
        and _one_object(get("data"))
        and (op is not Op.UPDATE or _one_object(get("old")))
        and type(get("mysqlType") or {}) is dict
        and type(get("sqlType") or {}) is dict
        and extension.get("claimCheckLocation") is None
    ):
        return None
    return RowPeek(op, commit_ts, database, table)


def _one_object(image: Any) -> bool:
    return type(image) is list and len(image) == 1 and type(image[0]) is dict


# --- debezium (JSON) ----------------------------------------------------------------------

# tiflow debezium/codec.go `EncodeValue`: the payload's source in its fixed order, ts_ms,
# transaction, op, the images (INSERT: before null, after; UPDATE: before, after, or
# after alone without output-old-value; DELETE: after null, before), then the schema unless
# debezium-disable-schema. Image values are scalars. The schema, the larger part, is the
# same text for every row of a table: it is parsed once per text (`_is_object`).
_DEBEZIUM_VALUE = b"(?:" + _STR + b"|" + _NUM + rb"|true|false|null)"
_DEBEZIUM_IMAGE = rb"\{(?:" + _STR + b":" + _DEBEZIUM_VALUE + rb"(?:," + _STR + b":"
_DEBEZIUM_IMAGE += _DEBEZIUM_VALUE + rb")*)?\}"
_DEBEZIUM_ROW = re.compile(
    rb'\{"payload":\{"source":\{"version":' + _STR + rb',"connector":' + _STR + b""
    rb',"name":' + _STR + rb',"ts_ms":' + _INT + rb',"snapshot":' + _STR + b""
    rb',"db":(?P<database>' + _STR + rb'),"table":(?P<table>' + _STR + rb")"
    rb',"server_id":' + _INT + rb',"gtid":null,"file":' + _STR + rb',"pos":' + _INT + b""
    rb',"row":' + _INT + rb',"thread":' + _INT + rb',"query":null'
    rb',"commit_ts":(?P<commit_ts>' + _UINT + rb'),"cluster_id":' + _STR + rb"\}"
    rb',"ts_ms":' + _INT + rb',"transaction":null,"op":"(?P<op>[cud])",'
    rb'(?:"before":(?:null|'
    + _DEBEZIUM_IMAGE
    + rb'),"after":(?P<after>null|'
    + _DEBEZIUM_IMAGE
    + rb")"
    rb'|"after":null,"before":(?P<deleted>' + _DEBEZIUM_IMAGE + rb")"
    rb'|"after":' + _DEBEZIUM_IMAGE + rb")\}"
    rb'(?:\}\Z|,"schema":(?P<schema>\{))'
)
_DEBEZIUM_OPS = {b"c": Op.INSERT, b"u": Op.UPDATE, b"d": Op.DELETE}


def debezium_row(value: bytes) -> RowPeek | None:
    """A debezium JSON row message (`typed`: it has its schema part); None for anything
    else (watermarks, DDL events, an INSERT or UPDATE without `after`)."""
    found = _DEBEZIUM_ROW.match(value)
    if found is None:
        return None
    op = _DEBEZIUM_OPS[found["op"]]
    if op is Op.DELETE:
        if found["deleted"] is None:
            return None
    elif found["deleted"] is not None or found["after"] == b"null":
        return None
    schema = found.start("schema")
    if schema >= 0 and not (value.endswith(b"}") and _is_object(value[schema:-1])):
        return None
    database, table = _text(found["database"]), _text(found["table"])
    if database is None or table is None:
        return None
    return RowPeek(op, int(found["commit_ts"]), database, table, typed=schema >= 0)


@functools.lru_cache(maxsize=256)
def _is_object(text: bytes) -> bool:
    """Whether `text` is one JSON object (a debezium envelope's schema)."""
    try:
        return type(orjson.loads(text)) is dict
    except orjson.JSONDecodeError:
        return False

"""open-protocol message framing and the small JSON documents (tiflow
`pkg/sink/codec/open/open_protocol_encoder.go`, `open_protocol_message.go`,
`internal/message_key.go`), shared by every path.

A Kafka message holds one or more events. Its key is the 8-byte big-endian batch version
(1), then per event an 8-byte big-endian length and the event's key JSON; its value is per
event an 8-byte length and the event's value JSON, in the same order:

    key   = version | len(k1) k1 | len(k2) k2 | ...
    value =           len(v1) v1 | len(v2) v2 | ...

Key JSON (`MessageKey`, Go `encoding/json` in struct order, `omitempty` fields left out
when empty): `{"ts":…,"scm":…,"tbl":…,"t":<1 row, 2 DDL, 3 resolved>[,"ohk":true]
[,"ccl":…]}` (`rid` and `ptn` are a row id and a partition table id this sink does not
have). Value JSON: `{"u":{…},"p":{…},"d":{…}}` for rows (`row`), `{"q":…,"t":<TiDB
ActionType>}` for DDL, nothing (length 0) for the resolved event.
"""

from __future__ import annotations

import struct

from ticdc_sink.gotext import json_quote

__all__ = [
    "BATCH_VERSION",
    "FRAME_OVERHEAD",
    "TYPE_DDL",
    "TYPE_RESOLVED",
    "TYPE_ROW",
    "VERSION_HEAD",
    "ddl_key",
    "ddl_value",
    "frame",
    "resolved_key",
    "row_key",
    "row_key_tail",
]

#: tiflow codec.BatchVersion1, the first 8 bytes of every key.
BATCH_VERSION = 1
VERSION_HEAD = struct.pack(">Q", BATCH_VERSION)
#: What framing adds to one event's key and value JSON: the version and two lengths
#: (tiflow's size check: `len(key) + len(value) + MaxRecordOverhead + 16 + 8`).
FRAME_OVERHEAD = 8 + 16

# tiflow cdc/model MessageType.
TYPE_ROW = 1
TYPE_DDL = 2
TYPE_RESOLVED = 3

_LENGTH = struct.Struct(">Q")


def frame(key: bytes, value: bytes) -> tuple[bytes, bytes]:
    """The Kafka key and value of a message holding one event."""
    return (
        VERSION_HEAD + _LENGTH.pack(len(key)) + key,
        _LENGTH.pack(len(value)) + value,
    )


def _names(database: str, table: str) -> str:
    # `scm` and `tbl` are omitempty.
    text = f',"scm":{json_quote(database)}' if database else ""
    return text + (f',"tbl":{json_quote(table)}' if table else "")


def row_key_tail(database: str, table: str) -> bytes:
    """What follows the commit ts in a row event's key JSON without markers (the
    column-wise path writes `{"ts":<ts>` and this)."""
    return f'{_names(database, table)},"t":{TYPE_ROW}}}'.encode()


def row_key(
    commit_ts: int,
    database: str,
    table: str,
    *,
    only_handle_key: bool = False,
    claim_check_location: str = "",
) -> bytes:
    """A row event's key JSON; `only_handle_key` (`ohk`) marks a value cut to the handle
    key columns for being too large, `claim_check_location` (`ccl`) names where the full
    message is."""
    text = f'{{"ts":{commit_ts}{_names(database, table)},"t":{TYPE_ROW}'
    if only_handle_key:
        text += ',"ohk":true'
    if claim_check_location:
        text += f',"ccl":{json_quote(claim_check_location)}'
    return (text + "}").encode()


def ddl_key(commit_ts: int, database: str, table: str) -> bytes:
    """A DDL event's key JSON."""
    return f'{{"ts":{commit_ts}{_names(database, table)},"t":{TYPE_DDL}}}'.encode()


def ddl_value(query: str, action_type: int) -> bytes:
    """A DDL event's value JSON (tiflow `messageDDL`)."""
    return f'{{"q":{json_quote(query)},"t":{action_type}}}'.encode()


def resolved_key(ts: int) -> bytes:
    """The resolved event's key JSON (tiflow `newResolvedMessage`); its value is empty."""
    return f'{{"ts":{ts},"t":{TYPE_RESOLVED}}}'.encode()

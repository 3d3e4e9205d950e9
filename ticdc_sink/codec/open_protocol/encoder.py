"""TiCDC's open-protocol (tiflow `pkg/sink/codec/open/open_protocol_encoder.go`): row
events, DDL events and the resolved event.

`OpenProtocolEncoder.encode_row` gives one row event framed as a message of its own (what
TiCDC sends when a batch holds one row); `batching.OpenProtocolBatcher` merges consecutive
messages of one partition as TiCDC's `AppendRowChangedEvent` does. The size check and the
large-message policy are TiCDC's per event, before batching: an event whose key + value +
36 + 24 is above `max-message-bytes` fails with `none`, is cut to its handle-key columns
(`"ohk":true` in its key) with `handle-key-only`, or is written whole (framed key and
value) to the claim-check store and sent as its handle-key columns with `"ccl"` naming the
file with `claim-check`; the smaller event must fit. Row and DDL values (never keys) are
compressed with `large-message-handle-compression` first, as tiflow's `common.Compress`
calls are placed. This is the only module that imports both the row (`row`) and the
column-wise (`batch`) path.

DDL events (`encode_ddl`, tiflow `EncodeDDLEvent`) go to every partition of the topic; the
resolved event (`encode_watermark`, tiflow `EncodeCheckpointEvent`) to every partition of
every topic. Both keep the framing of a one-event message.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from ticdc_sink.codec import (
    RECORD_OVERHEAD,
    ClaimCheckStore,
    EncodedBatch,
    Message,
    SchemaRegistry,
)
from ticdc_sink.codec.choices import LargeMessageHandleOption
from ticdc_sink.codec.claim_check import store_message
from ticdc_sink.codec.common import handle_key_text
from ticdc_sink.codec.open_protocol.batch import OpenProtocolBatchEncoder
from ticdc_sink.codec.open_protocol.batching import OpenProtocolBatcher
from ticdc_sink.codec.open_protocol.message import (
    FRAME_OVERHEAD,
    ddl_key,
    ddl_value,
    frame,
    resolved_key,
)
from ticdc_sink.codec.open_protocol.row import OpenProtocolRowEncoder
from ticdc_sink.codec.open_protocol.table import OpenProtocolTable
from ticdc_sink.errors import MessageTooLargeError
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.schema import TableSchema

__all__ = [
    "ACTION_CREATE_TABLE",
    "OpenProtocolEncoder",
    "build_batcher",
    "build_encoder",
    "ddl_action_type",
    "encode_table_ddl",
    "encode_watermark",
]

logger = logging.getLogger(__name__)

#: TiDB `model.ActionCreateTable`.
ACTION_CREATE_TABLE = 3
# TiDB `model.ActionType` of the ALTER TABLE clauses `schema_change.ddl_for` writes, by the
# clause's first words; several clauses are one multi-schema change.
_ALTER_ACTIONS = (
    ("ADD COLUMN", 5),  # ActionAddColumn
    ("DROP COLUMN", 6),  # ActionDropColumn
    ("DROP PRIMARY KEY", 33),  # ActionDropPrimaryKey
    ("ADD PRIMARY KEY", 32),  # ActionAddPrimaryKey
    ("DROP INDEX", 8),  # ActionDropIndex
    ("ADD ", 7),  # ActionAddIndex: ADD KEY / ADD UNIQUE KEY
    ("MODIFY COLUMN", 12),  # ActionModifyColumn
    ("RENAME TO", 14),  # ActionRenameTable
)

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig
_ACTION_MULTI_SCHEMA_CHANGE = 61
# `ALTER TABLE `name` clause, clause`: ddl_for joins its clauses with ", " and starts each
# with one of the words above (a quoted default holding ", ADD " would be miscounted).
_ALTER = re.compile(r"ALTER TABLE `(?:[^`]|``)*` (.*)\Z", re.DOTALL)
_CLAUSE_START = re.compile(r", (?=(?:ADD|DROP|MODIFY|RENAME) )")


def ddl_action_type(previous: TableSchema | None, query: str) -> int:
    """TiDB's ActionType of a DDL the sink sends (`schema_change.ddl_for` wrote `query`):
    CREATE TABLE for a new table, else that of its one ALTER clause, or a multi-schema
    change for several."""
    if previous is None:
        return ACTION_CREATE_TABLE
    match = _ALTER.match(query)
    if match is None:
        return _ACTION_MULTI_SCHEMA_CHANGE
    clauses = _CLAUSE_START.split(match.group(1))
    if len(clauses) != 1:
        return _ACTION_MULTI_SCHEMA_CHANGE
    for words, action in _ALTER_ACTIONS:
        if clauses[0].startswith(words):
            return action
    return _ACTION_MULTI_SCHEMA_CHANGE


class OpenProtocolEncoder:
    """The open-protocol encoder of one table, built once and reused for every row."""

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        claim_check: ClaimCheckStore | None = None,
    ) -> None:
        """Compile the table; `claim_check` stores the events
        `large-message-handle-option=claim-check` diverts.

        Raises:
            SchemaError: a column type TiCDC does not replicate, or
                delete-only-output-handle-key-columns on a table without a handle key.
        """
        self.config = config
        self.table = table
        self._table = OpenProtocolTable(config, table)
        self._row = OpenProtocolRowEncoder(self._table)
        self._batch: OpenProtocolBatchEncoder | None = None
        self._store = claim_check
        self._limit = config.max_message_bytes

    def encode_row(self, change: RowChange) -> Message:
        """One row event as a message of its own.

        Raises:
            InputError: a value that does not fit its column, a row of the wrong width, or
                an UPDATE without its old row while old values are written.
            MessageTooLargeError: above max-message-bytes and the policy cannot help.
            SchemaError: a large message of a table without a handle key.
        """
        key, value = self._row.marshal(change)
        value = self._table.compress(value)
        size = len(key) + len(value) + RECORD_OVERHEAD + FRAME_OVERHEAD
        if size <= self._limit:
            return self._message(change, key, value)
        return self._divert(change, key, value, size)

    def _message(
        self, change: RowChange, key: bytes, value: bytes, *, diverted: bool = False
    ) -> Message:
        framed_key, framed_value = frame(key, value)
        return Message(
            key=framed_key,
            value=framed_value,
            commit_ts=change.commit_ts,
            rows=1,
            diverted=diverted,
        )

    def _divert(self, change: RowChange, key: bytes, value: bytes, size: int) -> Message:
        """tiflow AppendRowChangedEvent for an event above max-message-bytes."""
        table, limit = self.table, self._limit
        name = f"{table.database}.{table.table}"
        key_text = handle_key_text(table, change.row if change.row is not None else change.before)
        option = self.config.large_message_handle_option
        if option == LargeMessageHandleOption.NONE:
            raise MessageTooLargeError(table=name, key=key_text, size=size, limit=limit)
        location = ""
        if option == LargeMessageHandleOption.CLAIM_CHECK:
            framed_key, framed_value = frame(key, value)
            location = store_message(
                self._store,
                table=name,
                commit_ts=change.commit_ts,
                key=key_text,
                value=framed_value,
                raw_value=self.config.claim_check_raw_value,
                message_key=framed_key,
            )
        small_key, small_value = self._row.marshal(
            change, key_only=True, claim_check_location=location
        )
        small_value = self._table.compress(small_value)
        small_size = len(small_key) + len(small_value) + RECORD_OVERHEAD + FRAME_OVERHEAD
        if small_size > limit:
            raise MessageTooLargeError(table=name, key=key_text, size=small_size, limit=limit)
        logger.warning(
            "open-protocol: message for %s is %d bytes, above max-message-bytes %d; "
            "sent with handle key columns only (%d bytes)%s",
            name,
            size,
            limit,
            small_size,
            f", full message at {location}" if location else "",
        )
        return self._message(change, small_key, small_value, diverted=True)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of a whole batch of this table, rendered column-wise (built on the
        first batch): what `encode_row` gives for each event, without the large-message
        policy (the writer takes messages above max-message-bytes from `encode_row`), those
        only the row path can write listed in `row_path`."""
        if self._batch is None:
            self._batch = OpenProtocolBatchEncoder(self._table)
        return self._batch.encode_batch(batch, key_indexes)

    def encode_bootstrap(self) -> None:
        """open-protocol has no bootstrap message."""
        return None

    def encode_ddl(self, previous: TableSchema | None, query: str, commit_ts: int) -> Message:
        """A DDL event for this table as a message of its own (tiflow `EncodeDDLEvent`);
        TiCDC sends it to every partition of the topic."""
        key, value = frame(
            ddl_key(commit_ts, self.table.database, self.table.table),
            self._table.compress(ddl_value(query, ddl_action_type(previous, query))),
        )
        return Message(key=key, value=value, commit_ts=commit_ts)


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str,
    registry: SchemaRegistry | None,
    claim_check: ClaimCheckStore | None,
) -> OpenProtocolEncoder:
    """The encoder of one table (`protocols.build_encoder`); open-protocol writes no "now", and
    `topic` and `registry` are avro's."""
    return OpenProtocolEncoder(config, table, claim_check=claim_check)


def encode_table_ddl(
    config: CodecConfig,
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    *,
    commit_ts: int,
    build_ts_ms: int,
) -> Message:
    """The DDL event announcing `table` (`protocols.encode_ddl`), for every partition."""
    return OpenProtocolEncoder(config, table).encode_ddl(previous, query, commit_ts)


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message:
    """The resolved event (tiflow `EncodeCheckpointEvent`): its key JSON framed, and a
    value of one zero length (nothing to compress)."""
    key, value = frame(resolved_key(commit_ts), b"")
    return Message(key=key, value=value, commit_ts=commit_ts)


def build_batcher(config: CodecConfig) -> OpenProtocolBatcher:
    """One partition's batcher (`protocols.build_batcher`): up to `max-batch-size` events in a
    message within `max-message-bytes`."""
    return OpenProtocolBatcher(config.max_batch_size, config.max_message_bytes)

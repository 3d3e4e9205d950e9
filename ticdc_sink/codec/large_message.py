"""The large-message policy of the protocols that have one (simple, canal-json): what a
row message above max-message-bytes becomes (tiflow `simple/encoder.go`,
`canal/canal_json_row_event_encoder.go`, `pkg/sink/kafka/claimcheck`).

`large-message-handle-option`: `none` raises MessageTooLargeError; `handle-key-only`
sends the message with the handle-key columns only (the protocol marks it); `claim-check`
first writes the full value to the claim-check store (`codec.claim_check`), then sends
the handle-key form naming its location. Either way the smaller message must fit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ticdc_sink.codec import RECORD_OVERHEAD, ClaimCheckStore, Message
from ticdc_sink.codec.choices import LargeMessageHandleOption
from ticdc_sink.codec.claim_check import store_message
from ticdc_sink.codec.common import handle_key_text
from ticdc_sink.codec.compression import compress
from ticdc_sink.errors import MessageTooLargeError
from ticdc_sink.events import RowChange
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["ROW_KEY", "LargeMessagePolicy"]

logger = logging.getLogger(__name__)

#: The key of row messages: rows travel tiflow's async producer, which wraps the nil key
#: in sarama.StringEncoder, an empty key on the wire (WATERMARK and DDL messages take the
#: sync path and keep a null key; reference §1.5).
ROW_KEY = b""


class LargeMessagePolicy:
    """One table's row messages and what becomes of those above max-message-bytes.
    `small(change, location)` is the protocol's handle-key-only value of a change
    (`location` the claim-check location, "" for handle-key-only)."""

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        small: Callable[[RowChange, str], bytes],
        *,
        store: ClaimCheckStore | None,
        protocol: str,
    ) -> None:
        self._config = config
        self._limit = config.max_message_bytes
        self._table = table
        self._small = small
        self._store = store
        self._protocol = protocol
        self._compression = config.large_message_handle_compression

    def message(self, change: RowChange, value: bytes) -> Message:
        """The message of a row change whose full value is `value` (an empty key),
        compressed with `large-message-handle-compression` (tiflow compresses before the
        size check, the handle-key-only value too, and the claim-check file holds the
        compressed value): as is within max-message-bytes, else as the policy says.

        Raises:
            MessageTooLargeError: the option is `none`, or the smaller value is still too
                large.
            ConfigError: claim-check without a store.
        """
        value = compress(self._compression, value)
        size = len(value) + RECORD_OVERHEAD
        if size <= self._limit:
            return Message(key=ROW_KEY, value=value, commit_ts=change.commit_ts, rows=1)
        return self._divert(change, value, size)

    def _divert(self, change: RowChange, value: bytes, size: int) -> Message:
        config, table, limit = self._config, self._table, self._limit
        name = f"{table.database}.{table.table}"
        key = handle_key_text(table, change.row if change.row is not None else change.before)
        option = config.large_message_handle_option
        if option == LargeMessageHandleOption.NONE:
            raise MessageTooLargeError(table=name, key=key, size=size, limit=limit)
        location = ""
        if option == LargeMessageHandleOption.CLAIM_CHECK:
            location = store_message(
                self._store,
                table=name,
                commit_ts=change.commit_ts,
                key=key,
                value=value,
                raw_value=config.claim_check_raw_value,
            )
        value = compress(self._compression, self._small(change, location))
        small_size = len(value) + RECORD_OVERHEAD
        if small_size > limit:
            raise MessageTooLargeError(table=name, key=key, size=small_size, limit=limit)
        logger.warning(
            "%s: message for %s is %d bytes, above max-message-bytes %d; "
            "sent with handle key columns only (%d bytes)%s",
            self._protocol,
            name,
            size,
            limit,
            small_size,
            f", full message at {location}" if location else "",
        )
        return Message(key=ROW_KEY, value=value, commit_ts=change.commit_ts, rows=1, diverted=True)

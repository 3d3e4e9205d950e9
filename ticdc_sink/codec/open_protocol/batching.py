"""open-protocol batching (tiflow `open_protocol_encoder.go`, `AppendRowChangedEvent` and
`Build`): consecutive one-event messages of one partition merged into one Kafka message.

The encoder frames every event as a message of its own (`encoder.OpenProtocolEncoder`);
`OpenProtocolBatcher` is what TiCDC's batch encoder does on top, for one topic partition: an
event joins the current message unless that message already holds `max-batch-size`
events or would grow above `max-message-bytes` (its key + value + 36, plus the event's
two lengths and JSON); then the current message is complete and a new one starts with the
event. Merging drops the event's 8-byte version head and appends the rest of its key and
its value. An event above the limit on its own still makes a message (TiCDC's size check
per event, before batching, decides about those).

TiCDC batches the events its worker collected for one partition at one time (up to 2048
events or a few milliseconds), so where one message ends and the next begins depends on
timing there; here a task batches all the consecutive messages it sends to a partition,
within the same two limits. This module knows nothing of Kafka: the caller sends what
`add` and `flush` return.
"""

from __future__ import annotations

from ticdc_sink.codec import RECORD_OVERHEAD
from ticdc_sink.codec.open_protocol.message import VERSION_HEAD

__all__ = ["OpenProtocolBatcher"]

_HEAD = len(VERSION_HEAD)


class OpenProtocolBatcher:
    """Merges one partition's one-event messages, in order, as TiCDC's batch encoder."""

    def __init__(self, max_batch_size: int, max_message_bytes: int) -> None:
        self._max_batch_size = max_batch_size
        self._max_message_bytes = max_message_bytes
        self._keys: list[bytes] = []
        self._values: list[bytes] = []
        self._length = 0  # the current message's key + value + RECORD_OVERHEAD
        self._events = 0

    def add(self, key: bytes, value: bytes) -> tuple[bytes, bytes] | None:
        """Take one framed one-event message (`encoder.frame`); the message this completes,
        if any, to send before anything else of this partition."""
        if key[:_HEAD] != VERSION_HEAD:
            raise ValueError("not an open-protocol message: the key lacks the version head")
        done = None
        grows = len(key) - _HEAD + len(value)  # the event's two lengths and JSON
        if self._events and (
            self._events >= self._max_batch_size or self._length + grows > self._max_message_bytes
        ):
            done = self.flush()
        if not self._events:
            self._keys.append(VERSION_HEAD)
            self._length = _HEAD + RECORD_OVERHEAD
        self._keys.append(key[_HEAD:] if len(key) > _HEAD else b"")
        self._values.append(value)
        self._length += grows
        self._events += 1
        return done

    def flush(self) -> tuple[bytes, bytes] | None:
        """The current message, complete, or None when it holds no event."""
        if not self._events:
            return None
        message = b"".join(self._keys), b"".join(self._values)
        self._keys, self._values = [], []
        self._length = 0
        self._events = 0
        return message

"""Kafka records -> decoded events for a read: the decoder the options ask for, and the
one place where a bad message becomes an error naming its topic, partition and offset.

Protocol code stays in `ticdc_sink.decode`; this module only chooses and calls it.
"""

from __future__ import annotations

import logging

from ticdc_sink.decode import DecodedEvent, Decoder, decoder_for
from ticdc_sink.errors import DecodeError
from ticdc_sink.producer import Record
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.schema import TableSchema

__all__ = ["BadMessages", "decode_record", "new_decoder"]

logger = logging.getLogger(__name__)


def new_decoder(config: ReadConfig, tables: tuple[TableSchema, ...] = ()) -> Decoder:
    """A fresh decoder for the read, knowing `tables` (schemas found on the driver) as if
    their BOOTSTRAP messages had been read."""
    decoder = decoder_for(config.protocol, encoding_format=config.encoding_format)
    add_table = getattr(decoder, "add_table", None)
    if add_table is not None:
        for table in tables:
            add_table(table)
    return decoder


def decode_record(
    decoder: Decoder, record: Record, topic: str, skipped: BadMessages | None = None
) -> DecodedEvent | None:
    """The event of one record; None when it does not decode and `skipped` counts it
    (`on-bad-message=skip`).

    Raises:
        DecodeError: the record is not a message of the protocol and `skipped` is None;
            the message names the topic, partition and offset, then the decoder's reason.
    """
    try:
        return decoder.decode_message(record.key, record.value)
    except DecodeError as exc:
        error = DecodeError(
            f"topic {topic} partition {record.partition} offset {record.offset}: {exc.message}"
        )
        if skipped is None:
            raise error from exc
        skipped.add(error)
        return None


class BadMessages:
    """The messages a read skipped (`on-bad-message=skip`): how many, and the first
    error, logged once by `report`."""

    def __init__(self) -> None:
        self.count = 0
        self.first: DecodeError | None = None

    def add(self, error: DecodeError) -> None:
        self.count += 1
        if self.first is None:
            self.first = error

    def report(self, what: str) -> None:
        """Log a WARNING when messages were skipped (the read went on without them)."""
        if self.count:
            logger.warning(
                "ticdc: %s skipped %d message(s) that do not decode (on-bad-message=skip); "
                "the first: %s",
                what,
                self.count,
                self.first,
            )

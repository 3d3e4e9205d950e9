"""Kafka records -> decoded events for a read: the decoder the options ask for, and the
one place where a bad message becomes an error naming its topic, partition and offset.

Protocol code stays in `ticdc_sink.decode`; this module only chooses and calls it.
"""

from __future__ import annotations

from ticdc_sink.decode import DecodedEvent, Decoder, decoder_for
from ticdc_sink.errors import DecodeError
from ticdc_sink.producer import Record
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.schema import TableSchema

__all__ = ["decode_record", "new_decoder"]


def new_decoder(config: ReadConfig, tables: tuple[TableSchema, ...] = ()) -> Decoder:
    """A fresh decoder for the read, knowing `tables` (schemas found on the driver) as if
    their BOOTSTRAP messages had been read."""
    decoder = decoder_for(
        config.protocol, encoding_format=config.encoding_format, time_zone=config.time_zone
    )
    add_table = getattr(decoder, "add_table", None)
    if add_table is not None:
        for table in tables:
            add_table(table)
    return decoder


def decode_record(decoder: Decoder, record: Record, topic: str) -> DecodedEvent:
    """The event of one record.

    Raises:
        DecodeError: the record is not a message of the protocol; the message names the
            topic, partition and offset, then the decoder's reason.
    """
    try:
        return decoder.decode_message(record.key, record.value)
    except DecodeError as exc:
        raise DecodeError(
            f"topic {topic} partition {record.partition} offset {record.offset}: {exc.message}"
        ) from exc

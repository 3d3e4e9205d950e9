"""Kafka records -> decoded events for a read: the decoder the options ask for, and the
one place where a bad message becomes an error naming its topic, partition and offset.

Protocol code stays in each protocol's decoder (`codec/<protocol>/decoder.py`, reached
through `codec.protocols.decoder_for` with the read's `DecoderSettings`); this module only
chooses and calls it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ticdc_sink.claim_check import open_store
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import (
    ClaimCheckLoader,
    DecodedEvent,
    Decoder,
    DecoderSettings,
    as_decode_error,
)
from ticdc_sink.decode import decode_record as decode_events_of
from ticdc_sink.decode.sniff import misread_hint
from ticdc_sink.errors import DecodeError, TiCDCSinkError
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.schema import TableSchema

__all__ = [
    "MAX_COMMIT_TS",
    "BadMessages",
    "SchemaLookup",
    "decode_events",
    "describes_rows",
    "new_decoder",
    "range_decoder",
    "row_message_test",
    "row_table",
]

logger = logging.getLogger(__name__)


#: Avro writer schemas by registry id (`ConfluentSchemaRegistry.schema_text`; tests pass
#: an in-memory registry's).
SchemaLookup = Callable[[int], str]


def new_decoder(
    config: ReadConfig,
    tables: tuple[TableSchema, ...] = (),
    *,
    schema_for_id: SchemaLookup | None = None,
) -> Decoder:
    """A fresh decoder for the read, knowing `tables` (schemas found on the driver) as if
    their BOOTSTRAP messages had been read. Avro schemas come from `schema_for_id`, else
    from the registry the options name."""
    if schema_for_id is None and config.registry.url:
        # One registry client per process and configuration: tasks share its schema cache.
        # Imported here: the registry client pulls in an HTTP stack only avro needs.
        from ticdc_sink.registry import ConfluentSchemaRegistry

        schema_for_id = ConfluentSchemaRegistry.shared(config.registry).decoder_schema_text
    loader = None
    if config.claim_check_storage_uri is not None:
        loader = _claim_check_loader(config.claim_check_storage_uri)
    settings = DecoderSettings(
        encoding_format=config.encoding_format,
        time_zone=config.time_zone,
        schema_for_id=schema_for_id,
        claim_check_loader=loader,
        claim_check_raw_value=config.claim_check_raw_value,
        compression=config.compression,
    )
    decoder = decoder_for(config.protocol, settings)
    add_table = getattr(decoder, "add_table", None)
    if add_table is not None:
        for table in tables:
            add_table(table)
    return decoder


def range_decoder(prepared: Decoder) -> Decoder:
    """The decoder of one partition's range, from one `new_decoder` prepared for a task
    that reads several: a decoder that learns tables from the messages it reads (Simple's,
    from BOOTSTRAP and DDL messages: it has `add_table`) is copied, so that what one
    partition teaches stays in its range as in a task of its own; any other is shared, as
    it decodes a message the same whatever it read before (its caches hold what the
    messages' own types and writer schema ids imply)."""
    if getattr(prepared, "add_table", None) is None:
        return prepared
    return prepared.copy()  # type: ignore[attr-defined]


def _claim_check_loader(uri: str) -> ClaimCheckLoader:
    """Reads a claim-check location's file from the store at `uri`, by the location's
    file name: TiCDC's consumer does the same (tiflow `cmd/kafka-consumer`,
    `claimcheck.ExtractFileName`), so the files may have moved since they were written.

    Raises:
        ConfigError: `uri` is not a usable store (`claim_check.open_store`).
    """
    store = open_store(uri)

    def load(location: str) -> bytes:
        return store.read(location.rpartition("/")[2])

    return load


def decode_events(
    decoder: Decoder, record: Record, topic: str, skipped: BadMessages | None = None
) -> list[DecodedEvent]:
    """Every event of one record (several for a batched open-protocol message); none when
    it does not decode and `skipped` counts it.

    Raises:
        DecodeError: the record is not a message of the protocol and `skipped` is None;
            the message names the topic, partition and offset, then the decoder's reason.
    """
    try:
        events = decode_events_of(decoder, record.key, record.value)
        for event in events:
            _check_commit_ts(event)
        return events
    except DecodeError as exc:
        _bad(exc, record, topic, decoder, skipped)
        return []


#: The largest commit ts a read takes: `_commit_ts` is a bigint, and the stream's planning
#: keeps resolved ts as signed 64-bit numbers (TiDB's TSOs stay below it until the year
#: 3084).
MAX_COMMIT_TS = (1 << 63) - 1


def _check_commit_ts(event: DecodedEvent) -> None:
    commit_ts = getattr(event, "commit_ts", 0)
    if not 0 <= commit_ts <= MAX_COMMIT_TS:
        op = getattr(event, "op", None)
        kind = op.value if op is not None else type(event).__name__.removeprefix("Decoded").upper()
        raise DecodeError(
            f"{kind} commit ts {commit_ts} is beyond {MAX_COMMIT_TS}, the largest a read "
            "takes (_commit_ts is a bigint); no TiDB commit has it"
        )


def describes_rows(decoder: Decoder) -> bool:
    """Whether the protocol carries its column types in every row message (every protocol
    but simple: their decoders have `row_table`)."""
    return hasattr(decoder, "row_table")


def row_message_test(decoder: Decoder) -> Callable[[Record], bool]:
    """How a pass that wants only a partition's watermarks and schema messages (a batch
    split's boundaries, a task's schemas before its range) tells a row message it may
    skip unread: the decoder's `is_row` (a test of the first bytes), else its peek
    (`decode.peek`); False for a message neither vouches for, which the pass decodes."""
    is_row = getattr(decoder, "is_row", None)
    if is_row is not None:
        return lambda record: is_row(record.value)
    peek = getattr(decoder, "peek_row", None)
    if peek is not None:
        return lambda record: peek(record.key, record.value) is not None
    return lambda record: False


def row_table(decoder: Decoder, record: Record, topic: str) -> TableSchema | None:
    """The table a row message implies (`describes_rows` decoders); None when the message
    does not tell (an avro tombstone holds the key columns only).

    Raises:
        DecodeError: the message does not decode (naming topic, partition and offset).
    """
    try:
        return decoder.row_table(record.key, record.value)  # type: ignore[attr-defined]
    except DecodeError as exc:
        raise _located(exc, record, topic, decoder) from exc
    except TiCDCSinkError:
        raise
    except Exception as exc:
        raise _located(as_decode_error(exc), record, topic, decoder) from exc


def _located(exc: DecodeError, record: Record, topic: str, decoder: Decoder) -> DecodeError:
    """`exc` naming where the record is, and, when the record looks like another
    protocol's (or compression's), the options that read it (`decode.sniff`)."""
    return DecodeError(
        f"topic {topic} partition {record.partition} offset {record.offset}: {exc.message}"
        + misread_hint(decoder, record.key, record.value)
    )


def _bad(
    exc: DecodeError, record: Record, topic: str, decoder: Decoder, skipped: BadMessages | None
) -> None:
    """Count `exc` in `skipped`, or raise it naming where the record is."""
    if skipped is None:
        raise _located(exc, record, topic, decoder) from exc
    skipped.add(_located(exc, record, topic, decoder))


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

"""The decoding contract: Kafka records written by TiCDC (or by this sink) back into
events, for the read side, the `decode` command and consumers written in Python.

Each protocol's decoder lives in its package, beside its encoder
(`ticdc_sink/codec/<protocol>/decoder.py`, tiflow `pkg/sink/codec/*/decoder.go`), with
`build_decoder(settings)` and one decoder class with `decode_message(key, value)`; it
builds on what this package holds, protocol-neutral. A protocol's decoder by name is
`ticdc_sink.codec.protocols.decoder_for`, beside the protocol list: this package imports
no protocol, since every decoder imports it.

    __init__.py    the decoded events, `Decoder`, `BatchDecoder`, `DecoderSettings` (how
                   to read: encoding format, time zone, registry lookup, claim check,
                   compression), `decode_record`, `PlainRow` (a row message with its
                   values untyped), claim-check checks
    peek.py        `RowPeek`: what a stream's driver needs of a row message, its values
                   not decoded (each decoder offers its protocol's peek as `peek_row`)
    types.py       the closest MySQL type of what a row message says of a column
    sniff.py       which protocol a message looks like (the hint when a read is told another)

`decode_record` is the one place where whatever a decoder raises on a record becomes a
`DecodeError`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast, runtime_checkable

import attrs
import orjson

from ticdc_sink.errors import DecodeError, TiCDCSinkError
from ticdc_sink.events import Op
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.checksum import RowChecksum

__all__ = [
    "BatchDecoder",
    "ClaimCheckLoader",
    "DecodedBootstrap",
    "DecodedDDL",
    "DecodedEvent",
    "DecodedRow",
    "DecodedWatermark",
    "Decoder",
    "DecoderSettings",
    "PlainRow",
    "as_decode_error",
    "check_claim_check",
    "claim_check_key",
    "claim_check_value",
    "decode_record",
    "follow_claim_check",
]

#: Reads a claim-check location (a message's `claimCheckLocation`) and returns the file's
#: bytes; `ticdc_sink.claim_check.read_claim_check` is one for file:// and fsspec URIs.
ClaimCheckLoader = Callable[[str], bytes]


def _short(values: dict[str, Any] | None) -> str:
    if values is None:
        return "-"
    text = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return "{" + (text if len(text) <= 200 else text[:197] + "...") + "}"


@attrs.frozen
class DecodedRow:
    """One row change. `data` is the new image (INSERT, UPDATE) and `old` the old image
    (UPDATE, DELETE), column name -> value in table column order.

    `typed` tells whether the values were converted with a known table schema (see the
    protocol's decoder for the Python types); when no schema was known yet, `typed` is
    False and the values are the raw ones of the message. `checksum` is the row checksum
    the message carries (`integrity-check-level=correctness`), None without one; the
    decoder checks it against the values once they are typed. `raw` holds `data` and `old`
    as the message held them before they were typed (Simple; None elsewhere), so that a
    reader recognizes a replayed message however it typed each copy (`read.replay`); it
    takes no part in comparisons.
    """

    database: str
    table: str
    table_id: int
    op: Op
    commit_ts: int
    schema_version: int
    data: dict[str, Any] | None
    old: dict[str, Any] | None
    handle_key_only: bool = False
    claim_check_location: str | None = None
    build_ts: int = 0
    typed: bool = True
    checksum: RowChecksum | None = None
    raw: tuple[dict[str, Any] | None, dict[str, Any] | None] | None = attrs.field(
        default=None, eq=False, repr=False
    )

    def describe(self) -> str:
        """One line for people: op, table, commit ts and the images."""
        parts = [f"{self.op.value} {self.database}.{self.table} commitTs={self.commit_ts}"]
        if self.data is not None:
            parts.append(f"data={_short(self.data)}")
        if self.old is not None:
            parts.append(f"old={_short(self.old)}")
        if not self.typed:
            parts.append("(no schema yet: raw values)")
        if self.handle_key_only:
            parts.append("(handle key only)")
        if self.claim_check_location:
            parts.append(f"(claim check {self.claim_check_location})")
        return " ".join(parts)


@attrs.frozen
class DecodedWatermark:
    """Every event with a smaller commit ts has been written to this partition."""

    commit_ts: int
    build_ts: int = 0

    def describe(self) -> str:
        return f"WATERMARK commitTs={self.commit_ts}"


@attrs.frozen
class DecodedBootstrap:
    """A table's schema, sent before its first row and periodically."""

    table: TableSchema
    build_ts: int = 0

    def describe(self) -> str:
        t = self.table
        return (
            f"BOOTSTRAP {t.database}.{t.table} version={t.version} "
            f"columns={', '.join(c.name for c in t.columns)}"
        )


@attrs.frozen
class DecodedDDL:
    """A DDL event (TiCDC writes them; this sink does not): `type` is the protocol's DDL
    type (e.g. CREATE, ALTER), `table`/`pre_table` the schema after/before it."""

    type: str
    sql: str
    commit_ts: int
    table: TableSchema | None = None
    pre_table: TableSchema | None = None
    build_ts: int = 0

    def describe(self) -> str:
        return f"DDL {self.type} commitTs={self.commit_ts} {self.sql}"


DecodedEvent = DecodedRow | DecodedWatermark | DecodedBootstrap | DecodedDDL


class PlainRow(NamedTuple):
    """A row message that needs nothing but its values typed (a column-wise decoder's
    `plain_row`: Simple's): its type (INSERT, UPDATE or DELETE), commit ts, table and
    schema version, and the raw values of `data` and `old` as the message holds them
    (Simple JSON: text, base64, {"location", "value"} TIMESTAMPs; Avro: as fastavro reads
    them), to be typed a run at a time."""

    op: str
    commit_ts: int
    database: str
    table: str
    schema_version: int
    data: dict[str, Any] | None
    old: dict[str, Any] | None


def claim_check_value(location: str, data: bytes, *, raw_value: bool) -> bytes:
    """The original message value in a claim-check file's bytes `data`: the file itself
    with `claim-check-raw-value=true`, else the base64 `value` of its Go JSON envelope
    `{"key":…,"value":"…"}` (tiflow `common.UnmarshalClaimCheckMessage`).

    Raises:
        DecodeError: the file is not such an envelope.
    """
    if raw_value:
        return data
    try:
        envelope = orjson.loads(data)
        value = envelope["value"] if isinstance(envelope, dict) else None
        if not isinstance(value, str):
            raise TypeError
        return base64.b64decode(value, validate=True)
    except (orjson.JSONDecodeError, KeyError, TypeError, binascii.Error):
        raise DecodeError(
            f"claim-check file {location} is not a JSON object with a base64 'value'; if the "
            "sink wrote it with claim-check-raw-value=true, decode with that option too "
            "(ticdc-sink decode --claim-check-raw-value; claim_check_raw_value=True)"
        ) from None


def claim_check_key(location: str, data: bytes) -> bytes | None:
    """The message key a claim-check file's Go JSON envelope holds (None: `null`, the key
    of simple and canal-json messages).

    Raises:
        DecodeError: the file is not such an envelope.
    """
    try:
        envelope = orjson.loads(data)
        key = envelope.get("key") if isinstance(envelope, dict) else None
        return None if key is None else base64.b64decode(key, validate=True)
    except (orjson.JSONDecodeError, TypeError, binascii.Error):
        raise DecodeError(
            f"claim-check file {location} is not a JSON object with a base64 'key'"
        ) from None


def follow_claim_check(
    decoder: Decoder,
    row: DecodedRow,
    loader: ClaimCheckLoader | None,
    *,
    raw_value: bool,
) -> DecodedRow:
    """`row` itself when it names no claim-check location or there is no loader, else the
    full row decoded from the stored message, with `claim_check_location` kept."""
    location = row.claim_check_location
    if not location or loader is None:
        return row
    try:
        data = loader(location)
    except OSError as exc:
        raise DecodeError(
            f"claim-check file {location} of {row.op.value} {row.database}.{row.table} "
            f"commitTs {row.commit_ts} cannot be read: {exc}"
        ) from exc
    full = decoder.decode_message(None, claim_check_value(location, data, raw_value=raw_value))
    if not isinstance(full, DecodedRow) or full.claim_check_location:
        raise DecodeError(f"claim-check file {location} does not hold a row message")
    check_claim_check(location, row, full)
    return attrs.evolve(full, claim_check_location=location)


def check_claim_check(location: str, message: DecodedRow, stored: DecodedRow) -> None:
    """That the row a claim-check file holds is the message's: the same table, op and
    commit ts, and the values the message carries (its handle key) equal. TiCDC's decoder
    follows the location unchecked (tiflow `assembleClaimCheckRowChangedEvent`); a file
    replaced by another row's, or a store that is another writer's, would go unnoticed.

    Raises:
        DecodeError: the file holds another row (naming both and the location).
    """
    same = (message.database, message.table, message.commit_ts) == (
        stored.database,
        stored.table,
        stored.commit_ts,
    ) and (
        message.op is stored.op
        # open-protocol with only-output-updated-columns: an UPDATE's key-only message
        # loses `p` when the key did not change, and reads as an INSERT.
        or (message.op is Op.INSERT and message.old is None and stored.op is Op.UPDATE)
    )
    for small, full in ((message.data, stored.data), (message.old, stored.old)):
        if small is not None:
            same = (
                same
                and full is not None
                and all(name in full and full[name] == value for name, value in small.items())
            )
    if not same:
        names = [*(message.data or {}), *(message.old or {})]
        raise DecodeError(
            f"claim-check file {_shown(location)} holds {_row_key(stored, names)}, not this "
            f"message's {_row_key(message, names)}: the file was replaced, or "
            "claim-check-storage-uri names another writer's store"
        )


def _row_key(row: DecodedRow, names: list[str]) -> str:
    """A row by its table, op, commit ts and its values of `names` (the message's)."""
    values = {**(row.old or {}), **(row.data or {})}
    shown = ", ".join(f"{n}={values.get(n)!r}" for n in dict.fromkeys(names))
    return f"{row.op.value} {row.database}.{row.table} commitTs {row.commit_ts} ({shown})"


def _shown(location: str) -> str:
    """A location without credentials or query (it may come from a writer's URI)."""
    parts = urllib.parse.urlsplit(location)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class Decoder(Protocol):
    """What every protocol decoder offers."""

    def decode_message(self, key: bytes | None, value: bytes | None) -> DecodedEvent:
        """The event of one Kafka record."""
        ...


@runtime_checkable
class BatchDecoder(Decoder, Protocol):
    """A decoder of a protocol whose Kafka messages may hold several events."""

    def decode_messages(self, key: bytes | None, value: bytes | None) -> list[DecodedEvent]:
        """Every event of one Kafka record, in order."""
        ...


@attrs.frozen
class DecoderSettings:
    """How to read a protocol's messages: the writer's options a decoder needs, and what
    it is given to follow them (one object, whichever protocol; each decoder takes what
    it reads).

    `encoding_format` is the Simple protocol's (json or avro), `time_zone` the sink's
    `time-zone` (Debezium writes TIMESTAMPs in UTC; they are read back in this zone), and
    `schema_for_id` looks up Avro writer schemas by registry id (avro, debezium-avro).
    `claim_check_loader` (simple, canal-json, open-protocol) reads claim-check locations so
    that rows sent with `large-message-handle-option=claim-check` come back whole;
    `claim_check_raw_value` is the sink's `claim-check-raw-value`, `compression` its
    `large-message-handle-compression` (every protocol but avro, which TiCDC never
    compresses).
    """

    encoding_format: str = "json"
    time_zone: str = "UTC"
    schema_for_id: Callable[[int], str] | None = None
    claim_check_loader: ClaimCheckLoader | None = None
    claim_check_raw_value: bool = False
    compression: str = "none"


def decode_record(decoder: Decoder, key: bytes | None, value: bytes | None) -> list[DecodedEvent]:
    """Every event of one Kafka record: several for a batched open-protocol message, one
    for every other protocol. The one place where whatever a decoder raises on a record
    becomes a DecodeError (`as_decode_error`): a message shaped in a way no decoder check
    foresaw still fails as a message that does not decode, never as a Python error.

    Raises:
        DecodeError: the record is not a message of the decoder's protocol.
    """
    try:
        if _batches(type(decoder)):
            return cast(BatchDecoder, decoder).decode_messages(key, value)
        return [decoder.decode_message(key, value)]
    except TiCDCSinkError:
        raise
    except Exception as exc:
        raise as_decode_error(exc) from exc


@functools.cache
def _batches(kind: type) -> bool:
    """Whether decoders of class `kind` are `BatchDecoder`s: asked once per class, since a
    runtime protocol check costs about 100 µs, more than decoding a message."""
    return issubclass(kind, BatchDecoder)


def as_decode_error(exc: Exception) -> DecodeError:
    """The DecodeError of a failure a decoder did not name itself (a field of the wrong
    JSON type, a number out of range): the message does not decode, and why."""
    reason = str(exc).splitlines()[0][:200] if str(exc) else "no detail"
    return DecodeError(f"the message does not decode ({type(exc).__name__}: {reason})")

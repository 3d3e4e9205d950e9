"""The protocols, one package each: its encoder (behind one interface; encoders do no
I/O), its decoder and its traits.

This package module is the contract: `Message`, `EncodedBatch`, the `Encoder` protocol
(`encode_row`, `encode_batch`, `encode_bootstrap`) and the injected `SchemaRegistry` and
`ClaimCheckStore`. The list of protocols and the dispatch to one through its spec live in
`protocols.py`; `CodecConfig` (what the encoders need to know) in `config.py`, the values
of its options in `choices.py`. The codec never imports `ticdc_sink.config`, which builds
on it; `tests/unit/project/test_layering.py` holds all of this.

    codec/
      __init__.py     the contract (this module)
      spec.py         ProtocolSpec: what a protocol is to the rest of the sink
      protocols.py    PROTOCOLS, a protocol's spec by name, the dispatch through specs
      choices.py      the values of the codec's options (Protocol, EncodingFormat, ...)
      config.py       CodecConfig: the codec's options, checked against the protocol
      common.py       TiCDC's shared rules: SanitizeName and friends, handle-key text
      mysql.py        MySQL value kinds and facts, mounter values as TiCDC's text
      gojson.py       Go encoding/json output over orjson (rules: ticdc_sink.gotext)
      batch.py        column-wise tools: key-changing UPDATE split, row-path batches
      claim_check.py  claim-check file names and contents
      large_message.py  the large-message policy (simple, canal-json)
      row_key.py      TiDB's record key of a row (canal-json output-row-key)
      checksum.py     TiCDC's row checksum (integrity-check-level = correctness)
      compression.py  large-message-handle-compression: snappy, lz4, and back
      avro_binary.py  Avro binary read by readers generated per schema (avro, Simple Avro)
      text_arrays.py  Go's number text cast by Arrow where it gives the parsers' values
      simple/         protocol=simple: JSON and Avro marshallers, row and column-wise
      avro/           protocol=avro: Confluent Avro, schemas for the registry
      debezium/       protocol=debezium: Debezium JSON envelopes
      canal_json/     protocol=canal-json: canal-json as TiCDC writes it
      open_protocol/  protocol=open-protocol: events batched into messages
      debezium_avro/  protocol=debezium-avro: the Debezium envelope in Confluent Avro

Each protocol package has a `spec.py` (its `SPEC`, the one entry `PROTOCOLS` lists), a
shared lower layer (values, schemas, the compiled table), a row path (`encode_row`, the
reference) and a column-wise path (`encode_batch`) that import the lower layer and never
each other, and an `encoder.py` that offers both and the entry points the spec holds
(`build_encoder`, `encode_table_ddl`, `encode_watermark`); and a `decoder.py` that
reads its messages back (the spec's `build_decoder`, on the contract of
`ticdc_sink.decode`), with, for Simple, avro and canal-json, the read's column-wise
path (`read_columns.py`). What the column-wise encoder cannot vouch for it lists in
`EncodedBatch.row_path`; the writer takes those messages from `encode_row`, as it does
those above max-message-bytes.

A protocol that puts several events in one Kafka message (`ProtocolSpec.batching`:
open-protocol) still encodes one message per event; its `build_batcher` entry point gives
what merges one partition's messages (`protocols.build_batcher`), which the writer applies
just before sending.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from ticdc_sink.events import ChangeBatch, RowChange

__all__ = [
    "RECORD_OVERHEAD",
    "ClaimCheckStore",
    "EncodedBatch",
    "Encoder",
    "Message",
    "MessageBatcher",
    "SchemaRegistry",
]


#: sarama's per-record overhead counted against max-message-bytes (tiflow
#: common/message.go MaxRecordOverhead: 5*MaxVarintLen32 + MaxVarintLen64 + 1).
RECORD_OVERHEAD = 36


@attrs.frozen
class Message:
    """One Kafka record before routing: key and value bytes (None means a null key or a
    tombstone value), and what the writer needs to route and account for it."""

    key: bytes | None
    value: bytes | None
    commit_ts: int = 0
    rows: int = 0
    #: Sent in place of a message above max-message-bytes (handle-key-only or claim-check).
    diverted: bool = False


@attrs.define(eq=False)
class EncodedBatch:
    """The messages of an `events.ChangeBatch`, in send order: one per event of
    `batch.to_events(key_indexes)` (one per row, or two for an UPDATE that changes a key
    column), what `encode_row` gives for each, rendered column-wise.

    `values` and, when the messages' keys differ, `keys` hold one entry per message
    (None: a null key, or a tombstone value); otherwise every message's key is `key`.
    `sizes` gives per message the size the row path compares with max-message-bytes, its
    record overhead included (None: the protocol has no size check). `row_ends[i]` is
    the index after row i's last message (None: one message per row).

    `row_path` lists, ascending, the messages the column-wise encoder did not render: a
    value it cannot vouch for (the row path raises its own error for it, or renders it),
    a row it does not handle. Their entries are placeholders. The writer takes them from
    `encode_row` on their events, as it takes the messages above max-message-bytes (whose
    large-message policy lives in the row path): `row_path_messages` lists both.
    """

    values: list[bytes | None]
    sizes: list[int] | None
    keys: list[bytes | None] | None = None
    key: bytes | None = b""
    row_ends: list[int] | None = None
    row_path: list[int] = attrs.field(factory=list)

    def oversized(self, limit: int) -> list[int]:
        """Indexes of the messages whose size is above `limit`."""
        sizes = self.sizes
        if sizes is None or not sizes or max(sizes) <= limit:
            return []
        return [i for i, size in enumerate(sizes) if size > limit]

    def row_path_messages(self, limit: int) -> list[int]:
        """Indexes, ascending, of the messages to take from `encode_row`: those in
        `row_path` and those above `limit`."""
        oversized = self.oversized(limit)
        if not self.row_path:
            return oversized
        if not oversized:
            return self.row_path
        return sorted(set(oversized).union(self.row_path))

    def replace(self, index: int, message: Message) -> None:
        """Put the row path's `message` in place of message `index` (its size too)."""
        self.values[index] = message.value
        if self.keys is None and message.key != self.key:
            self.keys = [self.key] * len(self.values)
        if self.keys is not None:
            self.keys[index] = message.key
        if self.sizes is not None:
            size = len(message.key or b"") + len(message.value or b"")
            self.sizes[index] = size + RECORD_OVERHEAD


class Encoder(Protocol):
    """One table's encoder, built once and reused for every row of that table."""

    def encode_row(self, change: RowChange) -> Message:
        """The message of one row change (an event: key-changing UPDATEs are split
        before). The reference: every other path gives its bytes."""
        ...

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of every event of a batch of this table, column-wise;
        `key_indexes` are the columns whose change splits an UPDATE (TiCDC's unique and
        handle key columns; none with output-raw-change-event). Messages it does not
        render are listed in `row_path`."""
        ...

    def encode_bootstrap(self) -> Message | None:
        """The table's schema message, or None when the protocol has none."""
        ...


class MessageBatcher(Protocol):
    """Merges the messages of one topic partition, in order, into fewer Kafka messages
    (open-protocol's batching); the caller sends what `add` and `flush` return."""

    def add(self, key: bytes, value: bytes) -> tuple[bytes, bytes] | None:
        """Take one message; the merged message this completes, if any."""
        ...

    def flush(self) -> tuple[bytes, bytes] | None:
        """The merged message under way, or None."""
        ...


class SchemaRegistry(Protocol):
    """Schema ids for the avro encoder (tiflow `avro/schema_manager.go`): the encoder
    stays free of I/O; `ticdc_sink.registry` implements this over HTTP."""

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        """The registry id of `schema` (compact Avro schema JSON, sent as is) under the
        subject the configured strategy gives for the topic, record full name and role."""
        ...


class ClaimCheckStore(Protocol):
    """Where `claim-check` puts messages above max-message-bytes (tiflow
    `pkg/sink/kafka/claimcheck`): the encoders stay free of I/O; `ticdc_sink.claim_check`
    implements this over a directory (`file://`) or fsspec."""

    def location(self, name: str) -> str:
        """The location a message names for file `name`: the storage URI without its
        trailing "/" and query, then "/" and `name` (tiflow `FileNameWithPrefix`)."""
        ...

    def write(self, name: str, data: bytes) -> None:
        """Store `data` as file `name`, replacing a file of that name; done before the
        message naming it is produced."""
        ...

"""The protocols, one package each: its encoder (behind one interface; encoders do no
I/O), its decoder and its traits.

This package module is the contract: `Message`, `EncodedBatch`, the `Encoder` protocol
(`encode_row`, `encode_batch`, `encode_bootstrap`) and the injected `SchemaRegistry` and
`ClaimCheckStore`; `PROTOCOLS`, the one list of protocols, and `protocol_spec`, a
protocol's traits (`spec.ProtocolSpec`: DDL, registry, bootstrap, watermark, size check,
large messages, the options it owns), which config, the writer, the data source, the
decoders and the CLI read instead of comparing names; and the functions that dispatch to
a protocol through its spec (`build_encoder`, `build_batcher`, `encode_ddl`,
`encode_watermark`, `ddl_partitions`; tiflow `pkg/sink/codec/builder/encoder_builder.go`), with
`lazy_names`, the protocol packages' re-export of their public names. It stays light:
importing it loads neither config nor any protocol (specs and protocols are imported
inside the functions), so that protocol modules and config can import it;
`tests/unit/test_layering.py` holds all of this.

    codec/
      __init__.py     the contract, the list of protocols, the dispatch (this module)
      spec.py         ProtocolSpec: what a protocol is to the rest of the sink
      common.py       TiCDC's shared rules: SanitizeName and friends, handle-key text
      mysql.py        MySQL value kinds and facts, mounter values as TiCDC's text
      gojson.py       Go encoding/json output over orjson (rules: ticdc_sink.gotext)
      batch.py        column-wise tools: key-changing UPDATE split, row-path batches
      claim_check.py  claim-check file names and contents
      large_message.py  the large-message policy (simple, canal-json)
      row_key.py      TiDB's record key of a row (canal-json output-row-key)
      checksum.py     TiCDC's row checksum (integrity-check-level = correctness)
      compression.py  large-message-handle-compression: snappy, lz4, and back
      simple/         protocol=simple: JSON and Avro marshallers, row and column-wise
      avro/           protocol=avro: Confluent Avro, schemas for the registry
      debezium/       protocol=debezium: Debezium JSON envelopes
      canal_json/     protocol=canal-json: canal-json as TiCDC writes it
      open_protocol/  protocol=open-protocol: events batched into messages
      debezium_avro/  protocol=debezium-avro: the Debezium envelope in Confluent Avro

Each protocol package has a `spec.py` (its `SPEC`, the one line `PROTOCOLS` names), a
shared lower layer (values, schemas, the compiled table), a row path (`encode_row`, the
reference) and a column-wise path (`encode_batch`) that import the lower layer and never
each other, and an `encoder.py` that offers both and the entry points the spec names
(`build_encoder`, `encode_table_ddl`, `encode_watermark`); and a `decoder.py` that
reads its messages back (`build_decoder`, on the contract of `ticdc_sink.decode`), with,
for Simple and avro, the read's column-wise path (`read_columns.py`). What the column-wise
encoder cannot vouch for it lists in `EncodedBatch.row_path`; the writer takes those
messages from `encode_row`, as it does those above max-message-bytes.

A protocol that puts several events in one Kafka message (`ProtocolSpec.batching`:
open-protocol) still encodes one message per event; its `build_batcher` entry point gives
what merges one partition's messages (`build_batcher` here), which the writer applies
just before sending.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ticdc_sink.codec.spec import ProtocolSpec, Watermark
from ticdc_sink.errors import ConfigError

if TYPE_CHECKING:
    from ticdc_sink.config import CodecConfig
    from ticdc_sink.events import ChangeBatch, RowChange
    from ticdc_sink.schema import TableSchema

__all__ = [
    "PROTOCOLS",
    "RECORD_OVERHEAD",
    "ClaimCheckStore",
    "EncodedBatch",
    "Encoder",
    "Message",
    "MessageBatcher",
    "ProtocolSpec",
    "SchemaRegistry",
    "build_batcher",
    "build_encoder",
    "ddl_partitions",
    "encode_ddl",
    "encode_watermark",
    "find_protocol",
    "lazy_names",
    "protocol_spec",
    "protocol_specs",
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


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` (PEP 562) of a protocol package that re-exports its public
    names from their modules (`homes`: name -> module in the package), each imported on
    first use, so importing the package (or one of its shared modules) loads nothing
    else."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return getattr_


#: Every protocol, as the module that declares its `SPEC`; the order is the one option
#: errors and the docs list them in. A new protocol is one package and one line here.
PROTOCOLS = (
    "ticdc_sink.codec.simple.spec",
    "ticdc_sink.codec.avro.spec",
    "ticdc_sink.codec.debezium.spec",
    "ticdc_sink.codec.debezium_avro.spec",
    "ticdc_sink.codec.canal_json.spec",
    "ticdc_sink.codec.open_protocol.spec",
)


@functools.cache
def protocol_specs() -> tuple[ProtocolSpec, ...]:
    """The `ProtocolSpec` of every protocol in `PROTOCOLS` (imported on first call, so
    that this package stays light)."""
    return tuple(importlib.import_module(module).SPEC for module in PROTOCOLS)


def find_protocol(protocol: str) -> ProtocolSpec | None:
    """The spec of a protocol by its name or an alias (any case, spaces around ignored),
    or None."""
    name = str(protocol).strip().lower()
    for spec in protocol_specs():
        if name in spec.names():
            return spec
    return None


def protocol_spec(protocol: str) -> ProtocolSpec:
    """The spec of a protocol by its name or an alias, as `find_protocol`.

    Raises:
        ConfigError: no protocol of that name, naming the option `protocol`.
    """
    spec = find_protocol(protocol)
    if spec is not None:
        return spec
    allowed = tuple(spec.name for spec in protocol_specs())
    raise ConfigError(
        f"option 'protocol' is '{protocol}'; use one of {', '.join(allowed)}",
        option="protocol",
        value=str(protocol),
        allowed=allowed,
    )


def _entry(config: CodecConfig, name: str) -> Callable[..., Any]:
    return getattr(importlib.import_module(protocol_spec(config.protocol).module), name)


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str = "",
    registry: SchemaRegistry | None = None,
    claim_check: ClaimCheckStore | None = None,
) -> Encoder:
    """The encoder of `config.protocol` for one table.

    `build_ts_ms` stands in for every "now" a protocol writes (Simple `buildTs`, Debezium
    `ts_ms`, canal-json `ts`): given by the caller, not read from the clock, so that a
    replayed batch writes identical bytes. `topic` and `registry` matter to avro only,
    which fetches schema ids on its first row; without a registry the encoder only checks
    that the table can be encoded (the driver does that before any task runs).
    `claim_check` is the store of `large-message-handle-option=claim-check` (simple and
    canal-json); without one such an encoder refuses the first message it would divert.

    Raises:
        ConfigError: an option the protocol does not support.
        SchemaError: a column type the protocol cannot carry.
    """
    build: Callable[..., Encoder] = _entry(config, "build_encoder")
    return build(
        config,
        table,
        build_ts_ms=build_ts_ms,
        topic=topic,
        registry=registry,
        claim_check=claim_check,
    )


def build_batcher(config: CodecConfig) -> MessageBatcher | None:
    """One partition's `MessageBatcher` for a protocol that puts several events in one
    Kafka message (`ProtocolSpec.batching`; open-protocol: up to `max-batch-size` events
    within `max-message-bytes`), None for the others (one event, one message)."""
    if not protocol_spec(config.protocol).batching:
        return None
    build: Callable[..., MessageBatcher] = _entry(config, "build_batcher")
    return build(config)


def encode_ddl(
    config: CodecConfig,
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    *,
    commit_ts: int,
    build_ts_ms: int,
) -> Message | None:
    """The DDL message announcing `table` (`previous` is its schema before `query`, None
    for a CREATE), sent by the caller to the partitions `ddl_partitions` names; None when
    the protocol sends no DDL from this sink, or not in `ticdc-version`
    (`ProtocolSpec.sends_ddl`)."""
    if not config.sends_ddl:
        return None
    encode: Callable[..., Message] = _entry(config, "encode_table_ddl")
    return encode(config, table, previous, query, commit_ts=commit_ts, build_ts_ms=build_ts_ms)


def ddl_partitions(config: CodecConfig, partition_count: int) -> range:
    """Where a DDL message goes (tiflow `mq_ddl_sink.go`): every partition of the topic,
    or partition 0 alone (canal-json; `ProtocolSpec.ddl_to_all_partitions`)."""
    if protocol_spec(config.protocol).ddl_to_all_partitions:
        return range(partition_count)
    return range(min(1, partition_count))


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The watermark (resolved ts) message of `config.protocol`, broadcast by the caller to
    every partition of every topic; None when the protocol sends none
    (`ProtocolSpec.watermark`: simple and open-protocol (its resolved event) always send
    one, debezium (from TiCDC v26.3) and canal-json with enable-tidb-extension, avro
    never)."""
    if config.watermark is Watermark.NEVER:
        return None
    encode: Callable[..., Message | None] = _entry(config, "encode_watermark")
    return encode(config, commit_ts, build_ts_ms=build_ts_ms)

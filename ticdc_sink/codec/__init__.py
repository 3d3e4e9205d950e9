"""Encoders: one per protocol, behind one interface. Encoders do no I/O.

`build_encoder` and `encode_watermark` are the only places that know every protocol
(tiflow `pkg/sink/codec/builder/encoder_builder.go`); protocol modules import `Message`
from here and are imported lazily, so this package imports no protocol at load time.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from ticdc_sink.config import CodecConfig
from ticdc_sink.config import Protocol as ProtocolName
from ticdc_sink.errors import ConfigError
from ticdc_sink.events import RowChange
from ticdc_sink.schema import TableSchema

__all__ = ["Encoder", "Message", "build_encoder", "encode_watermark"]


@attrs.frozen
class Message:
    """One Kafka record before routing: key and value bytes (None means a null key or a
    tombstone value), and what the writer needs to route and account for it."""

    key: bytes | None
    value: bytes | None
    commit_ts: int = 0
    rows: int = 0


class Encoder(Protocol):
    """One table's encoder, built once and reused for every row of that table."""

    def encode_row(self, change: RowChange) -> Message:
        """The message of one row change."""
        ...

    def encode_bootstrap(self) -> Message | None:
        """The table's schema message, or None when the protocol has none."""
        ...


_SUPPORTED = (ProtocolName.SIMPLE.value,)


def _unsupported(protocol: str) -> ConfigError:
    return ConfigError(
        f"option 'protocol' is '{protocol}', which is not supported yet; use simple",
        option="protocol",
        value=str(protocol),
        allowed=_SUPPORTED,
    )


def build_encoder(config: CodecConfig, table: TableSchema, *, build_ts_ms: int) -> Encoder:
    """The encoder of `config.protocol` for one table.

    `build_ts_ms` is the `buildTs` every message of this encoder carries: given by the
    caller (not read from the clock) so that a replayed batch writes identical bytes.

    Raises:
        ConfigError: a protocol, encoding format or large-message option not supported.
        SchemaError: a column type the protocol cannot carry.
    """
    match config.protocol:
        case ProtocolName.SIMPLE:
            from ticdc_sink.codec.simple import SimpleEncoder

            return SimpleEncoder(config, table, build_ts_ms=build_ts_ms)
        case _:
            raise _unsupported(config.protocol)


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The watermark (resolved ts) message of `config.protocol`, broadcast by the caller to
    every partition of every topic; None when the protocol sends none.

    Raises:
        ConfigError: a protocol or encoding format not supported.
    """
    match config.protocol:
        case ProtocolName.SIMPLE:
            from ticdc_sink.codec import simple

            return simple.encode_watermark(config, commit_ts, build_ts_ms=build_ts_ms)
        case _:
            raise _unsupported(config.protocol)

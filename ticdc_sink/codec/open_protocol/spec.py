"""protocol=open-protocol as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.open_protocol.decoder import build_decoder
from ticdc_sink.codec.open_protocol.encoder import (
    build_batcher,
    build_encoder,
    encode_table_ddl,
    encode_watermark,
)
from ticdc_sink.codec.spec import LARGE_MESSAGE_POLICIES, ProtocolSpec, Watermark

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="open-protocol",
    build_encoder=build_encoder,
    encode_table_ddl=encode_table_ddl,
    encode_watermark=encode_watermark,
    build_batcher=build_batcher,
    build_decoder=build_decoder,
    # TiCDC's `default` protocol (tiflow config.ParseSinkProtocolFromString).
    aliases=("default",),
    ddl=True,
    # Its resolved event, always (tiflow open/open_protocol_encoder.go EncodeCheckpointEvent).
    watermark=Watermark.ALWAYS,
    large_message_policies=LARGE_MESSAGE_POLICIES,
    batching=True,
    old_values_option="open-output-old-value",
    options=(
        "only-output-updated-columns",
        "delete-only-output-handle-key-columns",
        "open-output-old-value",
    ),
    shared_options=("max-batch-size", "large-message-handle-compression"),
)

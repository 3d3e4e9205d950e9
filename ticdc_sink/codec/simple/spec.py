"""protocol=simple as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.simple.decoder import build_decoder
from ticdc_sink.codec.simple.encoder import build_encoder, encode_table_ddl, encode_watermark
from ticdc_sink.codec.spec import LARGE_MESSAGE_POLICIES, ProtocolSpec, Watermark

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="simple",
    build_encoder=build_encoder,
    encode_table_ddl=encode_table_ddl,
    encode_watermark=encode_watermark,
    build_decoder=build_decoder,
    ddl=True,
    bootstrap=True,
    watermark=Watermark.ALWAYS,
    large_message_policies=LARGE_MESSAGE_POLICIES,
    row_checksum=True,
    options=("encoding-format", "claim-check-raw-value"),
    shared_options=(
        "large-message-handle-compression",
        "integrity-check-level",
        "corruption-handle-level",
    ),
)

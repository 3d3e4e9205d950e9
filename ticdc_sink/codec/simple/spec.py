"""protocol=simple as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.spec import LARGE_MESSAGE_POLICIES, ProtocolSpec, Watermark

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="simple",
    module="ticdc_sink.codec.simple.encoder",
    decoder="ticdc_sink.codec.simple.decoder",
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

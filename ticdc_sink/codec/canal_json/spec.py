"""protocol=canal-json as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.spec import LARGE_MESSAGE_POLICIES, ProtocolSpec, Watermark

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="canal-json",
    module="ticdc_sink.codec.canal_json.encoder",
    decoder="ticdc_sink.codec.canal_json.decoder",
    ddl=True,
    ddl_to_all_partitions=False,
    watermark=Watermark.WITH_TIDB_EXTENSION,
    large_message_policies=LARGE_MESSAGE_POLICIES,
    large_message_needs_tidb_extension=True,
    options=(
        "only-output-updated-columns",
        "content-compatible",
        "delete-only-output-handle-key-columns",
        "claim-check-raw-value",
        "output-row-key",
    ),
    shared_options=("large-message-handle-compression",),
)

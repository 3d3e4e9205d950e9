"""protocol=canal-json as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.canal_json.decoder import build_decoder
from ticdc_sink.codec.canal_json.encoder import build_encoder, encode_table_ddl, encode_watermark
from ticdc_sink.codec.spec import LARGE_MESSAGE_POLICIES, ProtocolSpec, Watermark

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="canal-json",
    build_encoder=build_encoder,
    encode_table_ddl=encode_table_ddl,
    encode_watermark=encode_watermark,
    build_decoder=build_decoder,
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

"""protocol=debezium as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.debezium.decoder import build_decoder
from ticdc_sink.codec.debezium.encoder import build_encoder, encode_table_ddl, encode_watermark
from ticdc_sink.codec.spec import ProtocolSpec, Watermark
from ticdc_sink.ticdc_version import TiCDCVersion

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="debezium",
    build_encoder=build_encoder,
    encode_table_ddl=encode_table_ddl,
    encode_watermark=encode_watermark,
    build_decoder=build_decoder,
    ddl=True,
    watermark=Watermark.WITH_TIDB_EXTENSION,
    events_since=TiCDCVersion.V26_3,
    changes=(
        (
            TiCDCVersion.V26_3,
            "DDL messages, watermarks with enable-tidb-extension, and with it `source`'s "
            "schema lists commit_ts and cluster_id (pkg/sink/codec/debezium/codec.go)",
        ),
    ),
    size_check=False,
    old_values_option="debezium-output-old-value",
    options=("debezium-disable-schema", "debezium-output-old-value", "debezium-cluster-name"),
    shared_options=("large-message-handle-compression",),
)

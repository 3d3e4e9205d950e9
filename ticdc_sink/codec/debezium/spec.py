"""protocol=debezium as the rest of the sink sees it (see `ticdc_sink.codec.spec`)."""

from __future__ import annotations

from ticdc_sink.codec.spec import ProtocolSpec, TiCDCVersion, Watermark

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="debezium",
    module="ticdc_sink.codec.debezium.encoder",
    decoder="ticdc_sink.decode.debezium",
    ddl=True,
    watermark=Watermark.WITH_TIDB_EXTENSION,
    events_since=TiCDCVersion.V26_3,
    size_check=False,
    old_values_option="debezium-output-old-value",
    options=("debezium-disable-schema", "debezium-output-old-value", "debezium-cluster-name"),
    shared_options=("large-message-handle-compression",),
)

"""protocol=debezium-avro as the rest of the sink sees it (see `ticdc_sink.codec.spec`).

pingcap/ticdc v26.3.3 (ticdc#5475): the Debezium envelope as Confluent Avro, one table
per topic, a schema registry required. Its DDL and watermark messages exist only with
TiCDC's testing switch `avro-enable-watermark`, which Confluent consumers cannot read:
none here, as for avro. No size check: TiCDC's debezium encoders have none."""

from __future__ import annotations

from ticdc_sink.codec.debezium_avro.decoder import build_decoder
from ticdc_sink.codec.debezium_avro.encoder import build_encoder
from ticdc_sink.codec.spec import ProtocolSpec
from ticdc_sink.ticdc_version import TiCDCVersion

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="debezium-avro",
    build_encoder=build_encoder,
    build_decoder=build_decoder,
    needs_registry=True,
    since=TiCDCVersion.V26_3,
    size_check=False,
    old_values_option="debezium-output-old-value",
    options=(
        "debezium-output-old-value",
        "debezium-cluster-name",
        "avro-decimal-handling-mode",
        "avro-bigint-unsigned-handling-mode",
    ),
)

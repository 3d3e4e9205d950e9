"""protocol=avro as the rest of the sink sees it (see `ticdc_sink.codec.spec`).

No watermark: TiCDC's avro watermark (`avro-enable-watermark`) is a testing mode that
Confluent consumers cannot read. UPDATEs carry the old row with `avro-include-before-value`
(pingcap/ticdc master; tiflow's avro never does)."""

from __future__ import annotations

from ticdc_sink.codec.avro.decoder import build_decoder
from ticdc_sink.codec.avro.encoder import build_encoder
from ticdc_sink.codec.spec import ProtocolSpec

__all__ = ["SPEC"]

SPEC = ProtocolSpec(
    name="avro",
    build_encoder=build_encoder,
    build_decoder=build_decoder,
    aliases=("flat-avro",),
    needs_registry=True,
    operation_needs_tidb_extension=True,
    old_values_option="avro-include-before-value",
    row_checksum=True,
    row_checksum_requires=(
        ("enable-tidb-extension", "true"),
        ("avro-decimal-handling-mode", "string"),
        ("avro-bigint-unsigned-handling-mode", "string"),
    ),
    options=(
        "avro-decimal-handling-mode",
        "avro-bigint-unsigned-handling-mode",
        "subject-name-strategy",
        "avro-include-before-value",
    ),
    shared_options=("integrity-check-level", "corruption-handle-level"),
)

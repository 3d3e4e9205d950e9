"""The sink's configuration, as data: every option of the writer declared once, parsed and
validated once on the driver (`SinkConfig.from_options`). The result is frozen, hashable
and picklable; change it with `attrs.evolve`. The package knows option names, TiCDC's
sink-uri and changefeed-file names and librdkafka setting names; it opens no connection
and holds no behaviour: what the rules do to a table (topic, dispatcher, target names,
columns sent, filters) is `ticdc_sink.writer.rules`.

    config/
      __init__.py    the package's names, imported from the modules below (this module)
      parts.py       KafkaConfig, RoutingConfig, InputConfig, RegistryConfig
      sink.py        SinkConfig, the rules across parts, from_options: the layers merged,
                     unknown keys refused, the parts built; option_names; the warning
                     naming the TiCDC settings it ignored
      layers.py      a layer of raw settings and its source; LAYER_OPTIONS
      sink_uri.py    the sink-uri option read into options (parse_sink_uri)
      changefeed.py  the config option: a TiCDC changefeed TOML file read into a layer
      ticdc.py       TiCDC's Kafka parameters as librdkafka settings; ignored and refused
                     TiCDC settings

Options. Each option is declared once, as a field of the part that holds it
(`ticdc_sink.options.option_field`: its type, default, one line of documentation and the
TiCDC settings it honours); the field is the option's snake_case twin and keeps the name
in `metadata["option"]`. The codec's options are `CodecConfig`'s
(`ticdc_sink.codec.config`, with the values of `ticdc_sink.codec.choices`): the codec
never imports this package. The protocols that own an option say so in their specs
(`ticdc_sink.codec.spec`). The write options page (docs/reference/write-options.md) is
rendered from these declarations at every build of the docs (tests/support/option_docs.py).

TiCDC's other Kafka-sink settings are declared in `ticdc_sink.ticdc_settings`, each with
what the sink does with it (`ticdc.py`); the TiCDC settings page
(docs/reference/ticdc-settings.md) is rendered from that list and the options.

Secrets (`sasl-password`, `sasl-oauth-client-secret`, `schema-registry-password`, the
credentials of a `schema-registry` URL, and `kafka.*` settings whose names contain
password, secret, jaas, key.pem or oauthbearer.config) never appear in `repr`, `str` or
errors: `ticdc_sink.redaction` says what is secret and masks it (below the codec, whose
claim-check URI it masks too; `is_secret`, `mask_uri` and `redact_url` are re-exported
here). Options of another protocol, set away from their default, are errors.
"""

from __future__ import annotations

from ticdc_sink.codec.choices import (
    AvroBigintUnsignedHandling,
    AvroDecimalHandling,
    CorruptionHandleLevel,
    EncodingFormat,
    IntegrityCheckLevel,
    LargeMessageCompression,
    LargeMessageHandleOption,
    Protocol,
    SubjectNameStrategy,
)
from ticdc_sink.codec.config import CodecConfig
from ticdc_sink.config.layers import LAYER_OPTIONS
from ticdc_sink.config.parts import (
    InputConfig,
    KafkaConfig,
    RegistryConfig,
    RoutingConfig,
    acks_all,
)
from ticdc_sink.config.sink import (
    SPARK_OPTIONS,
    SinkConfig,
    layer_options,
    option_names,
    version_settings,
)
from ticdc_sink.config.sink_uri import parse_sink_uri
from ticdc_sink.config.ticdc import ticdc_kafka_settings
from ticdc_sink.options import FrozenMap, spell_option
from ticdc_sink.redaction import is_secret, mask_uri, redact_url
from ticdc_sink.routing import PartitionRule

__all__ = [
    "LAYER_OPTIONS",
    "SPARK_OPTIONS",
    "AvroBigintUnsignedHandling",
    "AvroDecimalHandling",
    "CodecConfig",
    "CorruptionHandleLevel",
    "EncodingFormat",
    "FrozenMap",
    "InputConfig",
    "IntegrityCheckLevel",
    "KafkaConfig",
    "LargeMessageCompression",
    "LargeMessageHandleOption",
    "PartitionRule",
    "Protocol",
    "RegistryConfig",
    "RoutingConfig",
    "SinkConfig",
    "SubjectNameStrategy",
    "acks_all",
    "is_secret",
    "layer_options",
    "mask_uri",
    "option_names",
    "parse_sink_uri",
    "redact_url",
    "spell_option",
    "ticdc_kafka_settings",
    "version_settings",
]

"""The write options and TiCDC settings pages are the option declarations rendered
(tests/support/option_docs.py) at every build of the docs: the pages hold the generated
part, and the tables name every declared option and TiCDC setting once."""

from __future__ import annotations

import attrs

from tests.support import paths
from tests.support.option_docs import (
    OTHER_CHANGEFEED_SETTINGS,
    declared_options,
    options_table,
    ticdc_table,
)
from ticdc_sink import config
from ticdc_sink.codec.protocols import protocol_specs
from ticdc_sink.ticdc_settings import SETTINGS, setting

DOCS = paths.DOCS


def _first_cells(table: str) -> list[str]:
    """The first column of a Markdown table, less its header, as written (`name`)."""
    return [line.split(" | ", 1)[0].removeprefix("| ") for line in table.splitlines()[2:]]


def test_the_write_options_page_is_the_declarations_rendered() -> None:
    page = (DOCS / "reference" / "write-options.md").read_text()
    assert "\n<!-- generated: write-options -->\n" in page
    names = _first_cells(options_table())
    wanted = ["`sink-uri`", "`config`"]
    wanted += [
        f"`{'kafka.<name>' if o == 'kafka.*' else config.spell_option(o)}`"
        for o in (field.metadata["option"] for field in declared_options())
    ]
    assert names == wanted
    assert "`checkpointLocation`" in names


def test_the_check_sees_a_changed_line() -> None:
    # The comparison is the whole table: one word changed in one doc is a difference.
    table = options_table()
    assert table.replace("brokers (or the hosts", "brokers (or hosts", 1) != table


def test_every_option_is_declared_once_with_a_doc() -> None:
    options = [field.metadata["option"] for field in declared_options()]
    assert len(options) == len(set(options)), "an option is declared twice"
    for field in declared_options():
        assert field.metadata["doc"].strip(), field.metadata["option"]
        assert "|" not in field.metadata["doc"], field.metadata["option"]


def test_every_option_a_protocol_owns_is_declared() -> None:
    options = {field.metadata["option"] for field in declared_options()}
    for spec in protocol_specs():
        assert set(spec.options) <= options, spec.name
        assert set(spec.shared_options) <= options, spec.name
        assert spec.old_values_option in (None, *spec.options), spec.name


def test_the_protocol_option_names_every_protocol() -> None:
    (field,) = [f for f in attrs.fields(config.CodecConfig) if f.name == "protocol"]
    for spec in protocol_specs():
        for name in spec.names():
            assert f"`{name}`" in field.metadata["doc"], name


# -- "Coming from TiCDC" --------------------------------------------------------------------

# Every Kafka-sink setting of TiCDC v8.5 (tiflow v8.5.7: pkg/config/sink.go SinkConfig,
# KafkaConfig, CodecConfig, DebeziumConfig; large_message.go; pkg/sink/kafka/options.go
# urlConfig; pkg/sink/codec/common/config.go urlConfig), the newer pingcap/ticdc keys, and
# the changefeed keys outside [sink] that change what TiCDC writes. Copied from TiCDC's
# code, so that a setting missing from the declarations fails here.
TICDC_KAFKA_SINK_SETTINGS = {
    # SinkConfig
    "transaction-atomicity", "protocol", "dispatchers", "column-selectors", "schema-registry",
    "encoder-concurrency", "terminator", "date-separator", "enable-partition-separator",
    "file-index-digit", "enable-kafka-sink-v2", "only-output-updated-columns",
    "delete-only-output-handle-key-columns", "content-compatible", "safe-mode",
    "pulsar-config", "mysql-config", "cloud-storage-config", "advance-timeout-in-sec",
    "send-bootstrap-interval-in-sec", "send-bootstrap-in-msg-count",
    "send-bootstrap-to-all-partition", "send-all-bootstrap-at-start",
    "debezium-disable-schema", "csv", "[sink.debezium] output-old-value",
    "[sink.open] output-old-value",
    # KafkaConfig and options.go urlConfig
    "partition-num", "replication-factor", "kafka-version", "max-message-bytes", "max-retry",
    "compression", "kafka-client-id", "auto-create-topic", "dial-timeout", "write-timeout",
    "read-timeout", "required-acks", "sasl-user", "sasl-password", "sasl-mechanism",
    "sasl-gssapi-auth-type", "sasl-gssapi-keytab-path", "sasl-gssapi-kerberos-config-path",
    "sasl-gssapi-service-name", "sasl-gssapi-user", "sasl-gssapi-password",
    "sasl-gssapi-realm", "sasl-gssapi-disable-pafxfast", "sasl-oauth-client-id",
    "sasl-oauth-client-secret", "sasl-oauth-token-url", "sasl-oauth-scopes",
    "sasl-oauth-grant-type", "sasl-oauth-audience", "enable-tls", "ca", "cert", "key",
    "insecure-skip-verify", "glue-schema-registry-config", "output-raw-change-event",
    # CodecConfig and codec/common/config.go urlConfig
    "enable-tidb-extension", "max-batch-size", "avro-enable-watermark",
    "avro-decimal-handling-mode", "avro-bigint-unsigned-handling-mode", "encoding-format",
    # large_message.go
    "large-message-handle-option", "large-message-handle-compression",
    "claim-check-storage-uri", "claim-check-raw-value",
    # pingcap/ticdc
    "avro-include-before-value", "output-row-key", "dispatchers.target-schema",
    "dispatchers.target-table",
    # changefeed sections and keys outside [sink]
    "case-sensitive", "force-replicate", "[filter] rules", "[filter] event-filters",
    "[filter] ignore-txn-start-ts", "[integrity] integrity-check-level",
    "[integrity] corruption-handle-level",
}  # fmt: skip


def _ticdc_names() -> list[str]:
    names = [name for field in declared_options() for name in field.metadata["ticdc"]]
    return names + [declared.name for declared in SETTINGS]


def test_the_ticdc_settings_page_is_the_declarations_rendered() -> None:
    page = (DOCS / "reference" / "ticdc-settings.md").read_text()
    assert "\n<!-- generated: ticdc-settings -->\n" in page
    names = _first_cells(ticdc_table())[:-1]  # the last row: the other changefeed keys
    assert sorted(names) == sorted(f"`{name}`" for name in _ticdc_names())
    assert ticdc_table().endswith(OTHER_CHANGEFEED_SETTINGS + "\n")


def test_every_ticdc_setting_is_declared_once() -> None:
    names = _ticdc_names()
    assert len(names) == len(set(names)), "a TiCDC setting is declared twice"
    assert set(names) == TICDC_KAFKA_SINK_SETTINGS


def test_the_not_yet_built_settings_are_refused_never_ignored() -> None:
    # Issue 16: settings that change TiCDC's output are honoured or refused; issue 27 built
    # pingcap/ticdc's keys, now options' TiCDC names.
    honoured = {name for field in declared_options() for name in field.metadata["ticdc"]}
    for name in ("avro-include-before-value", "output-row-key", "dispatchers.target-schema"):
        assert name in honoured and setting(name) is None, name


def test_integrity_settings_are_options() -> None:
    # Issue 16 item 4: honoured, so declared with the options and no longer refused.
    honoured = {name for field in declared_options() for name in field.metadata["ticdc"]}
    for name in ("[integrity] integrity-check-level", "[integrity] corruption-handle-level"):
        assert name in honoured and setting(name) is None, name


def test_output_raw_change_event_is_an_option() -> None:
    # Issue 16 item 2: honoured, so declared with the options and no longer refused.
    honoured = {name for field in declared_options() for name in field.metadata["ticdc"]}
    assert "output-raw-change-event" in honoured
    assert setting("output-raw-change-event") is None

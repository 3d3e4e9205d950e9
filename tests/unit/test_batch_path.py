"""Every protocol's writer sends, for record batches, exactly what the row path sends
(`read_changes` -> `write_change` per row): same keys and values, same partitions, same
order, or the same error. Encoders that render whole batches (`encode_batch`) are held to
the row path here; the others take the row path on both sides."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_simple_json_batch import (
    COLUMN_TYPES,
    COMMIT_TS,
    _batches,
    _row_path,
    _spark_schema,
)
from tests.unit.test_writer import FakeProducer
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError
from ticdc_sink.writer import make_plan, write_batches

PROTOCOLS: dict[str, dict[str, str]] = {
    "simple-json": {"protocol": "simple", "send-bootstrap-in-msg-count": "3"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {"protocol": "avro", "schema-registry": "http://127.0.0.1:1"},
    "avro-ext-strings": {
        "protocol": "avro",
        "schema-registry": "http://127.0.0.1:1",
        "enable-tidb-extension": "true",
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
    },
    "debezium": {"protocol": "debezium"},
    "debezium-no-schema-old": {
        "protocol": "debezium",
        "debezium-disable-schema": "true",
        "debezium-output-old-value": "false",
        "enable-tidb-extension": "true",
    },
    "canal-json": {"protocol": "canal-json"},
    "canal-json-ext": {
        "protocol": "canal-json",
        "enable-tidb-extension": "true",
        "content-compatible": "true",
    },
}


class Registry:
    def __init__(self, *args: Any) -> None:
        self.ids: dict[tuple[str, bool], int] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        return self.ids.setdefault((schema, is_key), len(self.ids) + 1)

    def close(self) -> None:
        pass


def _plan(with_table: bool, protocol: str, partition: str) -> Any:
    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "database": "shop",
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        "time-zone": "Asia/Shanghai",
        "partition": partition,
        **PROTOCOLS[protocol],
    }
    if not with_table:
        options["table"] = "users"
    config = SinkConfig.from_options(options)
    return make_plan(config, _spark_schema(with_table), COMMIT_TS, batch_id=None)


def _outcome(run: Any) -> Any:
    try:
        return ("ok", run())
    except InputError as exc:
        return ("error", type(exc), str(exc))


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@pytest.mark.parametrize("partition", ["table", "index-value"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batches_send_what_the_row_path_sends(
    protocol: str, with_table: bool, partition: str, data: Any
) -> None:
    batches = data.draw(_batches(with_table))
    plan = _plan(with_table, protocol, partition)
    expected = _outcome(lambda: _row_path(batches, plan, Registry()))
    producer = FakeProducer()
    actual = _outcome(
        lambda: (
            write_batches(batches, plan, producer_factory=producer, registry_factory=Registry),
            producer.sent,
        )[1]
    )
    assert actual == expected

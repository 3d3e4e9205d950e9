"""Messages above max-message-bytes: the size check, handle-key-only and claim-check for
simple (JSON and Avro) and canal-json, the claim-check files and stores, the decoders
following claim-check locations, the topic's max.message.bytes, and the diverted counts."""

from __future__ import annotations

import base64
import logging
import shutil
import uuid
from pathlib import Path
from typing import Any

import attrs
import orjson
import pyarrow as pa
import pytest
from confluent_kafka import KafkaError, KafkaException

from tests.support.fake_producer import FakeProducer
from tests.support.large_messages import BIG, CLAIM, SMALL, WIDE, MemoryStore, simple_config
from ticdc_sink import claim_check, tso
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.codec.claim_check import file_content, file_name
from ticdc_sink.codec.protocols import build_encoder, decoder_for
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.config import (
    CodecConfig,
    EncodingFormat,
    KafkaConfig,
    LargeMessageHandleOption,
    Protocol,
    SinkConfig,
)
from ticdc_sink.decode import DecodedRow, DecoderSettings, decode_record
from ticdc_sink.errors import ConfigError, DecodeError, DeliveryError, MessageTooLargeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.producer import KafkaProducer
from ticdc_sink.writer import TablePlan, TaskReport, WritePlan, commit_batch, write_batches

KEY_ONLY = LargeMessageHandleOption.HANDLE_KEY_ONLY


def canal_config(option: LargeMessageHandleOption, **kwargs: Any) -> CodecConfig:
    return simple_config(option, protocol=Protocol.CANAL_JSON, enable_tidb_extension=True, **kwargs)


# --- the size check ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        CodecConfig(),
        CodecConfig(encoding_format=EncodingFormat.AVRO),
        CodecConfig(protocol=Protocol.CANAL_JSON, enable_tidb_extension=True),
    ],
    ids=["simple-json", "simple-avro", "canal-json"],
)
def test_key_plus_value_plus_36_is_checked_and_none_fails(config: CodecConfig) -> None:
    message = build_encoder(config, WIDE, build_ts_ms=1).encode_row(BIG)
    size = len(message.key or b"") + len(message.value or b"") + 36
    exact = attrs.evolve(config, max_message_bytes=size)
    assert not build_encoder(exact, WIDE, build_ts_ms=1).encode_row(BIG).diverted
    below = attrs.evolve(config, max_message_bytes=size - 1)
    with pytest.raises(MessageTooLargeError) as caught:
        build_encoder(below, WIDE, build_ts_ms=1).encode_row(BIG)
    error = caught.value
    assert (error.table, error.key, error.size, error.limit) == ("d.wide", "id=7", size, size - 1)
    assert f"message for table d.wide key id=7 is {size} bytes" in str(error)


# --- handle-key-only ---------------------------------------------------------------------


@pytest.mark.parametrize("make", [simple_config, canal_config], ids=["simple", "canal-json"])
def test_handle_key_only_marks_the_message_diverted(make: Any) -> None:
    encoder = build_encoder(make(KEY_ONLY), WIDE, build_ts_ms=1)
    assert not encoder.encode_row(SMALL).diverted
    message = encoder.encode_row(BIG)
    assert message.diverted and message.rows == 1 and b"x" not in (message.value or b"")


# --- claim-check: simple JSON ------------------------------------------------------------


def test_simple_json_claim_check_stores_the_message_and_sends_the_key_with_the_location() -> None:
    store = MemoryStore()
    config = simple_config(CLAIM)
    full = build_encoder(CodecConfig(), WIDE, build_ts_ms=4).encode_row(BIG).value
    assert full is not None
    message = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store).encode_row(BIG)
    (name,) = store.files
    assert uuid.UUID(name.removesuffix(".json")).version == 5
    assert store.files[name] == b'{"key":null,"value":"' + base64.b64encode(full) + b'"}'
    assert message.diverted and message.key == b""
    # tiflow: the handle-key-only message with claimCheckLocation and handleKeyOnly true.
    assert message.value == (
        b'{"version":1,"database":"d","table":"wide","tableID":5,"type":"INSERT",'
        b'"commitTs":786432,"buildTs":4,"schemaVersion":6,'
        b'"claimCheckLocation":"file:///cc/' + name.encode() + b'","handleKeyOnly":true,'
        b'"data":{"id":"7"}}'
    )
    # A small row is not diverted and nothing is stored.
    store.files.clear()
    encoder = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store)
    assert not encoder.encode_row(SMALL).diverted and not store.files


def test_claim_check_raw_value_stores_the_value_itself() -> None:
    store = MemoryStore()
    config = simple_config(CLAIM, claim_check_raw_value=True)
    build_encoder(config, WIDE, build_ts_ms=4, claim_check=store).encode_row(BIG)
    full = build_encoder(CodecConfig(), WIDE, build_ts_ms=4).encode_row(BIG).value
    assert list(store.files.values()) == [full]


def test_claim_check_file_names_are_stable_across_replays_and_differ_between_messages() -> None:
    first, second = MemoryStore(), MemoryStore()
    config = simple_config(CLAIM)
    a = build_encoder(config, WIDE, build_ts_ms=4, claim_check=first).encode_row(BIG)
    b = build_encoder(config, WIDE, build_ts_ms=4, claim_check=second).encode_row(BIG)
    assert a == b and first.files == second.files
    other = RowChange(WIDE, Op.INSERT, 3 << 18, (7, "z" * 2000))
    build_encoder(config, WIDE, build_ts_ms=4, claim_check=first).encode_row(other)
    assert len(first.files) == 2
    assert file_name("d.t", 1, "id=1", b"v") != file_name("d.t", 2, "id=1", b"v")


def test_claim_check_file_content_is_go_json() -> None:
    assert file_content(None, b"\x00\xff", raw_value=False) == b'{"key":null,"value":"AP8="}'
    assert file_content(b"k", b"", raw_value=False) == b'{"key":"aw==","value":""}'
    assert file_content(None, b"abc", raw_value=True) == b"abc"


def test_claim_check_still_too_large_is_an_error() -> None:
    store = MemoryStore(base="file:///" + "d" * 1200)
    with pytest.raises(MessageTooLargeError) as caught:
        build_encoder(simple_config(CLAIM), WIDE, build_ts_ms=4, claim_check=store).encode_row(BIG)
    assert caught.value.key == "id=7" and caught.value.size > 1000


def test_claim_check_without_a_store_is_refused_when_needed() -> None:
    encoder = build_encoder(simple_config(CLAIM), WIDE, build_ts_ms=4)
    assert not encoder.encode_row(SMALL).diverted
    with pytest.raises(ConfigError, match="no claim-check store"):
        encoder.encode_row(BIG)


# --- claim-check: simple Avro ------------------------------------------------------------


def test_simple_avro_claim_check_round_trips_through_the_decoder() -> None:
    store = MemoryStore()
    config = simple_config(CLAIM, encoding_format=EncodingFormat.AVRO)
    encoder = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store)
    message = encoder.encode_row(BIG)
    assert message.diverted
    decoder = SimpleDecoder(encoding_format="avro")
    decoder.decode_message(None, encoder.encode_bootstrap().value)
    key_only = decoder.decode_message(None, message.value)
    assert isinstance(key_only, DecodedRow)
    assert key_only.handle_key_only and key_only.data == {"id": 7}
    (name,) = store.files
    assert key_only.claim_check_location == f"file:///cc/{name}"
    follow = SimpleDecoder(encoding_format="avro", claim_check_loader=store.load)
    follow.decode_message(None, encoder.encode_bootstrap().value)
    row = follow.decode_message(None, message.value)
    assert isinstance(row, DecodedRow) and row.typed
    assert row.data == {"id": 7, "payload": "x" * 2000} and not row.handle_key_only
    assert row.claim_check_location == f"file:///cc/{name}"


def test_simple_json_decoder_follows_the_location_raw_or_wrapped() -> None:
    for raw in (False, True):
        store = MemoryStore()
        config = simple_config(CLAIM, claim_check_raw_value=raw)
        encoder = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store)
        message = encoder.encode_row(BIG)
        decoder = decoder_for(
            "simple", DecoderSettings(claim_check_loader=store.load, claim_check_raw_value=raw)
        )
        decoder.decode_message(None, encoder.encode_bootstrap().value)
        row = decoder.decode_message(None, message.value)
        assert isinstance(row, DecodedRow)
        assert row.data == {"id": 7, "payload": "x" * 2000} and row.commit_ts == 3 << 18


def test_decoder_with_the_wrong_raw_value_setting_says_so() -> None:
    store = MemoryStore()
    encoder = build_encoder(
        simple_config(CLAIM, claim_check_raw_value=True), WIDE, build_ts_ms=4, claim_check=store
    )
    message = encoder.encode_row(BIG)
    decoder = SimpleDecoder(claim_check_loader=store.load)
    with pytest.raises(DecodeError, match="claim_check_raw_value=True"):
        decoder.decode_message(None, message.value)


def test_a_missing_claim_check_file_is_a_decode_error(tmp_path: Path) -> None:
    store = claim_check.open_store(tmp_path.as_uri())
    encoder = build_encoder(simple_config(CLAIM), WIDE, build_ts_ms=4, claim_check=store)
    message = encoder.encode_row(BIG)
    for path in tmp_path.iterdir():
        path.unlink()
    decoder = SimpleDecoder(claim_check_loader=claim_check.read_claim_check)
    with pytest.raises(DecodeError, match="cannot be read"):
        decoder.decode_message(None, message.value)


# --- claim-check: canal-json -------------------------------------------------------------


def test_canal_json_claim_check_matches_tiflow_and_round_trips() -> None:
    store = MemoryStore()
    encoder = build_encoder(canal_config(CLAIM), WIDE, build_ts_ms=4, claim_check=store)
    message = encoder.encode_row(BIG)
    full = build_encoder(canal_config(KEY_ONLY), WIDE, build_ts_ms=4)
    (name,) = store.files
    stored = orjson.loads(store.files[name])
    assert stored["key"] is None
    original = orjson.loads(base64.b64decode(stored["value"]))
    assert original["data"] == [{"id": "7", "payload": "x" * 2000}]
    assert "claimCheckLocation" not in original["_tidb"]
    assert message.diverted and message.key == b""
    value = message.value or b""
    # Handle-key columns only, the location in _tidb and no onlyHandleKey.
    assert value.endswith(
        b'"data":[{"id":"7"}],"_tidb":{"commitTs":786432,"claimCheckLocation":"file:///cc/'
        + name.encode()
        + b'"}}'
    )
    assert orjson.loads(value)["mysqlType"] == {"id": "int"}
    assert not full.encode_row(SMALL).diverted
    row = CanalJsonDecoder(claim_check_loader=store.load).decode_message(None, value)
    assert isinstance(row, DecodedRow)
    assert row.data == {"id": 7, "payload": "x" * 2000}
    assert row.claim_check_location == f"file:///cc/{name}" and not row.handle_key_only
    key_only = CanalJsonDecoder().decode_message(None, value)
    assert isinstance(key_only, DecodedRow) and key_only.data == {"id": 7}


def test_canal_json_update_and_delete_round_trip() -> None:
    store = MemoryStore()
    encoder = build_encoder(canal_config(CLAIM), WIDE, build_ts_ms=4, claim_check=store)
    decoder = CanalJsonDecoder(claim_check_loader=store.load)
    update = RowChange(WIDE, Op.UPDATE, 5 << 18, (7, "n" * 1500), before=(7, "o" * 1500))
    row = decoder.decode_message(None, encoder.encode_row(update).value)
    assert isinstance(row, DecodedRow)
    assert (row.old, row.data) == (
        {"id": 7, "payload": "o" * 1500},
        {"id": 7, "payload": "n" * 1500},
    )
    delete = RowChange(WIDE, Op.DELETE, 6 << 18, None, before=(7, "o" * 1500))
    row = decoder.decode_message(None, encoder.encode_row(delete).value)
    assert isinstance(row, DecodedRow) and row.op is Op.DELETE
    assert row.old == {"id": 7, "payload": "o" * 1500}


# --- stores ------------------------------------------------------------------------------


def test_file_store_writes_whole_files_and_reads_them_back(tmp_path: Path) -> None:
    directory = tmp_path / "a" / "b"
    store = claim_check.open_store(directory.as_uri() + "/")
    assert isinstance(store, claim_check.FileStore) and directory.is_dir()
    store.write("x.json", b"one")
    store.write("x.json", b"two")
    assert store.location("x.json") == f"file://{directory}/x.json"
    assert claim_check.read_claim_check(store.location("x.json")) == b"two"
    assert sorted(p.name for p in directory.iterdir()) == ["x.json"]


def test_other_schemes_need_fsspec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claim_check, "_fsspec", lambda: None)
    with pytest.raises(ConfigError, match="needs the fsspec package") as caught:
        claim_check.open_store("s3://bucket/prefix?secret-access-key=hunter2")
    assert "hunter2" not in str(caught.value)
    assert caught.value.option == "claim-check-storage-uri"


def test_fsspec_store_uses_the_filesystem_of_the_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    files: dict[str, bytes] = {}

    class FakeFs:
        def __init__(self, **options: str) -> None:
            self.options = options

        def pipe_file(self, path: str, data: bytes) -> None:
            files[path] = data

        def cat_file(self, path: str) -> bytes:
            return files[path]

    made: list[FakeFs] = []

    class FakeFsspec:
        @staticmethod
        def filesystem(scheme: str, **options: str) -> FakeFs:
            assert scheme == "s3"
            made.append(FakeFs(**options))
            return made[-1]

    monkeypatch.setattr(claim_check, "_fsspec", lambda: FakeFsspec)
    store = claim_check.open_store("s3://key:secret@bucket/prefix/?region=x")
    assert made[0].options == {"region": "x"}
    store.write("a.json", b"data")
    assert store.location("a.json") == "s3://bucket/prefix/a.json"
    assert files == {"s3://bucket/prefix/a.json": b"data"}
    assert "secret" not in repr(store)
    assert claim_check.read_claim_check("s3://bucket/prefix/a.json") == b"data"


def test_file_store_refuses_relative_and_unwritable_paths(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="absolute path"):
        claim_check.FileStore("file://host/dir")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot be created"):
        claim_check.open_store((blocker / "sub").as_uri())


# --- configuration -----------------------------------------------------------------------

BASE = {"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t"}


def test_claim_check_options_are_parsed_and_checked() -> None:
    config = SinkConfig.from_options(
        {
            **BASE,
            "large-message-handle-option": "claim-check",
            "claim-check-storage-uri": "file:///tmp/cc",
            "claim-check-raw-value": "true",
        }
    ).codec
    assert config.claim_check_storage_uri == "file:///tmp/cc" and config.claim_check_raw_value
    cases = [
        ({"large-message-handle-option": "claim-check"}, "claim-check-storage-uri"),
        ({"claim-check-storage-uri": "file:///tmp/cc"}, "claim-check-storage-uri"),
        ({"claim-check-raw-value": "true"}, "claim-check-raw-value"),
        (
            {
                "large-message-handle-option": "claim-check",
                "claim-check-storage-uri": "file://relative/dir",
            },
            "claim-check-storage-uri",
        ),
        (
            {"large-message-handle-option": "claim-check", "claim-check-storage-uri": "nope"},
            "claim-check-storage-uri",
        ),
    ]
    for options, option in cases:
        with pytest.raises(ConfigError) as caught:
            SinkConfig.from_options({**BASE, **options})
        assert caught.value.option == option, options


def test_claim_check_options_from_a_changefeed_file(tmp_path: Path) -> None:
    path = tmp_path / "cf.toml"
    path.write_text(
        "[sink.kafka-config.large-message-handle]\n"
        "large-message-handle-option = 'claim-check'\n"
        "claim-check-storage-uri = 's3://bucket/prefix?access-key=AK&secret-access-key=SK'\n"
    )
    config = SinkConfig.from_options({**BASE, "config": str(path)})
    assert config.codec.claim_check_storage_uri.startswith("s3://bucket/prefix")
    assert "SK" not in repr(config) and "AK" not in repr(config)


# --- topic max.message.bytes -------------------------------------------------------------


class _Entry:
    def __init__(self, value: str | None) -> None:
        self.value = value


class _Future:
    def __init__(self, result: Any) -> None:
        self._result = result

    def result(self, timeout: float | None = None) -> Any:
        if isinstance(self._result, Exception):
            raise self._result
        return self._result


class FakeAdmin:
    def __init__(self, configs: dict[str, Any]) -> None:
        self.configs = configs
        self.calls: list[str] = []

    def __call__(self, config: dict[str, Any]) -> FakeAdmin:
        return self

    def describe_configs(self, resources: list[Any], request_timeout: float) -> dict:
        self.calls.append(",".join(r.name for r in resources))
        return {r: _Future(self.configs[r.name]) for r in resources}


class NullProducer:
    def __init__(self, config: dict[str, Any]) -> None:
        pass


def test_topic_max_message_bytes_is_described_once_per_topic(
    caplog: pytest.LogCaptureFixture,
) -> None:
    admin = FakeAdmin(
        {
            "big": {"max.message.bytes": _Entry("2000000")},
            "tansu": {},
            "denied": KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)),
        }
    )
    producer = KafkaProducer(
        KafkaConfig(bootstrap_servers="127.0.0.1:1"), factory=NullProducer, admin_factory=admin
    )
    assert producer.topic_max_message_bytes("big") == 2_000_000
    assert producer.topic_max_message_bytes("big") == 2_000_000
    assert producer.topic_max_message_bytes("tansu") is None
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.producer"):
        assert producer.topic_max_message_bytes("denied") is None
    assert "cannot read max.message.bytes of topic denied" in caplog.text
    assert admin.calls == ["big", "tansu", "denied"]


def test_max_message_bytes_of_many_topics_is_one_request() -> None:
    admin = FakeAdmin(
        {
            "big": {"max.message.bytes": _Entry("2000000")},
            "tansu": {},
            "denied": KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)),
            "small": {"max.message.bytes": _Entry("1000")},
        }
    )
    producer = KafkaProducer(
        KafkaConfig(bootstrap_servers="127.0.0.1:1"), factory=NullProducer, admin_factory=admin
    )
    topics = ["big", "tansu", "denied", "small"]
    expected = {"big": 2_000_000, "tansu": None, "denied": None, "small": 1000}
    assert producer.topics_max_message_bytes(topics) == expected
    assert producer.topic_max_message_bytes("small") == 1000
    assert admin.calls == ["big,tansu,denied,small"]


# --- the writer: effective limit and diverted counts --------------------------------------

COMMIT_TS = tso.compose(1_700_000_000_000)


def _plan(**options: str) -> WritePlan:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    config = SinkConfig.from_options(
        {**BASE, "database": "d", "table": "wide", "primary-key": "id", **options}
    )
    spark_schema = StructType(
        [
            StructField("_op", StringType()),
            StructField("id", LongType()),
            StructField("payload", StringType()),
        ]
    )
    from ticdc_sink.writer.table import build_table_schema

    template = build_table_schema("d", "wide", spark_schema, reserved={"_op"}, primary_key=("id",))
    return WritePlan(
        config=config,
        tables=TablePlan(template, default_database="d", default_table="wide"),
        commit_ts=COMMIT_TS,
        build_ts_ms=tso.physical_ms(COMMIT_TS),
    )


def _batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"_op": ["c", "c"], "id": pa.array([1, 2], pa.int64()), "payload": ["s", "x" * 20000]}
    )


def test_the_topic_limit_lowers_max_message_bytes() -> None:
    plan = _plan(**{"send-bootstrap-interval-in-sec": "0"})
    assert write_batches([_batch()], plan, producer_factory=FakeProducer(partitions=1)).rows == 2
    with pytest.raises(MessageTooLargeError) as caught:
        write_batches(
            [_batch()], plan, producer_factory=FakeProducer(partitions=1, topic_limit=1128)
        )
    assert caught.value.limit == 1000 and caught.value.key == "id=2"
    # The option said 10 MiB: the error names the topic's limit and the option's value.
    assert (caught.value.topic, caught.value.topic_max_message_bytes) == ("t", 1128)
    assert caught.value.max_message_bytes == 10 * 1024 * 1024
    assert str(caught.value).startswith(
        f"ticdc: message for table d.wide key id=2 is {caught.value.size} bytes, above 1000: "
        "topic t has max.message.bytes 1128 (less 128 bytes, as TiCDC keeps), below "
        "max-message-bytes 10485760; raise the topic's max.message.bytes or set "
        "large-message-handle-option"
    )


def test_the_lowered_limit_is_a_warning_once_per_process_and_topic(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plan = _plan(topic="warned_once", **{"large-message-handle-option": "handle-key-only"})
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.writer"):
        for _ in range(3):  # three tasks
            write_batches([_batch()], plan, producer_factory=FakeProducer(1, topic_limit=1128))
    warnings = [r.getMessage() for r in caplog.records if "lowered to" in r.getMessage()]
    assert warnings == [
        "topic warned_once max.message.bytes is 1128: max-message-bytes 10485760 lowered to 1000"
    ]


@pytest.mark.parametrize(
    "options",
    [
        {"large-message-handle-option": "handle-key-only"},
        {"large-message-handle-option": "claim-check"},
    ],
)
def test_diverted_messages_are_counted_in_the_report_and_the_commit_log(
    options: dict[str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if options["large-message-handle-option"] == "claim-check":
        options = {**options, "claim-check-storage-uri": tmp_path.as_uri()}
    plan = _plan(**options, **{"send-bootstrap-interval-in-sec": "0"})
    producer = FakeProducer(partitions=1, topic_limit=1128)
    report = write_batches([_batch()], plan, producer_factory=producer)
    assert (report.rows, report.diverted) == (2, 1)
    assert [orjson.loads(v).get("handleKeyOnly") for *_, v in producer.sent] == [None, True]
    if "claim-check-storage-uri" in options:
        assert len(list(tmp_path.iterdir())) == 1
    with caplog.at_level(logging.INFO, logger="ticdc_sink.writer"):
        commit_batch(
            plan,
            [report, attrs.evolve(report, diverted=2)],
            state=None,
            producer_factory=FakeProducer(partitions=1),
        )
    option = options["large-message-handle-option"]
    assert f"3 messages diverted by {option}" in caplog.text


def test_task_report_keeps_a_zero_default_for_diverted() -> None:
    report = TaskReport(0, {}, frozenset(), 0, 0, 0, 0)
    assert report.diverted == 0


def test_storage_uri_secrets_stay_out_of_errors_and_repr() -> None:
    with pytest.raises(ConfigError) as caught:
        SinkConfig.from_options(
            {
                **BASE,
                "large-message-handle-option": "claim-check",
                "claim-check-storage-uri": "file://host/x?secret-access-key=SK",
            }
        )
    assert "SK" not in str(caught.value) and "***" in str(caught.value)


def test_canal_json_raw_value_stores_the_canal_message() -> None:
    store = MemoryStore()
    config = canal_config(CLAIM, claim_check_raw_value=True)
    message = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store).encode_row(BIG)
    (data,) = store.files.values()
    assert orjson.loads(data)["data"] == [{"id": "7", "payload": "x" * 2000}]
    decoder = CanalJsonDecoder(claim_check_loader=store.load, claim_check_raw_value=True)
    row = decoder.decode_message(None, message.value)
    assert isinstance(row, DecodedRow) and row.data == {"id": 7, "payload": "x" * 2000}


def test_a_claim_check_file_that_cannot_be_written_is_a_delivery_error(tmp_path: Path) -> None:
    # Issue 13: a full disk (OSError errno 28) reached the user raw, naming no option.
    directory = tmp_path / "cc"
    store = claim_check.open_store(f"file://{directory}?token=s3cr3t")
    shutil.rmtree(directory)
    directory.write_text("the directory is gone")
    with pytest.raises(DeliveryError) as info:
        store.write("x.json", b"data")
    assert str(info.value) == (
        f"ticdc: cannot write claim-check file file://{directory}/x.json to "
        f"claim-check-storage-uri 'file://{directory}?token=***': Not a directory (errno 20); "
        "make room there or give a storage every executor can write to"
    )


# --- claim-check: a file that is another row's -------------------------------------------

OTHER = RowChange(WIDE, Op.INSERT, 3 << 18, (9, "z" * 2000))


@pytest.mark.parametrize(
    ("config", "raw"),
    [
        (simple_config(CLAIM), False),
        (simple_config(CLAIM, encoding_format=EncodingFormat.AVRO), True),
        (canal_config(CLAIM), False),
        (simple_config(CLAIM, protocol=Protocol.OPEN_PROTOCOL), False),
    ],
    ids=["simple-json", "simple-avro-raw", "canal-json", "open-protocol"],
)
def test_a_claim_check_file_replaced_by_another_rows_is_a_decode_error(
    config: CodecConfig, raw: bool
) -> None:
    config = attrs.evolve(config, claim_check_raw_value=raw)
    store = MemoryStore()
    encoder = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store)
    mine, other = encoder.encode_row(BIG), encoder.encode_row(OTHER)
    names = list(store.files)  # row 7's file, then row 9's
    decoder = decoder_for(
        config.protocol.value,
        DecoderSettings(
            encoding_format=config.encoding_format.value,
            claim_check_loader=store.load,
            claim_check_raw_value=raw,
        ),
    )
    bootstrap = encoder.encode_bootstrap()
    if bootstrap is not None:
        decoder.decode_message(None, bootstrap.value)
    [row] = decode_record(decoder, mine.key, mine.value)
    assert isinstance(row, DecodedRow) and row.data == {"id": 7, "payload": "x" * 2000}
    store.files[names[0]] = store.files[names[1]]
    with pytest.raises(DecodeError) as caught:
        decode_record(decoder, mine.key, mine.value)
    message = str(caught.value)
    assert (
        f"claim-check file file:///cc/{names[0]} holds INSERT d.wide commitTs 786432 (id=9)"
        in message
    )
    assert "not this message's INSERT d.wide commitTs 786432 (id=7)" in message
    assert "claim-check-storage-uri names another writer's store" in message
    assert other.diverted


def test_a_read_names_the_replaced_claim_check_files_offset(tmp_path: Path) -> None:
    from tests.support.read_log import FakeTopicLog
    from ticdc_sink.read.options import ReadConfig
    from ticdc_sink.read.plan import plan_read
    from ticdc_sink.read.scan import read_range

    store = claim_check.open_store(tmp_path.as_uri())
    encoder = build_encoder(simple_config(CLAIM), WIDE, build_ts_ms=4, claim_check=store)
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None
    values = [bootstrap.value, encoder.encode_row(BIG).value, encoder.encode_row(OTHER).value]
    first, second = (SimpleDecoder().decode_message(None, v) for v in values[1:])
    assert isinstance(first, DecodedRow) and isinstance(second, DecodedRow)
    name = {row.data["id"]: row.claim_check_location.rsplit("/", 1)[1] for row in (first, second)}
    shutil.copyfile(tmp_path / name["9"], tmp_path / name["7"])  # raw values: no schema yet
    config = ReadConfig.from_options(
        {
            "kafka.bootstrap.servers": "unused:1",
            "topic": "t",
            "claim-check-storage-uri": tmp_path.as_uri(),
        }
    )
    log = FakeTopicLog({0: values})
    with pytest.raises(
        DecodeError, match=r"^ticdc: topic t partition 0 offset 1: claim-check file "
    ):
        plan = plan_read(config, log)
        list(read_range(config, plan.table, plan.known, plan.ranges[0], log=log))


def test_an_open_protocol_update_whose_key_message_lost_its_old_values_follows_its_file() -> None:
    # With only-output-updated-columns the key-only message of an UPDATE that keeps its key
    # drops `p` (tiflow dropNotUpdatedColumns) and reads as an INSERT; its file holds the
    # UPDATE.
    config = simple_config(CLAIM, protocol=Protocol.OPEN_PROTOCOL, only_output_updated_columns=True)
    store = MemoryStore()
    encoder = build_encoder(config, WIDE, build_ts_ms=4, claim_check=store)
    update = RowChange(WIDE, Op.UPDATE, 3 << 18, (7, "x" * 2000), (7, "y" * 2000))
    message = encoder.encode_row(update)
    assert message.diverted
    [key_only] = decode_record(decoder_for("open-protocol"), message.key, message.value)
    assert isinstance(key_only, DecodedRow) and key_only.op is Op.INSERT
    decoder = decoder_for("open-protocol", DecoderSettings(claim_check_loader=store.load))
    [row] = decode_record(decoder, message.key, message.value)
    assert isinstance(row, DecodedRow) and row.op is Op.UPDATE
    assert row.old == {"id": 7, "payload": "y" * 2000}

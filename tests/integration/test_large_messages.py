"""A row above max-message-bytes through Spark and the broker, for simple JSON, simple Avro
and canal-json: `none` fails the write naming table, key and size and leaves no
watermark; `handle-key-only` sends the key columns only; `claim-check` stores the full
message under a file:// directory and the decoders follow the location back to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ticdc_sink import cli
from ticdc_sink.claim_check import read_claim_check
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration

LIMIT = 10_000
HUGE = "h" * 50_000
ROWS = [(1, "small one"), (2, HUGE), (3, "small three")]

PROTOCOLS = {
    "simple-json": {"protocol": "simple"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "canal-json": {"protocol": "canal-json", "enable-tidb-extension": "true"},
}


def decoder(kind: str, **claim: Any) -> Any:
    if kind == "canal-json":
        return CanalJsonDecoder(**claim)
    encoding = "avro" if kind == "simple-avro" else "json"
    return SimpleDecoder(encoding_format=encoding, **claim)


def save(spark: Any, broker: Any, topic: str, kind: str, **options: str) -> None:
    df = spark.createDataFrame(ROWS, "id bigint, payload string").coalesce(1)
    writer = (
        df.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("database", "db")
        .option("table", "big")
        .option("primary-key", "id")
        .option("max-message-bytes", str(LIMIT))
    )
    for name, value in {**PROTOCOLS[kind], **options}.items():
        writer = writer.option(name, value)
    writer.save()


def events(broker: Any, topic: str, dec: Any) -> list[Any]:
    return [dec.decode_message(r.key, r.value) for r in broker.consume_all(topic)]


def rows(decoded: list[Any]) -> list[DecodedRow]:
    return [e for e in decoded if isinstance(e, DecodedRow)]


@pytest.mark.parametrize("kind", PROTOCOLS)
def test_none_fails_naming_table_key_and_size_and_sends_no_watermark(spark, broker, topics, kind):
    topic = topics(f"large_none_{kind.replace('-', '_')}")
    broker.create_topic(topic, 1)
    with pytest.raises(Exception) as failure:
        save(spark, broker, topic, kind)
    text = str(failure.value)
    assert "MessageTooLargeError" in text
    assert "message for table db.big key id=2 is " in text
    assert f"above max-message-bytes {LIMIT}" in text
    assert not [e for e in events(broker, topic, decoder(kind)) if isinstance(e, DecodedWatermark)]


@pytest.mark.parametrize("kind", PROTOCOLS)
def test_handle_key_only_sends_the_key_columns(spark, broker, topics, kind):
    topic = topics(f"large_key_{kind.replace('-', '_')}")
    broker.create_topic(topic, 1)
    save(spark, broker, topic, kind, **{"large-message-handle-option": "handle-key-only"})
    decoded = events(broker, topic, decoder(kind))
    assert isinstance(decoded[-1], DecodedWatermark)
    found = rows(decoded)
    assert [(r.data, r.handle_key_only) for r in found] == [
        ({"id": 1, "payload": "small one"}, False),
        ({"id": 2}, True),
        ({"id": 3, "payload": "small three"}, False),
    ]


@pytest.mark.parametrize("kind", PROTOCOLS)
@pytest.mark.parametrize("raw", [False, True], ids=["wrapped", "raw"])
def test_claim_check_stores_the_row_and_the_decoder_follows_it(
    spark, broker, topics, kind, raw, tmp_path: Path, capsys
):
    topic = topics(f"large_claim_{kind.replace('-', '_')}_{int(raw)}")
    broker.create_topic(topic, 1)
    store = tmp_path / "claim check"
    save(
        spark,
        broker,
        topic,
        kind,
        **{
            "large-message-handle-option": "claim-check",
            "claim-check-storage-uri": store.as_uri(),
            "claim-check-raw-value": str(raw).lower(),
        },
    )
    (stored,) = list(store.iterdir())
    location = f"file://{store}/{stored.name}"
    plain = rows(events(broker, topic, decoder(kind)))
    assert plain[1].data == {"id": 2} and plain[1].claim_check_location == location
    # simple marks the claim-check message handleKeyOnly too; canal-json does not.
    assert plain[1].handle_key_only is kind.startswith("simple")
    full = rows(
        events(
            broker,
            topic,
            decoder(kind, claim_check_loader=read_claim_check, claim_check_raw_value=raw),
        )
    )
    assert [r.data for r in full] == [
        {"id": 1, "payload": "small one"},
        {"id": 2, "payload": HUGE},
        {"id": 3, "payload": "small three"},
    ]
    assert full[1].claim_check_location == location and full[1].commit_ts == plain[1].commit_ts
    if kind == "canal-json" and not raw:
        capsys.readouterr()
        argv = ["decode", "--bootstrap-servers", broker.bootstrap, "--topic", topic]
        cli.main([*argv, "--protocol", kind, "--follow-claim-check"])
        out = capsys.readouterr().out
        assert f"(claim check {location})" in out and HUGE[:100] in out

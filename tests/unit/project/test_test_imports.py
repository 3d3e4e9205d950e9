"""What the tests may import: helpers come from tests/support, never from a sibling test
module (a test module's names are its own, and importing one runs its module-level code
and drags its tests along) nor from benchmarks/ (a script folder, reached only through
sys.path). Checked with `ast` over every Python file under tests/, as
tests/unit/project/test_layering.py checks the package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import paths

TESTS = paths.TESTS
BENCHMARKS = TESTS.parent / "benchmarks"
# Modules a benchmark script imports as siblings (benchmarks/ on sys.path).
BENCHMARK_MODULES = frozenset(p.stem for p in BENCHMARKS.glob("*.py"))
# Test modules live here; tests/support and the conftest are what tests may share.
TEST_PACKAGES = ("tests.unit", "tests.integration", "tests.interop")


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "golden" not in p.relative_to(TESTS).parts)


def forbidden_imports(source: str) -> list[str]:
    """The imports of `source` (a test file's text) that reach a test module or
    benchmarks/, and every use of `sys.path`, as `line: what`, in line order."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: `from . import test_x`, `from .test_x import ...`
                found.append((node.lineno, "relative import"))
                continue
            module = node.module or ""
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "path"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            found.append((node.lineno, "sys.path"))
        for name in names:
            top = name.split(".")[0]
            if name.startswith(TEST_PACKAGES) and name not in TEST_PACKAGES:
                found.append((node.lineno, f"{name} (a test module)"))
                break
            if top == "benchmarks" or top in BENCHMARK_MODULES:
                found.append((node.lineno, f"{name} (benchmarks/)"))
                break
    return [f"{line}: {what}" for line, what in sorted(found)]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(TESTS)))
def test_tests_import_helpers_from_support_only(path: Path) -> None:
    assert forbidden_imports(path.read_text()) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from tests.unit.test_writer import FakeProducer", ["1: tests.unit.test_writer"]),
        ("from tests.unit import test_codec_avro as codec", ["1: tests.unit.test_codec_avro"]),
        ("import tests.integration.test_cli", ["1: tests.integration.test_cli"]),
        ("from .test_writer import FakeProducer", ["1: relative import"]),
        (
            "import sys\nsys.path.insert(0, 'benchmarks')\nimport bench_write",
            ["2: sys.path", "3: bench_write"],
        ),
        ("from _common import sink_options", ["1: _common (benchmarks/)"]),
        ("from benchmarks.bench_encode import make_batches", ["1: benchmarks.bench_encode"]),
        ("from tests.support.fake_producer import FakeProducer", []),
        ("import tests.unit", []),
    ],
)
def test_the_check_finds_each_way_in(source: str, expected: list[str]) -> None:
    assert [f.split(" (")[0] for f in forbidden_imports(source)] == [
        e.split(" (")[0] for e in expected
    ]

"""Where the repository's files are, for tests wherever they sit in tests/: one place
instead of `Path(__file__).parents[n]` counted from each test module's depth."""

from __future__ import annotations

from pathlib import Path

#: The repository's root: pyproject.toml, README.md, docs/, benchmarks/.
ROOT = Path(__file__).resolve().parents[2]
#: The package's sources.
PACKAGE = ROOT / "ticdc_sink"
#: The documentation site's sources.
DOCS = ROOT / "docs"
#: The test suite.
TESTS = ROOT / "tests"
#: Golden files from TiCDC's own tests and docs, one folder per protocol or feature.
GOLDEN = TESTS / "golden"

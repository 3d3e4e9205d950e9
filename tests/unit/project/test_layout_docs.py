"""The module maps stay true: the architecture page's "Layout" section and
CONTRIBUTING.md's "Where things live" name every module and package of `ticdc_sink`, and
every protocol package of `ticdc_sink.codec`, so neither can miss a module added later."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support import paths

ROOT = paths.ROOT
PACKAGE = paths.PACKAGE


def _modules() -> list[str]:
    """`name.py` for each module of the package, `name/` for each subpackage."""
    found = [p.name for p in PACKAGE.glob("*.py")]
    found += [f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()]
    return sorted(found)


def _protocols() -> list[str]:
    codec = PACKAGE / "codec"
    return sorted(p.name for p in codec.iterdir() if (p / "__init__.py").exists())


def _section(path: Path, heading: str) -> str:
    """The text of the `## heading` section of a Markdown file."""
    text = path.read_text()
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match is not None, f"{path.name} has no section {heading!r}"
    return match.group(1)


MAPS = {
    "docs/design/architecture.md": _section(ROOT / "docs/design/architecture.md", "Layout"),
    "CONTRIBUTING.md": _section(ROOT / "CONTRIBUTING.md", "Where things live"),
}


@pytest.mark.parametrize("document", sorted(MAPS))
def test_the_map_names_every_module(document: str) -> None:
    missing = [name for name in _modules() if name not in MAPS[document]]
    assert missing == [], f"{document} does not name {missing}"


@pytest.mark.parametrize("document", sorted(MAPS))
def test_the_map_names_every_protocol_package(document: str) -> None:
    missing = [name for name in _protocols() if name not in MAPS[document]]
    assert missing == [], f"{document} does not name {missing}"


def _subpackages() -> list[Path]:
    return sorted(init.parent for init in PACKAGE.rglob("__init__.py") if init.parent != PACKAGE)


@pytest.mark.parametrize(
    "package", _subpackages(), ids=lambda p: str(p.relative_to(PACKAGE)).replace("/", ".")
)
def test_a_package_docstring_names_each_of_its_modules(package: Path) -> None:
    # A subpackage's docstring is its map (`name.py` or `name/`, or `name` in backticks);
    # the top-level package's maps are README's and CONTRIBUTING's, checked above.
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    names = {p.stem: p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    names |= {p.name: f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").exists()}
    missing = sorted(
        file for name, file in names.items() if file not in doc and f"`{name}`" not in doc
    )
    assert missing == [], f"the docstring of {package.relative_to(ROOT)} does not name {missing}"

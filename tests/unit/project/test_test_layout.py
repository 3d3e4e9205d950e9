"""The unit tests' folders mirror the package's: the tests of `ticdc_sink/read/` are in
`tests/unit/read/`, of `ticdc_sink/codec/simple/` in `tests/unit/codec/simple/`, so a
module's tests are found where the module is. `tests/unit/project/` holds the checks of
the repository itself (layering, docs, packaging, the test helpers)."""

from __future__ import annotations

from pathlib import Path

from tests.support import paths

UNIT = paths.TESTS / "unit"
#: The folder of checks that are about the repository, not one module.
PROJECT = UNIT / "project"


def _folders() -> list[Path]:
    return sorted(
        p for p in UNIT.rglob("*") if p.is_dir() and p.name != "__pycache__" and p != PROJECT
    )


def test_every_unit_test_folder_is_a_package_folder() -> None:
    strays = [
        str(folder.relative_to(UNIT))
        for folder in _folders()
        if not (paths.PACKAGE / folder.relative_to(UNIT) / "__init__.py").is_file()
    ]
    assert strays == [], f"no ticdc_sink package is at these folders' paths: {strays}"


def test_every_unit_test_folder_is_a_python_package() -> None:
    # Without __init__.py, two folders' test_decoder.py would be one module to pytest.
    missing = [
        str(folder.relative_to(UNIT))
        for folder in [*_folders(), PROJECT]
        if not (folder / "__init__.py").is_file()
    ]
    assert missing == []


def test_every_unit_test_folder_holds_tests() -> None:
    empty = [str(f.relative_to(UNIT)) for f in _folders() if not any(f.glob("test_*.py"))]
    assert empty == []

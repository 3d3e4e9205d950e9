"""The scripts of examples/ as modules, so that a test calls an example's
`main(spark, bootstrap_servers, topic)` in the run's Spark session (a subprocess per
example would start a Spark of its own each time)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

__all__ = ["EXAMPLES", "load"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    """`examples/<name>.py`, imported."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

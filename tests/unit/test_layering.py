"""Every module imports only from the modules above it (style guide §1), checked with ast."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ticdc_sink"

_CODEC = {"errors", "gotext", "tso", "schema", "events", "config", "codec"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "gotext": set(),
    "tso": {"errors"},
    "schema": {"errors", "gotext", "tso"},
    "events": {"errors", "gotext", "tso", "schema"},
    "routing": {"errors", "gotext", "schema", "events"},
    "config": {"errors", "schema", "routing"},
    "codec": _CODEC,
    "registry": {"errors", "config"},
    "producer": {"errors", "config"},
    "claim_check": {"errors", "config"},
    "state": {"errors", "tso"},
    "order_check": {"errors", "schema"},
    "writer": {
        "errors",
        "tso",
        "schema",
        "events",
        "routing",
        "config",
        "codec",
        "producer",
        "registry",
        "schema_change",
        "claim_check",
        "order_check",
    },
    "schema_change": {"errors", "schema"},
    "datasource": {"errors", "tso", "config", "schema", "state", "writer", "producer"},
    "decode": {"errors", "gotext", "tso", "schema", "events", "codec", "decode"},
    "cli": {
        "errors",
        "tso",
        "schema",
        "events",
        "routing",
        "config",
        "codec",
        "decode",
        "producer",
        "schema_change",
        "_local_broker",
        "claim_check",
    },
    "_local_broker": {"errors"},
    "__init__": {"errors", "datasource"},
    "__main__": {"cli"},
}


def _layer(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
            if node.module == "ticdc_sink":
                names = [f"ticdc_sink.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("ticdc_sink."):
                found.add(name.split(".")[1])
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_follow_the_layering(path: Path) -> None:
    layer = _layer(path)
    assert layer in ALLOWED, f"{layer} is not in the layering table; add it"
    extra = _imports(path) - ALLOWED[layer] - {layer}
    assert not extra, f"{path.name} imports {sorted(extra)}, not allowed for layer {layer}"


def test_every_module_declares_all() -> None:
    for path in MODULES:
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), f"{path} has no module docstring"
        names = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        assert "__all__" in names, f"{path} declares no __all__"

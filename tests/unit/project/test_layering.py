"""Every module imports only from the modules above it (style guide §1), checked with ast:
the layer table below; no import circle anywhere in the package, lazy imports in
functions included; no `_private` name taken from another module; inside each protocol
package, the row and the column-wise paths never import each other, and on the read side
the decoder offers its column-wise run, which never imports the decoder (one way); the
codec never imports config, and no module is imported by a name held in a string; only
the Spark-facing modules import pyspark, and nothing below them loads it."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import paths

PACKAGE = paths.PACKAGE

# The codec never imports config: CodecConfig and the values of its options live in the
# codec (codec/config.py, codec/choices.py), built with the option machinery (options).
# A protocol package holds its decoder too, which builds on the decoding contract
# (`decode`); only its decoder modules import it (test_only_decoders_import_decode).
_CODEC = {
    "errors",
    "gotext",
    "tso",
    "schema",
    "events",
    "codec",
    "ticdc_version",
    "options",
    "redaction",
    "decode",
}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "gotext": set(),
    "ticdc_settings": set(),
    "ticdc_version": set(),
    "redaction": set(),
    # How options are declared, parsed and reported, for the codec's config and the sink's.
    "options": {"errors", "redaction", "ticdc_version"},
    "tso": {"errors"},
    "schema": {"errors", "tso"},
    "ddl": {"errors", "gotext", "schema"},
    # the event model; how a DataFrame's columns become events is input_batch's, and how
    # each column's values convert, convert's
    "events": {"errors", "schema"},
    "convert": {"errors", "gotext", "schema", "events"},
    "input_batch": {"errors", "tso", "schema", "events", "convert"},
    "goregex": set(),
    "table_filter": {"errors", "goregex", "gotext"},
    "routing": {"errors", "gotext", "schema", "events", "table_filter"},
    "sql_expr": {"errors"},
    "row_filter": {"errors", "events", "input_batch", "table_filter", "sql_expr"},
    "column_selector": {"errors", "schema", "table_filter"},
    # config builds on the codec (CodecConfig, the protocols' specs), the option machinery
    # (options) and the masking of secrets (redaction); the codec never imports config.
    "config": {
        "errors",
        "schema",
        "events",
        "input_batch",
        "routing",
        "row_filter",
        "column_selector",
        "table_filter",
        "codec",
        "ticdc_settings",
        "ticdc_version",
        "options",
        "redaction",
    },
    "codec": _CODEC,
    "registry": {"errors", "config"},
    # Kafka: what every librdkafka client shares, the settings, topic admin, sending.
    "kafka_client": set(),
    "kafka_settings": {"errors", "config", "kafka_client", "redaction"},
    "kafka_topics": {"errors", "config", "kafka_client"},
    "producer": {"errors", "config", "kafka_client", "kafka_settings", "kafka_topics"},
    "claim_check": {"errors", "redaction"},
    "checkpoint": {"errors"},
    "state": {"errors", "tso", "checkpoint"},
    "order_check": {"errors", "schema"},
    "writer": {
        "errors",
        "tso",
        "schema",
        "ddl",
        "events",
        "input_batch",
        "routing",
        "config",
        "codec",
        "producer",
        "registry",
        "schema_change",
        "claim_check",
        "order_check",
        "row_filter",
        "column_selector",
        "state",
        "checkpoint",
    },
    "schema_change": {"errors", "schema"},
    # The Spark glue: it reads the options, warns as their owners say (codec, config,
    # input_batch, kafka_settings, read), and hands the rest to the writer and the reader.
    "datasource": {
        "errors",
        "tso",
        "codec",
        "input_batch",
        "config",
        "schema",
        "spark_arrow",
        "state",
        "checkpoint",
        "writer",
        "producer",
        "kafka_settings",
        "read",
    },
    "decode": {"errors", "gotext", "tso", "schema", "ddl", "events", "codec", "decode"},
    # The read side: Kafka records back into change rows; Spark only in datasource. It
    # reads the writer's registry options (config), looks avro schemas up (registry) and
    # claim-check files (claim_check).
    "read": {
        "errors",
        "schema",
        "ddl",
        "events",
        "config",
        "codec",
        "decode",
        "kafka_client",
        "registry",
        "claim_check",
        "read",
        "redaction",
        "ticdc_version",
    },
    "cli": {
        "errors",
        "tso",
        "schema",
        "ddl",
        "events",
        "input_batch",
        "routing",
        "config",
        "codec",
        "decode",
        "kafka_settings",
        "kafka_topics",
        "redaction",
        "schema_change",
        "_local_broker",
        "claim_check",
        "registry",
        "state",
        "read",
        "column_selector",
        # check / dry-run show what the writer does: its plan, and the filters it applies.
        "writer",
        "row_filter",
    },
    "_local_broker": {"errors"},
    # Spark's types and rows as Arrow and back, for the data source.
    "spark_arrow": set(),
    # The mirror: a change stream applied to Delta / Iceberg tables. It reads the batch's
    # resolved ts from the query's offset log (checkpoint, the read side's offset format).
    "mirror": {"errors", "checkpoint", "read"},
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


# A protocol's column-wise read path (`codec/<p>/read_columns.py`) builds the read side's
# output: it takes the read's record and row model, and nothing else of the read side.
READ_COLUMNS = "read_columns"
READ_MODEL = {"ticdc_sink.read", "ticdc_sink.read.record", "ticdc_sink.read.rows"}


def _allowed(path: Path) -> set[str]:
    allowed = ALLOWED[_layer(path)]
    if _layer(path) == "codec" and path.stem == READ_COLUMNS:
        allowed = allowed | {"read"}
    return allowed


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_follow_the_layering(path: Path) -> None:
    layer = _layer(path)
    assert layer in ALLOWED, f"{layer} is not in the layering table; add it"
    extra = _imports(path) - _allowed(path) - {layer}
    assert not extra, f"{path.name} imports {sorted(extra)}, not allowed for layer {layer}"


def test_a_column_wise_read_path_takes_only_the_read_model() -> None:
    paths = sorted((PACKAGE / "codec").rglob(f"{READ_COLUMNS}.py"))
    assert paths, "no protocol has a column-wise read path; is the check broken?"
    for path in paths:
        name = _module_name(path)
        taken: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                taken |= {t for t in _targets(name, node) if t.startswith("ticdc_sink.read")}
        assert taken <= READ_MODEL, f"{name} imports {sorted(taken - READ_MODEL)}"


def test_a_column_wise_read_path_never_imports_its_decoder() -> None:
    # One way on the read side, as the write side's row and column-wise paths never
    # import each other: the decoder offers its column-wise run (`column_run`,
    # `record_run`, a lazy import, since the run loads Arrow and the read's rows) and
    # hands it what it needs (a lookup, a parser per column); the run never imports the
    # decoder, TYPE_CHECKING imports included (a type checker's circle is one too).
    paths = sorted((PACKAGE / "codec").rglob(f"{READ_COLUMNS}.py"))
    assert paths, "no protocol has a column-wise read path; is the check broken?"
    for path in paths:
        decoder = f"{_module_name(path).rsplit('.', 1)[0]}.decoder"
        imported = {
            t
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for t in _targets(_module_name(path), node)
        }
        assert decoder not in imported, f"{path.relative_to(PACKAGE)} imports {decoder}"


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


# --- import circles --------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


NAMES = {_module_name(p): p for p in MODULES}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run: at module level, and in functions and classes (a lazy
    import closes a circle as surely, only later); not those under `if TYPE_CHECKING:`,
    which run for the type checker alone."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            todo += node.orelse
        else:
            todo += ast.iter_child_nodes(node)


def _with_parents(name: str) -> set[str]:
    """A module and the packages importing it loads first."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(NAMES)


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The package modules an import statement loads.

    A module's own packages are being loaded already when it runs (Python initialises a
    package before its modules), so the parents an import loads on the way are no edge from
    a module inside them: a package `__init__` may import its own modules. A module that
    names its own package (`from ticdc_sink.mirror import start` in a module of it) does
    take that package's names and keeps the edge.
    """
    own = _with_parents(module) - {module}
    found: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            found |= (_with_parents(alias.name) - own) | ({alias.name} & set(NAMES))
        return found
    base = node.module or ""
    if node.level:  # relative import
        anchor = module.split(".")
        if NAMES[module].name != "__init__.py":
            anchor = anchor[:-1]
        anchor = anchor[: len(anchor) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    named = {f"{base}.{alias.name}" for alias in node.names} & set(NAMES)
    if len(named) < len(node.names):  # a name of `base` itself, not only its modules
        found |= {base} & set(NAMES)
    found |= _with_parents(base) - own
    for full in named:
        found |= _with_parents(full) - own
    return found


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in NAMES.items():
        tree = ast.parse(path.read_text())
        edges: set[str] = set()
        for node in _runtime_imports(tree):
            edges |= _targets(name, node)
        graph[name] = edges - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    # Every import that runs, lazy ones in functions included: a lazy import hides a
    # circle from Python's loader, not from a reader (the dispatch to decoders once sat in
    # `decode`, which the decoders import). Importing a module loads its packages first,
    # so those count as imports. `ticdc_sink.register`'s lazy import of the data source
    # (pyspark stays out of `import ticdc_sink`) closes none: no module takes a name of
    # the package `ticdc_sink` itself.
    circles = _circles(_import_graph())
    assert circles == [], "import circles: " + "; ".join(", ".join(c) for c in circles)


def test_the_import_graph_sees_lazy_imports_but_not_type_checking_ones() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ticdc_sink.read import scan\n"
        "else:\n    from ticdc_sink import tso\n"
        "def f():\n    from ticdc_sink.decode import sniff\n"
        "class C:\n    def g(self):\n        import ticdc_sink.schema\n"
    )
    found = {ast.unparse(node) for node in _runtime_imports(tree)}
    assert found == {
        "from typing import TYPE_CHECKING",
        "from ticdc_sink import tso",
        "from ticdc_sink.decode import sniff",
        "import ticdc_sink.schema",
    }


def test_a_package_may_import_its_own_modules() -> None:
    inner = ast.parse("from ticdc_sink.codec.simple.values import x").body[0]
    assert isinstance(inner, ast.ImportFrom)
    # a module of ticdc_sink.codec.simple importing a sibling: no edge to its packages
    assert _targets("ticdc_sink.codec.simple.encoder", inner) == {"ticdc_sink.codec.simple.values"}
    outer = ast.parse("from ticdc_sink.codec.simple import SimpleEncoder").body[0]
    assert isinstance(outer, ast.ImportFrom)
    # ... but naming its own package's names is an edge to that package
    assert "ticdc_sink.codec.simple" in _targets("ticdc_sink.codec.simple.encoder", outer)


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


# --- private names -----------------------------------------------------------------------

# (module, name) pairs allowed to cross a module line; empty, and it stays empty.
PRIVATE_ALLOWED: set[tuple[str, str]] = set()


def _private_uses(name: str, tree: ast.Module) -> Iterator[tuple[str, str]]:
    """(source module, private name) of every `from x import _y` and every `x._y` where x
    is a package module bound by an import."""
    modules: dict[str, str] = {}  # local name -> package module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module in NAMES:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in NAMES:
                    modules[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in NAMES and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and modules[node.value.id] != name
        ):
            yield modules[node.value.id], node.attr


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_crosses_a_module_line(path: Path) -> None:
    name = _module_name(path)
    uses = set(_private_uses(name, ast.parse(path.read_text()))) - PRIVATE_ALLOWED
    assert not uses, f"{name} takes private names {sorted(uses)}; make them public there"


def test_the_private_name_check_sees_both_forms() -> None:
    tree = ast.parse(
        "from ticdc_sink.codec.mysql import _KINDS, value_kind\n"
        "from ticdc_sink.codec import mysql\n"
        "x = mysql._KINDS\n"
    )
    assert set(_private_uses("ticdc_sink.cli", tree)) == {("ticdc_sink.codec.mysql", "_KINDS")}


# --- pyspark ----------------------------------------------------------------------------

# The Spark-facing modules: the only ones that import pyspark. The writer's `table` reads
# a DataFrame's schema (pyspark.sql.types); the writer modules that build on it load it.
# The CLI's: dry-run and check plan over a Spark schema (planning), the demo runs Spark.
# `spark_arrow`: Spark's types and rows as Arrow and back (the data source's).
SPARK_MODULES = {
    "ticdc_sink.datasource",
    "ticdc_sink.spark_arrow",
    "ticdc_sink.cli.planning",
    "ticdc_sink.cli.demo",
    "ticdc_sink.writer.table",
}
SPARK_PACKAGES = ("ticdc_sink.mirror",)


def _is_spark_module(name: str) -> bool:
    return name in SPARK_MODULES or name.startswith(SPARK_PACKAGES)


def _imports_pyspark(tree: ast.Module) -> bool:
    """Whether any import of the module (lazy ones included) names pyspark."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "pyspark" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pyspark":
            return True
    return False


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_spark_facing_modules_import_pyspark(path: Path) -> None:
    name = _module_name(path)
    if not _is_spark_module(name):
        assert not _imports_pyspark(ast.parse(path.read_text())), (
            f"{name} imports pyspark; only {sorted(SPARK_MODULES)} and {SPARK_PACKAGES} may"
        )


def test_the_pyspark_check_sees_both_forms() -> None:
    assert _imports_pyspark(ast.parse("import pyspark.sql.types as T"))
    assert _imports_pyspark(ast.parse("def f():\n    from pyspark.sql import SparkSession"))
    assert not _imports_pyspark(ast.parse("from ticdc_sink.writer.table import spark_to_mysql"))


def test_protocol_code_config_and_the_read_side_load_no_pyspark() -> None:
    # The encoders, decoders, config, the read side and every module below them know
    # nothing of Spark, and none loads a Spark-facing module (as `ticdc_sink.schema` did
    # when it held the Spark mapping). The writer's plan, task and commit load pyspark
    # through `writer.table`, where the table of a DataFrame comes from; the CLI's modules
    # load their package, whose dry-run and check plan over a Spark schema (cli.planning).
    names = sorted(
        name
        for name in NAMES
        if name != "ticdc_sink.__main__"
        and not _is_spark_module(name)
        and not name.startswith(("ticdc_sink.writer", "ticdc_sink.cli"))
    )
    code = (
        f"import sys, {', '.join(names)}; "
        "print(sorted(m for m in sys.modules if m.startswith('pyspark')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert ast.literal_eval(loaded) == []


# --- inside the codec ----------------------------------------------------------------------

PROTOCOLS = sorted(p.name for p in (PACKAGE / "codec").iterdir() if (p / "__init__.py").exists())
ROW_PATH = {"row", "json_row", "avro_row"}
BATCH_PATH = {"batch", "json_batch", "avro_batch"}
# A protocol built on others (debezium-avro: Debezium's schemas and values in Avro's
# framing) imports their shared lower modules, never their row or column-wise paths.
BUILT_ON = {
    "debezium_avro": {
        "ticdc_sink.codec.debezium.schema",
        "ticdc_sink.codec.debezium.values",
        "ticdc_sink.codec.avro.framing",
        "ticdc_sink.codec.avro.schema",
        # the decoder: Debezium's decoder over Avro's Confluent framing
        "ticdc_sink.codec.debezium.decoder",
        "ticdc_sink.codec.avro.confluent",
    }
}


def _codec_imports(path: Path) -> set[str]:
    """The ticdc_sink.codec modules a module imports (any import, lazy ones included)."""
    found: set[str] = set()
    name = _module_name(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= {t for t in _targets(name, node) if t.startswith("ticdc_sink.codec.")}
    return found


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_row_and_column_wise_paths_never_import_each_other(protocol: str) -> None:
    package = f"ticdc_sink.codec.{protocol}"
    for path in sorted((PACKAGE / "codec" / protocol).glob("*.py")):
        stem = path.stem
        imported = {t.removeprefix(package + ".") for t in _codec_imports(path)}
        if stem in ROW_PATH:
            assert not imported & BATCH_PATH, f"{path.name} imports the column-wise path"
        elif stem in BATCH_PATH:
            assert not imported & ROW_PATH, f"{path.name} imports the row path"
        elif stem not in ("encoder", "__init__"):  # shared lower modules import neither
            # (the package re-exports the encoder's names lazily)
            assert not imported & (ROW_PATH | BATCH_PATH), f"{path.name} imports a path"
        others = {
            t for t in _codec_imports(path) if t.count(".") >= 3 and t.split(".")[2] != protocol
        }
        others = {t for t in others if t.split(".")[2] in PROTOCOLS} - BUILT_ON.get(protocol, set())
        assert not others, f"{protocol}/{path.name} imports another protocol: {sorted(others)}"


# The modules of a protocol package that read messages back: they, and only they, import
# the decoding contract (`ticdc_sink.decode`); the encoders know nothing of decoding.
DECODER_MODULES = {"decoder", READ_COLUMNS}


def test_only_decoders_import_decode() -> None:
    importers = sorted(
        str(path.relative_to(PACKAGE))
        for path in (PACKAGE / "codec").rglob("*.py")
        if "decode" in _imports(path)
    )
    assert importers, "no decoder imports the decoding contract; is the check broken?"
    # codec/spec.py types a spec's `build_decoder` (the Decoder it returns), for the
    # type checker only; codec/protocols.py dispatches to the decoders (`decoder_for`,
    # with the contract's `DecoderSettings`).
    others = [p for p in importers if Path(p).stem not in DECODER_MODULES]
    others = [p for p in others if p not in ("codec/spec.py", "codec/protocols.py")]
    assert others == [], f"{others} import ticdc_sink.decode; only decoder modules may"


# What the decoding contract (`ticdc_sink.decode`) may take from `ticdc_sink.codec`: the
# protocol list and the shared modules, never a protocol package (the decoders import the
# contract; a decoder by name is `codec.protocols.decoder_for`, beside the protocol list).
# `sniff` knows open-protocol's key version, a fact of its wire format.
DECODE_TAKES_FROM_PROTOCOLS = {
    "ticdc_sink.decode.sniff": {"ticdc_sink.codec.open_protocol.message"}
}


@pytest.mark.parametrize("path", sorted((PACKAGE / "decode").glob("*.py")), ids=lambda p: p.name)
def test_the_decoding_contract_imports_no_protocol(path: Path) -> None:
    name = _module_name(path)
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= _targets(name, node)
    protocols = {t for t in imported if t.count(".") >= 2 and t.split(".")[2] in PROTOCOLS}
    for allowed in DECODE_TAKES_FROM_PROTOCOLS.get(name, set()):
        protocols -= _with_parents(allowed)
    assert protocols == set(), f"{name} imports protocol modules {sorted(protocols)}"


def test_codec_never_imports_config() -> None:
    # config builds on the codec (CodecConfig, the protocols' specs), never the other way:
    # no import of ticdc_sink.config in codec/, lazy and TYPE_CHECKING ones included.
    found = []
    for path in sorted((PACKAGE / "codec").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                targets = _targets(_module_name(path), node)
                if any(
                    t == "ticdc_sink.config" or t.startswith("ticdc_sink.config.") for t in targets
                ):
                    found.append(str(path.relative_to(PACKAGE)))
    assert found == []


def test_no_module_is_imported_by_name() -> None:
    # Protocols are dispatched through their specs' entry points, imported plainly: no
    # module is looked up by a name held in a string.
    found = [
        str(path.relative_to(PACKAGE))
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "import_module"
    ]
    assert found == []


# --- protocol names stay in codec/ -------------------------------------------------------


def _protocol_names() -> set[str]:
    from ticdc_sink.codec.protocols import protocol_specs

    return {name for spec in protocol_specs() for name in spec.names()}


def _protocol_checks(tree: ast.Module, names: set[str]) -> Iterator[str]:
    """The places a module decides by a protocol's name instead of its traits: a
    comparison of something named *protocol* with a protocol name, `Protocol.X`,
    `DDL_PROTOCOLS`, and a `match` on a protocol."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            text = ast.unparse(node)
            constants = {
                c.value
                for c in ast.walk(node)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
            if "protocol" in text.lower() and constants & names:
                yield text
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "Protocol":
                yield ast.unparse(node)
        elif isinstance(node, ast.Name) and node.id == "DDL_PROTOCOLS":
            yield node.id
        elif isinstance(node, ast.Match) and "protocol" in ast.unparse(node.subject).lower():
            yield f"match {ast.unparse(node.subject)}"


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if "codec" not in p.relative_to(PACKAGE).parts],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_protocol_name_decides_outside_codec(path: Path) -> None:
    # A protocol's traits live in its codec/<protocol>/spec.py; everything else reads
    # them (`CodecConfig.spec`), so that a new protocol is one package and one line.
    found = list(_protocol_checks(ast.parse(path.read_text()), _protocol_names()))
    assert not found, f"{path.name} decides by protocol name: {found}; use ProtocolSpec"


def test_the_protocol_name_check_sees_each_form() -> None:
    tree = ast.parse(
        'if config.protocol == "simple": pass\n'
        'if options.protocol in ("avro", "flat-avro"): pass\n'
        "if c.protocol is Protocol.AVRO: pass\n"
        "if c.protocol in DDL_PROTOCOLS: pass\n"
        "match config.protocol:\n    case _: pass\n"
        'if encoding_format == "avro": pass\n'
    )
    found = set(_protocol_checks(tree, _protocol_names()))
    assert found == {
        "config.protocol == 'simple'",
        "options.protocol in ('avro', 'flat-avro')",
        "Protocol.AVRO",
        "DDL_PROTOCOLS",
        "match config.protocol",
    }


def test_class_names_are_unique() -> None:
    # Two classes of one name (two AvroBatchEncoders) make tracebacks and reviews lie.
    seen: dict[str, str] = {}
    clashes = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                where = _module_name(path)
                if node.name in seen:
                    clashes.append((node.name, seen[node.name], where))
                seen.setdefault(node.name, where)
    assert clashes == []


# --- inside the writer ---------------------------------------------------------------------

# Who may import whom inside ticdc_sink/writer/: the task loop and the driver's commit
# both build on the plan and the report, never on each other; the task loop keeps its
# BOOTSTRAP schedule in `bootstrap`; the plan builds its table template in `table`; what
# the configuration's rules do to a table (topic, dispatcher, columns, filters) is `rules`;
# `checkpointing` plans a batch from the checkpoint location (the plan, and the DDL the
# commit module announces), for the data source.
WRITER_ALLOWED = {
    "bootstrap": set(),
    "plan": {"rules", "table"},
    "report": set(),
    "rules": set(),
    "table": set(),
    "task": {"bootstrap", "plan", "report", "rules"},
    "commit": {"plan", "report", "rules"},
    "checkpointing": {"commit", "plan"},
}


@pytest.mark.parametrize("stem", sorted(WRITER_ALLOWED))
def test_writer_modules_build_on_plan_and_report_only(stem: str) -> None:
    path = PACKAGE / "writer" / f"{stem}.py"
    name = _module_name(path)
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= {
                t.removeprefix("ticdc_sink.writer.")
                for t in _targets(name, node)
                if t.startswith("ticdc_sink.writer.")
            }
    assert imported <= WRITER_ALLOWED[stem], f"writer/{stem}.py imports {sorted(imported)}"


def test_every_writer_module_is_in_the_writer_table() -> None:
    stems = {p.stem for p in (PACKAGE / "writer").glob("*.py")} - {"__init__"}
    assert stems == set(WRITER_ALLOWED)


# --- inside the CLI ------------------------------------------------------------------------

# Who may import whom inside ticdc_sink/cli/: the package wires the parser to one module per
# command; commands share `arguments` (and dry-run and check `planning`), never each other,
# but the demo prints its topic as `decode` does.
CLI_ALLOWED = {
    "__init__": {"arguments", "check", "decode", "demo", "dry_run", "reports"},
    "arguments": set(),
    "planning": {"arguments"},
    "decode": {"arguments"},
    "dry_run": {"arguments", "planning", "decode"},
    "check": {"arguments", "planning"},
    "reports": {"arguments"},
    "demo": {"arguments", "decode"},
}


@pytest.mark.parametrize("stem", sorted(CLI_ALLOWED))
def test_cli_modules_build_on_arguments_and_planning(stem: str) -> None:
    path = PACKAGE / "cli" / f"{stem}.py"
    name = _module_name(path)
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= {
                t.removeprefix("ticdc_sink.cli.")
                for t in _targets(name, node)
                if t.startswith("ticdc_sink.cli.")
            }
    assert imported <= CLI_ALLOWED[stem], f"cli/{stem}.py imports {sorted(imported)}"


def test_every_cli_module_is_in_the_cli_table() -> None:
    assert {p.stem for p in (PACKAGE / "cli").glob("*.py")} == set(CLI_ALLOWED)


def test_nothing_in_the_package_imports_the_cli() -> None:
    # The CLI is an entry point (`ticdc-sink`, `python -m ticdc_sink`): the library never
    # depends on it.
    users = sorted(
        layer for layer, allowed in ALLOWED.items() if "cli" in allowed and layer != "__main__"
    )
    assert users == []

"""The docs' generated parts (tests/support/doc_pages.py): every generator runs and covers
what the code declares, every page's marker names one, and the site's build hook
(docs/hooks.py) renders them."""

from __future__ import annotations

import importlib.util
import re
from types import SimpleNamespace

import pytest

from tests.support import paths
from tests.support.doc_pages import (
    CLI_COMMANDS,
    GENERATED,
    MARKER,
    cli_help,
    expand,
    protocol_traits,
    runnable_blocks,
)
from tests.support.option_docs import read_options_table
from ticdc_sink.codec.protocols import protocol_specs
from ticdc_sink.read.options import READ_OPTIONS

DOCS = paths.DOCS
PAGES = sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_generator_renders_a_part(name: str) -> None:
    text = GENERATED[name]()
    assert text.strip() and "<!--" not in text


def test_every_marker_names_a_generator_and_every_generator_has_a_page() -> None:
    used = [m.group(1) for page in PAGES for m in MARKER.finditer(page.read_text())]
    assert sorted(set(used)) == sorted(GENERATED)
    # Only the read options are on two pages: their reference page and the reading guide.
    assert sorted(name for name in set(used) if used.count(name) > 1) == ["read-options"]
    # A marker spelt wrongly (not a whole line of the form) would stay an HTML comment.
    for page in PAGES:
        assert page.read_text().count("<!-- generated") == len(MARKER.findall(page.read_text()))


def test_an_unknown_part_names_the_page() -> None:
    with pytest.raises(KeyError, match=r"guides/x\.md: no generated part 'nope'"):
        expand("a\n<!-- generated: nope -->\nb", "guides/x.md")


def test_the_read_options_table_names_every_read_option_and_its_aliases() -> None:
    rows = read_options_table().splitlines()[2:]
    names = [re.findall(r"`([^`]+)`", row.split(" | ", 1)[0]) for row in rows]
    assert names == [[option.name, *option.aliases] for option in READ_OPTIONS]
    assert ["topic", "subscribe"] in names and ["failOnDataLoss"] in names


def test_the_traits_name_every_protocol() -> None:
    rows = protocol_traits().splitlines()[2:]
    assert [row.split(" | ", 1)[0] for row in rows] == [
        f"| `{spec.name}`" for spec in protocol_specs()
    ]


def test_the_cli_page_holds_every_commands_help() -> None:
    text = cli_help()
    listed = re.search(r"\{([a-z,-]+)\}", text).group(1)  # type: ignore[union-attr]
    assert tuple(listed.split(",")) == CLI_COMMANDS
    for command in CLI_COMMANDS:
        assert f"usage: ticdc-sink {command} [-h]" in text


def test_the_build_hook_expands_a_page() -> None:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/read-options.md"))
    out = hooks.on_page_markdown("# R\n\n<!-- generated: read-options -->\n", page=page)
    assert out == "# R\n\n" + read_options_table()


def test_runnable_markers_are_each_before_a_python_block() -> None:
    assert sum(len(runnable_blocks(page.read_text())) for page in PAGES) >= 4
    with pytest.raises(ValueError, match="not followed by"):
        runnable_blocks("<!-- runnable -->\n```bash\nls\n```\n")

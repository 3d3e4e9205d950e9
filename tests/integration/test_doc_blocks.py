"""The docs' runnable code blocks (a `<!-- runnable -->` line before a ```python fence) run
as they are against the run's Apache Kafka: each page's blocks in page order, in one
namespace holding the run's Spark session as `spark` and the brokers as
`bootstrap_servers`. A block checks its own result (an `assert`, as a reader would see
it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.doc_pages import runnable_blocks

pytestmark = pytest.mark.integration

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = [p for p in sorted(DOCS.rglob("*.md")) if runnable_blocks(p.read_text())]


def test_the_docs_have_runnable_blocks() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"getting-started.md", "guides/streaming.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_blocks_of_a_page_run(spark, broker, page: Path) -> None:
    namespace = {"spark": spark, "bootstrap_servers": broker.bootstrap}
    for number, code in enumerate(runnable_blocks(page.read_text()), 1):
        name = f"{page.relative_to(DOCS).as_posix()} block {number}"
        exec(compile(code, name, "exec"), namespace)

"""The site's build hook (mkdocs.yml `hooks`): each `<!-- generated: NAME -->` line of a
page becomes the part tests/support/doc_pages.py renders from the code, at every build."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # mkdocs loads this file by path, outside any package
    sys.path.insert(0, str(ROOT))

from tests.support.doc_pages import expand  # noqa: E402


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return expand(markdown, page.file.src_uri)

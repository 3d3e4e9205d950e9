"""The mirror guide shows the auto CDC pipeline that tests/pipelines/ runs, file by file
as it is (that test runs apart from CI; this check runs in every run)."""

from __future__ import annotations

from tests.support import paths

ROOT = paths.ROOT
PROJECT = ROOT / "examples" / "auto_cdc"
GUIDE = ROOT / "docs" / "guides" / "mirror.md"


def test_the_guide_shows_the_pipeline_the_test_runs() -> None:
    guide = GUIDE.read_text()
    for part in (PROJECT / "transformations" / "items.py", PROJECT / "spark-pipeline.yml"):
        assert part.read_text().strip() in guide, part

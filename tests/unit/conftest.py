"""Every unit test starts with an empty BOOTSTRAP schedule: the process's schedule outlives
a test, as it outlives a Spark task, and would otherwise make a test's BOOTSTRAPs depend on
which tests ran before it in the same process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ticdc_sink.writer.bootstrap import PROCESS_BOOTSTRAPS


@pytest.fixture(autouse=True)
def _empty_bootstrap_schedule() -> Iterator[None]:
    PROCESS_BOOTSTRAPS.clear()
    yield
    PROCESS_BOOTSTRAPS.clear()

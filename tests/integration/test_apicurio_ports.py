"""The test bed's registry starts on new ports when a port it chose was taken before it
bound it (a port found free is only free until some other process binds it: Spark, Kafka
and their clients take ports all the time, and two test runs on one machine do too)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.support import apicurio
from tests.support.apicurio import ApicurioRegistry

pytestmark = pytest.mark.integration


def test_the_registry_starts_again_when_a_port_it_chose_was_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # The first start gets a free HTTP port and the taken one for its management
        # interface (where the run of 2026-11-28 lost one); later starts, free ports.
        free_port = apicurio.free_port
        chosen: Iterator[int] = iter([free_port(), port])
        monkeypatch.setattr(apicurio, "free_port", lambda: next(chosen, None) or free_port())
        with ApicurioRegistry() as registry:
            assert port not in (registry.port, registry.management_port)
            assert registry.subjects() == []

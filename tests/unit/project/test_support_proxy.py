"""The fault proxy of the broker tests (tests/support/proxy.py), alone, in front of an
echo server on loopback."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from tests.support.proxy import FaultProxy, wait_until


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data)


class _EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture
def proxy() -> Iterator[FaultProxy]:
    server = _EchoServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    with FaultProxy(server.server_address[1]) as running:
        yield running
    server.shutdown()
    server.server_close()


def connect(proxy: FaultProxy) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    sock.settimeout(5)
    return sock


def echo(sock: socket.socket, data: bytes) -> bytes:
    sock.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def is_cut(sock: socket.socket) -> bool:
    """The peer closed: EOF or reset (the proxy closes both sockets)."""
    try:
        sock.sendall(b"x")
        return sock.recv(1) == b""
    except OSError:
        return True


def test_forwards_both_ways_and_counts(proxy: FaultProxy) -> None:
    with connect(proxy) as sock:
        payload = bytes(range(256)) * 1000
        assert echo(sock, payload) == payload
    assert proxy.connections == 1
    # The last chunk is counted just after it was passed on: the client may be first.
    wait_until(lambda: proxy.forwarded == 2 * len(payload), 5, what="the byte count")
    assert proxy.cuts == 0


def test_cut_closes_every_connection_and_new_ones_work(proxy: FaultProxy) -> None:
    first, second = connect(proxy), connect(proxy)
    assert echo(first, b"a") == b"a" and echo(second, b"b") == b"b"
    assert proxy.cut() == 2
    assert is_cut(first) and is_cut(second)
    with connect(proxy) as third:
        assert echo(third, b"again") == b"again"
    assert proxy.cuts == 1 and proxy.connections == 3
    first.close()
    second.close()


def test_cut_every_n_bytes(proxy: FaultProxy) -> None:
    proxy.cut_every(nbytes=10_000)
    cut_seen = 0
    for _ in range(6):
        with connect(proxy) as sock:
            echo(sock, b"x" * 6_000)  # 12 000 bytes forwarded: a cut falls in each round
            wait_until(lambda s=sock: is_cut(s), 5, what="the cut")
            cut_seen += 1
    assert cut_seen == 6 and proxy.cuts >= 5
    proxy.cut_every()
    with connect(proxy) as sock:
        assert echo(sock, b"y" * 30_000) == b"y" * 30_000  # no more cuts


def frame(body: bytes) -> bytes:
    """A Kafka protocol frame: a big-endian int32 size, then the body."""
    return len(body).to_bytes(4, "big") + body


def test_cut_each_connection_after_n_responses(proxy: FaultProxy) -> None:
    # The echo server answers each frame with the same frame: one response per request.
    proxy.cut_each_connection_after(2)
    for _ in range(3):
        with connect(proxy) as sock:
            assert echo(sock, frame(b"handshake")) == frame(b"handshake")
            # A frame whose size field and body arrive in pieces is one response.
            second = frame(b"x" * 70_000)
            sock.sendall(second[:2])
            sock.sendall(second[2:])
            got = b""
            while len(got) < len(second) and (chunk := sock.recv(65536)):
                got += chunk
            assert got == second
            wait_until(lambda s=sock: is_cut(s), 5, what="the cut after two responses")
    # The client can see the cut just before the proxy counts it.
    wait_until(lambda: proxy.cuts == 3, 5, what="three cuts")
    assert proxy.connections == 3
    # Two responses in one read: the second is passed on, what follows it is dropped.
    proxy.cut_each_connection_after(None)
    with connect(proxy) as sock:
        assert echo(sock, frame(b"a")) == frame(b"a")
        proxy.cut_each_connection_after(2)
        sock.sendall(frame(b"b") + frame(b"") + frame(b"c"))
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
        assert got == frame(b"b")
    wait_until(lambda: proxy.cuts == 4, 5, what="the fourth cut")
    proxy.cut_each_connection_after(None)
    with connect(proxy) as sock:
        for body in (b"1", b"2", b"3"):
            assert echo(sock, frame(body)) == frame(body)


def test_stall_holds_data_until_resume_and_keeps_sockets_open(proxy: FaultProxy) -> None:
    with connect(proxy) as sock:
        assert echo(sock, b"before") == b"before"
        proxy.stall()
        assert proxy.stalled
        sock.sendall(b"held")
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(16)  # nothing comes back, and the connection is not closed
        with connect(proxy) as late:  # a new connection is accepted, and stalls too
            late.sendall(b"late")
            late.settimeout(0.3)
            with pytest.raises(TimeoutError):
                late.recv(16)
            proxy.resume()
            late.settimeout(5)
            assert late.recv(16) == b"late"
        sock.settimeout(5)
        assert sock.recv(16) == b"held"
    assert proxy.cuts == 0


def test_stall_for_a_time_ends_by_itself(proxy: FaultProxy) -> None:
    proxy.stall(0.2)
    with connect(proxy) as sock:
        assert echo(sock, b"later") == b"later"
    assert not proxy.stalled


def test_stall_after_n_bytes(proxy: FaultProxy) -> None:
    proxy.stall_after(1_000)
    with connect(proxy) as sock:
        assert echo(sock, b"a" * 400) == b"a" * 400  # 800 bytes: still flowing
        sock.sendall(b"b" * 400)  # crosses 1000 on the way in: the echo is held
        wait_until(lambda: proxy.stalled, 5, what="the stall")
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            while True:
                sock.recv(1)
        proxy.resume()
        sock.settimeout(5)
        rest = b""
        while len(rest) < 400:
            chunk = sock.recv(65536)
            assert chunk
            rest += chunk
        assert rest == b"b" * 400

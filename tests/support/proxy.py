"""A TCP proxy on loopback that injects broker faults between a Kafka client and a broker.

`FaultProxy(upstream_port)` listens on a free loopback port and, for every client
connection, opens one to the upstream (the broker) and forwards bytes both ways, one thread
per direction. Kafka clients learn broker addresses from metadata, so the broker must
advertise the proxy's address (Kafka: `advertised.listeners`; see `ProxiedKafka` in
`tests/support/kafka.py`), or the client would bypass the proxy after its first request.

| fault | how | what the client sees |
| --- | --- | --- |
| `cut()` | close both sockets of every open | EOF or reset; in-flight requests |
|  | connection at once | unanswered; librdkafka reconnects |
| `cut_every(nbytes=...)` | `cut()` each time `nbytes` more bytes | cuts paced by the data flow, |
|  | were forwarded (both directions) | so every run gets them |
| `cut_each_connection_after(n)` | close a connection as soon as it | every connection answers its |
|  | carried `n` broker responses (Kafka | handshake and a request or |
|  | frames: an int32 size, then the body); | two, then drops; what was in |
|  | the rest of that read is dropped | flight is lost |
| `stall(seconds)` | stop forwarding both ways, sockets | requests hang; new connections |
|  | stay open; `resume()` ends it early | are accepted and hang too |
| `stall_after(nbytes, seconds)` | `stall(seconds)` once `nbytes` more | a stall in mid-write |
|  | bytes were forwarded | |

Faults are paced by bytes and responses, never by the clock, so a slow machine meets the
same faults as a fast one. Counters: `forwarded` (bytes, both directions), `connections`
(accepted so far), `cuts` (times `cut()` closed at least one connection, plus connections
closed by `cut_each_connection_after`). Nothing is buffered beyond one `recv` (64 KiB) per
direction: a stalled direction holds what it read and stops reading, so TCP back-pressure
reaches the sender. `close()` stops listening and cuts everything.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

__all__ = ["FaultProxy", "wait_until"]

_CHUNK = 65536
# How often blocked threads look at the stop/stall flags.
_TICK_S = 0.05


class _Frames:
    """Counts Kafka protocol frames (a big-endian int32 size, then that many bytes) in one
    direction of a connection, chunk by chunk."""

    def __init__(self) -> None:
        self.count = 0  # complete frames so far
        self._size = bytearray()  # the current frame's size field, as far as it came
        self._left = 0  # bytes of the current frame's body still to come

    def advance(self, data: bytes, *, until: int | None = None) -> int:
        """Count the frames `data` completes; stop once `until` frames are complete in all.
        Returns how many bytes of `data` were taken (all of it unless `until` was reached)."""
        i = 0
        while i < len(data) and (until is None or self.count < until):
            if self._left == 0:
                take = data[i : i + 4 - len(self._size)]
                self._size += take
                i += len(take)
                if len(self._size) < 4:
                    continue
                self._left = int.from_bytes(self._size, "big")
                self._size.clear()
            else:
                take_n = min(self._left, len(data) - i)
                self._left -= take_n
                i += take_n
            if self._left == 0:
                self.count += 1
        return i


class _Connection:
    """One client connection and its upstream twin."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.closed = threading.Event()
        self.responses = _Frames()

    def close(self) -> bool:
        """Close both sockets; False when already closed."""
        if self.closed.is_set():
            return False
        self.closed.set()
        for sock in (self.client, self.upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        return True


class FaultProxy:
    """Forward loopback TCP connections to `upstream_host:upstream_port`, with faults on
    demand (see the module docstring). A context manager; `address` is `host:port`."""

    def __init__(self, upstream_port: int, *, upstream_host: str = "127.0.0.1") -> None:
        self._upstream = (upstream_host, upstream_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(_TICK_S)
        self.port: int = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._open: list[_Connection] = []
        self._stopped = threading.Event()
        self._flowing = threading.Event()  # cleared while stalled
        self._flowing.set()
        self._stall_timer: threading.Timer | None = None
        self._cut_every_bytes: int | None = None
        self._next_cut_at: int | None = None
        self._stall_at: tuple[int, float] | None = None
        self._responses_per_connection: int | None = None
        self.forwarded = 0
        self.connections = 0
        self.cuts = 0
        self._accepter = threading.Thread(target=self._accept_loop, daemon=True)
        self._accepter.start()

    # -- faults -----------------------------------------------------------------------

    def cut(self) -> int:
        """Close every open connection (both sockets); returns how many were closed."""
        with self._lock:
            open_now, self._open = self._open, []
            # Counted before the sockets close: a client that sees the cut sees it counted.
            if any(not conn.closed.is_set() for conn in open_now):
                self.cuts += 1
        return sum(conn.close() for conn in open_now)

    def cut_every(self, *, nbytes: int | None = None) -> None:
        """Cut all connections each time `nbytes` more bytes were forwarded; `cut_every()`
        stops."""
        with self._lock:
            self._cut_every_bytes = nbytes
            self._next_cut_at = self.forwarded + nbytes if nbytes else None

    def cut_each_connection_after(self, responses: int | None) -> None:
        """Close each connection once it has passed `responses` broker responses to its
        client (counted from its start; the bytes after the last of them are dropped).
        `None` stops it. With 2, a Kafka client's connection answers its ApiVersions
        handshake and one more request, then drops."""
        with self._lock:
            self._responses_per_connection = responses

    def stall(self, seconds: float | None = None) -> None:
        """Stop forwarding (sockets stay open) for `seconds`, or until `resume()`."""
        self._flowing.clear()
        self._cancel_stall_timer()
        if seconds is not None:
            self._stall_timer = threading.Timer(seconds, self.resume)
            self._stall_timer.daemon = True
            self._stall_timer.start()

    def stall_after(self, nbytes: int, seconds: float | None = None) -> None:
        """`stall(seconds)` as soon as `nbytes` more bytes were forwarded."""
        with self._lock:
            self._stall_at = (self.forwarded + nbytes, seconds)

    def resume(self) -> None:
        """End a stall: forwarding goes on where it stopped."""
        self._cancel_stall_timer()
        self._flowing.set()

    @property
    def stalled(self) -> bool:
        return not self._flowing.is_set()

    def close(self) -> None:
        self._stopped.set()
        self.cut_every()
        self.cut_each_connection_after(None)
        self.resume()
        self._accepter.join()
        self._listener.close()
        self.cut()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- forwarding -------------------------------------------------------------------

    def _cancel_stall_timer(self) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._upstream, timeout=5)
            except OSError:
                client.close()  # upstream down: the client sees the connection refused-ish
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(_TICK_S)
            conn = _Connection(client, upstream)
            with self._lock:
                self._open.append(conn)
                self.connections += 1
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(conn, source, target), daemon=True
                ).start()

    def _pump(self, conn: _Connection, source: socket.socket, target: socket.socket) -> None:
        try:
            while not conn.closed.is_set() and not self._stopped.is_set():
                if not self._wait_flowing(conn):
                    return
                try:
                    data = source.recv(_CHUNK)
                except TimeoutError:
                    continue
                if not data:
                    break  # EOF from one side: end the pair, as a broker or client would
                last = False
                if source is conn.upstream:
                    limit = self._responses_per_connection
                    data = data[: conn.responses.advance(data, until=limit)]
                    last = limit is not None and conn.responses.count >= limit
                # Counted before it is passed on, so the chunk that crosses a cut or
                # stall threshold is itself cut off or held.
                self._count(len(data))
                if not self._wait_flowing(conn):
                    return
                _send_all(target, data, conn.closed)
                if last:
                    if conn.close():
                        with self._lock:
                            self.cuts += 1
                    break
        except OSError:
            pass
        self._drop(conn)

    def _wait_flowing(self, conn: _Connection) -> bool:
        while not self._flowing.wait(_TICK_S):
            if conn.closed.is_set() or self._stopped.is_set():
                return False
        return not conn.closed.is_set()

    def _count(self, n: int) -> None:
        cut = False
        stall: tuple[int, float] | None = None
        with self._lock:
            self.forwarded += n
            if self._next_cut_at is not None and self.forwarded >= self._next_cut_at:
                cut = True
                self._next_cut_at = self.forwarded + (self._cut_every_bytes or 0)
            if self._stall_at is not None and self.forwarded >= self._stall_at[0]:
                stall, self._stall_at = self._stall_at, None
        if stall is not None:
            self.stall(stall[1])
        if cut:
            self.cut()

    def _drop(self, conn: _Connection) -> None:
        conn.close()
        with self._lock:
            if conn in self._open:
                self._open.remove(conn)


def _send_all(sock: socket.socket, data: bytes, closed: threading.Event) -> None:
    view: Any = memoryview(data)
    while view:
        if closed.is_set():
            raise OSError("connection cut")
        try:
            sent = sock.send(view)
        except TimeoutError:
            continue
        view = view[sent:]


def wait_until(predicate: Any, timeout: float, *, what: str) -> None:
    """Poll `predicate` until it is true; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.01)

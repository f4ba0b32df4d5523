"""Synchronous RocketMQ remoting client: pipelined requests over pooled non-blocking sockets.

One selector loop per ``call_many`` drives every connection it needs. asyncio is avoided on
purpose: its import alone costs a large share of a CLI call's budget.
"""

from __future__ import annotations

import heapq
import os
import selectors
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from mqctl.errors import BrokerResponseError, MqctlError, RemoteTimeoutError
from mqctl.records import record
from mqctl.remoting.client_conn import CLOSED, CONNECTING, HANDSHAKING, OPEN, RESOLVING, Conn, Pending
from mqctl.remoting.codes import CURRENT_VERSION, ResponseCode, SerializeType, request_name
from mqctl.remoting.frame import (
    DEFAULT_MAX_FRAME,
    FLAG_RESPONSE,
    RemotingCommand,
    encode_command,
    encode_request,
    request,
)

if TYPE_CHECKING:
    import ssl

    from mqctl.remoting.signing import Credentials
    from mqctl.remoting.tls import TlsSettings

Result = RemotingCommand | MqctlError
OnAnswer = Callable[[int, Result], None]  # (index of the call, its result) as each comes in

# Polling period while a host name is being resolved on its helper thread.
_RESOLVE_POLL = 0.005
_STATE_NOTE = {
    RESOLVING: " (host name not resolved yet)",
    CONNECTING: " (connection not established)",
    HANDSHAKING: " (TLS handshake unfinished)",
}


@record(frozen=True)
class Call:
    """One request of a ``call_many`` batch; ``timeout`` None means the client's."""

    addr: str
    code: int
    ext_fields: Mapping[str, object] | None = None
    body: bytes = b""
    timeout: float | None = None


def check(resp: RemotingCommand, addr: str, what: str) -> RemotingCommand:
    """``resp`` if it is a success; else BrokerResponseError with its code and remark."""
    if resp.code != ResponseCode.SUCCESS:
        raise BrokerResponseError(resp.code, resp.remark, addr, what)
    return resp


def _opaque_counter() -> Iterator[int]:
    # A random start keeps ids of consecutive processes apart in a broker's logs.
    n = int.from_bytes(os.urandom(4), "big")
    while True:
        yield ((n + 2**31) % 2**32) - 2**31  # signed int32, as Java's int wraps
        n += 1


_OPAQUES = _opaque_counter()

MAX_IDLE_WORK = 64  # when_idle pieces kept at most


class RemotingClient:
    """Requests to name servers and brokers, one reused connection per ``host:port``.

    ``timeout`` bounds each request from the moment it is handed to its connection (connecting
    included for the first ones); ``deadline`` (a ``time.monotonic()`` value) bounds everything.
    At most ``max_connections`` addresses are worked on at once and ``max_in_flight`` requests are
    outstanding per connection; the rest wait their turn. Requests from the server are answered
    ``REQUEST_CODE_NOT_SUPPORTED`` (3) unless one-way, as a Java client without that processor does.
    A connection on which a request timed out is closed once nothing else is in flight on it.
    Work handed to ``when_idle`` runs a piece at a time while requests are out, nothing is left
    to send and no answer is in: the time the servers take to answer, otherwise spent waiting.
    Not thread-safe: one client per thread.
    """

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        deadline: float | None = None,
        credentials: Credentials | None = None,
        tls: bool | TlsSettings = False,
        tls_insecure: bool = False,
        max_frame: int = DEFAULT_MAX_FRAME,
        max_connections: int = 16,
        max_in_flight: int = 64,
        version: int = CURRENT_VERSION,
        on_request: Callable[[str, int], None] | None = None,
        serialize_type: int = SerializeType.JSON,
    ) -> None:
        if max_connections < 1 or max_in_flight < 1:
            raise ValueError("max_connections and max_in_flight must be at least 1")
        self.timeout = timeout
        self.deadline = deadline
        self.credentials = credentials
        # tls=True: verify against the system store (tls_insecure: not at all); a TlsSettings says
        # whom to trust and which client certificate to show.
        self.tls = bool(tls)
        self.tls_insecure = tls.insecure if not isinstance(tls, bool) else tls_insecure
        self._tls_settings = tls if not isinstance(tls, bool) else None
        self.max_frame = max_frame
        self.max_connections = max_connections
        self.max_in_flight = max_in_flight
        self.version = version
        self.on_request = on_request
        self.serialize_type = serialize_type
        self._pool: dict[str, Conn] = {}
        self._ssl_context: ssl.SSLContext | None = None
        self._idle: deque[Callable[[], object]] = deque(maxlen=MAX_IDLE_WORK)

    def __enter__(self) -> RemotingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every connection (a later call opens new ones)."""
        for conn in self._pool.values():
            conn.close()
        self._pool.clear()

    def when_idle(self, work: Callable[[], object]) -> None:
        """Run ``work`` once, the next time this client waits for answers with every request sent
        and none in yet (e.g. importing the decoder of an answer on its way). For work done later anyway: an
        exception from it is dropped here and raised again where the work is really needed. At
        most ``MAX_IDLE_WORK`` pieces wait (a long-lived client whose answers are always in at
        once never runs them): a new one pushes out the oldest."""
        self._idle.append(work)

    def _idle_work(self) -> bool:
        """One piece of the ``when_idle`` work, if there is any; whether one ran."""
        if not self._idle:
            return False
        work = self._idle.popleft()
        try:
            work()
        except Exception:  # noqa: BLE001, S110 - warm-up only (see when_idle)
            pass
        return True

    def call(
        self,
        addr: str,
        code: int,
        ext_fields: Mapping[str, object] | None = None,
        body: bytes = b"",
        *,
        timeout: float | None = None,
    ) -> RemotingCommand:
        """The response to one request, whatever its code; raises MqctlError if none came."""
        result = self.call_many([Call(addr, code, ext_fields, body, timeout)])[0]
        if isinstance(result, MqctlError):
            raise result
        return result

    def call_many(self, calls: Sequence[Call], on_answer: OnAnswer | None = None) -> list[Result]:
        """Every call pipelined at once; results in input order, a failure as an error in its slot.
        ``on_answer(index, result)`` is told of each result as it comes in (to hand ``when_idle``
        the work on it, done while the other answers are on their way); it must not raise."""
        return _Batch(self, calls, on_answer).run()

    def _new_conn(self, addr: str) -> Conn:
        if self.tls and self._ssl_context is None:
            from mqctl.remoting.tls import TlsSettings

            self._ssl_context = (self._tls_settings or TlsSettings(insecure=self.tls_insecure)).context()
        conn = Conn(addr, self.max_frame, self._ssl_context if self.tls else None)
        self._pool[addr] = conn
        return conn


class _Batch:
    """The selector loop of one ``call_many``."""

    def __init__(
        self, client: RemotingClient, calls: Sequence[Call], on_answer: OnAnswer | None = None
    ) -> None:
        self.client = client
        self.on_answer = on_answer
        self.results: list[Result | None] = [None] * len(calls)
        self.queues: dict[str, deque[Pending]] = {}
        self.waiting: deque[str] = deque()
        self.active: dict[str, Conn] = {}
        self.heap: list[tuple[float, int, Pending]] = []
        self.remaining = 0
        self.sel = selectors.DefaultSelector()
        for i, c in enumerate(calls):
            timeout = client.timeout if c.timeout is None else c.timeout
            p = Pending(i, c.addr.strip(), int(c.code), c.ext_fields, bytes(c.body), timeout)
            if p.addr not in self.queues:
                self.queues[p.addr] = deque()
                self.waiting.append(p.addr)
            self.queues[p.addr].append(p)
            self.remaining += 1

    def run(self) -> list[Result]:
        done = False
        try:
            while self.remaining:
                now = time.monotonic()
                self._expire(now)
                self._retire()
                self._activate()
                self._dispatch(now)
                if self.remaining:
                    self._wait(now)
            done = True
        finally:
            for conn in list(self.active.values()):
                if done:
                    self._release(conn)
                else:  # interrupted: requests were abandoned mid-flight
                    self._drop(conn)
            self.sel.close()
        results: list[Result] = []
        for r in self.results:
            assert r is not None  # the loop ends only when every call is settled
            results.append(r)
        return results

    # -- outcomes ------------------------------------------------------------------------------

    def _settle(self, p: Pending, result: Result) -> None:
        if not p.done:
            p.done = True
            self.results[p.index] = result
            self.remaining -= 1
            if self.on_answer is not None:
                self.on_answer(p.index, result)

    def _fail_addr(self, addr: str, conn: Conn | None, err: MqctlError) -> None:
        """A broken connection fails every call for its address: sent, queued, not yet sent."""
        if conn is not None:
            for p in conn.inflight.values():
                self._settle(p, err)
            conn.inflight.clear()
            self._drop(conn)
        for p in self.queues.pop(addr, ()):
            self._settle(p, err)

    def _timeout_error(self, p: Pending, conn: Conn | None, sent: bool) -> RemoteTimeoutError:
        what = request_name(p.code)
        note = _STATE_NOTE.get(conn.state, "") if conn is not None else ""
        if not sent:
            return RemoteTimeoutError(f"{p.addr}: {what} not sent before the deadline")
        if p.by_deadline:
            return RemoteTimeoutError(f"{p.addr}: no response to {what} before the deadline{note}")
        return RemoteTimeoutError(f"{p.addr}: no response to {what} within {p.timeout:g} s{note}")

    def _expire(self, now: float) -> None:
        deadline = self.client.deadline
        if deadline is not None and now >= deadline:
            for queue in self.queues.values():
                for p in queue:
                    self._settle(p, self._timeout_error(p, None, sent=False))
                queue.clear()
        while self.heap and self.heap[0][0] <= now:
            p = heapq.heappop(self.heap)[2]
            if p.done:
                continue
            conn = self.active.get(p.addr)
            if conn is not None:
                conn.inflight.pop(p.opaque, None)
                conn.suspect = True
            self._settle(p, self._timeout_error(p, conn, sent=True))

    # -- connections ---------------------------------------------------------------------------

    def _activate(self) -> None:
        client = self.client
        while self.waiting and len(self.active) < client.max_connections:
            addr = self.waiting.popleft()
            if not self.queues.get(addr):
                continue
            conn = client._pool.get(addr)
            try:
                if conn is not None:
                    conn.attach(self.sel, self._deliver)
                    if not conn.reusable():
                        self._drop(conn)
                        conn = None
                if conn is None:
                    conn = client._new_conn(addr)
                    conn.attach(self.sel, self._deliver)
                    conn.start()
            except MqctlError as err:
                self._fail_addr(addr, conn, err)
                continue
            self.active[addr] = conn

    def _release(self, conn: Conn) -> None:
        """Leave the batch; keep the connection only if it is healthy and idle."""
        self.active.pop(conn.addr, None)
        if conn.state == OPEN and conn.out:  # e.g. an answer to a server's request
            try:
                conn.flush()
            except MqctlError:
                pass
        if conn.state != OPEN or conn.suspect or conn.out or conn.inflight:
            self._drop(conn)
        else:
            conn.detach()

    def _drop(self, conn: Conn) -> None:
        self.active.pop(conn.addr, None)
        conn.close()
        if self.client._pool.get(conn.addr) is conn:
            del self.client._pool[conn.addr]

    def _retire(self) -> None:
        for addr, conn in list(self.active.items()):
            if not conn.inflight and not self.queues.get(addr):
                self.queues.pop(addr, None)
                self._release(conn)

    # -- requests ------------------------------------------------------------------------------

    def _dispatch(self, now: float) -> None:
        client = self.client
        deadline = client.deadline
        for addr, conn in list(self.active.items()):
            queue = self.queues.get(addr)
            while queue and len(conn.inflight) < client.max_in_flight:
                p = queue.popleft()
                try:
                    frame = self._encode(p, conn)
                except MqctlError as err:  # e.g. a code the header cannot hold
                    self._settle(p, type(err)(f"{addr}: {err.message}"))
                    continue
                p.expires = now + p.timeout
                if deadline is not None and deadline < p.expires:
                    p.expires, p.by_deadline = deadline, True
                conn.inflight[p.opaque] = p
                conn.out += frame
                heapq.heappush(self.heap, (p.expires, p.index, p))
                if client.on_request is not None:
                    client.on_request(addr, p.code)
            conn.sync()

    def _encode(self, p: Pending, conn: Conn) -> bytes:
        client = self.client
        p.opaque = next(_OPAQUES)
        while p.opaque in conn.inflight:
            p.opaque = next(_OPAQUES)
        if client.credentials is None:
            return encode_request(
                p.code,
                p.ext_fields,
                p.body,
                opaque=p.opaque,
                version=client.version,
                serialize_type=client.serialize_type,
            )
        from mqctl.remoting.signing import sign

        cmd = request(p.code, p.ext_fields, p.body, opaque=p.opaque, version=client.version)
        signed = sign(cmd.ext_fields, cmd.body, client.credentials)
        cmd = RemotingCommand(
            cmd.code, cmd.opaque, cmd.flag, version=cmd.version, ext_fields=signed, body=cmd.body
        )
        return encode_command(cmd, client.serialize_type)

    def _deliver(self, conn: Conn, cmd: RemotingCommand) -> None:
        if cmd.is_response:
            p = conn.inflight.pop(cmd.opaque, None)
            if p is not None:  # else: an answer to a request that already timed out
                self._settle(p, cmd)
        elif not cmd.is_oneway:
            reply = RemotingCommand(
                code=ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                opaque=cmd.opaque,
                flag=FLAG_RESPONSE,
                version=self.client.version,
                remark=f" request type {cmd.code} not supported",
            )
            conn.out += encode_command(reply, self.client.serialize_type)

    # -- waiting -------------------------------------------------------------------------------

    def _wait(self, now: float) -> None:
        while self.heap and self.heap[0][2].done:
            heapq.heappop(self.heap)
        wake = self.heap[0][0] if self.heap else now + 0.05
        if self.client.deadline is not None:
            wake = min(wake, self.client.deadline)
        timeout = max(0.0, wake - now)
        conns = list(self.active.values())
        if any(c.resolving for c in conns):
            timeout = min(timeout, _RESOLVE_POLL)
        if any(c.buffered_input() for c in conns):
            timeout = 0.0
        idle = self.client._idle and timeout and all(c.state == OPEN and not c.out for c in conns)
        # idle work one piece at a time, and only while no answer is in: an answer that came
        # during a piece is read first (the next round of requests goes out sooner)
        ready = self.sel.select(0) if idle else None
        if idle and not ready and self.client._idle_work():
            return
        for key, mask in ready or self.sel.select(timeout):
            self._on_event(key.data, mask)
        for conn in conns:
            if conn.state == CLOSED:
                continue
            if conn.buffered_input():
                self._on_event(conn, selectors.EVENT_READ)
            elif conn.resolving:
                self._guard(conn, conn.poll_resolver)

    def _on_event(self, conn: Conn, mask: int) -> None:
        if conn.state != CLOSED:
            self._guard(conn, lambda: conn.handle(mask))

    def _guard(self, conn: Conn, action: Callable[[], None]) -> None:
        try:
            action()
            conn.sync()
        except MqctlError as err:
            self._fail_addr(conn.addr, conn, err)

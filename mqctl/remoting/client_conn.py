"""One non-blocking connection of :class:`~mqctl.remoting.client.RemotingClient`: its address, socket
state machine (resolve, connect, TLS handshake, open), output buffer, frame decoder and the
requests in flight on it. Only the client's selector loop drives it.
"""

from __future__ import annotations

import errno
import os
import selectors
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from mqctl.errors import MqctlError, ProtocolError, UnreachableError
from mqctl.remoting.frame import RemotingCommand
from mqctl.remoting.frame_decode import FrameDecoder

# The socket type and functions straight from the C module that socket.py wraps: importing socket.py
# turns its hundreds of constants into IntEnums, ~2 ms of every live call, for nothing read here.
# A TLS connection takes socket.py's type, the one ssl wraps (ssl imports socket.py anyway).
try:
    import _socket as socket
except ImportError:  # an interpreter without CPython's module of that name
    import socket  # type: ignore[no-redef]

if TYPE_CHECKING:
    import socket as std_socket
    import ssl

READ = selectors.EVENT_READ
WRITE = selectors.EVENT_WRITE

RESOLVING, CONNECTING, HANDSHAKING, OPEN, CLOSED = "resolving", "connecting", "handshaking", "open", "closed"

_RECV_SIZE = 256 * 1024
# Reads per readiness event: a peer streaming without pause must not starve the timeout checks.
_MAX_READS = 16
_CONNECT_PENDING = (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY)
_HINT = "check the address and that the name server or broker is running"
_TLS_HINT = (
    "it closed the connection before answering anything: if it requires TLS, pass --tls "
    "(and --tls-ca FILE, --tls-cert/--tls-key for mutual TLS)"
)


def parse_addr(addr: str) -> tuple[str, int]:
    """``host:port`` (the last ``:`` splits, as in Java) or ``[v6]:port`` -> (host, port)."""
    text = addr.strip()
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise UnreachableError(f"bad address {addr!r}: expected host:port")
    return host, int(port)


def _literal(host: str, port: int) -> tuple[int, tuple[Any, ...]] | None:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except (OSError, ValueError):
            continue
        return family, (host, port) if family == socket.AF_INET else (host, port, 0, 0)
    return None


class _Resolver:
    """getaddrinfo on a daemon thread: it has no timeout of its own and must not block the loop."""

    def __init__(self, host: str, port: int) -> None:
        import threading

        self.infos: list[tuple[int, tuple[Any, ...]]] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(host, port), daemon=True)
        self._thread.start()

    def _run(self, host: str, port: int) -> None:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except Exception as exc:  # noqa: BLE001 - reported to the loop, never raised on this thread
            self.error = exc
            return
        # IPv4 first, as Java resolves by default.
        found.sort(key=lambda info: info[0] != socket.AF_INET)
        self.infos = [(info[0], info[4]) for info in found]

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()


class Pending:
    """One call of a ``call_many`` batch on its way: queued, then in flight on a connection."""

    # A plain slotted class: even a record would cost import time on every CLI start.
    __slots__ = (
        "index",
        "addr",
        "code",
        "ext_fields",
        "body",
        "timeout",
        "expires",
        "by_deadline",
        "opaque",
        "done",
    )

    def __init__(
        self,
        index: int,
        addr: str,
        code: int,
        ext_fields: Mapping[str, object] | None,
        body: bytes,
        timeout: float,
    ) -> None:
        self.index, self.addr, self.code = index, addr, code
        self.ext_fields, self.body, self.timeout = ext_fields, body, timeout
        self.expires = float("inf")
        self.by_deadline = False
        self.opaque = 0
        self.done = False


class Conn:
    """A connection to one ``host:port``; raises MqctlError naming the address on any failure."""

    def __init__(self, addr: str, max_frame: int, tls: ssl.SSLContext | None) -> None:
        self.addr = addr
        self.host, self.port = parse_addr(addr)
        self.state = RESOLVING
        self.sock: socket.socket | None = None
        self.decoder = FrameDecoder(max_frame)
        self.out = bytearray()
        self.inflight: dict[int, Pending] = {}
        self.suspect = False  # a request timed out on it: do not keep it for the next batch
        self.answered = False  # something came back on it
        self.deliver: Callable[[Conn, RemotingCommand], None] = lambda conn, cmd: None
        self._tls = tls
        self._tls_want = READ
        self._infos: list[tuple[int, tuple[Any, ...]]] = []
        self._resolver: _Resolver | None = None
        self._sel: selectors.BaseSelector | None = None
        self._mask = 0
        self._blocking: tuple[type[BaseException], ...] = (BlockingIOError, InterruptedError)
        self._eof: tuple[type[BaseException], ...] = ()
        self._socket_type: Callable[[int, int], socket.socket] = socket.socket
        if tls is not None:
            import ssl
            from socket import socket as socket_type

            self._socket_type = socket_type
            self._blocking += (ssl.SSLWantReadError, ssl.SSLWantWriteError)
            self._eof = (ssl.SSLZeroReturnError, ssl.SSLEOFError)

    # -- selector bookkeeping ------------------------------------------------------------------

    def attach(self, sel: selectors.BaseSelector, deliver: Callable[[Conn, RemotingCommand], None]) -> None:
        self._sel, self.deliver = sel, deliver
        self.sync()

    def detach(self) -> None:
        if self._sel is not None and self.sock is not None and self._mask:
            self._sel.unregister(self.sock)
        self._sel, self._mask = None, 0

    def events(self) -> int:
        if self.state == CONNECTING:
            return WRITE
        if self.state == HANDSHAKING:
            return self._tls_want
        if self.state == OPEN:
            return READ | WRITE if self.out else READ
        return 0

    def sync(self) -> None:
        """Make the selector registration match what the connection waits for."""
        if self._sel is None or self.sock is None:
            return
        mask = self.events()
        if mask == self._mask:
            return
        if not self._mask:
            self._sel.register(self.sock, mask, self)
        elif not mask:
            self._sel.unregister(self.sock)
        else:
            self._sel.modify(self.sock, mask, self)
        self._mask = mask

    def _set_sock(self, sock: socket.socket | None) -> None:
        if self.sock is not None:
            if self._sel is not None and self._mask:
                self._sel.unregister(self.sock)
            self._mask = 0
            self.sock.close()
        self.sock = sock

    def close(self) -> None:
        self._set_sock(None)
        self.state = CLOSED

    # -- establishing --------------------------------------------------------------------------

    def start(self) -> None:
        literal = _literal(self.host, self.port)
        if literal is None:
            self._resolver = _Resolver(self.host, self.port)
            return
        self._infos = [literal]
        self._connect_next(None)

    @property
    def resolving(self) -> bool:
        return self.state == RESOLVING and self._resolver is not None

    def poll_resolver(self) -> None:
        res = self._resolver
        if res is None or not res.done:
            return
        self._resolver = None
        if res.error is not None or not res.infos:
            reason = getattr(res.error, "strerror", None) or str(res.error or "no address")
            raise UnreachableError(f"{self.addr}: cannot resolve {self.host}: {reason}", _HINT)
        self._infos = res.infos
        self._connect_next(None)

    def _connect_next(self, last_error: int | None) -> None:
        while self._infos:
            family, sockaddr = self._infos.pop(0)
            try:
                sock = self._socket_type(family, socket.SOCK_STREAM)
            except OSError as exc:
                last_error = exc.errno
                continue
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            err = sock.connect_ex(sockaddr)
            if err in _CONNECT_PENDING:
                self._set_sock(sock)
                self.state = CONNECTING
                self.sync()
                return
            sock.close()
            last_error = err
        reason = os.strerror(last_error) if last_error else "no address to connect to"
        raise UnreachableError(f"{self.addr}: {reason}", _HINT)

    def _finish_connect(self) -> None:
        assert self.sock is not None
        err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._connect_next(err)
            return
        if self._tls is None:
            self.state = OPEN
            return
        # Wrapping detaches the plain socket object: register the wrapped one afresh.
        if self._sel is not None and self._mask:
            self._sel.unregister(self.sock)
            self._mask = 0
        try:
            plain = cast("std_socket.socket", self.sock)  # made by socket.py's type (see __init__)
            self.sock = self._tls.wrap_socket(plain, server_hostname=self.host, do_handshake_on_connect=False)
        except (OSError, ValueError) as exc:
            raise UnreachableError(f"{self.addr}: TLS setup failed: {exc}") from None
        self.state = HANDSHAKING
        self._handshake()

    def _handshake(self) -> None:
        import ssl

        assert isinstance(self.sock, ssl.SSLSocket)
        try:
            self.sock.do_handshake()
        except ssl.SSLWantReadError:
            self._tls_want = READ
            return
        except ssl.SSLWantWriteError:
            self._tls_want = WRITE
            return
        except (OSError, ValueError) as exc:
            from mqctl.remoting.tls import handshake_error

            raise handshake_error(self.addr, self.host, exc) from None
        self.state = OPEN

    # -- traffic -------------------------------------------------------------------------------

    def handle(self, mask: int) -> None:
        """Act on a readiness event; decoded commands go to ``deliver``."""
        if self.state == CONNECTING:
            self._finish_connect()
            if self.state == OPEN and self.out:
                self.flush()  # the event that finished the connect says it is writable
        elif self.state == HANDSHAKING:
            self._handshake()
        elif self.state == OPEN:
            if mask & WRITE:
                self.flush()
            if mask & READ and self.state == OPEN:
                self.read()
        self.sync()

    def flush(self) -> None:
        assert self.sock is not None
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except self._blocking:
                return
            except OSError as exc:
                raise self._send_error(exc) from None
            del self.out[:sent]

    def _send_error(self, exc: OSError) -> UnreachableError:
        """A TLS server that refused our certificate may have closed before our first request
        went out: its alert is then waiting to be read."""
        if self._tls is not None and not self.answered and self.sock is not None:
            try:
                self.sock.recv(1)
            except OSError as alert:
                from mqctl.remoting.tls import peer_refused

                refused = peer_refused(self.addr, alert)
                if refused is not None:
                    return refused
        return UnreachableError(f"{self.addr}: send failed: {exc.strerror or exc}", _HINT)

    def buffered_input(self) -> bool:
        """TLS data already decrypted in the socket, which the selector will not report."""
        pending = getattr(self.sock, "pending", None)
        return self.state == OPEN and pending is not None and pending() > 0

    def read(self) -> None:
        assert self.sock is not None
        for _ in range(_MAX_READS):
            try:
                data = self.sock.recv(_RECV_SIZE)
            except self._blocking:
                return
            except self._eof:
                data = b""
            except OSError as exc:
                raise self._receive_error(exc) from None
            if not data:
                self._closed_by_peer()
                return
            try:
                commands = self.decoder.feed(data)
            except ProtocolError as exc:
                raise ProtocolError(f"{self.addr}: {exc.message}") from None
            for cmd in commands:
                self.answered = True
                self.deliver(self, cmd)

    def _receive_error(self, exc: OSError) -> UnreachableError:
        if self._tls is not None:
            from mqctl.remoting.tls import peer_refused

            refused = peer_refused(self.addr, exc)
            if refused is not None:
                return refused
        # Reset before anything came back: as likely a server that wants TLS as a closed one.
        plain_reset = self._tls is None and not self.answered and exc.errno == errno.ECONNRESET
        return UnreachableError(
            f"{self.addr}: receive failed: {exc.strerror or exc}", _TLS_HINT if plain_reset else _HINT
        )

    def _closed_by_peer(self) -> None:
        partial, outstanding = self.decoder.buffered, len(self.inflight)
        self.close()
        if partial:
            raise ProtocolError(f"{self.addr}: connection closed in the middle of a frame ({partial} bytes)")
        if outstanding:
            # A server that enforces TLS closes a plaintext connection on its first bytes.
            hint = _TLS_HINT if self._tls is None and not self.answered else None
            raise UnreachableError(
                f"{self.addr}: connection closed by the peer with {outstanding} request(s) unanswered", hint
            )

    def reusable(self) -> bool:
        """Whether a pooled connection still works: reads what arrived while idle, notices a close."""
        if self.state != OPEN or self.suspect or self.out:
            return False
        try:
            self.read()
        except MqctlError:
            return False
        return self.state == OPEN

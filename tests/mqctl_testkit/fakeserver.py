"""A small, deliberately misbehaving RocketMQ remoting server for the client tests.

It parses and writes frames with its own few lines of code (plain ``struct`` and ``json``), not
with ``mqctl.remoting.frame``, so the client is checked against an independent reading of the spec.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import ssl
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

MODES = (
    "echo",  # answer each request at once: code 0, same opaque, extFields {"echo": <code>, ...}
    "reverse",  # collect `batch` requests, answer them last first
    "error",  # answer every request with `error_code` and `remark`
    "silent",  # read requests, never answer
    "garbage",  # answer the first request with a frame whose header is not JSON
    "oversized",  # answer the first request with a 2 GB length
    "half",  # answer the first request with half a frame, then close
    "close",  # close every connection right after accept
    "server_request",  # send the client a request (code 40, opaque 777), then echo
    "verify",  # check each request's Signature: code 0 if right, 16 if not
    "stray",  # before each answer, send a response nobody asked for (opaque + 1000)
)


@dataclass
class Request:
    """One request as this server read it."""

    stype: int
    header: dict[str, Any]
    body: bytes
    conn_id: int
    raw_header: bytes

    @property
    def code(self) -> int:
        return int(self.header["code"])

    @property
    def opaque(self) -> int:
        return int(self.header["opaque"])

    @property
    def ext(self) -> dict[str, str]:
        return dict(self.header.get("extFields") or {})


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks = []
    while n:
        try:
            data = sock.recv(min(n, 65536))
        except OSError:
            return None
        if not data:
            return None
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)


def _parse_binary_header(h: bytes) -> dict[str, Any]:
    code, lang, version, opaque, flag = struct.unpack(">hbhii", h[:13])
    pos = 13
    (rlen,) = struct.unpack(">i", h[pos : pos + 4])
    pos += 4
    remark = h[pos : pos + rlen].decode() if rlen else None
    pos += rlen
    (elen,) = struct.unpack(">i", h[pos : pos + 4])
    pos += 4
    end = pos + elen
    ext = {}
    while pos < end:
        (klen,) = struct.unpack(">h", h[pos : pos + 2])
        key = h[pos + 2 : pos + 2 + klen].decode()
        pos += 2 + klen
        (vlen,) = struct.unpack(">i", h[pos : pos + 4])
        ext[key] = h[pos + 4 : pos + 4 + vlen].decode()
        pos += 4 + vlen
    header = {"code": code, "language": lang, "version": version, "opaque": opaque, "flag": flag}
    return {**header, "remark": remark, "extFields": ext}


def read_frame(sock: socket.socket) -> tuple[int, dict[str, Any], bytes, bytes] | None:
    prefix = _recv_exact(sock, 4)
    if prefix is None:
        return None
    data = _recv_exact(sock, int.from_bytes(prefix, "big"))
    if data is None:
        return None
    stype, hlen = data[0], int.from_bytes(data[1:4], "big")
    raw = data[4 : 4 + hlen]
    header = json.loads(raw) if stype == 0 else _parse_binary_header(raw)
    return stype, header, data[4 + hlen :], raw


def frame(header: dict[str, Any], body: bytes = b"") -> bytes:
    h = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    return struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body


def response(
    opaque: int,
    code: int = 0,
    ext: dict[str, str] | None = None,
    remark: str | None = None,
    body: bytes = b"",
) -> bytes:
    header: dict[str, Any] = {"code": code, "flag": 1, "language": "JAVA", "opaque": opaque, "version": 479}
    if ext:
        header["extFields"] = ext
    if remark is not None:
        header["remark"] = remark
    return frame(header, body)


def expected_signature(ext: dict[str, str], body: bytes, secret: str) -> str:
    """ACL 1.0's check, written for ASCII keys: values by sorted key, minus Signature, then body."""
    content = "".join(ext[k] for k in sorted(ext) if k != "Signature").encode() + body
    return base64.b64encode(hmac.new(secret.encode(), content, hashlib.sha1).digest()).decode()


@dataclass
class FakeServer:
    mode: str = "echo"
    batch: int = 1
    error_code: int = 1
    remark: str = "boom"
    secret: str = ""
    tls: ssl.SSLContext | None = None
    host: str = "127.0.0.1"
    requests: list[Request] = field(default_factory=list)
    replies_to_server: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    accepted: int = 0
    max_outstanding: int = 0
    gate: threading.Event | None = None  # when given, each reaction waits for it to be set (5 s at most)

    def __post_init__(self) -> None:
        assert self.mode in MODES, self.mode
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._lsock = socket.socket(family)
        self._lsock.bind((self.host, 0))
        self._lsock.listen(64)
        self.port = self._lsock.getsockname()[1]
        self.addr = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._lsock.close()
        self.drop_connections()

    def drop_connections(self) -> None:
        """Close every accepted connection (the listener stays)."""
        with self._lock:
            for s in self._conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self._conns.clear()

    def _accept_loop(self) -> None:
        conn_id = 0
        while True:
            try:
                sock, _ = self._lsock.accept()
            except OSError:
                return
            conn_id += 1
            with self._lock:
                self.accepted += 1
                self._conns.append(sock)
            if self.mode == "close":
                sock.close()
                continue
            threading.Thread(target=self._serve, args=(sock, conn_id), daemon=True).start()

    def _serve(self, sock: socket.socket, conn_id: int) -> None:
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_side=True)
            except (OSError, ssl.SSLError):
                sock.close()  # as a server enforcing TLS closes a plaintext or failed connection
                return
        held: list[Request] = []
        first = True
        while True:
            got = read_frame(sock)
            if got is None:
                return
            stype, header, body, raw = got
            if not header.get("flag", 0) & 1:
                req = Request(stype, header, body, conn_id, raw)
                with self._lock:
                    self.requests.append(req)
            else:  # the client's answer to our own request
                self.replies_to_server.append((header["code"], header))
                continue
            try:
                self._react(sock, req, held, first)
            except OSError:
                return
            first = False

    def _react(self, sock: socket.socket, req: Request, held: list[Request], first: bool) -> None:
        mode = self.mode
        if self.gate is not None:
            self.gate.wait(5.0)
        if mode == "reverse":
            held.append(req)
            self.max_outstanding = max(self.max_outstanding, len(held))
            if len(held) >= self.batch:
                sock.sendall(b"".join(response(r.opaque, ext={"echo": str(r.code)}) for r in reversed(held)))
                held.clear()
        elif mode == "error":
            sock.sendall(response(req.opaque, self.error_code, remark=self.remark))
        elif mode == "silent":
            pass
        elif mode == "garbage" and first:
            sock.sendall(struct.pack(">ii", 12, 8) + b"notjson!")
        elif mode == "oversized" and first:
            sock.sendall(b"\x7f\xff\xff\xff" + b"\x00" * 64)
        elif mode == "half" and first:
            whole = response(req.opaque, ext={"echo": str(req.code)})
            sock.sendall(whole[: len(whole) // 2])
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        elif mode == "verify":
            ok = req.ext.get("Signature") == expected_signature(req.ext, req.body, self.secret)
            sock.sendall(response(req.opaque, 0 if ok else 16, remark=None if ok else "bad signature"))
        else:
            if mode == "stray":
                sock.sendall(response(req.opaque + 1000, ext={"echo": "stray"}))
            if mode == "server_request" and first:
                sock.sendall(
                    frame({"code": 40, "flag": 0, "language": "JAVA", "opaque": 777, "version": 479})
                )
            ext = {"echo": str(req.code), **{f"req_{k}": v for k, v in req.ext.items()}}
            sock.sendall(response(req.opaque, ext=ext, body=req.body))


def refused_addr() -> str:
    """An address on which nothing listens (the port was bound, never listened on, then freed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"127.0.0.1:{port}"

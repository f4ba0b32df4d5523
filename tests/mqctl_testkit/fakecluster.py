"""A fake RocketMQ cluster on 127.0.0.1: one or more name servers and a broker per model broker,
each a listening socket with a thread per connection, speaking the real frame format (decoded and
encoded with ``mqctl.remoting.frame``, whose golden tests pin it) and answering from the model of
fakemodel.py through fakebodies.py.

Faults on demand, per server (``FakeCluster.reset()`` clears them all):

* ``down()``: the port is closed (connection refused); ``reset()`` listens on it again;
* ``mode``: ``"silent"`` (reads, never answers), ``"garbage"`` (a frame whose header is not
  JSON), ``"oversized"`` (a 2 GB length), ``"truncated"`` (a frame whose header length runs past
  its end), ``"close_mid_frame"`` (half an answer, then the connection is closed);
* ``delay``: seconds to wait before each answer;
* ``errors``: request code -> (response code, remark) answered instead;
* ``acl``: (access key, secret key): every request must carry a valid ACL 1.0 signature
  (remoting.md 9, checked here with hmac, not with mqctl's signer), else a refusal worded as the
  real brokers word it (``acl_style``): "5.x" (ACL 2.0) 16 NO_PERMISSION ``username cannot be
  null.`` / ``User:K is not found.`` / ``check signature failed.``; "4.x" (plain ACL) code 1 with
  the AclException and its frame as remark. ``denied_groups``: signed requests naming one of
  these groups are refused for lack of a grant (the same two wordings), only the request codes
  in ``deny_codes`` when it is set (a 4.x broker checks the group on writes, not on reads).
  The texts are what a real 5.3.3 and 4.9.7 broker answered (tests/compat/test_compat_secure.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
import struct
import threading
import time
from collections.abc import Callable
from functools import partial

from mqctl.errors import ProtocolError
from mqctl.remoting.frame import FLAG_RESPONSE, RemotingCommand, encode_command
from mqctl.remoting.frame_decode import FrameDecoder
from mqctl_testkit.fakebodies import Reply, broker_answer, namesrv_answer
from mqctl_testkit.fakemodel import Cluster

ACL_REMARK = "check signature failed."  # a 5.3.3 broker's remark for a wrong signature
_ACL4 = (
    "org.apache.rocketmq.acl.common.AclException: {}, org.apache.rocketmq.acl.plain.PlainPermissionManager.{}"
)


def acl_refusal(fields: dict[str, str], body: bytes, acl: tuple[str, str], style: str, denied: set[str]):  # type: ignore[no-untyped-def]
    """(code, remark) of a broker refusing this request, or None when it passes. ``denied``: the
    groups this account has no grant on."""
    key = fields.get("AccessKey")
    group = fields.get("consumerGroup") or fields.get("group")
    if style == "4.x":
        if key is None:
            return 1, _ACL4.format("No accessKey is configured", "validate(PlainPermissionManager.java:663)")
        if key != acl[0]:
            return 1, _ACL4.format(f"No acl config for {key}", "validate(PlainPermissionManager.java:667)")
        if not signature_ok(fields, body, *acl):
            return 1, _ACL4.format(
                f"Check signature failed for accessKey={key}", "validate(PlainPermissionManager.java:683)"
            )
        if group in denied:
            return 1, _ACL4.format(
                f"No default permission for group:{group}", "checkPerm(PlainPermissionManager.java:605)"
            )
        return None
    if key is None:
        return 16, "username cannot be null."
    if key != acl[0]:
        return 16, f"User:{key} is not found."
    if not signature_ok(fields, body, *acl):
        return 16, ACL_REMARK
    if group in denied:
        return (
            16,
            f"User:{key} has no permission to access Group:{group} from 127.0.0.1, no matched policies.",
        )
    return None


def signature_ok(fields: dict[str, str], body: bytes, access_key: str, secret: str) -> bool:
    """ACL 1.0: the values of every field but Signature, by key (ASCII order), then the body."""
    if fields.get("AccessKey") != access_key or "Signature" not in fields:
        return False
    content = "".join(fields[k] for k in sorted(fields) if k != "Signature").encode() + body
    want = base64.b64encode(hmac.new(secret.encode(), content, hashlib.sha1).digest()).decode()
    return hmac.compare_digest(want, fields["Signature"])


class FakeServer:
    """One name server or broker; ``answer(code, ext_fields, version)`` gives each reply."""

    def __init__(self, name: str, answer: Callable[[int, dict[str, str], int], Reply]) -> None:
        self.name = name
        self.answer = answer
        self.requests: list[RemotingCommand] = []
        self.rejected: list[RemotingCommand] = []  # requests refused by the ACL check
        self.first_request_at: float | None = None  # time.monotonic() of the first request
        self.closed_at: float | None = None  # ... of the last connection the client closed
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.port = 0
        self.mode: str | None = None
        self.delay = 0.0
        self.errors: dict[int, tuple[int, str]] = {}
        self.acl: tuple[str, str] | None = None
        self.acl_style = "5.x"
        self.denied_groups: set[str] = set()
        self.deny_codes: set[int] | None = None  # denied_groups only for these requests (None: all)
        self.version = 479  # RocketMQ's version code in every answer (479: 5.3.3, 407: 4.9.7)
        self._listen()

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _listen(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", self.port))
        except OSError:  # taken while it was down: another port (FakeCluster.reset republishes it)
            sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self.port = sock.getsockname()[1]
        self._listener = sock
        threading.Thread(target=self._accept, args=(sock,), daemon=True).start()

    def down(self) -> None:
        """Close the port: connecting is refused until ``reset()``."""
        if self._listener is not None:
            try:  # wakes the accept() blocked on it: a bare close() would leave the port listening
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        self.drop_connections()

    def reset(self) -> None:
        self.mode, self.delay, self.errors, self.acl, self.version = None, 0.0, {}, None, 479
        self.acl_style, self.denied_groups, self.deny_codes = "5.x", set(), None
        self.drop_connections()
        with self._lock:
            self.requests.clear()
            self.rejected.clear()
            self.first_request_at = self.closed_at = None
        if self._listener is None:
            self._listen()

    def drop_connections(self) -> None:
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.down()

    def codes(self) -> list[int]:
        with self._lock:
            return [r.code for r in self.requests]

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stalls on answers
            with self._lock:
                self._conns.add(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        decoder = FrameDecoder()
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    self.closed_at = time.monotonic()
                    return
                for cmd in decoder.feed(data):
                    if cmd.is_response:
                        continue
                    with self._lock:
                        self.requests.append(cmd)
                        if self.first_request_at is None:
                            self.first_request_at = time.monotonic()
                    if not self._react(sock, cmd):
                        return
        except (OSError, ProtocolError):
            return
        finally:
            with self._lock:
                self._conns.discard(sock)
            sock.close()

    def _react(self, sock: socket.socket, cmd: RemotingCommand) -> bool:
        """Answer one request (or misbehave); False when the connection was closed."""
        mode = self.mode
        if mode == "silent":
            return True
        if self.delay:
            time.sleep(self.delay)
        if mode == "garbage":
            sock.sendall(struct.pack(">ii", 12, 8) + b"notjson!")
        elif mode == "oversized":
            sock.sendall(b"\x7f\xff\xff\xf0" + bytes(64))
        elif mode == "truncated":  # 6 header bytes in the frame, 200 announced
            sock.sendall(struct.pack(">iI", 10, 200) + b'{"code')
        elif mode == "close_mid_frame":
            whole = self._encode(cmd, self._reply(cmd))
            sock.sendall(whole[: len(whole) // 2])
            sock.shutdown(socket.SHUT_RDWR)
            return False
        else:
            sock.sendall(self._encode(cmd, self._reply(cmd)))
        return True

    def _reply(self, cmd: RemotingCommand) -> Reply:
        fields = dict(cmd.ext_fields)
        refusal = None
        if self.acl is not None:
            denied = self.denied_groups if self.deny_codes is None or cmd.code in self.deny_codes else set()
            refusal = acl_refusal(fields, cmd.body, self.acl, self.acl_style, denied)
        if refusal is not None:
            with self._lock:
                self.rejected.append(cmd)
            return Reply(*refusal)
        if cmd.code in self.errors:
            return Reply(*self.errors[cmd.code])
        return self.answer(cmd.code, fields, cmd.version)

    def _encode(self, cmd: RemotingCommand, reply: Reply) -> bytes:
        resp = RemotingCommand(
            code=reply.code,
            opaque=cmd.opaque,
            flag=FLAG_RESPONSE,
            version=self.version,
            remark=reply.remark,
            ext_fields=dict(reply.ext),
            body=reply.body,
        )
        return encode_command(resp)


class FakeCluster:
    """Name servers and brokers serving ``model``; ``ns`` is the ``-n`` value of the first."""

    def __init__(self, model: Cluster, namesrvs: int = 1) -> None:
        self.model = model
        self.brokers: dict[str, FakeServer] = {}
        for b in model.brokers:
            server = FakeServer(b.name, lambda code, fields, _v, b=b: broker_answer(model, b, code, fields))
            b.addr = server.addr
            b.build_commitlog()
            self.brokers[b.name] = server
        self.namesrvs = [FakeServer(f"namesrv{i}", partial(namesrv_answer, model)) for i in range(namesrvs)]

    @property
    def ns(self) -> str:
        return self.namesrvs[0].addr

    def servers(self) -> list[FakeServer]:
        return [*self.namesrvs, *self.brokers.values()]

    def reset(self) -> None:
        for s in self.servers():
            s.reset()
        for b in self.model.brokers:
            if b.addr != self.brokers[b.name].addr:
                b.addr = self.brokers[b.name].addr
                b.build_commitlog()

    def close(self) -> None:
        for s in self.servers():
            s.close()

    def broker(self, name: str) -> FakeServer:
        return self.brokers[name]

    def set_acl(
        self,
        access_key: str,
        secret: str,
        *,
        namesrv: bool = True,
        style: str = "5.x",
        brokers: tuple[str, ...] | None = None,
    ) -> None:
        """ACL on every server (``namesrv``: name servers too; ``brokers``: only these brokers)."""
        for s in self.servers():
            if s in self.namesrvs and not namesrv:
                continue
            if s not in self.namesrvs and brokers is not None and s.name not in brokers:
                continue
            s.acl, s.acl_style = (access_key, secret), style

"""RemotingClient against the misbehaving servers of fakeserver.py: results, pipelining, isolation
of failures, bounded time, signing, TLS."""

from __future__ import annotations

import json
import select
import shutil
import ssl
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest
from mqctl_testkit.fakeserver import FakeServer, expected_signature, refused_addr

from mqctl import errors
from mqctl.remoting.client import MAX_IDLE_WORK, Call, RemotingClient, check
from mqctl.remoting.client_conn import parse_addr
from mqctl.remoting.frame import ROCKETMQ, RemotingCommand
from mqctl.remoting.signing import Credentials

SHORT = 0.3
MARGIN = 0.25  # scheduling slack on a loaded CI machine


def echoes(results: list[RemotingCommand | errors.MqctlError]) -> list[str | None]:
    return [r.ext_fields.get("echo") if isinstance(r, RemotingCommand) else None for r in results]


def wait_for(predicate: object, limit: float = 2.0) -> None:
    end = time.monotonic() + limit
    while not predicate() and time.monotonic() < end:  # type: ignore[operator]
        time.sleep(0.005)


# -- work while waiting --------------------------------------------------------------------------


def test_idle_work_runs_once_with_the_request_already_sent(silent: FakeServer) -> None:
    """when_idle work runs while the answer is awaited: the server holds the request by then (were
    the work run before the send, the server would see nothing while it blocks the client)."""
    seen: list[int] = []

    def work() -> None:
        wait_for(lambda: silent.requests)
        seen.append(len(silent.requests))

    with RemotingClient(timeout=SHORT) as client:
        client.when_idle(work)
        with pytest.raises(errors.RemoteTimeoutError):
            client.call(silent.addr, 30)
        with pytest.raises(errors.RemoteTimeoutError):
            client.call(silent.addr, 30)
    assert seen == [1]


def test_failing_idle_work_leaves_the_call_alone() -> None:
    ran: list[str] = []
    gate = threading.Event()  # the echo answers once the first piece has run: the client waits

    def work() -> None:
        ran.append("x")
        gate.set()
        raise ImportError("no such module")

    with FakeServer("echo", gate=gate) as echo, RemotingClient(timeout=SHORT) as client:
        client.when_idle(work)
        client.when_idle(lambda: ran.append("y"))
        results = client.call_many([Call(echo.addr, 30), Call(echo.addr, 31)])
    assert echoes(results) == ["30", "31"]
    assert ran[0] == "x"  # run in turn; whether the second ran depends on how soon the echo came


def test_an_answer_that_came_during_idle_work_is_read_before_more_of_it(silent: FakeServer) -> None:
    """Idle work runs a piece at a time and yields to an answer that is in: the call returns as
    soon as it can (the next round of requests goes out sooner) and the rest of the work waits
    for the next wait. (Were the socket not looked at between pieces, all would run first.)"""
    gate = threading.Event()
    ran: list[str] = []

    def first() -> None:
        gate.set()  # the server answers now, while this piece runs
        sock = client._pool[server.addr].sock
        assert sock is not None
        assert select.select([sock], [], [], 5.0)[0]  # the answer is in the client's socket
        ran.append("first")

    with FakeServer("echo", gate=gate) as server, RemotingClient(timeout=5.0) as client:
        client.when_idle(first)
        client.when_idle(lambda: ran.append("second"))
        assert client.call(server.addr, 30).ext_fields["echo"] == "30"
        assert ran == ["first"]
        with pytest.raises(errors.RemoteTimeoutError):  # the next wait runs what is left
            client.call(silent.addr, 30, timeout=SHORT)
    assert ran == ["first", "second"]


def test_idle_work_waiting_is_bounded_the_oldest_pushed_out(silent: FakeServer) -> None:
    ran: list[int] = []
    with RemotingClient(timeout=SHORT) as client:
        for n in range(MAX_IDLE_WORK + 3):
            client.when_idle(partial(ran.append, n))
        with pytest.raises(errors.RemoteTimeoutError):
            client.call(silent.addr, 30)
    assert ran == list(range(3, MAX_IDLE_WORK + 3))


def test_each_result_is_told_as_it_comes_in(echo: FakeServer) -> None:
    """on_answer hears of every call once, with the object call_many returns, a failure included,
    and before the batch ends (the reverse server answers the last request first)."""
    told: list[tuple[int, object]] = []
    bad = refused_addr()
    with RemotingClient(timeout=SHORT) as client:
        results = client.call_many(
            [Call(echo.addr, 1), Call(bad, 2), Call(echo.addr, 3)], on_answer=lambda i, r: told.append((i, r))
        )
    assert sorted(i for i, _r in told) == [0, 1, 2]
    assert all(results[i] is r for i, r in told)
    assert isinstance(dict(told)[1], errors.UnreachableError)
    with FakeServer("reverse", batch=5) as server, RemotingClient(timeout=2) as client:
        told.clear()
        client.call_many([Call(server.addr, i) for i in range(5)], on_answer=lambda i, r: told.append((i, r)))
    assert [i for i, _r in told] == [4, 3, 2, 1, 0]


# -- plain calls ------------------------------------------------------------------------------------


def test_call_round_trip(echo: FakeServer) -> None:
    with RemotingClient(timeout=SHORT) as client:
        resp = client.call(echo.addr, 30, {"topic": "T", "queueId": 3, "committed": True, "x": None}, b"hi")
    assert (resp.code, resp.is_response, resp.body) == (0, True, b"hi")
    sent = {"topic": "T", "queueId": "3", "committed": "true"}
    assert dict(resp.ext_fields) == {"echo": "30", **{f"req_{k}": v for k, v in sent.items()}}
    (req,) = echo.requests
    assert req.stype == 0 and req.body == b"hi"
    header = req.header
    assert (header["code"], header["flag"], header["language"], header["version"]) == (30, 0, "JAVA", 479)
    assert header["extFields"] == sent
    assert list(json.loads(req.raw_header)) == sorted(header)  # fastjson's sorted property order
    assert resp.opaque == header["opaque"]


def test_rocketmq_serialization_on_the_wire(echo: FakeServer) -> None:
    with RemotingClient(timeout=SHORT, serialize_type=ROCKETMQ) as client:
        resp = client.call(echo.addr, 105, {"topic": "TopicTest"})
    (req,) = echo.requests
    assert req.stype == 1
    assert (req.header["code"], req.header["version"]) == (105, 479)
    assert req.header["extFields"] == {"topic": "TopicTest"}
    assert resp.ext_fields["echo"] == "105"


def test_error_code_is_returned_and_check_raises() -> None:
    with (
        FakeServer("error", error_code=17, remark="topic[T] not exist") as server,
        RemotingClient() as client,
    ):
        resp = client.call(server.addr, 202, {"topic": "T"})
        assert (resp.code, resp.remark) == (17, "topic[T] not exist")
        with pytest.raises(errors.BrokerResponseError) as info:
            check(resp, server.addr, "GET_TOPIC_STATS_INFO")
    err = info.value
    assert (err.code, err.remark, err.addr) == (17, "topic[T] not exist", server.addr)
    assert err.exit_status == errors.ExitStatus.NOT_FOUND
    assert server.addr in err.message and "topic[T] not exist" in err.message


def test_check_passes_success(echo: FakeServer) -> None:
    with RemotingClient() as client:
        resp = client.call(echo.addr, 30)
    assert check(resp, echo.addr, "x") is resp


def test_unmatched_responses_are_ignored() -> None:
    with FakeServer("stray") as server, RemotingClient(timeout=SHORT) as client:
        results = client.call_many([Call(server.addr, 30 + i) for i in range(5)])
    assert echoes(results) == ["30", "31", "32", "33", "34"]


def test_server_requests_are_answered_not_supported() -> None:
    with FakeServer("server_request") as server, RemotingClient(timeout=SHORT) as client:
        resp = client.call(server.addr, 30)
        assert resp.code == 0
        wait_for(lambda: server.replies_to_server)
    ((code, header),) = server.replies_to_server
    assert (code, header["opaque"], header["flag"]) == (3, 777, 1)
    assert header["remark"] == " request type 40 not supported"


# -- pipelining and back-pressure -------------------------------------------------------------------


def test_200_requests_pipelined_answered_in_reverse() -> None:
    with FakeServer("reverse", batch=200) as server, RemotingClient(timeout=2, max_in_flight=200) as client:
        results = client.call_many([Call(server.addr, i % 400) for i in range(200)])
    assert echoes(results) == [str(i) for i in range(200)]
    assert server.max_outstanding == 200  # all in flight at once before any answer
    assert server.accepted == 1


def test_in_flight_is_bounded_per_connection() -> None:
    with FakeServer("reverse", batch=8) as server, RemotingClient(timeout=2, max_in_flight=8) as client:
        results = client.call_many([Call(server.addr, i) for i in range(40)])
    assert echoes(results) == [str(i) for i in range(40)]
    assert server.max_outstanding == 8


def test_connections_are_bounded() -> None:
    servers = [FakeServer("silent") for _ in range(4)]
    try:
        with RemotingClient(timeout=0.2, max_connections=2) as client:
            start = time.monotonic()
            results = client.call_many([Call(s.addr, 30) for s in servers])
            elapsed = time.monotonic() - start
        assert all(isinstance(r, errors.RemoteTimeoutError) for r in results)
        # Two at a time: two rounds of 0.2 s, not one.
        assert 0.38 <= elapsed < 0.4 + MARGIN
    finally:
        for s in servers:
            s.stop()


def test_connection_reused_and_reopened_after_server_close(echo: FakeServer) -> None:
    with RemotingClient(timeout=SHORT) as client:
        client.call(echo.addr, 1)
        client.call_many([Call(echo.addr, 2), Call(echo.addr, 3)])
        assert echo.accepted == 1
        echo.drop_connections()
        time.sleep(0.05)
        assert client.call(echo.addr, 4).code == 0
        assert echo.accepted == 2
        client.close()
        assert client.call(echo.addr, 5).code == 0
        assert echo.accepted == 3


def test_on_request_counts() -> None:
    seen: list[tuple[str, int]] = []
    with FakeServer("echo") as a, FakeServer("echo") as b:
        with RemotingClient(on_request=lambda addr, code: seen.append((addr, code))) as client:
            client.call_many([Call(a.addr, 1), Call(b.addr, 2), Call(a.addr, 3)])
            client.call(b.addr, 4)
    assert sorted(seen) == sorted([(a.addr, 1), (b.addr, 2), (a.addr, 3), (b.addr, 4)])


# -- failures stay in their slot --------------------------------------------------------------------


def test_one_bad_address_among_good_ones(echo: FakeServer) -> None:
    bad = refused_addr()
    with RemotingClient(timeout=SHORT) as client:
        results = client.call_many(
            [Call(echo.addr, 1), Call(bad, 2), Call(echo.addr, 3), Call("nonsense", 4)]
        )
    assert [getattr(r, "code", None) for r in results] == [0, None, 0, None]
    assert isinstance(results[1], errors.UnreachableError) and bad in results[1].message
    assert isinstance(results[3], errors.UnreachableError) and "nonsense" in results[3].message


def test_every_kind_of_failure_in_one_batch(echo: FakeServer, silent: FakeServer) -> None:
    servers = {mode: FakeServer(mode) for mode in ("garbage", "oversized", "half", "close")}
    refused = refused_addr()
    try:
        addrs = [echo.addr, silent.addr, *(s.addr for s in servers.values()), refused]
        with RemotingClient(timeout=SHORT) as client:
            start = time.monotonic()
            results = client.call_many([Call(addr, 30) for addr in addrs])
            elapsed = time.monotonic() - start
    finally:
        for s in servers.values():
            s.stop()
    assert elapsed < SHORT + MARGIN
    ok, timed_out, garbage, oversized, half, closed, refused_err = results
    assert getattr(ok, "code", None) == 0
    expected: list[tuple[object, type[Exception], str]] = [
        (timed_out, errors.RemoteTimeoutError, "GET_MAX_OFFSET"),
        (garbage, errors.ProtocolError, "not JSON"),
        (oversized, errors.ProtocolError, "exceeds"),
        (half, errors.ProtocolError, "middle of a frame"),
        (closed, errors.UnreachableError, ""),
        (refused_err, errors.UnreachableError, "refused"),
    ]
    for (result, kind, text), addr in zip(expected, addrs[1:]):
        assert isinstance(result, kind), (addr, result)
        assert addr in str(result) and text in str(result)
        assert "\n" not in str(result)


def test_broken_connection_fails_only_its_own_calls(echo: FakeServer) -> None:
    with FakeServer("half") as half, RemotingClient(timeout=SHORT, max_in_flight=1) as client:
        results = client.call_many(
            [Call(half.addr, 1), Call(echo.addr, 2), Call(half.addr, 3), Call(echo.addr, 4)]
        )
    assert isinstance(results[0], errors.ProtocolError) and isinstance(results[2], errors.ProtocolError)
    assert [getattr(results[i], "code", None) for i in (1, 3)] == [0, 0]


# -- bounded time -----------------------------------------------------------------------------------


def test_timeout_is_bounded(silent: FakeServer) -> None:
    with RemotingClient(timeout=SHORT) as client:
        start = time.monotonic()
        with pytest.raises(errors.RemoteTimeoutError) as info:
            client.call(silent.addr, 208, {"consumerGroup": "g"})
        elapsed = time.monotonic() - start
    assert SHORT <= elapsed < SHORT + MARGIN
    assert silent.addr in info.value.message and "GET_CONSUME_STATS" in info.value.message
    assert info.value.exit_status == errors.ExitStatus.UNREACHABLE


def test_per_call_timeout_overrides(silent: FakeServer) -> None:
    with RemotingClient(timeout=30) as client:
        start = time.monotonic()
        (result,) = client.call_many([Call(silent.addr, 30, timeout=0.1)])
    assert isinstance(result, errors.RemoteTimeoutError)
    assert time.monotonic() - start < 0.1 + MARGIN


def test_deadline_bounds_everything(silent: FakeServer) -> None:
    deadline = time.monotonic() + SHORT
    with RemotingClient(timeout=30, deadline=deadline, max_in_flight=1) as client:
        results = client.call_many([Call(silent.addr, 30), Call(silent.addr, 31), Call(silent.addr, 32)])
    assert time.monotonic() < deadline + MARGIN
    assert all(isinstance(r, errors.RemoteTimeoutError) for r in results)
    assert "deadline" in str(results[0]) and "not sent" in str(results[1])


def test_deadline_already_past_sends_nothing(echo: FakeServer) -> None:
    seen: list[tuple[str, int]] = []
    client = RemotingClient(deadline=time.monotonic() - 1, on_request=lambda a, c: seen.append((a, c)))
    with client, pytest.raises(errors.RemoteTimeoutError):
        client.call(echo.addr, 30)
    assert seen == [] and echo.accepted == 0


def test_unresolvable_host_is_bounded() -> None:
    with RemotingClient(timeout=SHORT) as client:
        start = time.monotonic()
        with pytest.raises(errors.UnreachableError) as info:  # a resolver error, or a timeout while resolving
            client.call("no-such-host.invalid:9876", 30)
    assert time.monotonic() - start < SHORT + MARGIN
    assert "no-such-host.invalid" in info.value.message


def test_host_names_resolve(echo: FakeServer) -> None:
    with RemotingClient(timeout=2) as client:
        assert client.call(f"localhost:{echo.port}", 30).code == 0


def test_ipv6_literal() -> None:
    try:
        server = FakeServer("echo", host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback")
    with server, RemotingClient(timeout=SHORT) as client:
        assert client.call(server.addr, 30).code == 0


PARSED = {
    "10.0.0.1:10911": ("10.0.0.1", 10911),
    "[::1]:9876": ("::1", 9876),
    "fe80::1:9876": ("fe80::1", 9876),  # the last ":" splits, as in Java
    " broker-a:10911 ": ("broker-a", 10911),
}


@pytest.mark.parametrize(("addr", "expected"), sorted(PARSED.items()))
def test_parse_addr(addr: str, expected: tuple[str, int]) -> None:
    assert parse_addr(addr) == expected


@pytest.mark.parametrize(
    "addr", ["host", "host:", ":9876", "h:0", "h:65536", "h:abc", "h:１２", "[::1]", "[::1]x:1"]
)
def test_parse_addr_rejects(addr: str) -> None:
    with pytest.raises(errors.UnreachableError) as info:
        parse_addr(addr)
    assert repr(addr) in info.value.message


# -- signing ----------------------------------------------------------------------------------------


def test_requests_are_signed() -> None:
    with FakeServer("verify", secret="SK") as server:
        with RemotingClient(timeout=SHORT, credentials=Credentials("AK", "SK")) as client:
            results = client.call_many(
                [
                    Call(server.addr, 14, {"consumerGroup": "g", "topic": "T", "queueId": 0}),
                    Call(server.addr, 43, body=b"{}"),
                ]
            )
        assert [getattr(r, "code", None) for r in results] == [0, 0]
        assert all(r.ext["AccessKey"] == "AK" for r in server.requests)
        req = server.requests[0]
        assert req.ext["Signature"] == expected_signature(req.ext, b"", "SK")
        with RemotingClient(timeout=SHORT, credentials=Credentials("AK", "wrong")) as client:
            assert client.call(server.addr, 14, {"topic": "T"}).code == 16


def test_unsigned_without_credentials(echo: FakeServer) -> None:
    with RemotingClient(timeout=SHORT) as client:
        client.call(echo.addr, 30, {"topic": "T"})
    assert "Signature" not in echo.requests[0].ext


# -- TLS --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    d = tmp_path_factory.mktemp("tls")
    args = "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1"
    args += f" -addext subjectAltName=IP:127.0.0.1 -keyout {d / 'key.pem'} -out {d / 'cert.pem'}"
    subprocess.run(["openssl", *args.split()], check=True, capture_output=True)
    return d / "cert.pem", d / "key.pem"


def tls_server(cert: tuple[Path, Path]) -> FakeServer:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*cert)
    return FakeServer("echo", tls=ctx)


def test_tls_insecure(cert: tuple[Path, Path]) -> None:
    with tls_server(cert) as server, RemotingClient(timeout=2, tls=True, tls_insecure=True) as client:
        results = client.call_many([Call(server.addr, i) for i in range(20)])
    assert echoes(results) == [str(i) for i in range(20)]
    assert server.accepted == 1


def test_tls_verifies_certificates(cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    with tls_server(cert) as server:
        with RemotingClient(timeout=2, tls=True) as client, pytest.raises(errors.UnreachableError) as info:
            client.call(server.addr, 30)
        assert "certificate" in info.value.message and server.addr in info.value.message
        monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))  # trust it: now the same server verifies
        with RemotingClient(timeout=2, tls=True) as client:
            assert client.call(server.addr, 30).code == 0


def test_tls_stalled_handshake_times_out(silent: FakeServer) -> None:
    with RemotingClient(timeout=SHORT, tls=True, tls_insecure=True) as client:
        start = time.monotonic()
        with pytest.raises(errors.RemoteTimeoutError) as info:
            client.call(silent.addr, 30)
    # The first TLS call also builds the SSL context (the CA bundle is read): on a loaded machine
    # that alone took over half a second. The point is a bounded wait instead of a hang.
    assert time.monotonic() - start < SHORT + MARGIN + 2.0
    assert "TLS handshake" in info.value.message


def test_no_ssl_or_socket_py_import_without_tls(echo: FakeServer) -> None:
    """A plain connection needs neither ssl nor socket.py (whose IntEnums cost ~2 ms a call)."""
    code = (
        "import sys\nfrom mqctl.remoting.client import RemotingClient\n"
        f"RemotingClient(timeout=2).call({echo.addr!r}, 30)\n"
        "print('ssl' in sys.modules, 'socket' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.strip() == "False False"

"""``live_early.Early``: answers decoded while the rest of their round is awaited (a silent server
keeps the client waiting), only the wanted successful ones with a body, a failure raised where the
answer is taken, and the same result either way."""

from __future__ import annotations

import time

import pytest
from mqctl_testkit.fakeserver import FakeServer

from mqctl import errors
from mqctl.backends.live_early import Early
from mqctl.remoting.client import Call, RemotingClient
from mqctl.remoting.frame import RemotingCommand

SHORT = 0.3


def upper(_i: int, answer: RemotingCommand) -> str:
    return answer.body.decode().upper()


def test_decoded_while_the_rest_is_awaited(echo: FakeServer, silent: FakeServer) -> None:
    with RemotingClient(timeout=SHORT) as client:
        pre = Early(client, upper, {0, 1, 3})
        calls = [Call(echo.addr, 1, body=b"abc"), Call(echo.addr, 2), Call(echo.addr, 3, body=b"not wanted")]
        results = client.call_many([*calls, Call(silent.addr, 4, body=b"never answered")], pre.on_answer)
    assert isinstance(results[3], errors.RemoteTimeoutError)
    # index 0 while the silent server was awaited; 1 has no body, 2 is not wanted, 3 failed
    assert pre.done == {0: "ABC"}
    assert pre.take(0, results[0]) == "ABC" and pre.done == {}
    assert pre.take(2, results[2]) == "NOT WANTED"  # (decoded when taken, by the same function)


def test_an_error_answer_is_not_decoded_early(silent: FakeServer) -> None:
    with FakeServer("error") as failing, RemotingClient(timeout=SHORT) as client:
        pre = Early(client, upper, {0})
        results = client.call_many([Call(failing.addr, 1, body=b"x"), Call(silent.addr, 2)], pre.on_answer)
    assert isinstance(results[0], RemotingCommand) and results[0].code != 0 and pre.done == {}


def test_a_decoding_that_fails_raises_where_the_answer_is_taken(echo: FakeServer, silent: FakeServer) -> None:
    tried: list[int] = []

    def broken(i: int, _answer: RemotingCommand) -> str:
        tried.append(i)
        raise errors.ProtocolError("body: malformed JSON")

    with RemotingClient(timeout=SHORT) as client:
        pre = Early(client, broken, {0})
        results = client.call_many([Call(echo.addr, 1, body=b"x"), Call(silent.addr, 2)], pre.on_answer)
    assert tried == [0] and pre.done == {}  # tried while waiting, the error dropped there
    with pytest.raises(errors.ProtocolError, match="malformed"):
        pre.take(0, results[0])


def test_many_answers_are_decoded_a_piece_at_a_time(echo: FakeServer, silent: FakeServer) -> None:
    """200 slow decodings (0.5 ms each) fit no single piece (~1 ms): they are spread over many
    pieces, each handed to when_idle again, and all done within the wait."""
    pieces: list[int] = []

    def slow(i: int, answer: RemotingCommand) -> str:
        time.sleep(0.0005)
        return upper(i, answer)

    with RemotingClient(timeout=1.0) as client:
        pre = Early(client, slow, range(200))
        real = client.when_idle
        client.when_idle = lambda work: (pieces.append(1), real(work))[1]  # type: ignore[method-assign]
        calls = [Call(echo.addr, 1, body=f"m{i}".encode()) for i in range(200)]
        results = client.call_many([*calls, Call(silent.addr, 2)], pre.on_answer)
    assert pre.done == {i: f"M{i}" for i in range(200)}
    assert len(pieces) > 20
    assert [pre.take(i, r) for i, r in enumerate(results[:200])] == [f"M{i}" for i in range(200)]  # type: ignore[arg-type]

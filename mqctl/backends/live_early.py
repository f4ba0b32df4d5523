"""Answers decoded while the rest of their round is on its way.

A round of the groups overview is hundreds of requests; the brokers answer them over ~100 ms, and
the client mostly waits. ``Early`` is told of each answer as it comes in
(``RemotingClient.call_many``'s ``on_answer``) and decodes those it is asked to in that waiting
time, a little at a time (``when_idle``: a piece runs only while no answer is in, so reading the
answers is never held up). What was decoded is taken after the round; an answer not decoded yet,
or whose decoding failed, is decoded then, by the same function, so its error is raised where it
always was. Nothing changes but when the work is done."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Generic, TypeVar

from mqctl.errors import MqctlError
from mqctl.remoting.codes import ResponseCode

if TYPE_CHECKING:
    from mqctl.remoting.client import RemotingClient
    from mqctl.remoting.frame import RemotingCommand

T = TypeVar("T")

PIECE_S = 0.001  # the work of one idle piece: an answer that came meanwhile waits at most this long


class Early(Generic[T]):
    """``decode(index, answer)`` of the successful answers with a body whose index is in
    ``wanted``, done while the client waits; ``take`` gives each one's result."""

    def __init__(
        self, client: RemotingClient, decode: Callable[[int, RemotingCommand], T], wanted: Container[int]
    ) -> None:
        self._client, self._decode, self._wanted = client, decode, wanted
        self._todo: deque[tuple[int, RemotingCommand]] = deque()
        self._queued = False
        self.done: dict[int, T] = {}

    def on_answer(self, index: int, result: RemotingCommand | MqctlError) -> None:
        if index not in self._wanted or isinstance(result, MqctlError):
            return
        if result.code == ResponseCode.SUCCESS and result.body:
            self._todo.append((index, result))
            if not self._queued:
                self._queued = True
                self._client.when_idle(self._piece)

    def _piece(self) -> None:
        self._queued = False
        until = time.perf_counter() + PIECE_S
        while self._todo and time.perf_counter() < until:
            index, answer = self._todo.popleft()
            try:
                self.done[index] = self._decode(index, answer)
            except Exception:  # noqa: BLE001, S112 - decoded again by take(), which raises it
                continue
        if self._todo:
            self._queued = True
            self._client.when_idle(self._piece)

    def take(self, index: int, answer: RemotingCommand) -> T:
        """The decoded ``answer`` (the one at ``index``): from the waiting time, else now."""
        if index in self.done:
            return self.done.pop(index)
        return self._decode(index, answer)

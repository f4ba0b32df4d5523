"""The pull offsets a 5.x broker keeps for broadcasting groups (``topic@group@broadcast`` entries of
its offset table), read live: the question a group without committed offsets asks to tell whether
it is broadcasting. Apart from the overview (``live_groups``, which hands over the tables it read),
so that this question loads neither the overview's decoders nor the client records."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.model import BackendWarning
from mqctl.model.versions import V5_1_0
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mqctl.backends.live_net import LiveRounds
    from mqctl.model import MessageQueue
    from mqctl.remoting.frame import RemotingCommand

Tables = dict[str, dict[str, dict[int, int]]]  # broker -> "topic@group" -> queue id -> offset


def broadcast_pulls(
    backend: LiveRounds,
    group: str | None,
    known: Tables,
    answered: Mapping[str, RemotingCommand | MqctlError] | None = None,
) -> tuple[dict[str, dict[MessageQueue, int]], list[BackendWarning]]:
    """``LiveBackend.broadcast_pull_offsets``: every broker's offset table (``known``: the ones
    already read and decoded; ``answered``: the ones already asked; the others asked in one round,
    but for a broker known to be older than 5.1, which keeps no pull offsets), its
    ``topic@group@broadcast`` entries (``group``'s only, when given: a table that cannot hold them
    is not decoded; at 1,000 groups a table is ~5 ms of decoding), and a warning for each broker
    that did not answer."""
    from mqctl.remoting.bodies import decode_consumer_offsets_body, holds_broadcast_entry

    brokers = [b.broker_name for b in backend.net.brokers() if b.select_addr()]
    answers = dict(answered or {})
    asked = [b for b in brokers if b not in known and b not in answers and may_hold_pulls(backend, b)]
    if asked:
        answers.update(zip(asked, backend.ask([(b, RequestCode.GET_ALL_CONSUMER_OFFSET, {}) for b in asked])))
    tables: Tables = {}
    warnings: list[BackendWarning] = []
    for b, r in answers.items():
        if isinstance(r, MqctlError):
            warnings.append(BackendWarning(b, f"no offset table (broadcast pull offsets): {r.message}"))
        elif (
            r.code == ResponseCode.SUCCESS
            and r.body
            and (group is None or holds_broadcast_entry(r.body, group))
        ):
            tables[b] = decode_consumer_offsets_body(r.body)
        # else: "No consumer offset in this broker", or no entry of the group's in it
    return _broadcast_entries({b: known.get(b) or tables.get(b, {}) for b in brokers}, group), warnings


def may_hold_pulls(backend: LiveRounds, broker: str) -> bool:
    """Whether ``broker`` can keep pull offsets: 5.1.0 wrote the first (BroadcastOffsetManager);
    a broker that has not answered yet, its version unknown, is asked."""
    version = backend.broker_version(broker)
    return version is None or version >= V5_1_0


def _broadcast_entries(tables: Tables, group: str | None) -> dict[str, dict[MessageQueue, int]]:
    if not any(tables.values()):
        return {}  # (nothing decoded: -g of a group without offsets loads no key reader either)
    from mqctl.store.offsets import broadcast_entries

    return broadcast_entries(tables, group)

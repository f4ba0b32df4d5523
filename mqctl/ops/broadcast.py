"""Broadcasting consumer groups: where their progress lives, and that progress read from the
offsets.json files their clients keep.

A BROADCASTING group commits nothing to the broker: every client instance keeps its own offsets
(``LocalFileOffsetStore``), so the broker's consume stats for it are meaningless (committed 0
everywhere, the whole queue as "diff"). This module tells such a group apart (``group_model``)
and computes, from the files the user gathered, each client's rows exactly as consumerProgress
computes a group's: the client's offset against the broker's queue (live or store), lag, lag
time, filtered lag (``client_progress``), then the gates on the worst client (``verdict``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import NotAvailableError, NotFoundError
from mqctl.model import (
    TIME_UNREADABLE,
    ConsumeStats,
    GroupProgress,
    MessageQueue,
    QueueStat,
)
from mqctl.model.broadcast import (
    BROADCASTING,
    CLUSTERING,
    FROM_CLIENTS,
    FROM_FILES,
    FROM_FLAG,
    FROM_PULL_OFFSETS,
    BroadcastProgress,
    ClientOffsets,
    ClientProgress,
    GroupModel,
    in_queue_order,
)
from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.backends.base import Backend, ProgressCallback
    from mqctl.model import BrokerFailure, ConsumerConnection, ProgressRow, QueueOffset, SubExpr, WatchView
    from mqctl.ops.progress import Gates

# A client persists every 5 s (persistConsumerOffsetInterval): a file older than this belongs to a
# client that stopped persisting: gone, or stuck.
DEFAULT_STALE_AFTER_MS = 5 * 60_000

MODELS = (BROADCASTING, CLUSTERING)

NOT_ON_BROKER_HINT = (
    "give the clients' offsets.json with --client-offsets PATH (a file, a client's ~/.rocketmq_offsets, "
    "or copies gathered as HOST/.rocketmq_offsets/...)"
)


def _now(now_ms: int | None) -> int:
    return int(time.time() * 1000) if now_ms is None else now_ms


# ------------------------------------------------------------------------------ which model


def online(backend: Backend, group: str) -> tuple[ConsumerConnection | None, bool]:
    """The group's online clients (live; None when none is online) and whether the backend can
    tell who is online at all (a store cannot)."""
    if not backend.kind.knows_runtime:
        return None, False
    try:
        return backend.consumer_connection(group), True
    except NotFoundError:
        return None, True
    except NotAvailableError:
        return None, False


def connection(backend: Backend, group: str) -> ConsumerConnection | None:
    """The group's online clients (live), None when none is online or the backend cannot tell."""
    return online(backend, group)[0]


def _pull_offsets(backend: Backend, group: str) -> tuple[tuple[MessageQueue, int], ...]:
    try:
        found = backend.broadcast_pull_offsets(group).get(group, {})
    except NotAvailableError:
        return ()
    return in_queue_order(found)


def _model_of(
    conn: ConsumerConnection, source: str, pulls: tuple[tuple[MessageQueue, int], ...]
) -> GroupModel:
    subs = tuple(dict.fromkeys(s.topic for s in conn.subscriptions))
    return GroupModel(conn.message_model or CLUSTERING, source, conn.connections, pulls, subs)


def group_model(
    backend: Backend, group: str, declared: str | None = None, rows: Sequence[ProgressRow] | None = None
) -> GroupModel | None:
    """The group as broadcasting (with what the backend knows of it), or None.

    ``declared`` (``--model``): BROADCASTING is taken as said (a store cannot tell: the
    subscription group has no marker, consumeBroadcastEnable is a permission every group has),
    CLUSTERING skips every question. Otherwise, when ``rows`` (the broker's consume stats) show no
    committed progress (a broadcast group commits nothing): live, the online clients' heartbeats
    say the model; else a 5.1+ broker's ``topic@group@broadcast`` entries mark it."""
    if declared == CLUSTERING:
        return None
    from mqctl.ops.progress import commits_offsets

    if declared is None and rows is not None and commits_offsets(rows):
        return None  # the group commits offsets to the broker: not broadcasting
    seen = backend.group_presence(group)
    conn = seen.connection
    if conn is not None and conn.message_model != BROADCASTING and declared is None:
        return None
    pulls = seen.pull_offsets if seen.pull_offsets is not None else _pull_offsets(backend, group)
    if conn is not None and conn.message_model == BROADCASTING:
        return _model_of(conn, FROM_CLIENTS, pulls)
    if declared == BROADCASTING:
        return GroupModel(BROADCASTING, FROM_FLAG, pull_offsets=pulls)
    if pulls:
        return GroupModel(BROADCASTING, FROM_PULL_OFFSETS, pull_offsets=pulls)
    return None


def not_on_broker(model: GroupModel, group: str) -> NotAvailableError:
    """The error a broadcasting group's consumerProgress ends with when no client file was given."""
    return NotAvailableError(
        f"group {group} is a broadcasting consumer group (known from {model.source}): its progress lives on "
        "each client, in <dir>/<clientId>/" + group + "/offsets.json; the brokers keep no committed offsets "
        "for it, so they have no lag to show",
        NOT_ON_BROKER_HINT,
    )


# ------------------------------------------------------------------------------ the clients' progress


def _broker_queues(
    backend: Backend, group: str, topics: Iterable[str], warnings: list[str], *, given: bool = False
) -> tuple[dict[MessageQueue, QueueStat], list[BrokerFailure]]:
    """Each queue of the topics as the brokers have it (max, min): one consume-stats question per
    topic (the committed offsets in it are the broker's, meaningless here, and not used). A topic
    only the files name that no broker has any more is left out, said on stderr; a topic the user
    named (``given``) or a group the brokers do not know is NotFoundError (exit 3, not a clean 0)."""
    queues: dict[MessageQueue, QueueStat] = {}
    failures: list[BrokerFailure] = []
    for t in topics:
        if not given:
            try:
                backend.topic_route(t)
            except NotFoundError:
                warnings.append(
                    f"topic {t} (in the clients' files) is on no broker any more: its offsets are left out"
                )
                continue
        stats = backend.consume_stats(group, t, detail=True)
        queues.update((q.queue, q) for q in stats.queues)
        failures += stats.failures
    return queues, failures


def _client_stats(
    group: str, client: ClientOffsets, queues: dict[MessageQueue, QueueStat], times: dict[QueueOffset, int]
) -> ConsumeStats:
    """The brokers' queues with this client's offsets as the committed ones; a queue the file does
    not name has none (the client starts it by its consumeFromWhere: counted from min, as the
    broker counts a group's "none")."""
    own = {mq: off for mq, off in client.offsets if off >= 0}
    rows = []
    for mq, q in queues.items():
        off = own.get(mq)
        last = times.get(_at(mq, off - 1), 0) if off else 0
        rows.append(
            QueueStat(
                queue=mq,
                broker_offset=q.broker_offset,
                consumer_offset=off or 0,
                last_timestamp=None if last == TIME_UNREADABLE else max(last, 0),
                min_offset=q.min_offset,
                committed=off is not None,
            )
        )
    return ConsumeStats(group, tuple(rows))


def _at(mq: MessageQueue, offset: int) -> QueueOffset:
    """A position in a queue (model.positions loads only when a client's file is read)."""
    from mqctl.model import QueueOffset

    return QueueOffset(mq, offset)


def _positions(clients: Sequence[ClientOffsets], queues: dict[MessageQueue, QueueStat]) -> list[QueueOffset]:
    """Every store time the clients' rows need, each once: the message before each client's
    offset (last consumed) and the first unconsumed one (lag time)."""
    want: dict[QueueOffset, None] = {}
    for c in clients:
        own = {mq: off for mq, off in c.offsets if off >= 0}
        for mq, q in queues.items():
            off = own.get(mq, 0)
            if off > 0:
                want[_at(mq, off - 1)] = None
            start = max(off, q.min_offset or 0)
            if start < q.broker_offset:
                want[_at(mq, start)] = None
    return list(want)


def store_times(
    backend: Backend, positions: list[QueueOffset], cache: dict[QueueOffset, int]
) -> dict[QueueOffset, int]:
    """Store times of ``positions`` in one batch; ``cache`` (kept across --watch samples) saves
    asking again for a position whose message was found before (it never changes)."""
    missing = [p for p in positions if p not in cache]
    fresh = dict(zip(missing, backend.store_times(missing))) if missing else {}
    times = {p: cache[p] if p in cache else fresh[p] for p in positions}
    cache.clear()
    cache.update((p, t) for p, t in times.items() if t >= 0)
    return times


def _age(client: ClientOffsets, now: int) -> int | None:
    return None if client.mtime_ms is None else max(now - client.mtime_ms, 0)


def _files_model(
    backend: Backend, group: str, with_pulls: bool, warnings: list[str]
) -> tuple[GroupModel, bool]:
    """What the backend knows of a group whose files were given: live, its online clients (and
    whether the backend can tell who is online at all)."""
    conn, tells = online(backend, group)
    pulls = _pull_offsets(backend, group) if with_pulls else ()
    if conn is None:
        return GroupModel(BROADCASTING, FROM_FILES, pull_offsets=pulls), tells
    model = _model_of(conn, FROM_CLIENTS, pulls)
    if not model.broadcasting:
        warnings.append(
            f"the online clients of group {group} say {model.model}: the brokers hold its progress "
            "(consumerProgress without --client-offsets); these files are a broadcasting client's from before"
        )
    return model, True


def _rows(
    backend: Backend,
    group: str,
    c: ClientOffsets,
    queues: dict[MessageQueue, QueueStat],
    times: dict[QueueOffset, int],
    now: int,
    failures: Sequence[BrokerFailure],
    tags: SubExpr | None,
    verify_tags: bool,
) -> GroupProgress:
    """One client's rows as consumerProgress computes a group's (its times already fetched)."""
    from mqctl.ops.progress import rows_from_stats

    rows, collisions = rows_from_stats(
        backend,
        _client_stats(group, c, queues, times),
        now,
        tags=tags,
        verify_tags=verify_tags,
        client_ips=dict.fromkeys(queues, c.label),
        time_cache=dict(times),
    )
    return GroupProgress(group, rows, now, tags=tags, tag_collisions=collisions, failures=tuple(failures))


def client_progress(
    backend: Backend,
    group: str,
    clients: Sequence[ClientOffsets],
    topic: str | None = None,
    *,
    tags: SubExpr | None = None,
    verify_tags: bool = False,
    now_ms: int | None = None,
    stale_after_ms: int = DEFAULT_STALE_AFTER_MS,
    on_progress: ProgressCallback | None = None,
    time_cache: dict[QueueOffset, int] | None = None,
    with_pull_offsets: bool = True,
) -> BroadcastProgress:
    """Every client's rows (the topic given, else every topic its files or, live, its online
    clients name), each computed as consumerProgress computes a group's (``rows_from_stats``).
    ``with_pull_offsets``: also the brokers' topic@group@broadcast entries (live: one more request
    per broker; a --watch leaves them out)."""
    now = _now(now_ms)
    warnings = [c.warning for c in clients if c.warning]
    model, tells = _files_model(backend, group, with_pull_offsets, warnings)
    subscribed = model.subscriptions if model.broadcasting else ()
    named = [t for c in clients for t in c.topics()]
    topics = [topic] if topic else list(dict.fromkeys([*named, *subscribed]))
    queues, failures = _broker_queues(backend, group, topics, warnings, given=topic is not None)
    warnings += _outside(clients, queues, topic)
    times = store_times(backend, _positions(clients, queues), {} if time_cache is None else time_cache)
    online = {c.client_id for c in model.clients}
    out = []
    for i, c in enumerate(clients):
        progress = _rows(backend, group, c, queues, times, now, failures, tags, verify_tags)
        age = _age(c, now)
        connected = (c.client_id in online) if tells and c.client_id else None
        out.append(ClientProgress(c, progress, age, age is not None and age > stale_after_ms, connected))
        if on_progress is not None:
            on_progress(i + 1, len(clients))
    warnings += [str(w) for w in backend.take_warnings()]
    have = {c.client_id for c in clients}
    return BroadcastProgress(
        group=group,
        clients=tuple(out),
        now_ms=now,
        stale_after_ms=stale_after_ms,
        model=model,
        tags=tags,
        warnings=tuple(dict.fromkeys(warnings)),
        failures=tuple(failures),
        unseen=tuple(x for x in model.clients if x.client_id not in have),
        rocketmq_version=backend.rocketmq_version(),
        topics=tuple(topics),
    )


def _outside(
    clients: Sequence[ClientOffsets], queues: dict[MessageQueue, QueueStat], topic: str | None
) -> list[str]:
    """Offsets a file holds for queues no broker serves (a queue count that shrank, a broker gone)."""
    out = []
    for c in clients:
        gone = [mq for mq, _off in c.offsets if mq not in queues and (topic is None or mq.topic == topic)]
        if gone:
            names = ", ".join(f"{q.topic}/{q.broker_name}/{q.queue_id}" for q in gone[:3])
            out.append(f"{c.path}: offsets of {len(gone)} queue(s) no broker serves ({names}): left out")
    return out


# ------------------------------------------------------------------------------ the verdict


def named(cp: ClientProgress) -> GroupProgress:
    """A client's progress under a name the gates' messages can say: "G, client HOST/ID"."""
    return replace(cp.progress, group=f"{cp.progress.group}, client {cp.client.label}")


def verdict(
    result: BroadcastProgress, gates: Gates, views: Sequence[WatchView] = (), max_status: str | None = None
) -> None:
    """After the output: brokers that did not answer, then the gates on every client (the worst
    first, so the message names the worst client over a limit), --max-status over each client's
    --history window, then unreadable store times."""
    from mqctl.errors import BrokersFailedError
    from mqctl.ops.progress import check_times_readable
    from mqctl.ops.watch.rules import check_status

    if result.failures:
        raise BrokersFailedError(result.failures, "the clients' rows of their queues are missing")
    for cp in result.ranked:
        gates.check_group(named(cp))
    for view in views:
        check_status(view, max_status)
    for cp in result.ranked:
        check_times_readable(named(cp))


def from_files(
    backend: Backend, group: str, paths: Sequence[Path], topic: str | None = None, **options: Any
) -> BroadcastProgress:
    """consumerProgress ``--client-offsets``: the clients' files of ``group`` under ``paths``
    (``backends.clientoffsets``: a file that cannot be read is exit 6 naming it, before any
    output), then :func:`client_progress` with ``options``."""
    from mqctl.backends.clientoffsets import read_client_offsets

    return client_progress(backend, group, read_client_offsets(paths, group), topic, **options)

"""The groups overview's broadcasting groups: said for what they are (their progress lives on
their clients), judged by their worst client where the clients' files were given."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.model import GroupSummary
from mqctl.model.broadcast import BROADCASTING, FOUND_CLIENT_FILES, BroadcastProgress
from mqctl.ops.broadcast import DEFAULT_STALE_AFTER_MS, client_progress
from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


def overview(
    backend: Backend,
    summaries: Sequence[GroupSummary],
    paths: Sequence[Path] = (),
    *,
    now_ms: int | None = None,
    stale_after_ms: int = DEFAULT_STALE_AFTER_MS,
) -> list[GroupSummary]:
    """The groups overview with its broadcasting groups said for what they are: live, the ones
    whose clients say BROADCASTING; on 5.1+ brokers, the ones with topic@group@broadcast entries;
    the ones whose client files are under ``paths`` (with them: the worst client's lag and the
    oldest unconsumed message over its clients, in place of the broker's meaningless numbers;
    groups only the files name are added)."""
    from mqctl.backends.clientoffsets import client_groups, load

    pulls = set(backend.broadcast_pull_offsets())
    files = client_groups(paths) if paths else {}
    out = []
    known = {g.group for g in summaries}
    extra = [GroupSummary(g, 0, [], [], 0, found_in=(FOUND_CLIENT_FILES,)) for g in files if g not in known]
    for g in [*summaries, *extra]:
        if g.group in files:
            clients = [load(f) for f in files[g.group]]
            g = _judged(
                g,
                client_progress(
                    backend,
                    g.group,
                    clients,
                    now_ms=now_ms,
                    stale_after_ms=stale_after_ms,
                    with_pull_offsets=False,
                ),
            )
        elif g.message_model == BROADCASTING or (g.group in pulls and not g.queues):
            # The brokers' numbers for it are meaningless (nothing committed): not known here.
            g = replace(
                g,
                offsets_on_clients=True,
                message_model=BROADCASTING,
                diff_total=0,
                raw_diff_total=0,
                max_lag_ms=0,
                queues_above_max=0,
                time_unknown=0,
            )
        out.append(g)
    return out


def _judged(g: GroupSummary, bp: BroadcastProgress) -> GroupSummary:
    worst = bp.worst
    rows = [r for cp in bp.clients for r in cp.progress.rows]
    return replace(
        g,
        offsets_on_clients=True,
        message_model=BROADCASTING,
        diff_total=worst.progress.diff_total if worst else 0,
        raw_diff_total=worst.progress.raw_diff_total if worst else 0,
        max_lag_ms=max((cp.progress.max_lag_ms for cp in bp.clients), default=0),
        queues=len({r.queue for r in rows}),
        topics=sorted({r.topic for r in rows}),
        brokers=sorted({r.broker_name for r in rows}),
        queues_above_max=len({r.queue for r in rows if r.above_max}),
        time_unknown=sum(len(cp.progress.time_unknown) for cp in bp.clients),
        failures=(*g.failures, *bp.failures),
        worst_client=worst.client.label if worst else None,
        client_files=len(bp.clients),
        stale_clients=len(bp.stale),
    )

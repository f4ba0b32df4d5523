"""consumerProgress's one-shot reads, one entry point per mode: one group (or the notice that it
is broadcasting), a broadcasting group's clients from their files, the groups overview. Each takes
the backend the command opened (and closes it), records a --history sample when asked, and
returns what cli/progress.py draws and judges; the over-time modes are ``ops.watch.modes``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend, ProgressCallback
    from mqctl.model import BackendKind, GroupProgress, GroupSummary, ProgressRow, Rules, SubExpr, WatchView
    from mqctl.model.broadcast import BroadcastProgress, GroupModel
    from mqctl.ops.progress import Gates


@record(frozen=True)
class Query:
    """What a one-shot read of one group asks for (consumerProgress -g's flags)."""

    tags: SubExpr | None = None
    verify_tags: bool = False
    now_ms: int | None = None
    show_client_ip: bool = False


@record(frozen=True)
class GroupRead:
    kind: BackendKind
    result: GroupProgress | None = None  # None: the group is broadcasting (``model``)
    model: GroupModel | None = None
    view: WatchView | None = None  # --history: this read judged with the file's last window
    warnings: list[str] = field(default_factory=list)  # the history's


def history_path(history: str | None, protected: Sequence[Path]) -> Path | None:
    """--history's file, refused inside a store (checked before anything is read)."""
    if history is None:
        return None
    from mqctl.ops.watch.history import check_history_path

    return check_history_path(history, protected)


def read_group(
    backend: Backend,
    group: str,
    topic: str | None,
    query: Query,
    gates: Gates,
    *,
    plain: bool,
    declared: str | None = None,
    history: tuple[str, Rules] | None = None,
    on_progress: ProgressCallback | None = None,
) -> GroupRead:
    """One group: ``progress.group_progress``, recorded to ``history`` (--history PATH, rules)
    when asked. A broadcasting group (``declared`` by --model, or told by the backend) gives its
    ``GroupModel`` instead of rows. ``plain``: mqadmin's columns only, so live, one request per
    broker and no more (unless a store, or a lag-time gate, needs the rest)."""
    from mqctl.ops import progress as ops

    with backend:
        path = history_path(history[0], backend.protected_paths()) if history else None
        model = _broadcast_model(backend, group, declared) if declared == "BROADCASTING" else None
        if model is None:
            detail = not plain or backend.kind.reads_files or gates.max_lag_ms is not None
            result = ops.group_progress(
                backend,
                group,
                topic,
                on_progress=on_progress,
                detail=detail,
                tags=query.tags,
                verify_tags=query.verify_tags,
                now_ms=query.now_ms,
                show_client_ip=query.show_client_ip,
            )
            # a group the brokers show committed progress for is no broadcasting one: nothing asked
            commits = ops.commits_offsets(result.rows)
            model = None if declared or commits else _broadcast_model(backend, group, None, result.rows)
        kind = backend.kind
    if model is not None:
        return GroupRead(kind, model=model)
    if path is None or history is None:
        return GroupRead(kind, result)
    # --history (cron): recorded even when a broker did not answer (the sample incomplete)
    from mqctl.ops.watch.history import record

    view, warnings = record(path, result, kind, topic, history[1])
    return GroupRead(kind, result, view=view, warnings=warnings)


def _broadcast_model(
    backend: Backend, group: str, declared: str | None, rows: Sequence[ProgressRow] | None = None
) -> GroupModel | None:
    from mqctl.ops.broadcast import group_model

    return group_model(backend, group, declared, rows)


@record(frozen=True)
class ClientsRead:
    kind: BackendKind
    result: BroadcastProgress
    views: list[WatchView]  # --history: each client's sample judged with its own last window
    warnings: list[str]  # the history's


def read_clients(
    backend: Backend,
    group: str,
    paths: Sequence[Path],
    topic: str | None,
    query: Query,
    *,
    stale_after_ms: int,
    history: tuple[str, Rules] | None = None,
    on_progress: ProgressCallback | None = None,
) -> ClientsRead:
    """--client-offsets: every client's rows from its file (``broadcast.from_files``), each
    recorded to --history under the client's label when asked."""
    from mqctl.ops import broadcast as ops

    with backend:
        path = history_path(history[0], backend.protected_paths()) if history else None
        result = ops.from_files(
            backend,
            group,
            paths,
            topic,
            tags=query.tags,
            verify_tags=query.verify_tags,
            now_ms=query.now_ms,
            stale_after_ms=stale_after_ms,
            on_progress=on_progress,
        )
        kind = backend.kind
    views: list[WatchView] = []
    warnings: list[str] = []
    if path is not None and history is not None:
        from mqctl.ops.watch.history import record

        for cp in result.clients:
            view, lines = record(path, cp.progress, kind, topic, history[1], client=cp.client.label)
            warnings += lines
            views.append(view)
    return ClientsRead(kind, result, views, warnings)


def read_overview(
    backend: Backend,
    gates: Gates,
    client_files: Sequence[Path] = (),
    *,
    now_ms: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> tuple[list[GroupSummary], list[str], BackendKind]:
    """Without -g: every group's summary (its broadcasting groups said so, judged by their clients'
    files when given), the warnings to show before it, and the backend's kind."""
    from mqctl.ops import progress as ops
    from mqctl.ops.broadcast_overview import overview as with_broadcast

    with backend:
        # Lag time costs two requests per lagging queue live: only when a gate needs it.
        lag_time = backend.kind.reads_files or gates.max_lag_ms is not None
        summaries = ops.all_groups(backend, now_ms=now_ms, on_progress=on_progress, lag_time=lag_time)
        summaries = with_broadcast(backend, summaries, client_files, now_ms=now_ms)
        warnings = [str(w) for w in backend.take_warnings()]
        kind = backend.kind
    return summaries, warnings + _overview_warnings(summaries, gates), kind


def _overview_warnings(summaries: Sequence[GroupSummary], gates: Gates) -> list[str]:
    out = [f"{g.group}: {line}" for g in summaries for line in g.notes]
    above = [g.group for g in summaries if g.queues_above_max]
    if above:
        out.append(
            f"{len(above)} group(s) have queues whose committed offset lies above the queue's max "
            f"(counted as 0 lag): {', '.join(above[:5])}{' ...' if len(above) > 5 else ''}"
        )
    unjudged = [g.group for g in summaries if g.offsets_on_clients and not g.client_files]
    if unjudged and gates.any:
        out.append(
            f"{len(unjudged)} broadcasting group(s) not judged by the gates: their progress lives on their "
            f"clients (give their files with --client-offsets PATH): {', '.join(unjudged[:5])}"
        )
    return out

"""consumerProgress of broadcasting groups: the flags (``--client-offsets``, ``--model``,
``--stale-after``) and the modes they select: the notice that a broadcasting group's progress
lives on its clients (exit 7), and each client's progress from its offsets.json
(``ops.broadcast``), drawn by ``render.broadcast``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mqctl.cli.blocks import Flag, block, opt
from mqctl.cli.errors import warn_all
from mqctl.cli.output import Output, emit, scanning
from mqctl.errors import UsageError
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.cli.cluster import Cluster
    from mqctl.cli.progress_watch import WatchFlags
    from mqctl.model import BackendKind
    from mqctl.model.broadcast import GroupModel
    from mqctl.ops.progressrun import Query

ClientOffsetsOpt = Annotated[
    list[Path] | None,
    opt(
        "--client-offsets",
        metavar="PATH",
        help="A broadcasting group: its progress from the offsets.json each client keeps (a client's "
        "file, its ~/.rocketmq_offsets directory, or a directory of copies gathered from many hosts as "
        "HOST/.rocketmq_offsets/...). Repeat for several. Per client and queue: the client's offset, the "
        "broker offset, diff, lag time (--tags: filtered lag); per-client totals, the worst client, gates "
        "on every client. Without -g: the overview adds each broadcasting group's worst client.",
    ),
]
ModelOpt = Annotated[
    str | None,
    opt(
        "--model",
        metavar="broadcasting|clustering",
        help="The group's message model when the backend cannot tell (a store: a subscription group has no "
        "broadcast marker). Default: live, the clients' heartbeats say it; on a 5.1+ store, the broker's "
        "topic@group@broadcast entries.",
    ),
]
StaleAfterOpt = Annotated[
    str | None,
    opt(
        "--stale-after",
        metavar="DURATION",
        help="With --client-offsets: a client file not written for longer (default 5m; a running client "
        "rewrites it every 5 s) is flagged STALE: the client is gone or stuck.",
    ),
]


@record(frozen=True)
class BroadcastFlags:
    client_offsets: list[Path] | None = None
    model: str | None = None
    stale_after: str | None = None

    @property
    def declared(self) -> str | None:
        """--model, upper-cased (BROADCASTING | CLUSTERING), None when not given."""
        return None if self.model is None else self.model.strip().upper()

    @property
    def stale_after_ms(self) -> int:
        from mqctl.ops.broadcast import DEFAULT_STALE_AFTER_MS
        from mqctl.ops.timeparse import parse_duration_ms

        return DEFAULT_STALE_AFTER_MS if self.stale_after is None else parse_duration_ms(self.stale_after)


broadcast_options = block(
    "bcast",
    [Flag("client_offsets", ClientOffsetsOpt), Flag("model", ModelOpt), Flag("stale_after", StaleAfterOpt)],
    BroadcastFlags,
)


def check_flags(f: BroadcastFlags, group: str | None, *, client_ip: bool, over_time: WatchFlags) -> None:
    if f.declared is not None:
        from mqctl.ops.broadcast import MODELS

        if f.declared not in MODELS:
            raise UsageError(f"--model {f.model}: expected broadcasting or clustering")
    if f.model is not None and group is None:
        raise UsageError("--model needs -g/--groupName")
    if f.stale_after is not None:
        if not f.client_offsets:
            raise UsageError("--stale-after needs --client-offsets PATH")
        _ = f.stale_after_ms  # a bad duration is a usage error now
    if not f.client_offsets:
        return
    if f.declared == "CLUSTERING":
        raise UsageError(
            "--client-offsets reads a broadcasting group's files; --model clustering contradicts it"
        )
    if client_ip:
        raise UsageError(
            "-s true names each queue's client; with --client-offsets every row is a client's already"
        )
    if over_time.why or over_time.status_from:
        raise UsageError(
            "--why and --status-from read the brokers' committed offsets, not --client-offsets",
            "--watch and --history work per client with --client-offsets",
        )
    if group is None and (over_time.any or f.stale_after is not None):
        raise UsageError("--watch, --history and --stale-after with --client-offsets need -g/--groupName")


# ------------------------------------------------------------------------------ the notice


def notice(model: GroupModel, group: str, out: Output, kind: BackendKind) -> None:
    """A broadcasting group without its clients' files: say so (the clients the broker knows, the
    brokers' pull positions for what they are), then exit 7."""
    from mqctl.ops.broadcast import not_on_broker
    from mqctl.render import broadcast as render

    emit(out.fmt, render.notice_views(model, group, kind), headers=out.headers)
    raise not_on_broker(model, group)


# ------------------------------------------------------------------------------ per client


def clients(
    cluster: Cluster,
    group: str,
    topic: str | None,
    query: Query,
    gates: Any,
    f: WatchFlags,
    bcast: BroadcastFlags,
    out: Output,
) -> None:
    """--client-offsets: every client's rows (ops.progressrun.read_clients, recorded per client to
    --history), drawn, judged."""
    from mqctl.cli import progress_watch
    from mqctl.ops import broadcast as ops
    from mqctl.ops.progressrun import read_clients

    assert bcast.client_offsets
    history = (f.history, progress_watch.rules_of(f)) if f.history is not None else None
    files, stale_ms = bcast.client_offsets, bcast.stale_after_ms
    read = scanning(
        read_clients, cluster.open(), group, files, topic, query, stale_after_ms=stale_ms, history=history
    )
    warn_all(read.warnings)
    _draw(read.result, out, read.kind)
    ops.verdict(read.result, gates, read.views, progress_watch.max_status(f))


def _draw(result: Any, out: Output, kind: BackendKind) -> None:
    from mqctl.render import broadcast as render

    warn_all(render.warning_lines(result))
    emit(out.fmt, render.views(result, kind, headers=out.headers), headers=out.headers)

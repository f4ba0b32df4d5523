"""mqctl consumerProgress — mqadmin consumerProgress on a store, plus exact filtered lag and lag time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli import progress_watch
from mqctl.cli.blocks import opt
from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.command import given
from mqctl.cli.errors import handle_errors, warn, warn_all
from mqctl.cli.output import Output, OutputFormat, after_answers, emit, output_options, scanning
from mqctl.cli.progress_broadcast import BroadcastFlags, broadcast_options
from mqctl.cli.progress_watch import WatchFlags, watch_options
from mqctl.cli.values import true_false
from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.ops.progressrun import Query

HELP = """Query a consumer group's progress: per queue the broker offset (max), the committed consumer
offset, the diff, and the store time of the last consumed message — the numbers mqadmin prints,
computed from the broker's store files.

Without -g: every group of the offset tables with its diff total.

Beyond mqadmin: minOffset, the store time of the oldest unconsumed message and its age (lag time),
--tags for exact filtered lag, and --max-lag / --max-lag-time gates for CI (exit 10).

Over time: --watch samples the group every few seconds (a live table, or JSON lines on a pipe) with
consume and produce rates, time to drain and a status per queue (OK, WARN, REWIND, STOP, STALL,
STUCK: see --max-status); --history PATH records samples (cron), --status-from PATH judges them
later; --why QUEUE shows the message a queue's committed offset waits on.

mqadmin equivalent: mqadmin consumerProgress -g GROUP [-t TOPIC] [-s true]"""


# The options, one alias each (the command's signature stays one line per option).
_GroupOpt = Annotated[
    str | None,
    opt("--groupName", "-g", help="Consumer group. Absent: all groups."),
]

_TopicOpt = Annotated[str | None, opt("--topicName", "-t", help="Only this topic (with -g).")]

_ShowClientIpOpt = Annotated[
    str | None,
    opt(
        "--showClientIP",
        "-s",
        metavar="true|false",
        help="mqadmin's -s true: add the Client IP column, in plain and in the table (N/A on a "
        "store: no connections).",
    ),
]

_TagsOpt = Annotated[
    str | None,
    opt(
        "--tags",
        metavar="EXPR",
        help="Exact filtered lag: count the unconsumed messages whose tag matches EXPR ('*', 'TagA || TagB') "
        "over the ConsumeQueue tag hashes (every entry, no sampling). Different tags can share a hash "
        "(Java String.hashCode, e.g. 'Aa' and 'BB'); add --verify-tags to confirm each match against the "
        "real tag in the CommitLog.",
    ),
]

_VerifyTagsOpt = Annotated[
    bool,
    typer.Option(
        "--verify-tags",
        help="With --tags: read each hash match's TAGS from the CommitLog and count only real "
        "matches (slower; reports collisions).",
    ),
]

_MaxLagOpt = Annotated[
    int | None,
    opt(
        "--max-lag",
        metavar="N",
        help="Exit 10 after printing when the diff total (matched total with --tags) exceeds N. "
        "Without -g: when any group's diff total does (the fleet-wide check).",
    ),
]

_MaxLagTimeOpt = Annotated[
    str | None,
    opt(
        "--max-lag-time",
        metavar="DURATION",
        help="Exit 10 after printing when the oldest unconsumed message "
        "is older than DURATION (1h30m, 90s, PT15M); without -g, in any group.",
    ),
]

_SortOpt = Annotated[
    str,
    typer.Option(
        "--sort",
        metavar="lag|name|mqadmin",
        help="Without -g: row order of the table, JSON and CSV (plain keeps mqadmin's order).",
    ),
]

_NowMsOpt = Annotated[int | None, typer.Option("--now-ms", hidden=True)]


@handle_errors
@output_options(headers=True)
@cluster_options(mqadmin_cluster=True)
@watch_options
@broadcast_options
def consumer_progress(
    group: _GroupOpt = None,
    topic: _TopicOpt = None,
    show_client_ip: _ShowClientIpOpt = None,
    tags: _TagsOpt = None,
    verify_tags: _VerifyTagsOpt = False,
    max_lag: _MaxLagOpt = None,
    max_lag_time: _MaxLagTimeOpt = None,
    sort: _SortOpt = "lag",
    now_ms: _NowMsOpt = None,
    *,
    over_time: WatchFlags,
    bcast: BroadcastFlags,
    cluster: Cluster,
    out: Output,
) -> None:
    from mqctl.cli import progress_broadcast

    group = group.strip() if group else None
    topic = topic.strip() if topic else None
    gates, sub = _check_flags(group, topic, tags, verify_tags, max_lag, max_lag_time, sort)
    ip = show_client_ip is not None and true_false(show_client_ip, "-s/--showClientIP")
    progress_watch.check_idle(over_time)
    if over_time.any:
        progress_watch.check_flags(over_time, group, tags=tags is not None, client_ip=ip, gates=gates.any)
    progress_broadcast.check_flags(bcast, group, client_ip=ip, over_time=over_time)
    if over_time.takes_over:  # --status-from, --watch or --why
        assert group is not None
        return progress_watch.run(over_time, group, topic, out, cluster, now_ms, bcast)
    if group is None:
        return _overview(cluster, gates, out, sort, now_ms, bcast)
    from mqctl.ops.progressrun import Query

    query = Query(sub, verify_tags, now_ms, ip)
    if bcast.client_offsets:
        return progress_broadcast.clients(cluster, group, topic, query, gates, over_time, bcast, out)
    return _group(cluster, group, topic, query, gates, over_time, out, bcast.declared)


def _group(
    cluster: Cluster,
    group: str,
    topic: str | None,
    query: Query,
    gates: Any,
    f: WatchFlags,
    out: Output,
    declared: str | None = None,
) -> None:
    """One group: ops.progressrun.read_group (recorded to --history when asked), drawn, judged. A
    broadcasting group (--model, or told by the backend) gets the notice instead (exit 7)."""
    from mqctl.cli.progress_broadcast import notice
    from mqctl.ops import progress as ops
    from mqctl.ops.progressrun import read_group

    history = (f.history, progress_watch.rules_of(f)) if f.history is not None else None
    plain = out.fmt is OutputFormat.plain
    read = scanning(
        read_group,
        after_answers(cluster.open(), out.fmt, "mqctl.render.progress"),
        group,
        topic,
        query,
        gates,
        plain=plain,
        declared=declared,
        history=history,
    )
    if read.model is not None:
        return notice(read.model, group, out, read.kind)
    assert read.result is not None
    warn_all(read.warnings)
    _report(read.result, topic, out.fmt, query.show_client_ip, out.headers, read.kind)
    ops.verdict(read.result, gates, read.view, progress_watch.max_status(f))


def _overview(
    cluster: Cluster, gates: Any, out: Output, sort: str, now_ms: int | None, bcast: BroadcastFlags
) -> None:
    """Without -g: the groups overview (ops.progressrun.read_overview), drawn, judged."""
    from mqctl.ops import progress as ops
    from mqctl.ops.progressrun import read_overview

    files = bcast.client_offsets or ()
    backend = after_answers(cluster.open(), out.fmt, "mqctl.render.overview")
    summaries, warnings, kind = scanning(read_overview, backend, gates, files, now_ms=now_ms)
    from mqctl.render import overview

    warn_all(warnings)
    ordered = ops.sort_groups(summaries, sort)
    emit(out.fmt, overview.views(summaries, ordered, sort, kind, headers=out.headers), headers=out.headers)
    ops.overview_verdict(summaries, gates)


def _check_flags(group, topic, tags, verify_tags, max_lag, max_lag_time, sort):  # type: ignore[no-untyped-def]
    """Flag combinations, the gates and the parsed --tags expression."""
    from mqctl.ops.progress import Gates

    if topic and not group:
        raise UsageError("-t/--topicName needs -g/--groupName")
    if (tags or verify_tags) and not group:
        raise UsageError("--tags and --verify-tags need -g/--groupName")
    if verify_tags and not tags:
        raise UsageError("--verify-tags needs --tags EXPR")
    if max_lag is not None and max_lag < 0:
        raise UsageError("--max-lag must be >= 0")
    if sort not in ("lag", "name", "mqadmin"):
        raise UsageError(f"--sort {sort!r}: expected lag, name or mqadmin")
    if group and given("sort"):
        raise UsageError("--sort orders the groups overview: with -g/--groupName it has no effect")
    gates = Gates(max_lag, _duration_ms(max_lag_time) if max_lag_time else None)
    if tags is None:
        return gates, None
    from mqctl.model import parse_subexpr

    return gates, parse_subexpr(tags)


def _duration_ms(text: str) -> int:
    from mqctl.ops.timeparse import parse_duration_ms

    return parse_duration_ms(text)


def _report(result, topic: str | None, fmt: OutputFormat, ip: bool, headers: bool, kind: Any) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops.progress import no_rows_reason
    from mqctl.render import progress as render

    warn_all(result.warnings)
    reason = no_rows_reason(result, topic)
    if reason and not result.failures:
        warn(reason)
    emit(fmt, render.views(result, kind, show_client_ip=ip, headers=headers), headers=headers)


consumer_progress.__doc__ = HELP


def normalise_argv(args: list[str]) -> list[str]:
    """mqctl's argv before click parses it: ``-w``/``--watch`` may come without its interval
    (called by ``CaseInsensitiveGroup.main``)."""
    if "-w" not in args and "--watch" not in args:
        return args
    import typing

    from mqctl.cli.progress_watch import fill_watch_value

    takes_value = set()
    for hint in typing.get_type_hints(consumer_progress, include_extras=True).values():
        meta = getattr(hint, "__metadata__", ())
        base = typing.get_args(hint)[0] if meta else hint
        for info in meta:
            if base is not bool and getattr(info, "param_decls", None):
                takes_value.update(info.param_decls)
    return fill_watch_value(args, takes_value - {"-w", "--watch"})

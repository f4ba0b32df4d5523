"""mqctl consumerProgress — mqadmin consumerProgress on a store, plus exact filtered lag and lag time."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Annotated

import typer

from mqctl.cli import progress_watch
from mqctl.cli.errors import handle_errors, warn
from mqctl.cli.options import (
    AccessKeyOpt,
    ClusterOpt,
    LiveOptions,
    MqadminVersionOpt,
    NamesrvOpt,
    OutputFormat,
    OutputOpt,
    ProfileOpt,
    SecretKeyOpt,
    StoreOpt,
    TimeoutOpt,
    TlsInsecureOpt,
    TlsOpt,
    backend_options,
    cluster_target,
    emit,
    open_backend,
    resolve_format,
)
from mqctl.cli.progress_watch import (
    HistoryOpt,
    MaxStatusOpt,
    RetryScanOpt,
    SamplesOpt,
    StatusFromOpt,
    WatchFlags,
    WatchOpt,
    WhyOpt,
    WindowOpt,
)
from mqctl.errors import BrokersFailedError, CheckFailedError, UsageError
from mqctl.render import progress as render

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
    typer.Option("--groupName", "-g", help="Consumer group. Absent: all groups.", show_default=False),
]

_TopicOpt = Annotated[
    str | None, typer.Option("--topicName", "-t", help="Only this topic (with -g).", show_default=False)
]

_ShowClientIpOpt = Annotated[
    str | None,
    typer.Option(
        "--showClientIP",
        "-s",
        metavar="true|false",
        help="mqadmin's -s true: add the Client IP column, in plain and in the table (N/A on a "
        "store: no connections).",
        show_default=False,
    ),
]

_TagsOpt = Annotated[
    str | None,
    typer.Option(
        "--tags",
        metavar="EXPR",
        help="Exact filtered lag: count the unconsumed messages whose tag matches EXPR ('*', 'TagA || TagB') "
        "over the ConsumeQueue tag hashes (every entry, no sampling). Different tags can share a hash "
        "(Java String.hashCode, e.g. 'Aa' and 'BB'); add --verify-tags to confirm each match against the "
        "real tag in the CommitLog.",
        show_default=False,
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
    typer.Option(
        "--max-lag",
        metavar="N",
        help="Exit 10 after printing when the diff total (matched total with --tags) exceeds N. "
        "Without -g: when any group's diff total does (the fleet-wide check).",
        show_default=False,
    ),
]

_MaxLagTimeOpt = Annotated[
    str | None,
    typer.Option(
        "--max-lag-time",
        metavar="DURATION",
        help="Exit 10 after printing when the oldest unconsumed message "
        "is older than DURATION (1h30m, 90s, PT15M); without -g, in any group.",
        show_default=False,
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

_NoHeadersOpt = Annotated[
    bool, typer.Option("--no-headers", help="plain and csv: leave out the header line.")
]

_NowMsOpt = Annotated[int | None, typer.Option("--now-ms", hidden=True)]


@handle_errors
def consumer_progress(
    group: _GroupOpt = None,
    topic: _TopicOpt = None,
    show_client_ip: _ShowClientIpOpt = None,
    cluster: ClusterOpt = None,
    tags: _TagsOpt = None,
    verify_tags: _VerifyTagsOpt = False,
    max_lag: _MaxLagOpt = None,
    max_lag_time: _MaxLagTimeOpt = None,
    sort: _SortOpt = "lag",
    no_headers: _NoHeadersOpt = False,
    store: StoreOpt = None,
    profile: ProfileOpt = None,
    namesrv: NamesrvOpt = None,
    timeout: TimeoutOpt = 10.0,
    access_key: AccessKeyOpt = None,
    secret_key: SecretKeyOpt = None,
    tls: TlsOpt = False,
    tls_insecure: TlsInsecureOpt = False,
    output: OutputOpt = None,
    mqadmin_version: MqadminVersionOpt = None,
    watch: WatchOpt = None,
    window: WindowOpt = 10,
    max_status: MaxStatusOpt = None,
    why: WhyOpt = None,
    history: HistoryOpt = None,
    status_from: StatusFromOpt = None,
    retry_scan: RetryScanOpt = 200,
    samples: SamplesOpt = None,
    now_ms: _NowMsOpt = None,
) -> None:
    from mqctl.cli.progressbar import DelayedProgress
    from mqctl.ops import progress as ops

    group = group.strip() if group else None
    topic = topic.strip() if topic else None
    gates, sub = _check_flags(group, topic, tags, verify_tags, max_lag, max_lag_time, sort)
    over_time = WatchFlags(watch, window, max_status, why, history, status_from, retry_scan, samples)
    ip = (show_client_ip or "").strip().lower() == "true"
    options = backend_options(
        LiveOptions(timeout, access_key, secret_key, tls, tls_insecure),
        profile,
        mqadmin_version=mqadmin_version,
    )
    if over_time.any:
        no_gates = gates == Gates(None, None)
        progress_watch.check_flags(over_time, group, tags=tags is not None, client_ip=ip, gates=not no_gates)
        if over_time.takes_over:
            assert group is not None
            target = functools.partial(cluster_target, store, profile, namesrv)  # --status-from reads none
            return progress_watch.run(over_time, group, topic, output, target, options, now_ms)
    fmt = resolve_format(output)
    with open_backend(store, profile, namesrv, options) as backend, DelayedProgress("scanning") as bar:
        if group is None:
            return _all_groups(backend, bar, gates, fmt, sort, not no_headers, now_ms)
        # plain is mqadmin's columns only: live, that is one request per broker and no more.
        detail = fmt is not OutputFormat.plain or backend.kind.reads_files or gates.max_lag_ms is not None
        result = ops.group_progress(
            backend,
            group,
            topic,
            tags=sub,
            verify_tags=verify_tags,
            now_ms=now_ms,
            on_progress=bar.update,
            show_client_ip=ip,
            detail=detail,
        )
        kind = backend.kind
        protected = backend.protected_paths()
    # --history (cron): the sample is recorded even when a broker did not answer (incomplete).
    view = progress_watch.record(over_time, result, kind, topic, protected) if history is not None else None
    _report(result, topic, fmt, ip, not no_headers, kind)
    gates.check_group(result)
    if view is not None:
        progress_watch.gate(view, progress_watch.max_status(over_time))
    ops.check_times_readable(result)  # a damaged store: exit 6, whatever the gates said


def _all_groups(
    backend, bar, gates: Gates, fmt: OutputFormat, sort: str, headers: bool, now_ms: int | None
) -> None:  # type: ignore[no-untyped-def]
    """Without -g: the groups overview."""
    from mqctl.ops import progress as ops

    # Lag time costs two requests per lagging queue live: only when a gate needs it.
    lag_time = backend.kind.reads_files or gates.max_lag_ms is not None
    summaries = ops.all_groups(backend, now_ms=now_ms, on_progress=bar.update, lag_time=lag_time)
    for w in backend.take_warnings():
        warn(str(w))
    _overview(summaries, fmt, sort, headers, backend.kind)
    _overview_failures(summaries)
    gates.check_groups(summaries)
    ops.check_times_readable(groups=summaries)  # a damaged store: exit 6, whatever the gates said


def _check_flags(group, topic, tags, verify_tags, max_lag, max_lag_time, sort):  # type: ignore[no-untyped-def]
    """Flag combinations, the gates and the parsed --tags expression."""
    from mqctl.ops.timeparse import parse_duration_ms

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
    gates = Gates(max_lag, parse_duration_ms(max_lag_time) if max_lag_time else None)
    if tags is None:
        return gates, None
    from mqctl.model import parse_subexpr

    return gates, parse_subexpr(tags)


def _report(result, topic: str | None, fmt: OutputFormat, ip: bool, headers: bool, kind: str) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops.progress import no_rows_reason

    for line in result.warnings:
        warn(line)
    reason = no_rows_reason(result, topic)
    if reason and not result.failures:
        warn(reason)
    emit(
        fmt,
        sys.stdout,
        plain=lambda o: render.plain(result, o, show_client_ip=ip, headers=headers),
        table=lambda o: render.table(result, o, show_client_ip=ip),
        json_doc=lambda: render.json_doc(result, kind),
        csv=lambda: (render.CSV_COLUMNS, render.csv_rows(result)),
        headers=headers,
    )
    if result.failures:
        # The other brokers' rows are printed; never a silently partial answer with exit 0.
        raise BrokersFailedError(result.failures, "their rows are missing")


def _overview(summaries, fmt: OutputFormat, sort: str, headers: bool, kind: str) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops.progress import sort_groups

    above = [g.group for g in summaries if g.queues_above_max]
    if above:
        warn(
            f"{len(above)} group(s) have queues whose committed offset lies above the queue's max "
            f"(counted as 0 lag): {', '.join(above[:5])}{' ...' if len(above) > 5 else ''}"
        )
    ordered = sort_groups(summaries, sort)
    emit(
        fmt,
        sys.stdout,
        plain=lambda o: render.groups_plain(summaries, o, headers=headers),  # mqadmin's order, always
        table=lambda o: render.groups_table(ordered, o, sort),
        json_doc=lambda: render.groups_json(ordered, kind),
        csv=lambda: (render.GROUP_CSV_COLUMNS, render.groups_csv_rows(ordered)),
        headers=headers,
    )


def _overview_failures(summaries) -> None:  # type: ignore[no-untyped-def]
    """After the overview: brokers that did not answer make its numbers incomplete (exit 4)."""
    failures = [f for g in summaries for f in g.failures]
    unread = sum(1 for g in summaries if g.failure)
    if failures or unread:
        raise BrokersFailedError(failures, "the groups' numbers above are incomplete", unread_groups=unread)


@dataclass(frozen=True)
class Gates:
    """--max-lag / --max-lag-time: checked after the output was printed (exit 10)."""

    max_lag: int | None
    max_lag_ms: int | None

    def check_group(self, result) -> None:  # type: ignore[no-untyped-def]
        measured = result.matched_total if result.tags is not None else result.diff_total
        if self.max_lag is not None and measured is not None and measured > self.max_lag:
            what = "matched diff total" if result.tags is not None else "diff total"
            raise CheckFailedError(
                f"--max-lag exceeded: {what} {measured} > {self.max_lag} (group {result.group})"
            )
        if self.max_lag_ms is not None and result.max_lag_ms > self.max_lag_ms:
            raise CheckFailedError(
                f"--max-lag-time exceeded: oldest unconsumed message is {result.max_lag_ms} ms old "
                f"> {self.max_lag_ms} ms (group {result.group})"
            )

    def check_groups(self, summaries) -> None:  # type: ignore[no-untyped-def]
        """Without -g: the fleet-wide check, every group against the same limits."""
        over = [
            g
            for g in summaries
            if (self.max_lag is not None and g.diff_total > self.max_lag)
            or (self.max_lag_ms is not None and g.max_lag_ms > self.max_lag_ms)
        ]
        if over:
            names = ", ".join(f"{g.group} ({g.diff_total}, {g.max_lag_ms} ms)" for g in over[:5])
            more = f" and {len(over) - 5} more" if len(over) > 5 else ""
            raise CheckFailedError(
                f"{len(over)} of {len(summaries)} group(s) over --max-lag/--max-lag-time: {names}{more}"
            )


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

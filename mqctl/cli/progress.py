"""mqctl consumerProgress — mqadmin consumerProgress on a store, plus exact filtered lag and lag time."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from mqctl.cli.errors import handle_errors, warn
from mqctl.cli.options import (
    ClusterOpt,
    NamesrvOpt,
    OutputOpt,
    ProfileOpt,
    StoreOpt,
    emit,
    open_backend,
    resolve_format,
)
from mqctl.errors import CheckFailedError, UsageError

HELP = """Query a consumer group's progress: per queue the broker offset (max), the committed consumer
offset, the diff, and the store time of the last consumed message — the numbers mqadmin prints,
computed from the broker's store files.

Without -g: every group of the offset tables with its diff total.

Beyond mqadmin: minOffset, the store time of the oldest unconsumed message and its age (lag time),
--tags for exact filtered lag, and --max-lag / --max-lag-time gates for CI (exit 10).

mqadmin equivalent: mqadmin consumerProgress -g GROUP [-t TOPIC] [-s true]"""


@handle_errors
def consumer_progress(
    group: Annotated[
        str | None,
        typer.Option("--groupName", "-g", help="Consumer group. Absent: all groups.", show_default=False),
    ] = None,
    topic: Annotated[
        str | None, typer.Option("--topicName", "-t", help="Only this topic (with -g).", show_default=False)
    ] = None,
    show_client_ip: Annotated[
        str | None,
        typer.Option(
            "--showClientIP",
            "-s",
            metavar="true|false",
            help="mqadmin's -s true: add the Client IP column (N/A on a store: no connections).",
            show_default=False,
        ),
    ] = None,
    cluster: ClusterOpt = None,
    tags: Annotated[
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
    ] = None,
    verify_tags: Annotated[
        bool,
        typer.Option(
            "--verify-tags",
            help="With --tags: read each hash match's TAGS from the CommitLog and count only real "
            "matches (slower; reports collisions).",
        ),
    ] = False,
    max_lag: Annotated[
        int | None,
        typer.Option(
            "--max-lag",
            metavar="N",
            help="Exit 10 after printing when the diff total (matched total with --tags) exceeds N.",
            show_default=False,
        ),
    ] = None,
    max_lag_time: Annotated[
        str | None,
        typer.Option(
            "--max-lag-time",
            metavar="DURATION",
            help="Exit 10 after printing when the oldest unconsumed message "
            "is older than DURATION (1h30m, 90s, PT15M).",
            show_default=False,
        ),
    ] = None,
    store: StoreOpt = None,
    profile: ProfileOpt = None,
    namesrv: NamesrvOpt = None,
    output: OutputOpt = None,
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
) -> None:
    from mqctl.cli.progressbar import DelayedProgress
    from mqctl.ops import progress as ops
    from mqctl.ops.timeparse import parse_duration_ms
    from mqctl.render import progress as render

    group = group.strip() if group else None
    topic = topic.strip() if topic else None
    if topic and not group:
        raise UsageError("-t/--topicName needs -g/--groupName")
    if (tags or verify_tags or max_lag is not None or max_lag_time) and not group:
        raise UsageError("--tags, --verify-tags, --max-lag and --max-lag-time need -g/--groupName")
    if verify_tags and not tags:
        raise UsageError("--verify-tags needs --tags EXPR")
    if max_lag is not None and max_lag < 0:
        raise UsageError("--max-lag must be >= 0")
    lag_time_limit = parse_duration_ms(max_lag_time) if max_lag_time else None
    sub = None
    if tags is not None:
        from mqctl.store.subexpr import parse_subexpr

        sub = parse_subexpr(tags)
    fmt = resolve_format(output)
    out = sys.stdout

    with open_backend(store, profile, namesrv) as backend, DelayedProgress("scanning queues") as bar:
        if group is None:
            summaries = ops.all_groups(backend, now_ms=now_ms, on_progress=bar.update)
            for w in getattr(backend, "warnings", []):
                warn(w)
            emit(
                fmt,
                out,
                plain=lambda o: render.groups_plain(summaries, o),
                table=lambda o: render.groups_table(summaries, o),
                json_doc=lambda: render.groups_json(summaries),
                csv=lambda: (
                    ["group", "diffTotal", "maxLagMs"],
                    [[g.group, g.diff_total, g.max_lag_ms] for g in summaries],
                ),
            )
            return
        result = ops.group_progress(
            backend, group, topic, tags=sub, verify_tags=verify_tags, now_ms=now_ms, on_progress=bar.update
        )
    for w in result.warnings:
        warn(w)
    emit(
        fmt,
        out,
        plain=lambda o: render.plain(
            result, o, show_client_ip=(show_client_ip or "").strip().lower() == "true"
        ),
        table=lambda o: render.table(result, o),
        json_doc=lambda: render.json_doc(result),
        csv=lambda: (render.CSV_COLUMNS, render.csv_rows(result)),
    )

    measured = result.matched_total if sub is not None else result.diff_total
    if max_lag is not None and measured is not None and measured > max_lag:
        what = "matched diff total" if sub is not None else "diff total"
        raise CheckFailedError(f"--max-lag exceeded: {what} {measured} > {max_lag} (group {group})")
    if lag_time_limit is not None and result.max_lag_ms > lag_time_limit:
        raise CheckFailedError(
            f"--max-lag-time exceeded: oldest unconsumed message is {result.max_lag_ms} ms old "
            f"> {lag_time_limit} ms (group {group})"
        )


consumer_progress.__doc__ = HELP

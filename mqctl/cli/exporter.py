"""mqctl exporter — every group's lag served to Prometheus, alerts pushed to Alertmanager."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from mqctl.cli.blocks import opt
from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.errors import handle_errors, warn

if TYPE_CHECKING:
    pass

HELP = """Serve every consumer group's lag on an HTTP endpoint for Prometheus (/metrics: the text format,
or OpenMetrics when asked), and push alerts to Alertmanager (--alertmanager URL).

A background round every --interval reads every group on one kept connection (the groups
overview in a few pipelined rounds: the brokers' offset tables, then every group's stats and
clients at once), the age of the oldest unconsumed message of each lagging queue (cached by
position), exact filtered lag where subscriptions are known (online clients, or the profile), the
statuses of consumerProgress --watch over --window rounds, and the members online. A scrape
serves the last complete round (mqctl_round_age_seconds says how old), never waits for the cluster
and never mixes two rounds. A broker that does not answer a round is mqctl_broker_up 0; the other
brokers' series stay.

Thresholds for the alerts, per group, are the profile's [profiles.NAME.exporter] table (README,
"Exporter and alerts"); --print-rules prints the same thresholds as Prometheus rules instead.

Needs the [exporter] extra (prometheus-client, httpx): pip install 'mqctl[exporter]'."""

ListenOpt = Annotated[
    str,
    typer.Option("--listen", metavar="HOST:PORT", help="Where /metrics is served (':9877': every address)."),
]
IntervalOpt = Annotated[
    str, typer.Option("--interval", metavar="DURATION", help="Time between rounds (>= 1 s): '15s', '1m'.")
]
WindowOpt = Annotated[
    int, typer.Option("--window", metavar="N", help="Statuses over each queue's last N rounds (as --watch).")
]
AlertmanagerOpt = Annotated[
    list[str] | None,
    opt(
        "--alertmanager",
        metavar="URL",
        help="Push alerts to this Alertmanager (API v2, e.g. http://127.0.0.1:9093). Repeat for an HA pair.",
    ),
]
MaxSeriesOpt = Annotated[
    int,
    typer.Option(
        "--max-series",
        metavar="N",
        help="At most about N series: groups past it (by name) lose their per-queue series, then all "
        "(mqctl_series_limited_groups counts them).",
    ),
]
GroupAllowOpt = Annotated[
    str | None,
    opt("--group-allow", metavar="REGEX", help="Only groups matching."),
]
GroupDenyOpt = Annotated[
    str | None,
    opt("--group-deny", metavar="REGEX", help="Leave out groups matching."),
]
TopicAllowOpt = Annotated[
    str | None,
    opt("--topic-allow", metavar="REGEX", help="Only topics matching."),
]
TopicDenyOpt = Annotated[
    str | None,
    opt("--topic-deny", metavar="REGEX", help="Leave out topics matching."),
]
CompatOpt = Annotated[
    str | None,
    opt(
        "--compat",
        metavar="rocketmq-exporter",
        help="Also serve rocketmq-exporter's families Grafana boards use (rocketmq_group_diff, ...) with "
        "its labels; -c names their cluster label.",
    ),
]
PrintRulesOpt = Annotated[
    bool,
    typer.Option(
        "--print-rules", help="Print Prometheus alerting and recording rules for these metrics and exit."
    ),
]
RoundsOpt = Annotated[int | None, typer.Option("--rounds", hidden=True)]


@handle_errors
@cluster_options(versioned=False, mqadmin_cluster=True)
def exporter(
    listen: ListenOpt = "127.0.0.1:9877",
    interval: IntervalOpt = "15s",
    window: WindowOpt = 10,
    alertmanager: AlertmanagerOpt = None,
    max_series: MaxSeriesOpt = 100_000,
    group_allow: GroupAllowOpt = None,
    group_deny: GroupDenyOpt = None,
    topic_allow: TopicAllowOpt = None,
    topic_deny: TopicDenyOpt = None,
    compat: CompatOpt = None,
    print_rules: PrintRulesOpt = False,
    rounds: RoundsOpt = None,
    *,
    cluster: Cluster,
) -> None:
    from mqctl.serve import settings as serve

    sizes, filters = (window, max_series, compat), (group_allow, group_deny, topic_allow, topic_deny)
    s = serve.settings(interval, sizes, alertmanager or [], filters, cluster.profile)
    if print_rules:
        from mqctl.serve.promrules import render

        sys.stdout.write(render(s.config, s.interval_s))
        return
    serve.require_libraries()
    from mqctl.serve.exporter import run

    opts = serve.options(s, listen, window, max_series, compat, rounds, cluster.name or "")
    with cluster.open() as backend:
        run(backend, opts, warn=warn, on_ready=lambda where: _ready(where, backend.target().describe()))


def _ready(where: str, what: str) -> None:
    sys.stderr.write(f"mqctl exporter: serving {where} for {what}\n")
    sys.stderr.flush()


exporter.__doc__ = HELP

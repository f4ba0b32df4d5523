"""mqctl exporter — every group's lag served to Prometheus, alerts pushed to Alertmanager."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.errors import handle_errors, warn
from mqctl.errors import NotAvailableError, UsageError

if TYPE_CHECKING:
    from mqctl.ops.alertrules import AlertConfig
    from mqctl.ops.watch.fleet import FleetFilter
    from mqctl.serve.exporter import ExporterOptions

HELP = """Serve every consumer group's lag on an HTTP endpoint for Prometheus (/metrics: the text format,
or OpenMetrics when asked), and push alerts to Alertmanager (--alertmanager URL).

A background round every --interval reads every group on one kept connection (the groups
overview: a few requests per broker, not per group), the age of the oldest unconsumed message of
each lagging queue (cached by position), exact filtered lag where subscriptions are known (online
clients, or the profile), the statuses of consumerProgress --watch over --window rounds, and the
members online. A scrape serves the last complete round (mqctl_round_age_seconds says how old),
never waits for the cluster and never mixes two rounds. A broker that does not answer a round is
mqctl_broker_up 0; the other brokers' series stay.

Thresholds for the alerts, per group, are the profile's [profiles.NAME.exporter] table (README,
"Exporter and alerts"); --print-rules prints the same thresholds as Prometheus rules instead.

Needs the [exporter] extra (prometheus-client, httpx): pip install 'mqctl[exporter]'."""

ListenOpt = Annotated[
    str,
    typer.Option("--listen", metavar="HOST:PORT", help="Where /metrics is served (':9877': every address)."),
]
IntervalOpt = Annotated[
    str, typer.Option("--interval", metavar="DURATION", help="Time between rounds: '15s', '1m', or seconds.")
]
WindowOpt = Annotated[
    int, typer.Option("--window", metavar="N", help="Statuses over each queue's last N rounds (as --watch).")
]
AlertmanagerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--alertmanager",
        metavar="URL",
        help="Push alerts to this Alertmanager (API v2, e.g. http://127.0.0.1:9093). Repeat for an HA pair.",
        show_default=False,
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
    typer.Option("--group-allow", metavar="REGEX", help="Only groups matching.", show_default=False),
]
GroupDenyOpt = Annotated[
    str | None,
    typer.Option("--group-deny", metavar="REGEX", help="Leave out groups matching.", show_default=False),
]
TopicAllowOpt = Annotated[
    str | None,
    typer.Option("--topic-allow", metavar="REGEX", help="Only topics matching.", show_default=False),
]
TopicDenyOpt = Annotated[
    str | None,
    typer.Option("--topic-deny", metavar="REGEX", help="Leave out topics matching.", show_default=False),
]
CompatOpt = Annotated[
    str | None,
    typer.Option(
        "--compat",
        metavar="rocketmq-exporter",
        help="Also serve rocketmq-exporter's families Grafana boards use (rocketmq_group_diff, ...) with "
        "its labels; -c names their cluster label.",
        show_default=False,
    ),
]
PrintRulesOpt = Annotated[
    bool,
    typer.Option(
        "--print-rules", help="Print Prometheus alerting and recording rules for these metrics and exit."
    ),
]
RoundsOpt = Annotated[int | None, typer.Option("--rounds", hidden=True)]


def _regex(flag: str, text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise UsageError(f"{flag} {text!r}: not a regular expression: {e}") from None


def _interval(text: str) -> float:
    from mqctl.ops.watch.modes import interval_s

    try:
        return interval_s(text)
    except UsageError:
        raise UsageError(f"--interval {text}: expected a duration like '15s' or '1m'") from None


def _config(cluster: Cluster) -> AlertConfig:
    """The profile's exporter table (--profile or $MQCTL_PROFILE), else the defaults."""
    from mqctl.config import profile_section
    from mqctl.ops.alertrules import parse_config

    if not cluster.profile:
        return parse_config(None)
    return parse_config(profile_section(cluster.profile, "exporter"), f"profiles.{cluster.profile}.exporter")


def _alertmanager_url(text: str) -> str:
    from urllib.parse import urlsplit

    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--alertmanager {text!r}: expected http(s)://HOST:PORT, e.g. http://127.0.0.1:9093")
    return url.rstrip("/")


def _require_libraries() -> None:
    missing = []
    for module, dist in (("prometheus_client", "prometheus-client"), ("httpx", "httpx")):
        try:
            __import__(module)
        except ImportError:
            missing.append(dist)
    if missing:
        raise NotAvailableError(
            f"mqctl exporter needs {' and '.join(missing)}, not installed",
            "pip install 'mqctl[exporter]'",
        )


def _filter(
    group_allow: str | None, group_deny: str | None, topic_allow: str | None, topic_deny: str | None
) -> FleetFilter:
    from mqctl.ops.watch.fleet import FleetFilter

    return FleetFilter(
        _regex("--group-allow", group_allow),
        _regex("--group-deny", group_deny),
        _regex("--topic-allow", topic_allow),
        _regex("--topic-deny", topic_deny),
    )


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
    secs = _interval(interval)
    _check_sizes(window, max_series, compat)
    urls = tuple(_alertmanager_url(u) for u in alertmanager or ())
    only = _filter(group_allow, group_deny, topic_allow, topic_deny)
    config = _config(cluster)
    if print_rules:
        from mqctl.serve.promrules import render

        sys.stdout.write(render(config, secs))
        return
    _require_libraries()
    from mqctl.serve.exporter import run

    opts = _run_options(cluster, listen, secs, urls, only, config, window, max_series, compat, rounds)
    with cluster.open() as backend:
        run(backend, opts, warn=warn, on_ready=lambda url: _ready(url, backend.target().describe()))


def _run_options(
    cluster: Cluster,
    listen: str,
    interval_s: float,
    alertmanagers: tuple[str, ...],
    only: FleetFilter,
    config: AlertConfig,
    window: int,
    max_series: int,
    compat: str | None,
    rounds: int | None,
) -> ExporterOptions:
    """The checked flags as one run's options (the serve layer's libraries are installed)."""
    from mqctl.model import Rules
    from mqctl.serve.exporter import ExporterOptions
    from mqctl.serve.families import Shape

    return ExporterOptions(
        listen=listen,
        interval_s=interval_s,
        alertmanagers=alertmanagers,
        shape=Shape(max_series, compat is not None, cluster.name or ""),
        only=only,
        config=config,
        rules=Rules(window=window),
        rounds=rounds,
    )


def _check_sizes(window: int, max_series: int, compat: str | None) -> None:
    """--window, --max-series and --compat: values no run could use."""
    if window < 2:
        raise UsageError(f"--window {window}: a window needs at least 2 rounds")
    if max_series < 1:
        raise UsageError(f"--max-series {max_series}: expected a positive number")
    if compat is not None and compat.strip().lower() != "rocketmq-exporter":
        raise UsageError(f"--compat {compat!r}: the one compatibility offered is 'rocketmq-exporter'")


def _ready(url: str, what: str) -> None:
    sys.stderr.write(f"mqctl exporter: serving {url}/metrics for {what}\n")
    sys.stderr.flush()


exporter.__doc__ = HELP

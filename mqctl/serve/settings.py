"""``mqctl exporter``'s settings: the values of its flags checked (--interval, --window,
--max-series, --compat, --alertmanager, the allow/deny expressions), the profile's ``exporter``
table read, the libraries it needs asked for. cli/exporter.py declares the flags."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mqctl.errors import NotAvailableError, UsageError
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.ops.alertrules import AlertConfig
    from mqctl.ops.watch.fleet import FleetFilter
    from mqctl.serve.exporter import ExporterOptions


@record(frozen=True)
class Settings:
    """The checked flags a run and --print-rules use."""

    interval_s: float
    alertmanagers: tuple[str, ...]
    only: FleetFilter
    config: AlertConfig


def settings(
    interval: str,
    sizes: tuple[int, int, str | None],
    alertmanagers: list[str],
    allow_deny: tuple[str | None, str | None, str | None, str | None],
    profile: str | None,
) -> Settings:
    """``sizes``: --window, --max-series, --compat; ``allow_deny``: --group-allow, --group-deny,
    --topic-allow, --topic-deny; ``profile``: the one whose ``exporter`` table holds the thresholds."""
    secs = _interval(interval)
    _check_sizes(*sizes)
    urls = tuple(dict.fromkeys(_alertmanager_url(u) for u in alertmanagers))  # one per Alertmanager
    return Settings(secs, urls, _filter(*allow_deny), _config(profile))


def options(
    s: Settings,
    listen: str,
    window: int,
    max_series: int,
    compat: str | None,
    rounds: int | None,
    cluster_name: str,
) -> ExporterOptions:
    """The checked flags as one run's options (the serve layer's libraries are installed)."""
    from mqctl.model import Rules
    from mqctl.serve.exporter import ExporterOptions
    from mqctl.serve.families import Shape

    return ExporterOptions(
        listen=listen,
        interval_s=s.interval_s,
        alertmanagers=s.alertmanagers,
        shape=Shape(max_series, compat is not None, cluster_name),
        only=s.only,
        config=s.config,
        rules=Rules(window=window),
        rounds=rounds,
    )


def _regex(flag: str, text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise UsageError(f"{flag} {text!r}: not a regular expression: {e}") from None


# A round reads every group of the cluster: more than one a second is a typo ('--interval 10ms').
MIN_ROUND_S = 1.0


def _interval(text: str) -> float:
    from mqctl.ops.watch.modes import interval_s

    try:
        secs = interval_s(text, shortest_s=0)
    except UsageError:
        raise UsageError(f"--interval {text}: expected a duration like '15s' or '1m'") from None
    if secs < MIN_ROUND_S:
        raise UsageError(
            f"--interval {text}: at least {MIN_ROUND_S:g} s between rounds (each one reads every group)"
        )
    return secs


def _config(profile: str | None) -> AlertConfig:
    """The profile's exporter table (--profile or $MQCTL_PROFILE), else the defaults."""
    from mqctl.config import profile_section
    from mqctl.ops.alertrules import parse_config

    if not profile:
        return parse_config(None)
    return parse_config(profile_section(profile, "exporter"), f"profiles.{profile}.exporter")


def _alertmanager_url(text: str) -> str:
    from urllib.parse import urlsplit

    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--alertmanager {text!r}: expected http(s)://HOST:PORT, e.g. http://127.0.0.1:9093")
    return url.rstrip("/")


def require_libraries() -> None:
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


def _check_sizes(window: int, max_series: int, compat: str | None) -> None:
    """--window, --max-series and --compat: values no run could use."""
    if window < 2:
        raise UsageError(f"--window {window}: a window needs at least 2 rounds")
    if max_series < 1:
        raise UsageError(f"--max-series {max_series}: expected a positive number")
    if compat is not None and compat.strip().lower() != "rocketmq-exporter":
        raise UsageError(f"--compat {compat!r}: the one compatibility offered is 'rocketmq-exporter'")

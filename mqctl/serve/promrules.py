"""``mqctl exporter --print-rules``: Prometheus recording and alerting rules over the exporter's
metrics, for users who alert in Prometheus instead of letting mqctl push to Alertmanager. The
thresholds are the profile's (``[profiles.P.exporter]``, ops/alertrules.py): a group with its own
table gets its own rule, the defaults cover every other group. YAML written as text (a fixed,
small shape; no YAML library needed).
"""

from __future__ import annotations

import json
import re

from mqctl.ops.alertrules import A_LAG, A_LAG_TIME, A_STATUS, AlertConfig, Thresholds


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of YAML's)."""
    return json.dumps(text)


def _selector(group: str | None, others: list[str]) -> str:
    if group is not None:
        return f"group={json.dumps(group)}"
    if others:
        return "group!~" + json.dumps("|".join(re.escape(g) for g in sorted(others)))
    return ""


def _duration(seconds: float) -> str:
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{int(seconds * 1000)}ms"


def _alerts(th: Thresholds, sel: str) -> list[tuple[str, str, float, str]]:
    """(alertname, expression, for seconds, summary) for one set of thresholds."""
    from mqctl.model import STATUSES, severity

    braces = f"{{{sel}}}" if sel else ""
    out = []
    if th.max_lag is not None:
        out.append((A_LAG, f"mqctl_group_lag_messages{braces} > {th.max_lag}", th.for_s,
                    f"group {{{{ $labels.group }}}}: lag {{{{ $value }}}} > {th.max_lag} messages"))  # fmt: skip
    if th.max_lag_s is not None:
        out.append((A_LAG_TIME, f"mqctl_group_lag_seconds{braces} > {th.max_lag_s:g}", th.for_s,
                    f"group {{{{ $labels.group }}}}: oldest unconsumed message {{{{ $value }}}}s old > {th.max_lag_s:g}s"))  # fmt: skip
    if th.max_status is not None:
        worse = [s for s in STATUSES if severity(s) > severity(th.max_status)]
        if worse:
            inner = f"{sel}, " if sel else ""
            expr = f'mqctl_group_status{{{inner}mqctl_group_status=~"{"|".join(worse)}"}} == 1'
            out.append(
                (
                    A_STATUS,
                    expr,
                    th.for_s,
                    "group {{ $labels.group }} is {{ $labels.mqctl_group_status }}",
                )
            )
    return out


def render(config: AlertConfig, interval_s: float) -> str:
    lines = [
        "# Prometheus rules for mqctl exporter's metrics (mqctl exporter --print-rules).",
        "# Load them with rule_files: in prometheus.yml; check with `promtool check rules FILE`.",
        "groups:",
        "  - name: mqctl-recording",
        "    rules:",
        "      - record: mqctl:topic_lag_messages:sum",
        "        expr: sum by (group, topic) (mqctl_queue_lag_messages)",
        "      - record: mqctl:group_consume_messages_per_second:5m",
        "        expr: sum by (group) (clamp_min(delta(mqctl_queue_consumer_offset[5m]), 0)) / 300",
        "      - record: mqctl:group_produce_messages_per_second:5m",
        "        expr: sum by (group) (clamp_min(delta(mqctl_queue_broker_offset[5m]), 0)) / 300",
        "  - name: mqctl-alerts",
        "    rules:",
    ]
    rules: list[tuple[str, str, float, str, Thresholds]] = []
    for group, th in sorted(config.groups.items()):
        rules += [(*r, th) for r in _alerts(th, _selector(group, []))]
    rules += [(*r, config.defaults) for r in _alerts(config.defaults, _selector(None, list(config.groups)))]
    stale = max(5 * interval_s, 60)
    rules += [
        (
            "MqctlExporterBrokerDown",
            "mqctl_broker_up == 0",
            2 * interval_s,
            "broker {{ $labels.broker }} does not answer mqctl exporter",
            config.defaults,
        ),
        (
            "MqctlExporterStale",
            f"mqctl_round_age_seconds > {stale:g}",
            0.0,
            "mqctl exporter's last complete round is {{ $value }}s old",
            config.defaults,
        ),
    ]
    for name, expr, for_s, summary, th in rules:
        lines += [f"      - alert: {name}", f"        expr: {_q(expr)}"]
        if for_s:
            lines.append(f"        for: {_duration(for_s)}")
        lines += ["        labels:", f"          severity: {_q(th.severity)}"]
        lines += [
            f"          {k}: {_q(v)}" for k, v in th.labels if k not in ("severity", "alertname", "group")
        ]
        lines += ["        annotations:", f"          summary: {_q(summary)}"]
    return "\n".join(lines) + "\n"

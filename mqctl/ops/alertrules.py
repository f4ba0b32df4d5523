"""The exporter's alert thresholds (per group, from a profile) and the alerts a round gives.

In the profile (the config file's ``[profiles.NAME]`` table)::

    [profiles.prod.exporter.defaults]      # every group
    max_lag = 100000                       # messages (a group's lag, retry topic left out)
    max_lag_time = "10m"                   # age of the oldest unconsumed message
    max_status = "REWIND"                  # alert when a queue is worse: STOP, STALL, STUCK
    for = "1m"                             # the condition must hold this long first
    severity = "warning"
    labels = { team = "payments" }         # added to every alert

    [profiles.prod.exporter.groups.orders-consumer]
    max_lag = 500                          # overrides the defaults for this group
    subscriptions = { Orders = "TagA || TagB" }   # filtered lag where no client is online

Without a table the defaults are: status worse than REWIND (STOP, STALL, STUCK), no lag or lag
time limit, no ``for``. Pure functions and a state machine: no I/O, the sender is serve/alerts.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError
from mqctl.records import field, record, replace

if TYPE_CHECKING:
    from mqctl.model import StuckMessage
    from mqctl.ops.watch.fleet import FleetRound, GroupTick

A_LAG = "MqctlConsumerLag"
A_LAG_TIME = "MqctlConsumerLagTime"
A_STATUS = "MqctlConsumerStatus"
# Prometheus keeps a resolved alert 15 minutes and re-sends it meanwhile; so does mqctl, and
# longer for an Alertmanager that has not taken it yet (serve/alerts.py).
RESOLVED_RETENTION_MS = 15 * 60_000


@record(frozen=True)
class Thresholds:
    max_lag: int | None = None
    max_lag_s: float | None = None
    max_status: str | None = "REWIND"
    for_s: float = 0.0
    severity: str = "warning"
    labels: tuple[tuple[str, str], ...] = ()


@record(frozen=True)
class AlertConfig:
    defaults: Thresholds = Thresholds()
    groups: Mapping[str, Thresholds] = field(default_factory=dict)
    subscriptions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    where: str = field(default="exporter", compare=False)  # the profile table, for messages

    def of(self, group: str) -> Thresholds:
        return self.groups.get(group, self.defaults)

    def unmatched(self, seen: Iterable[str], covered: Callable[[str], bool]) -> list[str]:
        """Warnings for the per-group tables that name no group of a complete round (``seen``):
        a misspelt name leaves the real group on the defaults, and nothing says so. ``covered``:
        whether --group-allow/--group-deny let a group name in."""
        import difflib

        known = sorted(set(seen))
        out = []
        for name in sorted(set(self.groups) - set(known)):
            where = f"{self.where}.groups.{name}"
            if not covered(name):
                out.append(
                    f"{where}: --group-allow/--group-deny leave this group out; its thresholds apply to nothing"
                )
                continue
            close = difflib.get_close_matches(name, known, n=1)
            meant = f" (did you mean {close[0]!r}?)" if close else ""
            out.append(f"{where}: the cluster has no such group{meant}; its thresholds apply to nothing yet")
        return out


_KEYS = {"max_lag", "max_lag_time", "max_status", "for", "severity", "labels", "subscriptions"}


def _duration_s(where: str, value: Any) -> float:
    from mqctl.ops.timeparse import parse_duration_ms

    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if isinstance(value, str):
        try:
            return parse_duration_ms(value) / 1000
        except (ValueError, UsageError):
            pass
    raise UsageError(f"{where}: expected seconds or a duration like '90s', '5m', got {value!r}")


def _thresholds(where: str, raw: Any, base: Thresholds) -> Thresholds:
    from mqctl.ops.watch.rules import parse_status

    if not isinstance(raw, dict):
        raise UsageError(f"{where}: expected a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(unknown)}", f"known: {', '.join(sorted(_KEYS))}"
        )
    out = base
    if "max_lag" in raw:
        v = raw["max_lag"]
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise UsageError(f"{where}.max_lag: expected a whole number of messages, got {v!r}")
        out = replace(out, max_lag=v)
    if "max_lag_time" in raw:
        out = replace(out, max_lag_s=_duration_s(f"{where}.max_lag_time", raw["max_lag_time"]))
    if "for" in raw:
        out = replace(out, for_s=_duration_s(f"{where}.for", raw["for"]))
    if "max_status" in raw:
        try:
            out = replace(out, max_status=parse_status(str(raw["max_status"])))
        except ValueError as e:
            raise UsageError(f"{where}.max_status: {e}") from None
    if "severity" in raw:
        out = replace(out, severity=str(raw["severity"]))
    if "labels" in raw:
        labels = raw["labels"]
        if not isinstance(labels, dict):
            raise UsageError(f"{where}.labels: expected a table of name = value")
        out = replace(
            out,
            labels=tuple(
                sorted({**dict(base.labels), **{str(k): str(v) for k, v in labels.items()}}.items())
            ),
        )
    return out


def parse_config(table: Mapping[str, Any] | None, where: str = "exporter") -> AlertConfig:
    """The profile's ``exporter`` table (None: the defaults). UsageError names the bad key."""
    if not table:
        return AlertConfig()
    unknown = sorted(set(table) - {"defaults", "groups"})
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(unknown)}",
            "expected [exporter.defaults] and [exporter.groups.NAME]",
        )
    defaults = _thresholds(f"{where}.defaults", table.get("defaults", {}), Thresholds())
    if "subscriptions" in table.get("defaults", {}):
        raise UsageError(f"{where}.defaults.subscriptions: subscriptions belong to a group")
    groups: dict[str, Thresholds] = {}
    subs: dict[str, dict[str, str]] = {}
    raw_groups = table.get("groups", {})
    if not isinstance(raw_groups, dict):
        raise UsageError(f"{where}.groups: expected a table of group tables")
    for name, raw in raw_groups.items():
        groups[name] = _thresholds(f"{where}.groups.{name}", raw, defaults)
        s = raw.get("subscriptions")
        if s is not None:
            if not isinstance(s, dict) or not all(isinstance(v, str) for v in s.values()):
                raise UsageError(f'{where}.groups.{name}.subscriptions: expected topic = "TagA || TagB"')
            subs[name] = {str(k): v for k, v in s.items()}
    return AlertConfig(defaults, groups, subs, where)


# --- alerts ------------------------------------------------------------------------------------


@record(frozen=True)
class Alert:
    """One alert as Alertmanager takes it: labels (alertname first), annotations, when it started
    and, once resolved, when it ended."""

    labels: tuple[tuple[str, str], ...]
    annotations: tuple[tuple[str, str], ...]
    starts_ms: int
    ends_ms: int | None = None

    @property
    def key(self) -> tuple[tuple[str, str], ...]:
        return self.labels

    @property
    def firing(self) -> bool:
        return self.ends_ms is None


def _stuck_notes(stuck: Iterable[StuckMessage]) -> list[tuple[str, str]]:
    import datetime as dt

    first = next((s for s in stuck if s.message is not None), None)
    if first is None or first.message is None:
        return []
    m, q = first.message, first.queue
    at = dt.datetime.fromtimestamp(m.store_timestamp / 1000, dt.timezone.utc).isoformat(
        timespec="milliseconds"
    )
    return [
        ("stuck_queue", f"{q.topic}/{q.broker_name}/{q.queue_id}"),
        ("stuck_offset", str(first.offset)),
        ("stuck_msg_id", m.unique_key or m.msg_id),
        ("stuck_offset_msg_id", m.msg_id),
        ("stuck_keys", m.keys or ""),
        ("stuck_store_time", at),
    ]


def breaches(g: GroupTick, th: Thresholds) -> dict[str, tuple[tuple[str, str], ...]]:
    """alertname -> annotations, for each threshold the group is over now."""
    from mqctl.model import RETRY_PREFIX
    from mqctl.ops.watch.rules import worse_than

    if g.tick is None:
        return {}
    view = g.tick.view
    points = [w.point for w in view.queues if not w.point.queue.topic.startswith((RETRY_PREFIX, "%DLQ%"))]
    lag = sum(p.lag for p in points)
    lag_s = max((p.lag_ms or 0 for p in points), default=0) / 1000
    worst = max(view.queues, key=lambda w: (w.point.lag, w.point.queue.sort_key()), default=None)
    where = (
        f" (most behind: {worst.point.queue.topic}/{worst.point.queue.broker_name}/{worst.point.queue.queue_id})"
        if worst and lag
        else ""
    )
    base = [("lag_messages", str(lag)), ("lag_seconds", f"{lag_s:.0f}"), ("status", view.status)]
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    if th.max_lag is not None and lag > th.max_lag:
        out[A_LAG] = (
            ("summary", f"group {g.group}: lag {lag} > {th.max_lag} messages{where}"),
            *base,
            ("threshold", str(th.max_lag)),
        )
    if th.max_lag_s is not None and lag_s > th.max_lag_s:
        out[A_LAG_TIME] = (
            (
                "summary",
                f"group {g.group}: oldest unconsumed message {lag_s:.0f}s old > {th.max_lag_s:g}s{where}",
            ),
            *base,
            ("threshold", f"{th.max_lag_s:g}"),
        )
    if th.max_status is not None and worse_than(view.status, th.max_status):
        bad = [w for w in view.queues if w.status == view.status]
        reason = (
            f"{bad[0].point.queue.topic}/{bad[0].point.queue.broker_name}/{bad[0].point.queue.queue_id}: {bad[0].reason}"
            if bad
            else ""
        )
        notes = _stuck_notes(g.tick.stuck[w.point.queue] for w in bad if w.point.queue in g.tick.stuck)
        out[A_STATUS] = (
            ("summary", f"group {g.group} is {view.status} ({len(bad)} queue(s)): {reason}"),
            *base,
            ("threshold", th.max_status),
            *notes,
        )
    return out


class AlertBook:
    """Alerts over rounds: pending while a condition has held less than ``for``, firing, then
    resolved (kept ``RESOLVED_RETENTION_MS`` so a re-send carries the resolve). A group that a
    round could not read (a broker down, its stats failed) keeps its alerts as they are: a gap
    in the data resolves nothing and fires nothing."""

    def __init__(self, config: AlertConfig, *, extra_labels: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.extra = dict(extra_labels or {})
        self.pending: dict[tuple[tuple[str, str], ...], int] = {}
        self.alerts: dict[tuple[tuple[str, str], ...], Alert] = {}

    def _labels(self, name: str, group: str, th: Thresholds) -> tuple[tuple[str, str], ...]:
        labels = {**self.extra, **dict(th.labels), "group": group, "severity": th.severity}
        return (("alertname", name), *sorted(labels.items()))

    def update(self, rnd: FleetRound) -> None:
        now = rnd.at_ms
        held = set(rnd.absent) | {g.group for g in rnd.groups if g.tick is None and g.unsupported is None}
        seen: set[tuple[tuple[str, str], ...]] = set()
        for g in rnd.groups:
            th = self.config.of(g.group)
            for name, notes in breaches(g, th).items():
                key = self._labels(name, g.group, th)
                seen.add(key)
                since = self.pending.setdefault(key, now)
                old = self.alerts.get(key)
                if old is not None and old.firing:
                    self.alerts[key] = replace(old, annotations=notes)
                elif now - since >= th.for_s * 1000:
                    self.alerts[key] = Alert(key, notes, now)
        for key in list(self.pending):
            if key not in seen and dict(key)["group"] not in held:
                del self.pending[key]
        for key, a in list(self.alerts.items()):
            if a.firing and key not in seen and dict(key)["group"] not in held:
                self.alerts[key] = replace(a, ends_ms=now)
            elif not a.firing and now - (a.ends_ms or now) > RESOLVED_RETENTION_MS:
                del self.alerts[key]

    def current(self) -> list[Alert]:
        """Firing alerts and those resolved within the retention, in a stable order."""
        return sorted(self.alerts.values(), key=lambda a: a.labels)

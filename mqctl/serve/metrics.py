"""The exporter's prometheus-client collector: it serves the LAST COMPLETE round and never asks
the cluster itself.

The sampler's thread hands each round to ``publish`` (a sink), which builds the round's families
once and swaps ONE immutable ``Snapshot`` reference; a scrape reads that reference once, so it
never blocks on the cluster and never mixes two rounds. A round that could not be taken at all
(the name server down) is counted in ``mqctl_round_errors_total`` and leaves the last complete
round served, its age (``mqctl_round_age_seconds``) growing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from mqctl.records import field, record
from mqctl.serve.families import Shape, build

if TYPE_CHECKING:
    from mqctl.errors import MqctlError
    from mqctl.ops.watch.fleet import FleetRound

# An exit status -> the reason label of mqctl_round_errors_total.
REASONS = {3: "not_found", 4: "unreachable", 5: "refused", 6: "store_data", 7: "not_available", 8: "denied"}


def reason_of(exit_status: int) -> str:
    return REASONS.get(int(exit_status), "error")


@record(frozen=True)
class Health:
    """What the exporter knows about itself across rounds (counters only go up)."""

    rounds: int = 0
    errors: tuple[tuple[tuple[str, str], int], ...] = ()  # ((broker, reason), count)
    last_ok: bool = False
    last_error: str | None = None


@record(frozen=True)
class Snapshot:
    """What a scrape serves: one complete round's families (built once), its time and cost, and
    the exporter's health. Replaced as a whole, never changed."""

    families: tuple[Any, ...] = ()
    round_at: float | None = None  # epoch seconds of the served round
    duration_s: float | None = None
    requests: int | None = None
    brokers: tuple[tuple[str, bool], ...] = ()
    limited: int = 0
    health: Health = field(default_factory=Health)


class RoundCollector:
    """A prometheus-client custom collector over the current ``Snapshot``."""

    def __init__(
        self, shape: Shape, version: str, alerting: Callable[[], list[tuple[str, bool, int]]] | None = None
    ) -> None:
        self.shape, self.version, self.alerting = shape, version, alerting
        self._snap = Snapshot()
        self._lock = threading.Lock()  # publishers only: a scrape reads the reference without it
        self._errors: dict[tuple[str, str], int] = {}

    @property
    def snapshot(self) -> Snapshot:
        return self._snap

    @property
    def ready(self) -> bool:
        return self._snap.round_at is not None

    def _health(self, ok: bool, error: str | None) -> Health:
        prev = self._snap.health
        return Health(prev.rounds + 1, tuple(sorted(self._errors.items())), ok, error)

    def publish(self, rnd: FleetRound) -> None:
        """A complete round: its families built here (the sampler's thread), then swapped in."""
        families, limited = build(rnd, self.shape)
        with self._lock:
            for broker, (_msg, status) in rnd.down.items():
                key = (broker, reason_of(status))
                self._errors[key] = self._errors.get(key, 0) + 1
            self._snap = Snapshot(
                tuple(families),
                rnd.at_ms / 1000,
                rnd.duration_s,
                rnd.requests,
                tuple((b, b not in rnd.down) for b in rnd.brokers),
                limited,
                self._health(True, None),
            )

    def failed(self, error: MqctlError) -> None:
        """A round that could not be taken: counted; the last complete round stays served."""
        with self._lock:
            key = ("", reason_of(error.exit_status))
            self._errors[key] = self._errors.get(key, 0) + 1
            old = self._snap
            self._snap = Snapshot(
                old.families,
                old.round_at,
                old.duration_s,
                old.requests,
                old.brokers,
                old.limited,
                self._health(False, error.message),
            )

    def describe(self) -> list[Any]:
        return []  # families vary by round: registered with auto_describe off

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily

        snap = self._snap  # read once: everything below comes from this one round
        yield from snap.families
        up = GaugeMetricFamily(
            "mqctl_broker_up",
            "1 when the broker answered the served round, 0 when it did not.",
            labels=["broker"],
        )
        for broker, ok in snap.brokers:
            up.add_metric([broker], 1 if ok else 0)
        yield up
        if snap.round_at is not None:
            yield GaugeMetricFamily(
                "mqctl_round_timestamp_seconds",
                "When the served round was taken (Unix time).",
                value=snap.round_at,
            )
            yield GaugeMetricFamily(
                "mqctl_round_age_seconds",
                "Age of the served round at scrape time.",
                value=max(time.time() - snap.round_at, 0.0),
            )
            yield GaugeMetricFamily(
                "mqctl_round_duration_seconds",
                "How long the served round took.",
                value=snap.duration_s or 0.0,
            )
        if snap.requests is not None:
            yield GaugeMetricFamily(
                "mqctl_round_requests", "Requests the served round sent to the cluster.", value=snap.requests
            )
        yield GaugeMetricFamily(
            "mqctl_series_limited_groups",
            "Groups whose series --max-series left out (in part or whole).",
            value=snap.limited,
        )
        yield GaugeMetricFamily(
            "mqctl_last_round_success",
            "1 when the last round could be taken, 0 when it failed.",
            value=int(snap.health.last_ok),
        )
        rounds = CounterMetricFamily(
            "mqctl_rounds", "Rounds attempted since the exporter started.", value=snap.health.rounds
        )
        yield rounds
        errors = CounterMetricFamily(
            "mqctl_round_errors",
            'Brokers that did not answer a round, by reason (broker "" : the whole round failed).',
            labels=["broker", "reason"],
        )
        for (broker, reason), n in snap.health.errors:
            errors.add_metric([broker, reason], n)
        yield errors
        if self.alerting is not None:
            yield from _alerting(self.alerting())
        yield InfoMetricFamily("mqctl_build", "mqctl's version.", value={"version": self.version})


def _alerting(targets: list[tuple[str, bool, int]]) -> Iterator[Any]:
    """Each --alertmanager: whether it took the last POST (the alert set, or the empty set re-sent
    every minute), and the POSTs it did not take."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    up = GaugeMetricFamily(
        "mqctl_alertmanager_up",
        "1 when the Alertmanager took the last POST of the alert set (sent every minute, empty or not).",
        labels=["alertmanager"],
    )
    errors = CounterMetricFamily(
        "mqctl_alertmanager_errors",
        "POSTs of the alert set the Alertmanager did not take.",
        labels=["alertmanager"],
    )
    for url, ok, failures in targets:
        up.add_metric([url], 1 if ok else 0)
        errors.add_metric([url], failures)
    yield up
    yield errors


def registry_for(collector: RoundCollector) -> Any:
    from prometheus_client.core import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry

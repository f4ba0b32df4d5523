"""Alerts pushed to Alertmanager (API v2, ``POST /api/v2/alerts``) over httpx, the way Prometheus
pushes them: the whole current set each time, firing alerts with an ``endsAt`` a few re-send
periods ahead (so Alertmanager resolves them itself if mqctl dies), resolved ones with the time
they ended.

Each Alertmanager has its own sender state in one background thread: a change is sent at once;
an unchanged set is sent again every ``resend_s`` (well inside Alertmanager's resolve_timeout,
5 m by default), the empty set too, from start-up on, so an Alertmanager that cannot take alerts
(down, a wrong URL or path) is said on stderr and in ``mqctl_alertmanager_up`` before an alert
needs it; a failure is retried with exponential backoff (1 s doubling to 60 s) while it
is down. A resolve is re-sent until that Alertmanager has taken it, and for
``RESOLVED_RETENTION_MS`` after (as Prometheus does): one that restarts in between learns it on
the next send, so no resolve is lost.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.ops.alertrules import Alert

BACKOFF_MIN_S, BACKOFF_MAX_S = 1.0, 60.0
CLOSE_WAIT_S = 0.5


def iso(ms: int) -> str:
    return (
        dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def payload(alerts: Sequence[Alert], now_ms: int, valid_ms: int, generator_url: str) -> list[dict[str, Any]]:
    """Alertmanager's postable alerts: firing ones valid ``valid_ms`` from now, resolved ones ended."""
    return [
        {
            "labels": dict(a.labels),
            "annotations": dict(a.annotations),
            "startsAt": iso(a.starts_ms),
            "endsAt": iso(now_ms + valid_ms if a.ends_ms is None else a.ends_ms),
            "generatorURL": generator_url,
        }
        for a in alerts
    ]


@record
class Target:
    """One Alertmanager and what it has taken."""

    url: str
    sent_version: int = 0  # the alert set's version it took last (0: the empty set at start)
    last_ok: float | None = None
    next_try: float = 0.0
    backoff: float = 0.0
    owed: dict[Any, Alert] = field(default_factory=dict)  # resolves it has not taken yet
    attempts: int = 0
    failures: int = 0
    last_error: str | None = None


class AlertSender:
    """Sends the alert set to every ``urls`` Alertmanager from a thread of its own."""

    def __init__(
        self,
        urls: Sequence[str],
        generator_url: str,
        *,
        resend_s: float = 60.0,
        timeout_s: float = 5.0,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.targets = [Target(u.rstrip("/")) for u in urls]
        self.generator_url = generator_url
        self.resend_s, self.timeout_s, self.clock, self.warn = resend_s, timeout_s, clock, warn
        self._alerts: list[Alert] = []
        self._version = 0
        self._cond = threading.Condition()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._client: Any = None

    # --- the sampler's side ------------------------------------------------------------------
    def update(self, alerts: Sequence[Alert]) -> None:
        """The current alert set (firing and recently resolved); sent now if it changed."""
        with self._cond:
            changed = [(a.labels, a.annotations, a.starts_ms, a.ends_ms) for a in alerts] != [
                (a.labels, a.annotations, a.starts_ms, a.ends_ms) for a in self._alerts
            ]
            for t in self.targets:
                for a in self._alerts:  # a resolve that dropped out of the set is still owed
                    if not a.firing and t.sent_version < self._version:
                        t.owed.setdefault(a.key, a)
            self._alerts = list(alerts)
            if changed:
                self._version += 1
                self._cond.notify_all()

    def health(self) -> list[tuple[str, bool, int]]:
        """Per Alertmanager: its URL, whether its last POST was taken, the failed POSTs so far."""
        with self._cond:
            return [(t.url, t.last_ok is not None and t.last_error is None, t.failures) for t in self.targets]

    # --- the sending thread ------------------------------------------------------------------
    def start(self) -> None:
        import httpx

        self._client = httpx.Client(timeout=self.timeout_s)
        self._thread = threading.Thread(target=self._loop, name="mqctl-alerts", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            # A POST in flight to an Alertmanager that does not answer is not waited out (up to
            # timeout_s): Ctrl-C ends the exporter at once; the daemon thread ends with it.
            self._thread.join(timeout=CLOSE_WAIT_S)
            if self._thread.is_alive():
                return
        if self._client is not None:
            self._client.close()

    def _due(self, t: Target, now: float) -> bool:
        if now < t.next_try:
            return False
        if t.sent_version != self._version or t.owed:
            return True
        # The set is re-sent every resend_s, the empty one too (Alertmanager takes ``[]`` with
        # 200): an Alertmanager that cannot take alerts is known at start-up and on every
        # re-send, not when the first alert fires.
        return t.last_ok is None or now - t.last_ok >= self.resend_s

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stop:
                    return
                now = self.clock()
                due = [t for t in self.targets if self._due(t, now)]
                if not due:
                    waits = [max(t.next_try - now, 0.05) for t in self.targets if t.next_try > now]
                    waits += [
                        self.resend_s - (now - t.last_ok) for t in self.targets if t.last_ok is not None
                    ]
                    self._cond.wait(timeout=max(min(waits, default=self.resend_s), 0.05))
                    continue
                alerts, version = list(self._alerts), self._version
            for t in due:
                self.send(t, alerts, version)

    def send(self, t: Target, alerts: Sequence[Alert], version: int) -> bool:
        """One POST of ``alerts`` (plus the resolves ``t`` is owed) to ``t``; backoff on failure."""
        now = self.clock()
        keys = {a.key for a in alerts}
        body = [*alerts, *(a for k, a in t.owed.items() if k not in keys)]
        data = payload(body, int(now * 1000), int(4 * self.resend_s * 1000), self.generator_url)
        t.attempts += 1
        try:
            r = self._client.post(f"{t.url}/api/v2/alerts", json=data)
            ok, why = 200 <= r.status_code < 300, f"HTTP {r.status_code}: {r.text.strip()[:200]}"
        except Exception as e:  # httpx.HTTPError and OS errors: the Alertmanager is not there
            ok, why = False, f"{type(e).__name__}: {e}"
        if ok:
            if t.last_error is not None:
                self.warn(f"alertmanager {t.url}: taking alerts again")
            with self._cond:
                t.sent_version, t.last_ok, t.backoff, t.next_try, t.last_error = version, now, 0.0, 0.0, None
                t.owed.clear()
            return True
        first = t.last_error is None
        with self._cond:
            t.failures += 1
            t.backoff = min(max(t.backoff * 2, BACKOFF_MIN_S), BACKOFF_MAX_S)
            t.next_try = now + t.backoff
            t.last_error = why
        if first and not self._stop:
            self.warn(f"alertmanager {t.url}: {why}; retrying with backoff (up to {BACKOFF_MAX_S:g}s)")
        return False

"""The Alertmanager sender against a stand-in Alertmanager (an HTTP server recording what API v2
receives, which the test stops and starts again): firing, re-sent, down and retried with
backoff, resolved while it was down and the resolve still delivered after it came back."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mqctl_testkit.fakeserver import refused_addr

pytest.importorskip("httpx")

from mqctl.ops.alertrules import Alert  # noqa: E402
from mqctl.serve.alerts import AlertSender  # noqa: E402


class FakeAlertmanager:
    def __init__(self, port: int = 0) -> None:
        self.posts: list[list[dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                assert self.path == "/api/v2/alerts"
                outer.posts.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_a: object) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_port
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(cond, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


LABELS = (("alertname", "MqctlConsumerLag"), ("group", "G"), ("severity", "warning"))


@pytest.mark.slow  # waits out the sender's real backoff (1 s, then 2 s): ~4.5 s
def test_fire_resend_down_backoff_resolve_after_restart() -> None:
    am = FakeAlertmanager()
    sender = AlertSender([f"http://127.0.0.1:{am.port}"], "http://exporter/metrics", resend_s=0.3)
    sender.start()
    try:
        firing = Alert(LABELS, (("summary", "lag 20 > 10"),), 1_700_000_000_000)
        sender.update([firing])
        wait_for(lambda: any(am.posts))  # (the empty set may go first: sent at start)
        first = next(p for p in am.posts if p)[0]
        assert first["labels"] == dict(LABELS) and first["annotations"]["summary"] == "lag 20 > 10"
        assert (
            first["startsAt"] == "2023-11-14T22:13:20.000Z"
            and first["generatorURL"] == "http://exporter/metrics"
        )
        wait_for(lambda: len(am.posts) >= 3)  # unchanged, re-sent every resend_s
        port = am.port
        am.stop()
        time.sleep(0.5)
        resolved = Alert(LABELS, firing.annotations, firing.starts_ms, 1_700_000_060_000)
        sender.update([resolved])  # resolved while the Alertmanager is down
        sender.update([])  # and gone from the set before it is back
        target = sender.targets[0]
        wait_for(lambda: target.failures >= 2)
        assert target.backoff >= 2.0  # doubling
        am2 = FakeAlertmanager(port)
        try:
            wait_for(lambda: len(am2.posts) >= 1, timeout=20)
            got = am2.posts[0]
            assert [(a["labels"], a["endsAt"]) for a in got] == [(dict(LABELS), "2023-11-14T22:14:20.000Z")]
        finally:
            am2.stop()
    finally:
        sender.close()


def test_the_empty_set_is_sent_at_start_and_a_wrong_alertmanager_is_said_at_once() -> None:
    """Nothing fires, yet each Alertmanager gets the (empty) set at start: one that is there takes
    it (up), one that is not is warned about once, before any alert would need it."""
    am = FakeAlertmanager()
    said: list[str] = []
    down = f"http://{refused_addr()}"
    sender = AlertSender([f"http://127.0.0.1:{am.port}", down], "http://exporter/metrics", warn=said.append)
    sender.start()
    try:
        wait_for(lambda: am.posts and sender.targets[1].failures >= 1)
        assert am.posts[0] == []
        assert sender.health() == [(f"http://127.0.0.1:{am.port}", True, 0), (down, False, 1)]
        assert len(said) == 1 and said[0].startswith(f"alertmanager {down}: ConnectError")
    finally:
        sender.close()
        am.stop()


@pytest.mark.slow  # waits out the first backoff (1 s)
def test_an_alertmanager_back_is_said() -> None:
    port = int(refused_addr().rsplit(":", 1)[1])
    said: list[str] = []
    sender = AlertSender([f"http://127.0.0.1:{port}"], "http://exporter/metrics", warn=said.append)
    sender.start()
    try:
        wait_for(lambda: sender.targets[0].failures >= 1)
        am = FakeAlertmanager(port)
        try:
            wait_for(lambda: am.posts)
            wait_for(lambda: sender.health()[0][1])
            assert said[-1] == f"alertmanager http://127.0.0.1:{port}: taking alerts again"
            assert len(said) == 2
        finally:
            am.stop()
    finally:
        sender.close()


def test_the_alertmanagers_in_the_scrape() -> None:
    from prometheus_client import generate_latest

    from mqctl.serve.families import Shape
    from mqctl.serve.metrics import RoundCollector, registry_for

    targets = [("http://a:9093", True, 0), ("http://b:9093", False, 7)]
    text = generate_latest(registry_for(RoundCollector(Shape(), "t", alerting=lambda: targets))).decode()
    lines = [ln for ln in text.splitlines() if ln.startswith("mqctl_alertmanager")]
    assert lines == [
        'mqctl_alertmanager_up{alertmanager="http://a:9093"} 1.0',
        'mqctl_alertmanager_up{alertmanager="http://b:9093"} 0.0',
        'mqctl_alertmanager_errors_total{alertmanager="http://a:9093"} 0.0',
        'mqctl_alertmanager_errors_total{alertmanager="http://b:9093"} 7.0',
    ]
    plain = generate_latest(registry_for(RoundCollector(Shape(), "t"))).decode()
    assert "mqctl_alertmanager" not in plain  # no --alertmanager: no such series


def test_close_does_not_wait_out_a_post_to_an_alertmanager_that_never_answers() -> None:
    """Ctrl-C while a POST hangs (the address accepts, nothing answers): the exporter ends at once,
    not after the POST's 5 s timeout, and says nothing about it after the fact."""
    import socket

    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(4)  # the kernel accepts the connection; nobody reads the request
    said: list[str] = []
    sender = AlertSender([f"http://127.0.0.1:{mute.getsockname()[1]}"], "http://e/metrics", warn=said.append)
    sender.start()
    try:
        time.sleep(0.3)  # the start-up POST is in flight
        t0 = time.monotonic()
        sender.close()
        assert time.monotonic() - t0 < 2.0
        time.sleep(0.2)
        assert said == []
    finally:
        mute.close()


def test_an_alertmanager_given_twice_is_one_target() -> None:
    """'--alertmanager URL' repeated (or once with a trailing slash) is one Alertmanager: one POST
    per send, and one mqctl_alertmanager_up series (two equal series would break the scrape)."""
    from mqctl.serve.settings import settings

    s = settings(
        "15s", (10, 100, None), ["http://am:9093", "http://am:9093/", "http://b:9093"], (None,) * 4, None
    )
    assert s.alertmanagers == ("http://am:9093", "http://b:9093")

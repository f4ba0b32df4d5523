"""``mqctl exporter``'s run: the HTTP endpoint in its thread, rounds of the fleet sampler in the
calling thread (Ctrl-C ends it), each complete round handed to the collector and, with
Alertmanagers, to the alert book and its sender. A round that could not be taken (the name
server down) leaves the last one served and is tried again at the next interval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mqctl.ops.watch.fleet import FleetFilter
from mqctl.records import field, record
from mqctl.serve.families import Shape

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.errors import MqctlError
    from mqctl.model import Rules
    from mqctl.ops.alertrules import AlertConfig
    from mqctl.ops.watch.fleet import FleetRound
    from mqctl.ops.watch.sampler import Outages


@record(frozen=True)
class ExporterOptions:
    listen: str = "127.0.0.1:9877"
    interval_s: float = 15.0
    alertmanagers: tuple[str, ...] = ()
    shape: Shape = Shape()
    only: FleetFilter = FleetFilter()
    config: AlertConfig | None = None
    rules: Rules | None = None
    resend_s: float = 60.0
    rounds: int | None = None  # stop after this many (tests)
    extra_labels: dict[str, str] = field(default_factory=dict)


class _Once:
    """Warnings printed once each (a warning a backend repeats every round is said once)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn, self.said = warn, set[str]()

    def __call__(self, line: str) -> None:
        if line not in self.said and len(self.said) < 10_000:
            self.said.add(line)
            self.warn(line)


def run(
    backend: Backend,
    opts: ExporterOptions,
    *,
    warn: Callable[[str], None],
    on_ready: Callable[[str], None] = lambda _where: None,
) -> None:
    from mqctl import __version__
    from mqctl.model import Rules
    from mqctl.ops.alertrules import AlertBook, AlertConfig
    from mqctl.ops.watch.fleet import FleetSampler, run_rounds
    from mqctl.ops.watch.sampler import Outages, ticks
    from mqctl.serve.alerts import AlertSender
    from mqctl.serve.http import Server
    from mqctl.serve.metrics import RoundCollector

    config = opts.config or AlertConfig()
    say = _Once(warn)
    outages = Outages("its queues' series are left out until it answers")
    collector = RoundCollector(opts.shape, __version__)
    server = Server(opts.listen, collector)
    sender = book = None
    if opts.alertmanagers:
        book = AlertBook(config, extra_labels=opts.extra_labels)
        sender = AlertSender(opts.alertmanagers, f"{server.url}/metrics", resend_s=opts.resend_s, warn=warn)
        collector.alerting = sender.health
        sender.start()
    sampler = FleetSampler(backend, opts.rules or Rules(), only=opts.only, subscriptions=config.subscriptions)
    last_error: list[str] = []
    checked: list[int] = []  # the round the profile's group names were checked against

    def sink(rnd: FleetRound) -> None:
        _say_round(rnd, say, outages, config, opts.only, checked)
        collector.publish(rnd)
        last_error.clear()
        if book is not None and sender is not None:
            book.update(rnd)
            sender.update(book.current())

    def on_error(e: MqctlError) -> None:
        collector.failed(e)
        if last_error != [e.message]:  # said when it starts failing, not every interval
            warn(f"round failed, serving the last complete round: {e.message}")
            last_error[:] = [e.message]

    on_ready(server.where)
    try:
        run_rounds(sampler, ticks(opts.interval_s, opts.rounds), sink, on_error)
    finally:
        server.close()
        if sender is not None:
            sender.close()


def _say_round(
    rnd: FleetRound,
    say: _Once,
    outages: Outages,
    config: AlertConfig,
    only: FleetFilter,
    checked: list[int],
) -> None:
    """A round's warnings on stderr: ``say`` prints each line once, ``outages`` each broker that
    stops answering and its return. After the first round every broker answered, the profile's
    group tables that name no group of it (``checked`` keeps that round's number): a group
    missing then is missing, not on a broker that was down."""
    if rnd.complete and not checked:
        checked.append(rnd.number)
        for line in config.unmatched([g.group for g in rnd.groups] + list(rnd.absent), only.group):
            say(line)
    for line in rnd.warnings:
        say(line)
    for line in outages.lines({broker: why for broker, (why, _status) in rnd.down.items()}):
        say.warn(line)  # each outage and each return, not once per process
    for g in rnd.groups:
        for line in g.tick.warnings if g.tick is not None else ():
            say(f"group {g.group}: {line}")

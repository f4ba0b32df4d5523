"""Every table mqctl draws on a terminal, at 80, 100 and 160 columns: a number, an id, a name or
a header word is never cut, folded or wrapped; a column that does not fit is either shown whole
or named as hidden; no line is wider than the terminal.

The values are written here by hand (long retry-topic names, client ids with '@', a Diff of
130 whose '0' a cut would lose); what must appear is each value as one whole token on one line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from mqctl.model import (
    AllocationResult,
    Connection,
    ConsumerConnection,
    GroupProgress,
    GroupSummary,
    MessageQueue,
    ProgressRow,
    QueuePoint,
    RebalanceReport,
    RebalanceRow,
    Rules,
    Sample,
    Subscription,
    TopicAllocation,
)
from mqctl.model.plans import PlanRow, ResetPlan, Target

WIDTHS = (80, 100, 160)
NOW = 1_780_000_000_000
RETRY = "%RETRY%payment-service"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def draw(fn: Callable[[io.StringIO], None], width: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``fn`` prints on a terminal ``width`` columns wide (colour codes removed)."""
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("TERM", "xterm-256color")
    out = Tty()
    fn(out)
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())


def whole(token: str, text: str) -> bool:
    """``token`` on one line, not glued to other characters."""
    pattern = re.compile(rf"(?<!\S){re.escape(token)}(?!\S)")
    return any(pattern.search(line) for line in text.splitlines())


def hidden(text: str, width: int) -> list[str]:
    flat = " ".join(text.split())
    m = re.search(rf"Hidden to fit {width} columns: (.*?) \((?:-o json|a wider)", flat)
    return [h.strip() for h in m.group(1).split(",")] if m else []


def check(
    text: str,
    width: int,
    required: dict[str, Sequence[str]],
    optional: dict[str, Sequence[str]] = {},  # noqa: B006 (read only)
    *,
    all_at: int = 160,
) -> None:
    """``required``: header -> values that must be shown whole; ``optional``: the same, unless
    the header is named as hidden. From ``all_at`` columns on, nothing may be hidden."""
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines()), text
    gone = hidden(text, width)
    assert not set(gone) - set(optional), f"a required column was hidden: {gone}\n{text}"
    if width >= all_at:
        assert gone == [], text
    for header, values in [*required.items(), *((h, v) for h, v in optional.items() if h not in gone)]:
        for word in header.split():
            assert whole(word, text), f"header word {word!r} of {header!r} cut at {width}:\n{text}"
        for v in values:
            assert whole(v, text), f"{header} value {v!r} cut at {width}:\n{text}"


# --- consumerProgress -g ------------------------------------------------------------------------


def progress() -> GroupProgress:
    def row(topic: str, qid: int, bo: int, co: int, last: int, lag_ms: int) -> ProgressRow:
        return ProgressRow(
            topic, "broker-a", qid, bo, co, 0, last, oldest_unconsumed_timestamp=last, lag_ms=lag_ms
        )

    return GroupProgress(
        "payment-service",
        [
            row(RETRY, 0, 70, 66, NOW - 1_000_000, 976_000),
            row("PaymentEvents", 0, 123_456_789_012, 123_456_788_882, NOW - 900_000, 882_000),
            row("PaymentEvents", 1, 236, 227, NOW - 800_000, 781_000),
        ],
        NOW,
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_consumer_progress_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import progress as render

    text = draw(lambda o: render.table(progress(), o), width, monkeypatch)
    check(
        text,
        width,
        {
            "Topic": [RETRY, "PaymentEvents"],
            "Broker": ["broker-a"],
            "QID": ["0", "1"],
            "Broker Offset": ["70", "123456789012", "236"],
            "Consumer Offset": ["66", "123456788882", "227"],
            "Diff": ["4", "130", "9"],
            "Lag Time": ["16m16s", "14m42s", "13m01s"],
        },
        {"Min": ["0"], "Last Consumed": []},
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_groups_overview_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import overview as render

    def g(name: str, diff: int, topics: list[str]) -> GroupSummary:
        return GroupSummary(
            name, diff, topics, ["broker-a", "broker-b"], 11_040_000, diff, found_in=("retryTopic",),
            queues=4, tps=12.5, clients=2, version=493, consume_type="CONSUME_PASSIVELY",
            message_model="CLUSTERING",
        )  # fmt: skip

    groups = [
        g("legacy-reporting", 1068, ["OrderEvents"]),
        g("payment-service", 130, [RETRY, "PaymentEvents"]),
    ]
    text = draw(lambda o: render.groups_table(groups, o, live=True), width, monkeypatch)
    check(
        text,
        width,
        {
            "Group": ["legacy-reporting", "payment-service"],
            "Clients": ["2"],
            "Diff Total": ["1068", "130"],
            "Max Lag Time": ["3h04m"],
        },
        {
            "Version": [],
            "TPS": ["12.50"],
            "Topics": ["OrderEvents", "PaymentEvents"],
            "Brokers": ["broker-a,", "broker-b"],
        },
    )


# --- --watch ------------------------------------------------------------------------------------


def watch_view() -> Any:
    from mqctl.ops.watch.rules import evaluate

    qa, qb, qr = (MessageQueue("PaymentEvents", "broker-a", i) for i in (0, 1, 2))
    retry = MessageQueue(RETRY, "broker-b", 0)

    def sample(t: int, extra: int) -> Sample:
        points = (
            QueuePoint(qa, 1120 + extra, 1000, pull_offset=1100),
            QueuePoint(qb, 900 + extra, 900 + extra, pull_offset=900 + extra),
            QueuePoint(qr, 12_345_678_901, 12_345_678_000, pull_offset=12_345_678_000),
            QueuePoint(retry, 70, 66, pull_offset=66),
        )
        return Sample("payment-service", NOW + t, points, backend="remoting")

    return evaluate([sample(0, 0), sample(5000, 10)], Rules(window=10, min_frozen_ms=1000))


WATCH_REQUIRED = {
    "Topic": ["PaymentEvents", RETRY],
    "Broker": ["broker-a", "broker-b"],
    "QID": ["0", "1", "2"],
    "Diff": ["130", "901", "4"],
    "Drain": [],
    "Status": [],
}
WATCH_OPTIONAL = {
    "Broker Offset": ["1130", "12345678901"],
    "Consumer Offset": ["1000", "12345678000"],
    "Inflight": ["100"],
    "Consume/s": [],
    "Produce/s": ["2.0"],
    "Why": [],
}


@pytest.mark.parametrize("width", WIDTHS)
def test_watch_table_printed(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import watch as render

    text = draw(lambda o: render.write_view(watch_view(), o), width, monkeypatch)
    check(text, width, WATCH_REQUIRED, WATCH_OPTIONAL)


@pytest.mark.parametrize("width", WIDTHS)
def test_watch_live_table(width: int) -> None:
    """What rich's Live draws (the table --watch redraws in place)."""
    from rich.console import Console

    from mqctl.render import watch as render

    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    console.print(render.live_renderable(watch_view(), width))
    check(out.getvalue(), width, WATCH_REQUIRED, WATCH_OPTIONAL)


# --- allocateMQ ---------------------------------------------------------------------------------

CIDS = ("consumer-host-1@1234", "consumer-host-2@5678", "consumer-host-3@9012")


def allocation(topics: Sequence[str]) -> AllocationResult:
    done = []
    for topic in topics:
        mqs = tuple(MessageQueue(topic, b, q) for b in ("broker-a", "broker-b") for q in range(4))
        result = tuple((cid, mqs[i::3]) for i, cid in enumerate(CIDS))
        done.append(TopicAllocation(topic, mqs, CIDS, result))
    return AllocationResult("AVG", False, CIDS, tuple(done))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("topics", [["OrderEvents"], ["OrderEvents", "PaymentEvents", "AuditLog"]])
def test_allocate_table(width: int, topics: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import allocate as render

    text = draw(lambda o: render.table(allocation(topics), o), width, monkeypatch)
    total = "Total" if len(topics) > 1 else "Count"
    counts = [str(3 * len(topics)), str(3 * len(topics)), str(2 * len(topics))]
    per_topic = {t: ["3", "2"] for t in topics} if len(topics) > 1 else {}
    # Queues: each broker's list is one token, e.g. broker-a:0,3 (ids sorted)
    check(
        text,
        width,
        {"Consumer": list(CIDS), total: counts, "Queues": ["broker-a:0,3", "broker-b:2"]},
        per_topic,
        all_at=10_000 if len(topics) > 1 else 160,
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_allocate_rebalance_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import allocate as render

    mqs = [MessageQueue(RETRY, "broker-a", 0), MessageQueue("PaymentEvents", "broker-b", 3)]
    rows = (RebalanceRow(mqs[0], CIDS[0], (CIDS[1],)), RebalanceRow(mqs[1], CIDS[2], (CIDS[0], CIDS[2])))
    report = RebalanceReport("payment-service", "AVG", "clients", CIDS, allocation(["X"]), rows)
    text = draw(lambda o: render.rebalance_table(report, o), width, monkeypatch)
    check(
        text,
        width,
        {
            "Topic": [RETRY, "PaymentEvents"],
            "Broker": ["broker-a", "broker-b"],
            "QID": ["0", "3"],
            "Reported (clients)": [CIDS[1], CIDS[0] + ","],
            "Status": ["moved", "duplicated"],
        },
        {"Expected (strategy)": [CIDS[0], CIDS[2]]},
    )


# --- consumerConnection -------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_connection_tables(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import connection as render

    ids = ["10.0.0.1@consumer-host-1@1234#8123456789012", "10.0.0.2@consumer-host-2@5678#8123456789013"]
    conn = ConsumerConnection(
        "payment-service",
        tuple(Connection(cid, f"10.0.0.{i + 1}:54321", "JAVA", 479) for i, cid in enumerate(ids)),
        (Subscription(RETRY, "*"), Subscription("PaymentEvents", "TagA || TagB || TagC")),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
    )
    text = draw(lambda o: render.table(conn, o), width, monkeypatch)
    check(
        text,
        width,
        {
            "Client Id": ids,
            "Address": ["10.0.0.1:54321"],
            "Topic": [RETRY, "PaymentEvents"],
            "Expression": ["TagA"],
        },
        {"Language": ["JAVA"], "Version": ["V5_3_3"], "Type": ["TAG"]},
    )


# --- resetOffsetByTime's plan -------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_reset_plan_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.render import reset as render

    rows = (
        PlanRow(RETRY, "broker-a", 0, 66, 70, 0, 70, NOW),
        PlanRow("PaymentEvents", "broker-b", 1, 123_456_788_882, 123_456_789_012, 0, 123_456_789_012, NOW,
                ("clamped", "current-below-min")),
    )  # fmt: skip
    plan = ResetPlan("payment-service", "PaymentEvents", Target("latest"), False, rows)
    status = render.status_line(plan, None)  # 112 characters: it used to break inside words at 80
    text = draw(lambda o: render.table(plan, o, status), width, monkeypatch)
    assert text.startswith("DRY RUN: nothing written (group payment-service,")
    assert " ".join(text.split("\nresetOffsetByTime ")[0].split()) == status
    check(
        text,
        width,
        {
            "DRY RUN: nothing written": ["--execute"],
            "Topic": [RETRY, "PaymentEvents"],
            "Broker": ["broker-a", "broker-b"],
            "QID": ["0", "1"],
            "Current": ["66", "123456788882"],
            "Target": ["70", "123456789012"],
            "Delta": ["+4", "+130"],
            "Warning": ["clamped,", "current-below-min"],
        },
        {"Store Time at Target": []},
    )


def test_reset_status_line_stays_one_line_on_a_pipe() -> None:
    """Scripts read the first line: off a terminal it is never wrapped."""
    from mqctl.render import reset as render

    plan = ResetPlan("payment-service", "PaymentEvents", Target("latest"), False, ())
    status = render.status_line(plan, None) + "; " + "x" * 300
    out = io.StringIO()
    render.table(plan, out, status)
    assert out.getvalue().splitlines()[0] == status


# --- lagReport ----------------------------------------------------------------------------------


def _lag_rows(matched: bool) -> list[dict[str, Any]]:
    def top(group: str, diff: int, lag: int) -> dict[str, Any]:
        return {"group": group, "diffTotal": diff, "matchedDiffTotal": diff // 2 if matched else None,
                "maxLagMs": lag, "queues": 12, "queuesBelowMin": 1, "queuesAboveMax": 0}  # fmt: skip

    return [top("legacy-reporting", 1068, 11_460_000), top("payment-service-consumers-eu-west", 130, 976_000)]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("matched", [False, True])
def test_lag_report_table(width: int, matched: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.model import LagReportSummary
    from mqctl.render.lagreport import report_table

    summary = LagReportSummary(24, "store", NOW, None, "parquet", None, _lag_rows(matched))
    text = draw(lambda o: report_table(summary, o), width, monkeypatch)
    check(
        text,
        width,
        {
            "Group": ["legacy-reporting", "payment-service-consumers-eu-west"],
            "Diff Total": ["1068", "130"],
            "Max Lag": ["3h11m", "16m16s"],
            "Queues": ["12"],
            "Below Min": ["1"],
            "Above Max": ["0"],
            **({"Matched": ["534", "65"]} if matched else {}),
        },
    )
    assert "#" not in text, "a terminal table has no mqadmin-style '#' headers"
    assert ("Matched" in text) is matched, "Matched only when some group has a matched diff"


@pytest.mark.parametrize("width", WIDTHS)
def test_lag_report_status_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mqctl.model import LagStatusSummary
    from mqctl.render.lagreport import status_table

    def row(group: str, status: str, lag: int, why: str) -> dict[str, Any]:
        counts = {"ok": 10, "warn": 0, "rewind": 0, "stop": 0, "stall": 2, "stuck": 0}
        return {"group": group, "status": status, "queues": 12, **counts, "stale": 0, "lag": lag,
                "maxLagMs": 976_000, "consumeRate": 1.5, "produceRate": 2.25,
                "worstQueue": f"{RETRY}/broker-a/0", "reason": why}  # fmt: skip

    rows = [row("legacy-reporting", "STALL", 1068, "messages arrive, the committed offset does not move")]
    summary = LagStatusSummary("/tmp/history", NOW, 900_000, 12, None, "parquet", rows)
    text = draw(lambda o: status_table(summary, o), width, monkeypatch)
    check(
        text,
        width,
        {
            "Group": ["legacy-reporting"],
            "Status": ["STALL"],
            "Queues": ["12", "STALL)"],
            "Lag": ["1068"],
            "Max Lag": ["16m16s"],
            "Worst Queue": [f"{RETRY}/broker-a/0"],
        },
        {"Consume/s": ["1.50"], "Produce/s": ["2.25"], "Why": ["committed"]},
        all_at=10_000,
    )
    assert "#" not in text


# --- the rule itself ----------------------------------------------------------------------------


def test_too_narrow_for_any_table_falls_back_to_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """Required columns wider than the terminal: one record per row, every value whole."""
    from mqctl.render.table import Column, TableSpec, write_table

    big = "%RETRY%a-group-with-a-name-much-longer-than-usual"
    spec = TableSpec(
        [Column("Topic"), Column("Broker"), Column("Broker Offset", "right", kind="number")],
        [[big, "broker-a", 123456789012345], ["T", "broker-b", 7]],
        title="records",
    )
    text = draw(lambda o: write_table(spec, o), 40, monkeypatch)
    for token in (big, "broker-a", "123456789012345", "broker-b"):
        assert whole(token, text), text
    assert "one record per row" in text
    assert "…" not in text


def test_colour_legend_only_when_colours_show(monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR (no-color.org): no colours, so no legend explaining them."""
    from mqctl.render import progress as render

    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = draw(lambda o: render.table(progress(), o), 160, monkeypatch)
    assert "yellow: unconsumed messages" in coloured
    monkeypatch.setenv("NO_COLOR", "1")
    plain = draw(lambda o: render.table(progress(), o), 160, monkeypatch)
    assert "payment-service" in plain and "yellow" not in plain and "red:" not in plain

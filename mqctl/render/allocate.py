"""allocateMQ output: mqadmin's JSON line, a rich table, a JSON document and CSV."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from mqctl.fastjson import dumps_compact
from mqctl.model import MessageQueue, java_compare_key
from mqctl.model.javaorder import hashmap_order, java_string_hash
from mqctl.render import Views

if TYPE_CHECKING:
    from mqctl.model import AllocationResult, Move, RebalanceReport, TopicAllocation

SCHEMA = "mqctl/allocateMQ/v1"
CSV_COLUMNS = ["consumer", "topic", "brokerName", "queueId"]


def _bean(mq: MessageQueue) -> dict[str, Any]:
    # fastjson writes bean properties sorted by name.
    return {"brokerName": mq.broker_name, "queueId": mq.queue_id, "topic": mq.topic}


def plain_line(t: TopicAllocation) -> str:
    """mqadmin's ``{"result":{...}}`` for one topic: keys in the HashMap's iteration order."""
    # mqadmin puts one entry per -i item in list order; a repeated id overwrites with an equal list.
    puts = [(cid, t.queues_of(cid)) for cid in t.cid_all]
    result = {cid: [_bean(mq) for mq in qs] for cid, qs in hashmap_order(puts, java_string_hash)}
    return dumps_compact({"result": result})


def plain(r: AllocationResult, out: TextIO) -> None:
    """One mqadmin line per topic (``-t A,B`` prints what ``-t A`` then ``-t B`` would)."""
    for t in r.topics:
        out.write(plain_line(t) + "\n")


def _move_dict(m: Move) -> dict[str, Any]:
    return {**_bean(m.queue), "from": list(m.before), "to": list(m.after)}


def json_doc(
    r: AllocationResult,
    moves: Sequence[Move] | None = None,
    compare_with: Sequence[str] | None = None,
    backend: str | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {"schema": SCHEMA}
    if backend:
        doc["backend"] = backend
    doc.update(
        {
            "strategy": r.strategy,
            "order": "sorted" if r.sorted else "mqadmin",
            "topics": [
                {
                    "topic": t.topic,
                    "queueCount": len(t.mq_all),
                    "result": {cid: [_bean(mq) for mq in qs] for cid, qs in t.result},
                    "unassigned": [_bean(mq) for mq in t.unassigned],
                }
                for t in r.topics
            ],
            "result": {cid: [_bean(mq) for mq in r.queues_of(cid)] for cid in r.clients},
            "totals": r.totals,
            "queueCount": r.queue_count,
            "imbalance": r.imbalance,
        }
    )
    if moves is not None:
        doc["compareWith"] = list(compare_with or [])
        doc["moves"] = [_move_dict(m) for m in moves]
    return doc


def csv_rows(r: AllocationResult) -> list[list[Any]]:
    return [
        [cid, mq.topic, mq.broker_name, mq.queue_id] for t in r.topics for cid, qs in t.result for mq in qs
    ]


def compact_queues(qs: Sequence[MessageQueue]) -> str:
    """``broker-a:0,1,3 broker-b:2`` — brokers and ids sorted, whatever the allocation order."""
    by_broker: dict[str, list[int]] = {}
    for mq in qs:
        by_broker.setdefault(mq.broker_name, []).append(mq.queue_id)
    return " ".join(
        f"{b}:{','.join(str(q) for q in sorted(by_broker[b]))}"
        for b in sorted(by_broker, key=java_compare_key)
    )


def _esc(s: str) -> str:
    # Client ids and broker names are user data; an IPv6 "[::1]" must not be read as rich markup.
    return s.replace("[", "\\[")


def table(
    r: AllocationResult,
    out: TextIO,
    moves: Sequence[Move] | None = None,
    compare_with: Sequence[str] | None = None,
) -> None:
    from mqctl.render.table import Column, TableSpec, write_table

    multi = len(r.topics) > 1
    # The per-topic counts go first on a narrow terminal: the Queues column names them all.
    cols = [Column("Consumer")]
    if multi:
        cols += [Column(_esc(t.topic), "right", kind="number", optional=True) for t in r.topics]
    cols += [Column("Total" if multi else "Count", "right", kind="number"), Column("Queues", kind="text")]
    rows, styles = _consumer_rows(r, multi)
    footer = _summary_lines(r)
    if moves is not None:
        footer += _move_lines(moves, compare_with)
    title = "allocateMQ " + ", ".join(t.topic for t in r.topics)
    write_table(TableSpec(cols, rows, title=_esc(title), footer_lines=footer, row_styles=styles), out)


def _consumer_rows(r: AllocationResult, multi: bool) -> tuple[list[Sequence[Any]], list[str | None]]:
    """One row per consumer (its counts and queues), dim when idle, yellow when the busiest."""
    totals = r.totals
    top = max(totals.values(), default=0)
    rows: list[Sequence[Any]] = []
    styles: list[str | None] = []
    for cid in r.clients:
        cells: list[Any] = [_esc(cid) if cid else "(empty)"]
        if multi:
            cells += [len(t.queues_of(cid)) for t in r.topics]
        if multi:
            queues = "; ".join(
                f"{_esc(t.topic)} {_esc(compact_queues(t.queues_of(cid)))}"
                for t in r.topics
                if t.queues_of(cid)
            )
        else:
            queues = _esc(compact_queues(r.queues_of(cid)))
        cells += [totals[cid], queues or "-"]
        rows.append(cells)
        styles.append(
            "dim" if totals[cid] == 0 else ("yellow" if r.imbalance > 1 and totals[cid] == top else None)
        )
    return rows, styles


def _summary_lines(r: AllocationResult) -> list[str]:
    """The footer: strategy and order, queues per topic, the imbalance, and what -i got wrong."""
    totals = r.totals
    n = len(r.clients)
    order = (
        "sorted like a consumer's rebalance" if r.sorted else "mqadmin's order: HashSet queues, -i as given"
    )
    footer = [f"\nStrategy {r.strategy} ({order}), {n} consumer{'s' if n != 1 else ''}"]
    footer += [f"{_esc(t.topic)}: {len(t.mq_all)} readable queues" for t in r.topics]
    if n:
        even = 0 if r.queue_count % n == 0 else 1
        footer.append(
            f"Imbalance: {r.imbalance} (max {max(totals.values(), default=0)}, "
            f"min {min(totals.values())} queues per consumer; "
            f"an even split of {r.queue_count} queues would differ by at most {even})"
        )
    cid_all = r.topics[0].cid_all if r.topics else ()
    dups = sorted({c for c in cid_all if cid_all.count(c) > 1})
    if dups:
        footer.append(
            f"[yellow]Listed more than once in -i: {_esc(', '.join(dups))} — an id takes the share of its "
            "first position; the shares of its later positions go to nobody[/yellow]"
        )
    for t in r.topics:
        if t.unassigned and r.strategy != "CONFIG":
            footer.append(
                f"[yellow]{_esc(t.topic)}: {len(t.unassigned)} queue(s) assigned to nobody "
                f"({_esc(compact_queues(t.unassigned))})[/yellow]"
            )
    return footer


def _move_lines(moves: Sequence[Move], compare_with: Sequence[str] | None) -> list[str]:
    """``--compare-with``: how many queues change hands, and each one's before and after."""
    lines = [f"\nMoves when the consumers become {_esc(','.join(compare_with or []))}: {len(moves)}"]
    for m in moves:
        before = ",".join(m.before) or "nobody"
        after = ",".join(m.after) or "nobody"
        lines.append(
            f"  {_esc(m.queue.topic)} {_esc(m.queue.broker_name)}:{m.queue.queue_id}  "
            f"{_esc(before)} -> {_esc(after)}"
        )
    return lines


# --- allocateMQ -g: the rebalance diff ----------------------------------------------------------

REBALANCE_SCHEMA = "mqctl/allocateMQ.rebalance/v1"
REBALANCE_CSV_COLUMNS = ["topic", "brokerName", "queueId", "expected", "reported", "status"]


def rebalance_json(r: RebalanceReport) -> dict[str, Any]:
    return {
        "schema": REBALANCE_SCHEMA,
        "group": r.group,
        "strategy": r.strategy,
        "strategySource": r.strategy_source,
        "clients": list(r.clients),
        "rows": [
            {**_bean(x.queue), "expected": x.expected, "reported": list(x.reported), "status": x.status}
            for x in r.rows
        ],
        "problems": len(r.problems),
    }


def rebalance_csv_rows(r: RebalanceReport) -> list[list[Any]]:
    return [
        [x.queue.topic, x.queue.broker_name, x.queue.queue_id, x.expected, " ".join(x.reported), x.status]
        for x in r.rows
    ]


def rebalance_table(r: RebalanceReport, out: TextIO) -> None:
    from mqctl.render.table import Column, TableSpec, write_table

    styles = [None if x.status == "ok" else ("yellow" if x.status == "moved" else "red") for x in r.rows]
    spec = TableSpec(
        [
            Column("Topic"),
            Column("Broker"),
            Column("QID", "right", kind="number"),
            # Status already says whether the holder is the strategy's choice: on a narrow
            # terminal the strategy's choice goes first, the real holder stays.
            Column("Expected (strategy)", optional=True),
            Column("Reported (clients)", kind="text"),
            Column("Status"),
        ],
        [
            [
                x.queue.topic,
                x.queue.broker_name,
                x.queue.queue_id,
                x.expected or "-",
                ", ".join(x.reported) or "-",
                x.status,
            ]
            for x in r.rows
        ],
        title=f"allocateMQ -g {r.group}: {len(r.clients)} client(s), strategy {r.strategy} (from {r.strategy_source})",
        footer_lines=[
            f"\n{len(r.rows)} queue(s), {len(r.problems)} not where the strategy puts them "
            "(moved: another client holds it; duplicated: several do; unowned: none does)"
        ],
        row_styles=styles,
    )
    write_table(spec, out)


def views(r: AllocationResult, moves: Any, other_ips: list[str] | None, kind: str | None) -> Views:
    """An allocation in each format; ``moves`` (--compare-with) only in the table and JSON."""
    return Views(
        plain=lambda o: plain(r, o),
        table=lambda o: table(r, o, moves, other_ips),
        json_doc=lambda: json_doc(r, moves, other_ips, kind),
        csv=lambda: (CSV_COLUMNS, csv_rows(r)),
    )


def rebalance_views(report: RebalanceReport) -> Views:
    """allocateMQ -g in each format; plain is mqadmin's line of the simulated allocation."""
    return Views(
        plain=lambda o: plain(report.simulated, o),
        table=lambda o: rebalance_table(report, o),
        json_doc=lambda: rebalance_json(report),
        csv=lambda: (REBALANCE_CSV_COLUMNS, rebalance_csv_rows(report)),
    )

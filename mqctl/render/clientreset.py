"""resetOffsetByTime on a broadcasting group's client files: the dry-run/executed line, the
table (one row per client and queue) and plain.

``plain``: mqadmin has no reset of client files. Each client gets mqadmin's own reset table
(``render.reset.plain``) after a line ``client[HOST/clientId] file[PATH]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mqctl.model.broadcast import ClientJournal, ClientResetPlan


def status_line(cplan: ClientResetPlan, journal: ClientJournal | None) -> str:
    what = (
        f"group {cplan.group}, topic {cplan.topic}, {len(cplan.plans)} client file(s), {cplan.rows} queue(s)"
    )
    if cplan.undo_of:
        what = f"undo of {cplan.undo_of}: " + what
    if cplan.notes:
        what += "; " + "; ".join(cplan.notes)
    if journal is None:
        busy = sum(1 for p in cplan.plans if p.busy)
        running = f"; {busy} client(s) look running: --execute would refuse (see below)" if busy else ""
        return f"DRY RUN: nothing written ({what}){running}; add --execute to apply"
    state = "" if journal.state == "applied" else f" (journal left {journal.state}: see --undo)"
    return (
        f"EXECUTED: client offsets.json written, each after its .bak ({what}); journal {journal.id}{state}, "
        f"undo with --undo {journal.id}; restart the clients to take them"
    )


def busy_lines(cplan: ClientResetPlan) -> list[str]:
    return [f"{p.client.label}: {p.busy}" for p in cplan.plans if p.busy]


def plain(cplan: ClientResetPlan, out: TextIO, ts_text: str, ts_long: int) -> None:
    from mqctl.render.reset import plain as reset_plain

    for p in cplan.plans:
        out.write(f"client[{p.client.label}] file[{p.client.path}]\n")
        reset_plain(p.plan, out, ts_text, ts_long)


def _signed(d: int | None) -> str:
    return "-" if d is None else f"+{d}" if d > 0 else str(d)


def table(cplan: ClientResetPlan, out: TextIO, status: str) -> None:
    from mqctl.render.plain import local_datetime_ms
    from mqctl.render.table import Column, TableSpec, write_table

    cols = [
        Column("Client"),
        Column("Broker"),
        Column("QID", "right"),
        Column("Current", "right"),
        Column("Target", "right"),
        Column("Delta", "right"),
        Column("Store Time at Target", optional=True),
        Column("Warning", kind="text"),
    ]
    rows, styles = [], []
    for p in cplan.plans:
        for r in p.plan.rows:
            rows.append(
                [
                    p.client.label,
                    r.broker_name,
                    r.queue_id,
                    r.current_offset if r.current_offset >= 0 else "(none)",
                    r.target_offset if r.target_offset >= 0 else "(remove)",
                    _signed(r.delta),
                    "-" if r.target_timestamp < 0 else local_datetime_ms(r.target_timestamp),
                    ", ".join(r.warnings),
                ]
            )
            styles.append("yellow" if r.warnings else None)
    footer = [""]
    for p in cplan.plans:
        footer.append(
            f"{p.client.label}: {len(p.plan.rows)} queue(s), {p.plan.changed} changed, {p.plan.replayed} "
            f"replayed, {p.plan.skipped} skipped ({p.client.path})"
        )
    footer += [f"[red]running[/red] {line}" for line in busy_lines(cplan)]
    title = f"resetOffsetByTime {cplan.group} {cplan.topic} (broadcasting: the clients' offsets.json)"
    write_table(
        TableSpec(cols, rows, title=title, footer_lines=footer, row_styles=styles, status=status), out
    )

"""resetOffsetByTime on a broadcasting group's client files: plan, execute (journalled), undo.

Plans are ``ops.reset``'s own, made on a view of the backend whose committed offsets are one
client's (``ClientView``): targets by time, earliest, latest, offset, shift or one queue, their
warnings and store times are exactly a broker reset's. Writes go through
``store.clientwrite.ClientOffsetsWrite`` (the client's layout and order, ``.bak`` first, each file
atomic), refused while a client looks alive: locally its file was written within two persist
intervals or a process holds it; live, its clientId is connected. Every target is checked against
the brokers' [min, max + 1] right before the write (an undo may also put back "no offset", or an
offset below a min that grew since).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mqctl.errors import ExitStatus, NotAvailableError, PartialWriteError, RefusedError, StoreError
from mqctl.model import ConsumeStats, MessageQueue, OffsetChange, QueueStat, ResetPlan, Target
from mqctl.model.broadcast import ClientJournal, ClientOffsets, ClientPlan, ClientResetPlan, ClientWrite
from mqctl.records import replace
from mqctl.store.clientoffsets import PERSIST_INTERVAL_MS

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


class ClientView:
    """The backend as a reset plan sees it, with one client's offsets as the committed ones (a
    queue its file does not name has none). It knows no connections (the plan's online note is the
    broker's business) and writes nothing: the file is written by ``apply``."""

    def __init__(self, backend: Backend, client: ClientOffsets) -> None:
        self._backend = backend
        self._own = {mq: off for mq, off in client.offsets if off >= 0}

    def consume_stats(self, group: str, topic: str | None = None, *, detail: bool = True) -> ConsumeStats:
        stats = self._backend.consume_stats(group, topic, detail=True)
        queues = tuple(self._mine(q) for q in stats.queues)
        return replace(stats, queues=queues)

    def _mine(self, q: QueueStat) -> QueueStat:
        off = self._own.get(q.queue)
        return replace(q, consumer_offset=off or 0, committed=off is not None, pull_offset=None)

    def consumer_connection(self, group: str) -> Any:
        raise NotAvailableError("a client's offsets.json has no connections")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def _view(backend: Backend, client: ClientOffsets) -> Backend:
    return cast("Backend", ClientView(backend, client))


def _connected(backend: Backend, group: str) -> set[str]:
    from mqctl.ops.broadcast import connection

    conn = connection(backend, group)
    return {c.client_id for c in conn.connections} if conn is not None else set()


def _busy(backend: Backend, client: ClientOffsets, online: set[str], persist_ms: int) -> str | None:
    from mqctl.store.clientwrite import busy_reason

    if client.client_id and client.client_id in online:
        return f"client {client.client_id} is connected to the brokers: it runs and would overwrite its file"
    return busy_reason(Path(client.path), persist_interval_ms=persist_ms)


def plan(
    backend: Backend,
    group: str,
    topic: str,
    target: Target,
    clients: Sequence[ClientOffsets],
    *,
    force: bool = True,
    broker: str | None = None,
    queue: int | None = None,
    persist_interval_ms: int = PERSIST_INTERVAL_MS,
) -> ClientResetPlan:
    """Each client's plan, made as a broker reset's (``ops.reset.plan_reset``) on its own offsets."""
    from mqctl.ops.reset import plan_reset

    online = _connected(backend, group)
    plans = []
    for c in clients:
        p = plan_reset(_view(backend, c), group, topic, target, force=force, broker=broker, queue=queue)
        plans.append(ClientPlan(c, p, _busy(backend, c, online, persist_interval_ms)))
    return ClientResetPlan(group, topic, target, tuple(plans))


def persist_interval_ms(text: str | None, default: int) -> int:
    """--persist-interval's value (the clients' persistConsumerOffsetInterval), else ``default``."""
    if text is None:
        return default
    from mqctl.ops.timeparse import positive_duration_ms

    return positive_duration_ms(text, "--persist-interval")


def plan_from_files(
    backend: Backend, group: str, topic: str, target: Target, paths: Sequence[Path], **options: Any
) -> ClientResetPlan:
    """:func:`plan` for every client file of ``group`` under ``paths`` (``backends.clientoffsets``:
    a file that cannot be read cleanly is exit 6 naming it)."""
    from mqctl.backends.clientoffsets import read_client_offsets

    return plan(backend, group, topic, target, read_client_offsets(paths, group), **options)


# ------------------------------------------------------------------------------ the range rule


def _ranges(backend: Backend, group: str, topics: Sequence[str]) -> dict[MessageQueue, QueueStat]:
    out: dict[MessageQueue, QueueStat] = {}
    for t in topics:
        out.update((q.queue, q) for q in backend.consume_stats(group, t, detail=True).queues)
    return out


def check_ranges(backend: Backend, cplan: ClientResetPlan) -> None:
    """Right before the write: every target in its queue's [min, max + 1] as the brokers have it
    now (an undo may also restore "none", -1, or any offset up to max + 1); a row that keeps its
    offset writes nothing new."""
    topics = sorted({r.topic for p in cplan.plans for r in p.plan.rows})
    now = _ranges(backend, cplan.group, topics)
    bad = []
    for p in cplan.plans:
        for r in p.plan.rows:
            mq = MessageQueue(r.topic, r.broker_name, r.queue_id)
            q = now.get(mq)
            t = r.target_offset
            if t == r.current_offset:
                continue
            if q is None:
                bad.append(
                    f"{p.client.label}: {mq.broker_name} {mq.topic} queue {mq.queue_id} no longer exists"
                )
                continue
            mn, mx = q.min_offset or 0, q.broker_offset
            if not (mn <= t <= mx + 1 or (cplan.undo_of is not None and -1 <= t <= mx + 1)):
                bad.append(
                    f"{p.client.label}: {mq.broker_name} {mq.topic} queue {mq.queue_id}: {t} is outside {mn}..{mx + 1}"
                )
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        raise RefusedError(
            f"target offset(s) outside the queue's range now: {'; '.join(bad[:3])}{more}; nothing written",
            "a queue takes offsets from its min to max + 1 (after the last message)",
        )


# ------------------------------------------------------------------------------ applying


def _changes(p: ResetPlan) -> dict[MessageQueue, int]:
    return {MessageQueue(r.topic, r.broker_name, r.queue_id): r.target_offset for r in p.rows}


def _expected(p: ResetPlan) -> dict[MessageQueue, int | None]:
    return {MessageQueue(r.topic, r.broker_name, r.queue_id): r.current_offset for r in p.rows}


def _record(
    cplan: ClientResetPlan, backend: Backend, writes: list[Any], now: int, persist_ms: int
) -> ClientJournal:
    from mqctl.ops.clientjournal import new_id
    from mqctl.ops.journal import PENDING

    clients = []
    for p, w, new in writes:
        changes = tuple(
            OffsetChange(mq, _before(p.plan, mq), after) for mq, after in _changes(p.plan).items()
        )
        clients.append(ClientWrite(str(w.path), p.client.client_id, p.client.host, w.data, new, changes))
    return ClientJournal(
        new_id(cplan.group, now),
        now,
        PENDING,
        cplan.group,
        cplan.topic,
        backend.target(),
        tuple(clients),
        persist_ms,
        undo_of=cplan.undo_of,
    )


def _before(p: ResetPlan, mq: MessageQueue) -> int:
    return next(r.current_offset for r in p.rows if MessageQueue(r.topic, r.broker_name, r.queue_id) == mq)


def _begin(
    stack: contextlib.ExitStack,
    backend: Backend,
    cplan: ClientResetPlan,
    persist_ms: int,
    restore: dict[str, tuple[bytes, bytes]],
) -> list[tuple[ClientPlan, Any, bytes]]:
    """Phase one for every client before any is written: refused while it is connected; mqctl's
    lock on its directory, the running check and the re-read against the plan
    (``ClientOffsetsWrite``); the bytes it will get (an undo's exact old bytes when the file still
    holds what the reset wrote)."""
    from mqctl.store.clientwrite import ClientOffsetsWrite

    online = _connected(backend, cplan.group)
    writes = []
    for p in cplan.plans:
        if p.client.client_id in online:
            raise RefusedError(
                f"client {p.client.client_id} is connected to the brokers: it runs and would overwrite "
                f"{p.client.path} from memory; nothing written",
                "stop the client first, then run the command again",
            )
        w = stack.enter_context(
            ClientOffsetsWrite(
                Path(p.client.path), expected=_expected(p.plan), persist_interval_ms=persist_ms
            )
        )
        exact = restore.get(p.client.path)
        new = exact[1] if exact is not None and w.data == exact[0] else w.render(_changes(p.plan))
        writes.append((p, w, new))
    return writes


def apply(
    backend: Backend,
    cplan: ClientResetPlan,
    *,
    persist_interval_ms: int = PERSIST_INTERVAL_MS,
    restore: dict[str, tuple[bytes, bytes]] | None = None,
    now_ms: int | None = None,
    directory: Path | None = None,
) -> ClientJournal:
    """Write every client's file, journalled: phase one for all (``_begin``), the range check, the
    record ``pending``; then each file (``restore``: path -> (the bytes the reset wrote, the bytes
    an undo puts back)); the record ``applied``, or ``partial`` naming the files written when one
    fails."""
    from mqctl.ops import clientjournal
    from mqctl.ops.journal import APPLIED, PARTIAL, journal_dir

    now = int(time.time() * 1000) if now_ms is None else now_ms
    d = journal_dir() if directory is None else directory
    with contextlib.ExitStack() as stack:
        writes = _begin(stack, backend, cplan, persist_interval_ms, restore or {})
        check_ranges(backend, cplan)
        record = _record(cplan, backend, writes, now, persist_interval_ms)
        path = clientjournal.write(record, d)
        done: list[ClientWrite] = []
        try:
            for (_p, w, new), cw in zip(writes, record.clients):
                w.replace(new)
                done.append(replace(cw, written=True))
        except (OSError, StoreError, RefusedError) as exc:
            written = {c.path for c in done}
            clients = tuple(replace(c, written=c.path in written) for c in record.clients)
            with contextlib.suppress(StoreError):
                clientjournal.write(replace(record, state=PARTIAL, clients=clients), d)
            raise _partial(exc, done, len(writes), record.id) from None
    applied = replace(record, state=APPLIED, clients=tuple(done), path=path)
    with contextlib.suppress(StoreError):
        clientjournal.write(applied, d)
    return applied


def _partial(exc: Exception, done: list[ClientWrite], total: int, rid: str) -> PartialWriteError:
    what = (exc.strerror or str(exc)) if isinstance(exc, OSError) else getattr(exc, "message", str(exc))
    status = ExitStatus.REFUSED if isinstance(exc, RefusedError) else ExitStatus.STORE_DATA
    return PartialWriteError(
        f"{len(done)} of {total} client file(s) written, then: {what}; journal {rid} is partial",
        [c.path for c in done],
        status,
        f"--undo {rid} puts back the files written",
    )


# ------------------------------------------------------------------------------ undo


def plan_undo(
    backend: Backend, record: ClientJournal
) -> tuple[ClientResetPlan, dict[str, tuple[bytes, bytes]]]:
    """The reverse of a journalled reset of client files: each file whose reset landed back to its
    offsets before it (``apply`` writes its bytes before it when the file still holds exactly the
    bytes written); refused when a client's offsets moved since. Returns the plan and, per path,
    (the bytes the reset wrote, the bytes before it)."""
    from mqctl.backends.clientoffsets import read_client_offsets
    from mqctl.model import JournalRecord
    from mqctl.ops.journal import APPLIED
    from mqctl.ops.reset import plan_undo as plan_reset_undo

    plans, notes, restore = [], [], {}
    online = _connected(backend, record.group)
    for cw in record.clients:
        (client,) = read_client_offsets([Path(cw.path)], record.group)
        now = dict(client.offsets)
        landed = {c.queue: c.after for c in cw.changes if c.before != c.after}
        if record.state != APPLIED and all(now.get(mq, -1) == _b(cw, mq) for mq in landed):
            notes.append(f"{client.label}: its reset never landed (journal {record.state}); left as it is")
            continue
        rec = JournalRecord(record.id, record.created_ms, APPLIED, record.group, record.target, cw.changes)
        try:
            p = plan_reset_undo(_view(backend, client), rec)
        except RefusedError as exc:
            raise RefusedError(f"{client.label}: {exc.message}", exc.hint) from None
        plans.append(ClientPlan(client, p, _busy(backend, client, online, record.persist_interval_ms)))
        restore[cw.path] = (cw.after, cw.before)
    if not plans:
        raise RefusedError(f"nothing to undo: no client file of {record.id} holds its reset", None)
    undo = ClientResetPlan(
        record.group, record.topic, Target("undo", text=record.id), tuple(plans), record.id, tuple(notes)
    )
    return undo, restore


def _b(cw: ClientWrite, mq: MessageQueue) -> int:
    return next(c.before for c in cw.changes if c.queue == mq)


# ------------------------------------------------------------------------------ documents

PLAN_SCHEMA = "mqctl/resetOffsetByTime.clientOffsets/v1"
CSV_COLUMNS = ["client", "path"]


def document(cplan: ClientResetPlan, journal: ClientJournal | None) -> dict[str, Any]:
    """-o json: per client its file, whether it looks running, and its plan's rows (the broker
    plan's row fields, ``ops.planfile.plan_rows``)."""
    from mqctl.ops.planfile import plan_rows

    t = cplan.target
    doc: dict[str, Any] = {
        "schema": PLAN_SCHEMA,
        "executed": journal is not None,
        "group": cplan.group,
        "topic": cplan.topic,
        "target": {"kind": t.kind, "value": t.value, "text": t.text},
        "notes": list(cplan.notes),
        "clients": [
            {
                "client": p.client.label,
                "clientId": p.client.client_id,
                "host": p.client.host,
                "path": p.client.path,
                "running": p.busy,
                "rows": plan_rows(p.plan),
                "totals": {
                    "queues": len(p.plan.rows),
                    "changed": p.plan.changed,
                    "replayed": p.plan.replayed,
                    "skipped": p.plan.skipped,
                },
            }
            for p in cplan.plans
        ],
    }
    if cplan.undo_of:
        doc["undoOf"] = cplan.undo_of
    if journal is not None:
        doc["journal"] = {
            "id": journal.id,
            "path": None if journal.path is None else str(journal.path),
            "state": journal.state,
        }
    return doc


def csv_table(cplan: ClientResetPlan, journal: ClientJournal | None) -> tuple[list[str], list[list[Any]]]:
    """-o csv: the broker plan's columns, each row led by its client and file."""
    from mqctl.ops.planfile import CSV_COLUMNS as PLAN_COLUMNS
    from mqctl.ops.planfile import csv_rows

    executed = "true" if journal is not None else "false"
    rows = [
        [p.client.label, p.client.path, *row[:-1], executed]
        for p in cplan.plans
        for row in csv_rows(p.plan, None)
    ]
    return [*CSV_COLUMNS, *PLAN_COLUMNS], rows

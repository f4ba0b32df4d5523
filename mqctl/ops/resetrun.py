"""resetOffsetByTime's one entry point per mode: a broker reset (a new plan, a reviewed plan file
or the undo of a journal record: planned, applied with --execute, journalled) and a reset of
broadcasting clients' files (``clientreset``). cli/reset.py parses the flags, chooses the mode
and draws what these return."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.backends.open import BackendOptions, BackendTarget
    from mqctl.model import JournalRecord, ResetPlan
    from mqctl.model.broadcast import ClientJournal, ClientResetPlan
    from mqctl.ops.planfile import PlanFile
    from mqctl.ops.resettarget import Scope


def open_for(
    record: Any, pointed: bool, target: Callable[[], BackendTarget], options: BackendOptions
) -> Backend:
    """The backend a reset runs on: an undo reopens the cluster its journal record names (through
    the same opener) unless the user ``pointed`` elsewhere (a store, a profile, a name server)."""
    from mqctl.backends.open import open_backend

    if record is not None and not pointed:
        return open_backend(record.target, options)
    return open_backend(target(), options)


@record(frozen=True)
class BrokerReset:
    """A reset of the brokers' offsets: where its plan comes from and what to do with it. The
    scope and force are the flags' (a new plan's; the scope's note goes on every plan)."""

    group: str | None
    topic: str | None
    scope: Scope
    force: bool
    record: JournalRecord | None
    plan_file: PlanFile | None
    from_file: Path | None
    execute: bool
    export: str | None
    overwrite: bool


@record(frozen=True)
class BrokerResetDone:
    plan: ResetPlan
    journal: Any  # the JournalRecord written by --execute, else None
    warnings: list[str]
    export_path: Path | None  # --export's file (checked before anything was read); None: stdout or none


def run(req: BrokerReset, backend: Backend) -> BrokerResetDone:
    """Check --export's path, plan (the reverse of a journal record, a reviewed plan file, or a new
    one), apply it when asked; the backend's warnings are collected."""
    from mqctl.ops import reset as ops
    from mqctl.ops.planfile import check_export_target

    with backend:
        export_path = (
            check_export_target(req.export, backend.protected_paths(), req.overwrite)
            if req.export is not None
            else None
        )
        plan = _plan(backend, req)
        if req.scope.note:
            plan = ops.note(plan, req.scope.note)
        journal = ops.apply_plan(backend, plan) if req.execute else None
        warnings = [str(w) for w in backend.take_warnings()]
    return BrokerResetDone(plan, journal, warnings, export_path)


def missed_status(journal: JournalRecord | None) -> int:
    """The exit status of a write already printed: a queue read back away from its target is not a
    success (4 when it could not be read, else 5); an online consumer that committed past its new
    offset took the reset and resumed, which is one. 0: every queue took it."""
    from mqctl.errors import ExitStatus

    result = None if journal is None else journal.result
    if result is None or not result.not_taken:
        return 0
    unread = any(c.now is None for c in result.not_taken)
    return int(ExitStatus.UNREACHABLE if unread else ExitStatus.REFUSED)


def _plan(backend: Backend, req: BrokerReset) -> ResetPlan:
    from mqctl.ops import reset as ops

    if req.record is not None:
        return ops.plan_undo(backend, req.record)
    if req.plan_file is not None:
        return ops.plan_from_file(backend, req.plan_file, str(req.from_file))
    assert req.group and req.topic
    s = req.scope
    return ops.plan_reset(
        backend, req.group, req.topic, s.target, force=req.force, broker=s.broker, queue=s.queue
    )


@record(frozen=True)
class ClientsReset:
    """A reset of broadcasting clients' offsets.json (or the undo of one: ``record``)."""

    group: str | None
    topic: str | None
    scope: Scope
    force: bool
    paths: Sequence[Path]
    persist_interval_ms: int
    execute: bool
    record: ClientJournal | None


def clients_source(
    undo: str | None, group: str | None, topic: str | None, persist_interval: str | None
) -> tuple[ClientJournal | None, int]:
    """The journal record an --undo replays (-g, when given, must name its group), else -g and -t
    for a new plan; and the clients' persist interval in ms: --persist-interval, else the record's,
    else the client's default."""
    from mqctl.errors import UsageError
    from mqctl.ops import clientjournal
    from mqctl.ops.clientreset import PERSIST_INTERVAL_MS, persist_interval_ms

    record = clientjournal.read(undo) if undo is not None else None
    if record is not None and group and group != record.group:
        raise UsageError(f"-g/--group {group!r} does not match the journal ({record.group!r})")
    if record is None and (not group or not topic):
        raise UsageError("-g/--group and -t/--topic are required")
    default = record.persist_interval_ms if record else PERSIST_INTERVAL_MS
    return record, persist_interval_ms(persist_interval, default)


def run_clients(req: ClientsReset, backend: Backend) -> tuple[ClientResetPlan, Any, list[str]]:
    """The plan (or the undo of a journal record), applied with --execute: (plan, journal record
    or None, the backend's warnings)."""
    from mqctl.ops import clientreset as ops

    restore = None
    with backend:
        if req.record is not None:
            cplan, restore = ops.plan_undo(backend, req.record)
        else:
            assert req.group and req.topic
            cplan = ops.plan_from_files(
                backend,
                req.group,
                req.topic,
                req.scope.target,
                req.paths,
                force=req.force,
                broker=req.scope.broker,
                queue=req.scope.queue,
                persist_interval_ms=req.persist_interval_ms,
            )
        journal = (
            ops.apply(backend, cplan, persist_interval_ms=req.persist_interval_ms, restore=restore)
            if req.execute
            else None
        )
        warnings = [str(w) for w in backend.take_warnings()]
    return cplan, journal, warnings

"""What the outputs say about a POP group (RocketMQ 5 consumers through a proxy): consumerProgress's
POP lines and JSON block."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mqctl.model.pop import PopView

NA = "N/A"  # mqadmin's own word for a value it has not (#LastTime, #Client IP)


def progress_lines(v: PopView) -> list[str]:
    """Under the table: what the numbers mean for a POP group, and the ones it adds."""
    retry = ", ".join(f"{name} {n}" for name, n in v.retry_backlog) or "no POP retry topic yet"
    inflight = str(v.inflight) if v.inflight is not None else "unknown"
    lines = [
        f"POP group ({v.info.evidence()}): the broker commits the offset when it hands a message out, "
        "not when the client acknowledges it",
        f"  waiting (never popped: the Diff of its topics): {v.waiting}",
        f"  retry backlog (popped, not acknowledged in time, not popped again yet): {retry}",
        f"  in flight (popped, not acknowledged yet): {inflight}"
        + ("" if v.inflight is not None else f": {v.inflight_note}"),
    ]
    if v.not_done is not None:
        lines.append(f"  not done in all: {v.not_done}")
    if v.info.expressions:
        subs = ", ".join(f"{t} {e!r}" for t, e in v.info.expressions)
        lines.append(
            f"  subscriptions the brokers hold (last 10 min): {subs}; --tags EXPR counts the filtered lag"
        )
    return lines


def progress_json(v: PopView) -> dict:
    return {
        "retryTopics": [r.name for r in v.info.retry_topics],
        "recentSubscriptions": None if v.info.recent is None else dict(v.info.expressions),
        "waiting": v.waiting,
        "retryBacklog": dict(v.retry_backlog),
        "inflight": v.inflight,
        "inflightNote": None if v.inflight is not None else v.inflight_note,
        "notDone": v.not_done,
    }

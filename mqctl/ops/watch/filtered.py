"""Exact filtered lag round after round, counting only what changed.

A queue's filtered lag is the number of its unconsumed messages, [max(committed, min), max), whose
tag matches the group's subscription. Between two rounds the range moves forward at both ends:
the consumer consumed [old start, new start) and producers appended [old end, new end). So the
new count is the old one minus the matches consumed plus the matches appended, two small spans
instead of the whole backlog. Any other change (a rewind, retention past the old start, a new
expression) counts the whole range again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import MessageQueue, QueueSpan, QueueStat


@record(frozen=True)
class Want:
    """A group's queue and the tag expression its consumers subscribe to it with."""

    group: str
    expr: str
    stat: QueueStat


# (group, expression, queue) -> (start, end, matched) of the previous round
MatchCache = dict[tuple[str, str, "MessageQueue"], tuple[int, int, int]]


def _range(q: QueueStat) -> tuple[int, int]:
    start = max(q.consumer_offset, q.min_offset or 0)
    return start, max(start, q.broker_offset)


def matched_lags(
    backend: Backend, wanted: Sequence[Want], cache: MatchCache
) -> dict[tuple[str, MessageQueue], tuple[str, int]]:
    """(group, queue) -> (expression, exact matching lag) for every wanted queue, with the fewest
    entries read; ``cache`` carries the counts to the next round (and keeps only this round's).
    An expression that does not parse is left out (no number rather than a wrong one)."""
    from mqctl.model import QueueSpan, SubExpr, parse_subexpr

    exprs: dict[str, SubExpr | None] = {}
    plans: list[tuple[Want, int, int, int, list[tuple[int, QueueSpan]]]] = []  # want, start, end, base, spans
    for w in wanted:
        if w.expr not in exprs:
            try:
                exprs[w.expr] = parse_subexpr(w.expr)
            except MqctlError:
                exprs[w.expr] = None
        if exprs[w.expr] is None:
            continue
        start, end = _range(w.stat)
        mq = w.stat.queue
        prev = cache.get((w.group, w.expr, mq))
        floor = w.stat.min_offset or 0
        if prev is not None and floor <= prev[0] <= start <= prev[1] <= end:
            spans = [(-1, QueueSpan(mq, prev[0], start)), (1, QueueSpan(mq, prev[1], end))]
            base = prev[2]
        else:
            spans, base = [(1, QueueSpan(mq, start, end))], 0
        plans.append((w, start, end, base, [(sign, s) for sign, s in spans if s.end > s.start]))
    counts = _count(backend, [(w.expr, s) for w, *_rest, spans in plans for _sign, s in spans], exprs)
    out: dict[tuple[str, MessageQueue], tuple[str, int]] = {}
    cache.clear()
    i = 0
    for w, start, end, base, spans in plans:
        matched = base
        for sign, _s in spans:
            matched += sign * counts[i]
            i += 1
        cache[(w.group, w.expr, w.stat.queue)] = (start, end, matched)
        out[(w.group, w.stat.queue)] = (w.expr, matched)
    return out


def _count(backend: Backend, spans: Sequence[tuple[str, QueueSpan]], exprs: dict) -> list[int]:
    """Matches per span, one batch question per expression, in the order given."""
    by_expr: dict[str, list[int]] = {}
    for i, (expr, _s) in enumerate(spans):
        by_expr.setdefault(expr, []).append(i)
    out = [0] * len(spans)
    for expr, idx in by_expr.items():
        if exprs[expr].match_all:
            found = [spans[i][1].end - spans[i][1].start for i in idx]
        else:
            found = [c.matched for c in backend.count_tag_matches([spans[i][1] for i in idx], exprs[expr])]
        for i, n in zip(idx, found):
            out[i] = n
    return out

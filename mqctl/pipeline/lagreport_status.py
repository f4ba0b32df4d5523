"""lagReport --status: consumerProgress --watch's status rules over the fleet's history, on Spark.

The rules are not written here. They are the pure functions of mqctl/ops/watch/rules.py (samples in,
status out), handed in by ``pipeline/lagreport.status_report`` as a ``StatusRules`` (this module,
whose functions run on the executors, imports none of ops) and run through mapInArrow, once per
queue:

1. the history's rows in the window are folded per (group, topic, brokerName, queueId) into the
   queue's series, oldest first (one row per queue: its points as an array);
2. as ``watch.evaluate`` does for one group: a queue missing from its group's newest sample
   stays, marked stale, only when its broker has none of the group's queues in that sample (the
   broker did not answer); a queue gone from a broker that answered is gone;
3. ``queue_status`` and ``queue_rates`` judge each series (every sample of the window counts);
4. the group's status is its worst queue's, in ``mqctl.model.STATUSES`` order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from mqctl.model import STATUSES
from mqctl.pipeline import spark_schemas as S
from mqctl.records import record

if TYPE_CHECKING:
    import pyarrow as pa

    from mqctl.model import QueuePoint, Rates, Rules

__all__ = ["StatusRules", "group_status_df", "queue_status_df"]

Series = Sequence[tuple[int, "QueuePoint"]]


@record(frozen=True)
class StatusRules:
    """The rule functions (module-level, so they travel to executors by reference) and rules."""

    queue_status: Callable[[Series, Rules], tuple[str, str]]
    queue_rates: Callable[[Series], Rates]
    rules: Rules


_SERIES_SQL = """
SELECT * FROM (
    SELECT *, max(lastMs) OVER (PARTITION BY `group`) AS groupNewest,
              max(lastMs) OVER (PARTITION BY `group`, brokerName) AS brokerNewest
    FROM (
        SELECT `group`, topic, brokerName, queueId, max(sampleMs) AS lastMs,
               sort_array(collect_list(struct(sampleMs, brokerOffset, consumerOffset, pullOffset,
                                              noCommittedOffset, lagMs, minOffset))) AS points
        FROM {history}
        GROUP BY `group`, topic, brokerName, queueId
    )
)
WHERE lastMs = groupNewest OR brokerNewest < groupNewest
"""


def queue_status_df(history: DataFrame, rules: StatusRules) -> DataFrame:
    """Every queue of the history (rows already limited to the window) judged (QUEUE_STATUS)."""
    series = history.sparkSession.sql(_SERIES_SQL, history=history)

    def judge(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _judge_batches(batches, rules)

    return series.mapInArrow(judge, S.QUEUE_STATUS)


def group_status_df(queues: DataFrame) -> DataFrame:
    """Per group (GROUP_STATUS): the worst queue's status (and its reason and queue), how many
    queues have each status, lag and rates summed; the worst groups first, then the largest lag."""
    order = ", ".join(f"'{s}'" for s in STATUSES)
    rank = f"array_position(array({order}), status)"
    worst = f"named_struct('rank', {rank}, 'lag', lag)"
    counts = ", ".join(f"count_if(status = '{s}') AS {s.lower()}" for s in STATUSES)
    sql = f"""
        SELECT {", ".join(S.GROUP_STATUS.names)} FROM (
            SELECT `group`, max({rank}) AS severity,
                   element_at(array({order}), CAST(max({rank}) AS INT)) AS status,
                   max_by(reason, {worst}) AS reason,
                   max_by(concat_ws(' ', topic, brokerName, queueId), {worst}) AS worstQueue,
                   count(*) AS queues, {counts}, count_if(stale) AS stale,
                   sum(lag) AS lag, max(lagMs) AS maxLagMs, sum(consumeRate) AS consumeRate,
                   sum(produceRate) AS produceRate, max(sampleMs) AS sampleMs
            FROM {{queues}}
            GROUP BY `group`
        )
        ORDER BY severity DESC, lag DESC, `group`
    """
    return queues.sparkSession.sql(sql, queues=queues)


def _point(queue: Any, p: dict[str, Any]) -> QueuePoint:
    from mqctl.model import QueuePoint

    return QueuePoint(
        queue=queue,
        broker_offset=p["brokerOffset"],
        consumer_offset=p["consumerOffset"],
        pull_offset=p["pullOffset"],
        committed=p["noCommittedOffset"] is not True,
        lag_ms=p["lagMs"] or 0,
        min_offset=p["minOffset"],
    )


def _judge_batches(batches: Iterator[pa.RecordBatch], rules: StatusRules) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from mqctl.model import MessageQueue
    from mqctl.records import replace

    schema = to_arrow_schema(S.QUEUE_STATUS)
    keys = ("group", "topic", "brokerName", "queueId", "lastMs", "groupNewest", "points")
    for batch in batches:
        rows = []
        cols = {k: batch.column(k).to_pylist() for k in keys}
        for i in range(batch.num_rows):
            group, topic, broker, qid, last_ms, newest, points = (cols[k][i] for k in keys)
            mq = MessageQueue(topic, broker, qid)
            series = [(p["sampleMs"], _point(mq, p)) for p in points]
            status, reason = rules.queue_status(series, replace(rules.rules, window=max(2, len(series))))
            rates = rules.queue_rates(series)
            end = series[-1][1]
            rows.append(
                (group, topic, broker, qid, status, reason, len(series), series[-1][0] - series[0][0],
                 last_ms < newest, last_ms, end.broker_offset, end.consumer_offset, end.pull_offset,
                 end.lag, end.lag_ms, rates.consume, rates.produce, rates.drain, rates.drain_s)
            )  # fmt: skip
        columns = list(zip(*rows)) if rows else [()] * len(schema.names)
        yield pa.RecordBatch.from_arrays(
            [pa.array(c, type=t) for c, t in zip(columns, schema.types)], schema=schema
        )

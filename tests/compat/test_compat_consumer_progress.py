"""Scenarios 1 and 7: ``mqctl consumerProgress`` on the live brokers' store files versus
``mqadmin consumerProgress`` and a real consumer."""

from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest
from compat_harness import (
    RocketMQ,
    local_seconds,
    parse_consumer_progress,
    parse_reset_table,
    progress_layout,
)

pytestmark = pytest.mark.compat

# Column span of #Inflight in a 5.1+ row (spec 3.3): only a live broker knows pull offsets.
# A 4.x mqadmin prints no such column (docs/rocketmq-versions.md §1): nothing to mask there.
INFLIGHT = slice(171, 191)
LIVE_ONLY_TOTALS = ("Consume TPS:", "Consume Inflight Total:")


def _mqctl_json(cluster: RocketMQ, *args: str) -> dict:
    proc = cluster.mqctl("consumerProgress", *args, "-o", "json")
    assert proc.returncode == 0, (
        f"mqctl consumerProgress {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}"
    )
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "mqctl/consumerProgress/v1"
    return doc


def test_json_rows_equal_mqadmin(cluster: RocketMQ, progress_data, progress_mqadmin, fidelity) -> None:
    theirs = {r.key: r for r in parse_consumer_progress(progress_mqadmin)[0]}
    doc = _mqctl_json(cluster, "-g", progress_data.group)
    ours = {(r["topic"], r["brokerName"], r["queueId"]): r for r in doc["rows"]}

    ok = fidelity.check("consumerProgress -g GroupProgress: row keys", sorted(ours), sorted(theirs))
    for key in sorted(set(ours) & set(theirs)):
        o, t = ours[key], theirs[key]
        what = f"consumerProgress -g GroupProgress {key}"
        ok &= fidelity.check(f"{what} brokerOffset", o["brokerOffset"], t.broker_offset)
        ok &= fidelity.check(f"{what} consumerOffset", o["consumerOffset"], t.consumer_offset)
        ok &= fidelity.check(f"{what} diff", o["diff"], t.diff)
        ok &= fidelity.check(f"{what} lastTimestamp", local_seconds(o["lastTimestamp"]), t.last_time)
    assert ok, "mqctl differs from mqadmin, see the fidelity section of the summary"


def _mask(lines: list[str], has_inflight: bool = True) -> list[str]:
    out = []
    for i, line in enumerate(lines):
        if line.startswith(LIVE_ONLY_TOTALS):
            out.append(line.split(":")[0] + ": <live only>")
        elif has_inflight and i > 0 and line and not line.startswith("Consume"):
            out.append(line[: INFLIGHT.start] + "<inflight>".ljust(20) + line[INFLIGHT.stop :])
        else:
            out.append(line)
    return out


def test_plain_equals_mqadmin_text(cluster: RocketMQ, progress_data, progress_mqadmin, fidelity) -> None:
    proc = cluster.mqctl("consumerProgress", "-g", progress_data.group, "-o", "plain")
    assert proc.returncode == 0, proc.stderr
    # the layout of the mqadmin of this cluster's version (4.x: no #Inflight column)
    inflight = progress_layout(progress_mqadmin) == "5.x"
    ours = _mask(proc.stdout.split("\n"), inflight)
    theirs = _mask(progress_mqadmin.split("\n"), inflight)
    ok = fidelity.check("consumerProgress -o plain: line count", len(ours), len(theirs))
    for i, (o, t) in enumerate(zip(ours, theirs)):
        ok &= fidelity.check(f"consumerProgress -o plain line {i + 1}", o, t)
    assert ok, "plain output differs from mqadmin, see the fidelity section"


def test_filtered_lag_equals_what_a_tag_consumer_receives(cluster: RocketMQ, progress_data, fidelity) -> None:
    """Scenario 7: matchedDiff (``--tags 'TagA || TagB'``) = messages a consumer with that
    subscription receives from the group's committed offsets."""
    group, topic = "GroupTags", progress_data.topic
    # Put GroupTags' offsets inside phase 1: the first message stored at or after the median time.
    median = int(statistics.median(m.store_timestamp for m in progress_data.consumed))
    if cluster.version.offline_reset_path == "C":
        # A 4.x broker refuses to reset a group without committed offsets: give GroupTags
        # GroupProgress's (end of phase 1) first, as a consumer that ran before would have.
        cluster.admin(f"clone:{progress_data.group}:{group}:{topic}")
    reset = parse_reset_table(
        cluster.mqadmin_ok("resetOffsetByTime", "-g", group, "-t", topic, "-s", str(median)),
        cluster.version.offline_reset_path,
    )
    assert len(reset) == 8 and 0 < sum(reset.values())
    cluster.wait_offsets_flushed()

    doc = _mqctl_json(cluster, "-g", group, "-t", topic, "--tags", "TagA || TagB")
    rows = [r for r in doc["rows"] if r["topic"] == topic]
    for r in rows:
        fidelity.check(
            f"consumerProgress -g {group} consumerOffset after mqadmin reset {(r['brokerName'], r['queueId'])}",
            r["consumerOffset"],
            reset.get((r["brokerName"], r["queueId"])),
        )

    got = cluster.consume(topic, group, "TagA || TagB", idle=15, linger=3)
    assert {m.tag for m in got} <= {"TagA", "TagB"}
    per_queue = Counter((m.broker, m.queue_id) for m in got)
    ok = fidelity.check(
        f"consumerProgress -g {group} --tags 'TagA || TagB': sum(matchedDiff)",
        sum(r["matchedDiff"] for r in rows),
        len(got),
    )
    for r in rows:
        key = (r["brokerName"], r["queueId"])
        ok &= fidelity.check(f"matchedDiff {key}", r["matchedDiff"], per_queue.get(key, 0))
    assert ok, "matchedDiff differs from what the consumer received, see the fidelity section"
    # independent truth: what the producer stored with those tags at or after each reset offset
    stored = progress_data.phase1 + progress_data.phase2
    expected = sum(
        1 for m in stored if m.tag in {"TagA", "TagB"} and m.offset >= reset[(m.broker, m.queue_id)]
    )
    assert len(got) == expected


def _overview_cells(text: str) -> dict[str, list[str]]:
    """Group -> its overview cells (#Count #Version [#Type #Model] #TPS #Diff Total) by whitespace."""
    return {cells[0]: cells[1:] for cells in (line.split() for line in text.splitlines()[1:]) if cells}


def test_store_overview_equals_mqadmin(cluster: RocketMQ, progress_data, fidelity) -> None:
    """The groups overview from the store files: every group mqadmin lists, with its count,
    version and diff total. Compared for the groups offline at that moment (a store cannot know
    connections: mqctl says OFFLINE); TPS is the broker's last-minute figure, masked."""
    cluster.wait_offsets_flushed()
    theirs = _overview_cells(cluster.mqadmin_ok("consumerProgress"))
    proc = cluster.mqctl("consumerProgress", "-o", "plain")
    assert proc.returncode == 0, proc.stderr
    ours = _overview_cells(proc.stdout)
    ok = fidelity.check("store overview: mqadmin's groups all listed", sorted(set(theirs) - set(ours)), [])
    offline = [g for g in sorted(set(theirs) & set(ours)) if theirs[g][:2] == ["0", "OFFLINE"]]
    assert offline, f"no offline group to compare: {theirs}"
    for group in offline:
        t, o = theirs[group], ours[group]
        ok &= fidelity.check(f"store overview {group}", o[:-2] + o[-1:], t[:-2] + t[-1:])
    assert ok, "store overview differs from mqadmin, see the fidelity section"

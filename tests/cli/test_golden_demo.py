"""Byte-for-byte output on the demo store, kept across refactors.

Not a truth test (those compare with the writer's ground truth, the spec and the real broker):
these files were written by mqctl itself before the Backend Protocol was redrawn, and they pin
what a user sees for ``-o plain`` and ``-o json`` so that a change of structure cannot change
output by accident. A deliberate output change regenerates them:
``MQCTL_REGEN_GOLDEN=1 python -m pytest tests/cli/test_golden_demo.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mqctl_testkit.cli import invoke

from mqctl.store.demo import DemoSummary

GOLDEN = Path(__file__).with_name("golden")
# Read at import: every test runs with the MQCTL_* variables taken out (tests/conftest.py).
REGEN = bool(os.environ.get("MQCTL_REGEN_GOLDEN"))
NOW = "1767225600000"
GROUPS = (
    "order-service",
    "order-analytics",
    "inventory-sync",
    "legacy-reporting",
    "payment-service",
    "audit-reader",
    "refund-service",
)
RESET = ["resetOffsetByTime", "-g", "order-analytics", "-t", "OrderEvents", "--now-ms", NOW]
CASES: list[tuple[str, list[str]]] = [
    ("overview.plain", ["consumerProgress", "-o", "plain", "--now-ms", NOW]),
    ("overview.json", ["consumerProgress", "-o", "json", "--now-ms", NOW]),
    *[(f"progress-{g}.plain", ["consumerProgress", "-g", g, "-o", "plain", "--now-ms", NOW]) for g in GROUPS],
    *[(f"progress-{g}.json", ["consumerProgress", "-g", g, "-o", "json", "--now-ms", NOW]) for g in GROUPS],
    (
        "progress-ip.plain",
        ["consumerProgress", "-g", "order-analytics", "-s", "true", "-o", "plain", "--now-ms", NOW],
    ),
    (
        "progress-topic.csv",
        ["consumerProgress", "-g", "payment-service", "-t", "PaymentEvents", "-o", "csv", "--now-ms", NOW],
    ),
    (
        "progress-tags.json",
        ["consumerProgress", "-g", "payment-service", "--tags", "TagA", "-o", "json", "--now-ms", NOW],
    ),
    (
        "progress-verify.json",
        [
            "consumerProgress",
            "-g",
            "order-analytics",
            "--tags",
            "paid || created",
            "--verify-tags",
            "-o",
            "json",
            "--now-ms",
            NOW,
        ],
    ),
    (
        "allocate.plain",
        ["allocateMQ", "-t", "OrderEvents", "-i", "10.0.0.1,10.0.0.2,10.0.0.3", "-o", "plain"],
    ),
    ("allocate.json", ["allocateMQ", "-t", "OrderEvents,PaymentEvents", "-i", "c1,c2,c3", "-o", "json"]),
    ("reset-time.plain", [*RESET, "-s", "2025-12-31#22:00:00:000", "--output", "plain"]),
    ("reset-time.json", [*RESET, "-s", "2025-12-31#22:00:00:000", "--output", "json"]),
    ("reset-duration.json", [*RESET, "--by-duration", "90m", "--output", "json"]),
    ("reset-earliest.json", [*RESET, "--to-earliest", "--output", "json"]),
    ("reset-shift.json", [*RESET, "--shift-by", "-5", "--output", "json"]),
    (
        "reset-queue.plain",
        [*RESET, "-s", "now", "-b", "broker-a", "-q", "1", "-o", "300", "--output", "plain"],
    ),
    ("reset-keep.json", [*RESET, "--to-latest", "-f", "false", "--output", "json"]),
]


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_demo_output_is_unchanged(
    demo_store: DemoSummary, tmp_path: Path, utc: None, name: str, args: list[str]
) -> None:
    journal = str(tmp_path / "journal")
    r = invoke(*args, "--store", f"broker-a={demo_store.root}", env={"MQCTL_JOURNAL_DIR": journal})
    assert r.exit_code == 0, r.stderr
    golden = GOLDEN / name
    if REGEN:
        golden.write_text(r.stdout)
    assert r.stdout == golden.read_text(), f"{name} differs from {golden}"


# The same bytes from ``python -m mqctl`` as a user runs it (its own streams and exit), for a
# table, a JSON document and a reset's plan; the other cases run in this process, ~10x sooner.
BY_PROCESS = [
    c for c in CASES if c[0] in ("overview.plain", "progress-order-analytics.json", "reset-time.plain")
]


@pytest.mark.parametrize(("name", "args"), BY_PROCESS, ids=[c[0] for c in BY_PROCESS])
def test_the_process_prints_the_same_bytes(
    demo_store: DemoSummary, tmp_path: Path, name: str, args: list[str]
) -> None:
    env = {**os.environ, "TZ": "UTC", "MQCTL_JOURNAL_DIR": str(tmp_path / "journal")}
    proc = subprocess.run(
        [sys.executable, "-m", "mqctl", *args, "--store", f"broker-a={demo_store.root}"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (GOLDEN / name).read_text(), f"{name} differs from {GOLDEN / name}"

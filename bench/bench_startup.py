"""Start-up figures for bench/bench_live.py (issue 20), measured side by side, interleaved:

- `python -c "import typer"`, `mqctl --version` and `mqctl --help` (goal: both <= 1.3x the bare
  typer import);
- shell completion of a subcommand's flags (`mqctl consumerProgress --<Tab>`): the generated bash
  script (completions/mqctl.bash) answers it without starting Python; timed as the whole shell
  (start, source the script, one completion) and as the completion function alone (goal <= 150 ms
  per Tab).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPLETION = ROOT / "completions" / "mqctl.bash"
TAB = 'COMP_WORDS=(mqctl consumerProgress --); COMP_CWORD=2; _mqctl; echo "${#COMPREPLY[@]}"'


def wall(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t


def bench_startup(runs: int) -> None:
    py = sys.executable
    cmds = {
        "python -c 'import typer'": [py, "-c", "import typer"],
        "mqctl --version": [py, "-m", "mqctl", "--version"],
        "mqctl --help": [py, "-m", "mqctl", "--help"],
    }
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            times[name].append(wall(cmd))
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["python -c 'import typer'"]
    print(
        f"start-up, median of {runs}: "
        + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in med.items())
        + f"; --version {med['mqctl --version'] / base:.2f}x, --help {med['mqctl --help'] / base:.2f}x "
        "the typer import (goal <= 1.3x)"
    )
    bench_completion(runs)


def bench_completion(runs: int) -> None:
    shell = ["bash", "--norc", "--noprofile", "-c", f"source {COMPLETION}; {TAB}"]
    out = subprocess.run(shell, check=True, capture_output=True, text=True).stdout.strip()
    whole = statistics.median(wall(shell) for _ in range(runs))
    loop = f"source {COMPLETION}; s=$EPOCHREALTIME; for i in {{1..100}}; do {TAB} >/dev/null; done; e=$EPOCHREALTIME; "
    loop += 'echo "$s $e"'
    s, e = subprocess.run(
        ["bash", "--norc", "-c", loop], check=True, capture_output=True, text=True
    ).stdout.split()
    per_tab = (float(e) - float(s)) / 100
    print(
        f"completion of 'mqctl consumerProgress --<Tab>' ({out} flags offered, no Python started): "
        f"{per_tab * 1000:.2f} ms per Tab in a shell that sourced the script (mean of 100), "
        f"{whole * 1000:.0f} ms for a new bash that sources it and completes once (median of {runs}) "
        "(goal <= 150 ms)"
    )

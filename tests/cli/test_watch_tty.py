"""consumerProgress --watch on a real terminal (tmux): the live table redraws in place, shows
new values when the store changes, and Ctrl-C leaves with 130 and the terminal as it was."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from mqctl_testkit.watch_store import build

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One tmux server of our own (its own socket), one session, 120 x 40."""

    def __init__(self) -> None:
        self.socket = f"mqctl-test-{os.getpid()}"

    def __call__(self, *args: str) -> str:
        r = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        return r.stdout

    def capture(self) -> str:
        return self("capture-pane", "-p", "-t", "w")

    def wait_for(self, what: Callable[[str], bool], timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.capture()
            if what(screen):
                return screen
            time.sleep(0.2)
        pytest.fail(f"the screen never showed what was expected:\n{self.capture()}")


def test_live_table_updates_in_place_and_ctrl_c_restores_the_terminal(tmp_path: Path) -> None:
    store = build(tmp_path / "a")
    t = Tmux()
    env = f"env -i PATH=/usr/bin:/bin HOME={shlex.quote(str(tmp_path))} TERM=xterm-256color MQCTL_CONFIG=/dev/null"
    t("new-session", "-d", "-s", "w", "-x", "120", "-y", "40", f"{env} bash --norc --noprofile")
    try:
        t("send-keys", "-t", "w", "PS1='READY$ '", "Enter")
        cmd = (
            f"clear; {shlex.quote(sys.executable)} -m mqctl consumerProgress -g G "
            f"--store broker-a={shlex.quote(str(store.root))} -w 0.2; echo EXIT=$?"
        )
        t("send-keys", "-t", "w", cmd, "Enter")
        first = t.wait_for(lambda s: "Group G:" in s)
        row = next(line for line in first.splitlines() if line.startswith("Orders") and " 0 " in line[:30])
        assert row.split()[3:6] == ["8", "3", "5"]  # broker offset, committed, diff of q0
        assert t("display", "-p", "-t", "w", "#{cursor_flag}").strip() == "0"  # Live hides the cursor
        store.commit(6)  # the consumer moves on: the next sample re-reads the store
        second = t.wait_for(
            lambda s: any(
                ln.startswith("Orders") and ln.split()[3:6] == ["8", "6", "2"] for ln in s.splitlines()
            )
        )
        assert second != first
        # Redrawn in place: one title, one table, not one per sample.
        assert second.count("consumerProgress G at") == 1 and second.count("Group G:") == 1
        t("send-keys", "-t", "w", "C-c")
        after = t.wait_for(lambda s: "EXIT=" in s)
        assert "EXIT=130" in after and "mqctl: interrupted" in after
        lines = [ln for ln in after.splitlines() if ln.strip()]
        assert lines[-1] == "READY$"  # back at the shell
        assert t("display", "-p", "-t", "w", "#{alternate_on} #{cursor_flag}").strip() == "0 1"
    finally:
        subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True)

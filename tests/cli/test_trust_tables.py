"""Tables a user can trust (issue 16): --watch on a dumb terminal."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mqctl_testkit.watch_store import build

# --- --watch on TERM=dumb -----------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_watch_on_a_dumb_terminal_shows_every_sample(tmp_path: Path) -> None:
    """rich's Live shows nothing on TERM=dumb until it stops: each sample must print instead."""
    store = build(tmp_path / "a")
    sock = f"mqctl-dumb-{os.getpid()}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=30).stdout

    env = f"env -i PATH=/usr/bin:/bin HOME={shlex.quote(str(tmp_path))} TERM=dumb MQCTL_CONFIG=/dev/null"
    cmd = (
        f"{env} {shlex.quote(sys.executable)} -m mqctl consumerProgress -g G "
        f"--store broker-a={shlex.quote(str(store.root))} -w 0.5; echo EXIT=$?; sleep 60"
    )
    tmux("new-session", "-d", "-s", "w", "-x", "100", "-y", "50", cmd)
    try:
        deadline, screen = time.monotonic() + 30, ""
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", "w")
            if screen.count("Group G:") >= 2:
                break
            time.sleep(0.2)
        assert screen.count("Group G:") >= 2, f"no table while the watch runs:\n{screen}"
        assert "EXIT=" not in screen  # still running: the tables came before the end
        assert "cannot redraw" in screen  # and the user is told why tables stack up
        # the terminal's own width (100), not rich's 80 for a dumb terminal: nothing hidden
        assert "Hidden to fit" not in screen and "Consumer" in screen
        tmux("send-keys", "-t", "w", "C-c")
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)

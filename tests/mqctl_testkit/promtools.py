"""The real Prometheus tools the exporter's tests run (Debian packages ``prometheus`` and
``prometheus-alertmanager``; .ci/run installs them): missing, a test fails in CI and skips with
one line elsewhere, as the compat suite does without the RocketMQ classpath."""

from __future__ import annotations

import os
import shutil

import pytest

PACKAGE = {
    "promtool": "prometheus",
    "prometheus": "prometheus",
    "prometheus-alertmanager": "prometheus-alertmanager",
}


def require(tool: str) -> str:
    """The tool's path; pytest.fail under CI, else pytest.skip, when it is not installed."""
    path = shutil.which(tool) or (shutil.which("alertmanager") if tool == "prometheus-alertmanager" else None)
    if path is None:
        reason = f"{tool} not installed (apt-get install {PACKAGE.get(tool, tool)})"
        if os.environ.get("CI"):
            pytest.fail(f"needed in CI: {reason}", pytrace=False)
        pytest.skip(reason)
    return path

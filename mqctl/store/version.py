"""Which RocketMQ line wrote a store, from what its files say (docs/rocketmq-versions.md 8).

A 4.x broker writes ``dataVersion`` as ``{counter, timestamp}``; 5.x adds ``stateVersion``
(topics.json, subscriptionGroup.json). 5.5 opens a ``rocksdbstore/`` database in every store
root. The files say nothing finer than that, so the answer is a representative release of the
line (4.9.7, 5.3.3, 5.5.0), or None when no file tells.
"""

from __future__ import annotations

import re
from pathlib import Path

from mqctl.model.versions import V4_9_7, V5_3_3, V5_5_0

_DATA_VERSION = re.compile(rb'"dataVersion"\s*:\s*\{([^{}]*)\}')
_HEAD = 4096  # fastjson writes keys sorted: dataVersion comes first


def store_version(root: Path, config_dir: Path) -> int | None:
    """The MQVersion ordinal of the line that wrote the store at ``root``, None when unknown."""
    if (root / "rocksdbstore").is_dir():
        return V5_5_0
    for name in ("topics.json", "subscriptionGroup.json"):
        for path in (config_dir / name, config_dir / f"{name}.bak"):
            try:
                with path.open("rb") as f:
                    head = f.read(_HEAD)
            except OSError:
                continue
            m = _DATA_VERSION.search(head)
            if m is not None:
                return V5_3_3 if b'"stateVersion"' in m.group(1) else V4_9_7
    return None

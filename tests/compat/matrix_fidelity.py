"""The fidelity figure: every value compared between mqctl and the real broker/mqadmin, per version."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Fidelity:
    """Counts the values compared against one version's cluster (``version`` "" = unnamed)."""

    version: str = ""
    description: str = "RocketMQ"
    compared: int = 0
    equal: int = 0
    mismatches: list[str] = field(default_factory=list)
    names: Counter[str] = field(default_factory=Counter)  # how many values each check compared
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, what: str, mqctl_value: object, broker_value: object) -> bool:
        ok = mqctl_value == broker_value
        with self._lock:
            self.compared += 1
            self.names[what] += 1
            if ok:
                self.equal += 1
            else:
                where = f"[{self.version}] " if self.version else ""
                self.mismatches.append(f"{where}{what}: mqctl={mqctl_value!r} broker={broker_value!r}")
        return ok

    def summary(self) -> str:
        label = f"fidelity {self.version}" if self.version else "fidelity"
        return f"{label}: {_figure(self.equal, self.compared)} between mqctl and {self.description}"


def _figure(equal: int, compared: int) -> str:
    pct = 100.0 * equal / compared if compared else 0.0
    return f"{equal}/{compared} values equal ({pct:.1f}%)"


class FidelityBook:
    """One :class:`Fidelity` per version, in the order the versions ran, and the total."""

    def __init__(self) -> None:
        self._by_version: dict[str, Fidelity] = {}
        self._lock = threading.Lock()

    def for_version(self, version: str, description: str) -> Fidelity:
        with self._lock:
            if version not in self._by_version:
                self._by_version[version] = Fidelity(version, description)
            return self._by_version[version]

    @property
    def compared(self) -> int:
        return sum(f.compared for f in self._by_version.values())

    @property
    def mismatches(self) -> list[str]:
        return [m for f in self._by_version.values() for m in f.mismatches]

    def lines(self) -> list[str]:
        """``fidelity <version>: ...`` per version that compared something, then ``fidelity total``."""
        used = [f for f in self._by_version.values() if f.compared]
        out = [f.summary() for f in used]
        equal = sum(f.equal for f in used)
        compared = sum(f.compared for f in used)
        out.append(f"fidelity total: {_figure(equal, compared)} over {len(used)} version(s)")
        return out

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{line}\n" for line in self.lines())
        text += "".join(f"differs: {m}\n" for m in self.mismatches)
        path.write_text(text)
        # Every check by name and version, with its count: two runs' figures can be compared
        # check by check (a count that differs says which scenario compared more or fewer values).
        rows = [
            f"{f.version}\t{n}\t{what}\n"
            for f in self._by_version.values()
            for what, n in sorted(f.names.items())
        ]
        path.with_name("fidelity-checks.tsv").write_text("".join(rows))

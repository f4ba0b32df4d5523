"""Regular expressions compiled when first used instead of when their module is imported.

Compiling a pattern costs 0.05-0.5 ms, and the decoders' modules hold many that a given command
never uses: a live ``consumerProgress -g`` imported 18 mqctl patterns and used 3 of them (~2 ms
of its start-up). ``lazy(...)`` stands in for ``re.compile(...)``: the first attribute asked for
compiles the pattern and keeps the compiled object's methods on the stand-in, so later calls
(``X.match(...)``) cost what they cost on the compiled pattern itself.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _LazyPattern:
    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only while nothing is compiled yet
        compiled = re.compile(*self._source)
        for attr in dir(compiled):
            if not attr.startswith("_"):
                setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done on first use."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))


def compile_now(*patterns: re.Pattern[str]) -> None:
    """Compile these ``lazy`` patterns now (e.g. while a request is out), not at their first use."""
    for pattern in patterns:
        getattr(pattern, "match")  # noqa: B009 - the stand-in compiles on its first attribute

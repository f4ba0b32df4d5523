"""Checks on option values shared by every command: a name is never empty, a true|false option
takes exactly true or false (mqadmin's spelling), --timeout is a real number of seconds.

``cli/command.MqctlCommand``, the class of every command, runs ``blank_values`` on each command
line after click parsed it, so no command keeps a copy of its own (and a new option is covered as
it lands).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from mqctl.errors import UsageError

MAX_TIMEOUT_S = 86_400.0  # one day: beyond that a "timeout" is a typo, not a wait


def true_false(value: str, flag: str) -> bool:
    """mqadmin's boolean values (``-s true``, ``-f false``), case-insensitive; anything else is a
    usage error (mqadmin's Boolean.parseBoolean reads 'maybe' as false without a word)."""
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise UsageError(f"{flag}: expected true or false, got {value!r}")
    return v == "true"


def timeout_seconds(value: float) -> float:
    """--timeout's callback (every command): a finite number of seconds in (0, one day]. nan, inf,
    0 and negative values would make every deadline meaningless (nan compares false with all)."""
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        import typer

        raise typer.BadParameter(f"{value:g}: expected seconds above 0, at most {MAX_TIMEOUT_S:g} (a day)")
    return value


def flag_name(opts: Sequence[str]) -> str:
    """'-g/--groupName' for an option's spellings: the short one first."""
    return "/".join(sorted(opts, key=lambda o: o.startswith("--")))


def blank_values(raw: dict[str, Any], params: Sequence[Any]) -> Iterator[str]:
    """The names of the parameters given an empty or whitespace-only value on the command line.

    ``raw`` is click's parse of the command line before any conversion (a Path option would turn
    '' into '.'), keyed by parameter name: a string, or a list of strings for repeatable options.
    An empty value names nothing: in a script it is an unset variable (``-g "$GROUP"``), and
    reading it as "absent" turns a one-group gate into a fleet-wide one."""
    for p in params:
        value = raw.get(p.name)
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            opts = list(getattr(p, "opts", ()) or ())
            is_option = getattr(p, "param_type_name", "") == "option"
            yield flag_name(opts) if is_option else (p.human_readable_name or p.name)

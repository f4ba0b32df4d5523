"""The shape gates of issue 23, held in CI (bench/code_shape.py prints the same figures):

- no function in mqctl/ is over 60 lines (decorators to its last line);
- a command function (one the app registers) has at most 15 parameters of its own (flag blocks
  reach it as one object each) and is at most 40 lines (``def`` to its last line): it parses
  flags, picks the mode, calls one entry point per mode and draws.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "mqctl"
MAX_FUNCTION_LINES = 60
MAX_COMMAND_LINES = 40
MAX_COMMAND_PARAMS = 15


@functools.cache
def _function_lengths() -> tuple[tuple[str, int], ...]:
    """Every function of mqctl/ (where it is, its name) with its length, decorators included:
    parsed once for the tests below."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([d.lineno for d in node.decorator_list] + [node.lineno])
                lines = (node.end_lineno or node.lineno) - start + 1
                out.append((f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name}", lines))
    return tuple(out)


def _long_functions(limit: int) -> list[str]:
    return [f"{where} ({lines} lines)" for where, lines in _function_lengths() if lines > limit]


def test_no_function_in_mqctl_is_over_60_lines() -> None:
    assert _long_functions(MAX_FUNCTION_LINES) == [], (
        f"split these into named steps (at most {MAX_FUNCTION_LINES} lines each)"
    )


def test_the_gate_sees_a_long_function() -> None:
    """The measure itself: with a lower limit, the longest functions are reported."""
    assert _long_functions(40)


def test_command_functions_stay_thin() -> None:
    from mqctl.cli.app import COMMANDS  # the real registration

    fat = []
    for name, command in COMMANDS.items():
        inner = inspect.unwrap(getattr(importlib.import_module(command.module), command.function))
        params = inspect.signature(inner).parameters.values()
        own = [p for p in params if p.kind is not p.KEYWORD_ONLY or p.default is not p.empty]
        src, _ = inspect.getsourcelines(inner)
        lines = len(src) - next(i for i, line in enumerate(src) if line.lstrip().startswith("def "))
        if len(own) > MAX_COMMAND_PARAMS or lines > MAX_COMMAND_LINES:
            fat.append(f"{name}: {len(own)} own parameters, {lines} lines")
    assert fat == [], "move the work below cli (ops, pipeline, serve) or into a flag block"

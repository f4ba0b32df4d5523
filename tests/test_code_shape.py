"""The shape gates of issue 23, held in CI (bench/code_shape.py prints the same figures):

- no function in mqctl/ is over 60 lines (decorators to its last line);
- a command function (one the app registers) has at most 15 parameters of its own (flag blocks
  reach it as one object each) and is at most 40 lines (``def`` to its last line): it parses
  flags, picks the mode, calls one entry point per mode and draws;
- no module in mqctl/ is over 400 lines unless ``LONG_MODULES`` says why (and the list names no
  module that is no longer long).
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
MAX_MODULE_LINES = 400

# The modules over MAX_MODULE_LINES, each with the reason it is not split. Splitting one of the
# four that every live consumerProgress imports would add an import (~0.2-0.3 ms) to each call
# (issue 20).
LONG_MODULES = {
    "mqctl/backends/live.py": "LiveBackend, the Protocol's answers over the network as one class; "
    "its network, overview, POP, presence, pulls, scans and writes are in live_*.py; "
    "imported by every live consumerProgress",
    "mqctl/backends/store.py": "StoreBackend, the Protocol's answers from store files as one class; "
    "the files of one broker are in store_files.py",
    "mqctl/remoting/client.py": "RemotingClient and its selector loop (_Batch), which share its "
    "pool and settings; the connection is client_conn.py; imported by every live consumerProgress",
    "mqctl/ops/progress.py": "a group's rows, the overview and their gates: what every "
    "consumerProgress reads; imported by every live consumerProgress",
    "mqctl/remoting/bodies.py": "the admin bodies' decoders (the other bodies are in "
    "bodies_client, bodies_pop, bodies_queue); imported by every live consumerProgress",
    "mqctl/store/writer.py": "StoreWriter, one class writing a whole store (segments, queues, "
    "config files, checkpoint); the record and unit encoders are in store/encode.py",
}


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


def _module_lengths() -> dict[str, int]:
    return {
        str(path.relative_to(PKG.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PKG.rglob("*.py"))
    }


def test_a_module_over_400_lines_says_why() -> None:
    long = {path: n for path, n in _module_lengths().items() if n > MAX_MODULE_LINES}
    unexplained = {path: n for path, n in long.items() if path not in LONG_MODULES}
    assert unexplained == {}, f"split these (at most {MAX_MODULE_LINES} lines) or say why in LONG_MODULES"
    assert sorted(set(LONG_MODULES) - set(long)) == [], "no longer over the limit: drop from LONG_MODULES"

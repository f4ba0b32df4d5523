"""The shape of mqctl's code, as figures (run by hand; issue figures before/after a restructuring):

- lines per layer (cli, ops, backends, ...), the longest modules;
- the longest functions in mqctl/ (lines, ``def`` to last line) and every function over a limit;
- parameters of each command function (a function registered as a typer command);
- import cycles between modules at file level (grimp's graph, every import, lazy ones too);
- cli's lines by kind: code, option declarations (each flag with its --help text), command help,
  docstrings, comments, blank lines.

    python bench/code_shape.py [--limit 60] [--top 10]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "mqctl"


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _layer(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _functions(path: Path) -> list[tuple[str, int, ast.FunctionDef | ast.AsyncFunctionDef]]:
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out.append((node.name, (node.end_lineno or node.lineno) - start + 1, node))
    return out


def _line_kinds(path: Path) -> Counter[str]:
    """A module's lines by what they are: option declarations (a module-level
    ``X = Annotated[...]``, typer's flag and its --help text), command help (a module-level
    ``HELP = ...``), docstrings, comments, blank lines, and code (everything else)."""
    text = path.read_text()
    tree = ast.parse(text, str(path))
    kind: dict[int, str] = {}

    def mark(node: ast.AST, what: str) -> None:
        for n in range(node.lineno, (node.end_lineno or node.lineno) + 1):  # type: ignore[attr-defined]
            kind.setdefault(n, what)

    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            if getattr(node.value.value, "id", "") == "Annotated":
                mark(node, "option declarations")
        elif isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["HELP"]:
            mark(node, "command help")
    for owner in ast.walk(tree):
        if isinstance(owner, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if ast.get_docstring(owner) is not None:
                mark(owner.body[0], "docstrings")
    counts: Counter[str] = Counter()
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        other = "blank" if not stripped else "comments" if stripped.startswith("#") else "code"
        counts[kind.get(n) or other] += 1
    return counts


def _command_functions() -> list[tuple[str, str, int, int, int]]:
    """(command, module, parameters of its own, flags in all, lines of its function) for every
    function the app registers as a command. Flag blocks (cli/blocks.py) reach the function as one
    object each: its own parameters are the flags it declares itself."""
    import inspect

    sys.path.insert(0, str(ROOT))
    import importlib

    from mqctl.cli.app import COMMANDS  # the real registration, not a guess from names

    out = []
    for name, command in COMMANDS.items():
        fn = getattr(importlib.import_module(command.module), command.function)
        inner = inspect.unwrap(fn)
        params = inspect.signature(inner).parameters.values()
        own = [p for p in params if p.kind is not p.KEYWORD_ONLY or p.default is not p.empty]
        total = len(inspect.signature(fn).parameters)
        src, start = inspect.getsourcelines(inner)
        body = len(src) - next(i for i, line in enumerate(src) if line.lstrip().startswith("def "))
        out.append((name, inner.__module__, len(own), total, body))
    return out


def _cycles() -> list[tuple[str, ...]]:
    import grimp

    graph = grimp.build_graph("mqctl", include_external_packages=False)
    modules = sorted(graph.modules)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in modules}
    # Tarjan's strongly connected components: any component of 2+ modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[tuple[str, ...]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10_000)
    for m in modules:
        if m not in index:
            visit(m)
    return comps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=60, help="report functions longer than this")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()

    lines: Counter[str] = Counter()
    sizes = []
    funcs = []
    for path in _modules():
        n = len(path.read_text().splitlines())
        lines[_layer(path)] += n
        sizes.append((n, str(path.relative_to(ROOT))))
        funcs += [
            (length, f"{path.relative_to(ROOT)}:{node.lineno} {name}")
            for name, length, node in _functions(path)
        ]
    print(
        "lines per layer: " + ", ".join(f"{k} {v}" for k, v in sorted(lines.items(), key=lambda kv: -kv[1]))
    )
    print(f"total {sum(lines.values())} lines in {len(sizes)} modules")
    cli: Counter[str] = Counter()
    for path in _modules():
        if _layer(path) == "cli":
            cli += _line_kinds(path)
    print("cli lines by kind: " + ", ".join(f"{k} {v}" for k, v in cli.most_common()))
    print("longest modules: " + ", ".join(f"{p} {n}" for n, p in sorted(sizes, reverse=True)[: args.top]))
    funcs.sort(reverse=True)
    print(f"longest function: {funcs[0][1]} ({funcs[0][0]} lines)")
    over = [f for f in funcs if f[0] > args.limit]
    print(f"functions over {args.limit} lines: {len(over)}")
    for length, where in over:
        print(f"  {length:4d}  {where}")
    print("command functions (own parameters / flags in all / lines):")
    for name, module, own, total, body in sorted(_command_functions(), key=lambda t: -t[2]):
        print(f"  {own:3d} / {total:3d} / {body:3d}  {name} ({module})")
    cycles = _cycles()
    print(f"import cycles at file level: {len(cycles)}")
    for c in cycles:
        print("  " + " <-> ".join(c))


if __name__ == "__main__":
    main()

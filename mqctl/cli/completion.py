"""Static bash, zsh and fish completion scripts generated from the command tree.

Static scripts cost nothing at Tab time (no Python start). `tests/cli/test_completions.py`
regenerates them and fails when `completions/` is out of date:

    python -m mqctl.cli.completion completions/
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from mqctl.render import completion as render
from mqctl.render.completion import CompletionOpt


def _annotation_and_choices(p: Any) -> tuple[Any, tuple[str, ...]]:
    """The option's declared type and its choices, across typer versions (0.29 keeps the
    annotation on ``type_descriptor``; earlier ones a click Choice type)."""
    desc = getattr(p, "type_descriptor", None)
    if desc is not None:
        ann = desc.annotation
        choices = tuple(str(m.value) for m in ann) if isinstance(ann, type) and issubclass(ann, Enum) else ()
        return ann, choices
    kind = getattr(p, "type", None)
    choices = tuple(str(c.value if isinstance(c, Enum) else c) for c in getattr(kind, "choices", ()) or ())
    is_path = type(kind).__name__ == "Path"
    return (Path if is_path else None), choices


def _tree() -> tuple[list[str], dict[str, list[CompletionOpt]]]:
    import typer.main

    from mqctl.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.make_context("mqctl", [], resilient_parsing=True)
    commands: dict[str, list[CompletionOpt]] = {}
    for name in root.list_commands(ctx):  # type: ignore[attr-defined]
        cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
        if cmd is None or cmd.hidden:
            continue
        opts: list[CompletionOpt] = []
        for p in cmd.params:
            if getattr(p, "hidden", False) or not getattr(p, "opts", None) or p.param_type_name != "option":
                continue
            ann, choices = _annotation_and_choices(p)
            help_text = (getattr(p, "help", "") or "").split(". ")[0].replace("\n", " ")
            is_path = ann is Path or p.name in ("export", "from_file", "out", "subscriptions")
            opts.append(
                CompletionOpt(
                    tuple(p.opts) + tuple(p.secondary_opts),
                    not p.is_flag,
                    tuple(map(str, choices)),
                    help_text[:80],
                    is_path,
                )
            )
        opts.append(CompletionOpt(("-h", "--help"), False, (), "Show help", False))
        commands[name] = opts
    return list(commands), commands


SCRIPTS: dict[str, Callable[[], str]] = {  # each file, drawn from mqctl's own command tree
    "mqctl.bash": lambda: render.bash(*_tree()),
    "_mqctl": lambda: render.zsh(*_tree()),
    "mqctl.fish": lambda: render.fish(*_tree()),
}


def write_all(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for filename, gen in SCRIPTS.items():
        (directory / filename).write_text(gen())


if __name__ == "__main__":
    write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "completions"))

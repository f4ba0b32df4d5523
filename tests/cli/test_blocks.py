"""cli/blocks: shared flag blocks stacked on a command, as typer then sees the command."""

from __future__ import annotations

import inspect
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from mqctl.cli.blocks import Flag, _evaluated, block, opt
from mqctl.records import record

_NameOpt = Annotated[str | None, opt("--name", "-n", help="A name.")]
_CountOpt = Annotated[int, typer.Option("--count", help="A count.")]
_LevelOpt = Annotated[int, typer.Option("--level")]
_ColourOpt = Annotated[str, typer.Option("--colour")]


@record(frozen=True)
class Level:
    level: int = 1


@record(frozen=True)
class Colour:
    colour: str = "red"


level_block = block("lvl", [Flag("level", _LevelOpt, 1)], Level)
colour_block = block("col", [Flag("colour", _ColourOpt, "red")], Colour)


@colour_block
@level_block
def command(name: _NameOpt = None, count: _CountOpt = 3, *, lvl: Level, col: Colour) -> None:
    print(f"name={name} count={count} {lvl} {col}")


def test_stacked_blocks_add_their_flags_after_the_commands_own() -> None:
    params = inspect.signature(command).parameters
    assert list(params) == ["name", "count", "level", "colour"]
    # the command's own annotations are the module's objects themselves, not copies or strings
    assert params["name"].annotation is _NameOpt
    assert params["count"].annotation is _CountOpt
    assert params["level"].annotation is _LevelOpt and params["level"].default == 1
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())


def test_typer_builds_every_option_and_the_blocks_objects_reach_the_command() -> None:
    app = typer.Typer()
    app.command()(command)
    result = CliRunner().invoke(app, ["-n", "x", "--count", "5", "--level", "7", "--colour", "blue"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "name=x count=5 Level(level=7) Colour(colour='blue')"
    defaults = CliRunner().invoke(app, [])
    assert defaults.output.strip() == "name=None count=3 Level(level=1) Colour(colour='red')"


def test_a_flag_a_block_owns_cannot_be_the_commands_own() -> None:
    with pytest.raises(TypeError, match="level belong to the lvl block"):

        @level_block
        def clash(level: _LevelOpt = 1, *, lvl: Level) -> None: ...


def test_annotations_that_are_not_bare_names_are_evaluated() -> None:
    def f(a: _NameOpt, b: int | None, c: list[str]) -> None: ...

    hints = _evaluated(f)
    assert hints["a"] is _NameOpt
    assert hints["b"] == (int | None) and hints["c"] == list[str]


def test_a_bare_name_is_the_modules_object() -> None:
    def f(a: _NameOpt, b: _CountOpt) -> None: ...

    assert f.__annotations__ == {"a": "_NameOpt", "b": "_CountOpt", "return": "None"}
    assert _evaluated(f) == {"a": _NameOpt, "b": _CountOpt}
    assert _evaluated(f)["a"] is _NameOpt

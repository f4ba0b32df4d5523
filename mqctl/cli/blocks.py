"""Blocks of flags defined once and shared by several commands (the cluster flags, the output
flags, consumerProgress's over-time flags), in the spirit of sqlite-utils' ``output_options``.

A block is a set of typer parameters plus a factory. ``block(...)`` returns a decorator that adds
the block's parameters to a command's signature (after the command's own, so ``--help`` lists
them last) and calls the command with one argument instead: the factory's object built from
those flags. The command function keeps only the parameters of its own.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mqctl.records import record

F = TypeVar("F", bound=Callable[..., Any])


def opt(*names: str, show_default: bool = False, **kw: Any) -> Any:
    """``typer.Option(*names, **kw)`` whose --help shows no default unless ``show_default``: most
    options' default is their absence, which says nothing."""
    import typer

    return typer.Option(*names, show_default=show_default, **kw)


@record(frozen=True)
class Flag:
    """One parameter of a block: its Python name, ``Annotated[type, typer.Option(...)]`` and default."""

    name: str
    annotation: Any
    default: Any = None


def _params(fn: Callable[..., Any], skip: str) -> list[inspect.Parameter]:
    """The function's parameters with their annotations evaluated (the string annotations of
    ``from __future__ import annotations`` would not resolve outside the function's module).
    Another block's command has them evaluated already, in the signature that block made."""
    made = fn.__dict__.get("__signature__")
    if isinstance(made, inspect.Signature):
        keyword = inspect.Parameter.KEYWORD_ONLY
        return [p.replace(kind=keyword) for p in made.parameters.values() if p.name != skip]
    hints = _evaluated(fn)
    return [
        p.replace(annotation=hints.get(p.name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(fn).parameters.values()
        if p.name != skip
    ]


def _evaluated(fn: Callable[..., Any]) -> dict[str, Any]:
    """``typing.get_type_hints(fn, include_extras=True)``. A command names each option's type by
    an alias of its module (``group: _GroupOpt = None``): when every annotation is such a name,
    each is that object, as evaluating it gives, without the compile of each string."""
    scope = fn.__globals__
    names = {k: v for k, v in fn.__annotations__.items() if k != "return"}
    if all(isinstance(v, str) and v.isidentifier() and v in scope for v in names.values()):
        return {k: scope[v] for k, v in names.items()}
    return typing.get_type_hints(fn, include_extras=True)


def block(arg: str, flags: Sequence[Flag], build: Callable[..., Any]) -> Callable[[F], F]:
    """A decorator: the command gains ``flags`` and receives ``arg=build(**their values)``."""
    names = [f.name for f in flags]

    def decorate(fn: F) -> F:
        own = _params(fn, skip=arg)
        clash = {p.name for p in own} & set(names)
        if clash:
            raise TypeError(f"{fn.__name__}: {', '.join(sorted(clash))} belong to the {arg} block")
        added = [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.annotation
            )
            for f in flags
        ]

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            values = {n: kwargs.pop(n) for n in names}
            return fn(**kwargs, **{arg: build(**values)})

        # The annotations live in the signature, evaluated: typer reads each option's from there
        # (and evaluates ``__annotations__`` again, twice per command built, for nothing).
        command.__signature__ = inspect.Signature(own + added, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {}
        return command  # type: ignore[return-value]

    return decorate

"""The click classes behind every mqctl command: checks every command line shares, made once.

- An empty or whitespace-only value is a usage error, for every option and argument
  (``values.blank_values``): ``-g ''`` is a script's unset variable, never "all groups".
- --help names values, not types: a required argument bare (``mqctl demo [OPTIONS] PATH``, not
  ``{path}``), an option's value by its parameter's name (``-g, --groupName GROUP``, not ``<str>``).
- Which options were given, not defaulted (``given``): a command refuses one that would change
  nothing in the combination given (``--window`` without a mode that has a window).
- stdout's reader went away (``mqctl ... --help | true``): ``--help`` and ``--version``, printed
  while click parses, end quietly with 0 (``streams.quiet_stdout``); a command's own output ends
  with 141 in ``errors.handle_errors``.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from mqctl.cli import streams
from mqctl.cli.values import blank_values


def _make_context(make: Any, info_name: Any, args: list[str], parent: Any, extra: dict[str, Any]) -> Any:
    """click's make_context, where --help and --version are printed: a closed stdout there is
    the reader being done with the text (``| head``, ``| true``), not a failure."""
    try:
        return make(info_name, args, parent=parent, **extra)
    except BrokenPipeError:
        streams.quiet_stdout()
        raise typer.Exit(0) from None


_RAW_OPTS = "mqctl.raw_opts"  # ctx.meta key: the command line as click's parser read it


class MqctlCommand(TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for p in self.params:
            # --help: '-g, --groupName GROUP' (mqadmin's style), not typer's '<str>' type name.
            if getattr(p, "param_type_name", "") == "option" and p.metavar is None and _takes_text(p):
                p.metavar = (p.name or "value").upper()

    def make_context(self, info_name, args, parent=None, **extra):  # type: ignore[no-untyped-def,override]
        return _make_context(super().make_context, info_name, args, parent, extra)

    def collect_usage_pieces(self, ctx):  # type: ignore[no-untyped-def]
        """POSIX usage: a required argument bare (``demo PATH``), an optional one in brackets;
        typer writes a required one as ``{PATH}``, which reads like a literal to type."""
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]

    def make_parser(self, ctx):  # type: ignore[no-untyped-def]
        """click's parser, whose parse before any conversion (a Path option turns '' into '.') is
        kept for ``parse_args``' checks: the command line is parsed once."""
        parser = super().make_parser(ctx)
        parse = parser.parse_args

        def parse_and_keep(args: list[str]) -> Any:
            opts, rest, order = parse(args=args)
            ctx.meta[_RAW_OPTS] = dict(opts)
            return opts, rest, order

        parser.parse_args = parse_and_keep  # type: ignore[method-assign]
        return parser

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        rest = super().parse_args(ctx, args)
        if ctx.resilient_parsing:  # completion and help walks: nothing is run
            return rest
        raw = ctx.meta.pop(_RAW_OPTS, {})
        for name in blank_values(raw, self.get_params(ctx)):
            ctx.fail(f"{name} is empty: give a value, or leave the option out")
        for name in _blank_from_environment(ctx, self.get_params(ctx)):
            ctx.fail(f"{name} is blank: set a value, or unset it")
        return rest

    def invoke(self, ctx):  # type: ignore[no-untyped-def]
        _GIVEN.append(_given_names(ctx, self.get_params(ctx)))
        try:
            return super().invoke(ctx)
        finally:
            _GIVEN.pop()


def _takes_text(p: Any) -> bool:
    return not getattr(p, "is_flag", False) and getattr(p.type, "name", "") in ("text", "str")


def _blank_from_environment(ctx: Any, params: list[Any]) -> list[str]:
    """Whitespace-only environment values ($MQCTL_PROFILE='  '); click already ignores empty ones."""
    found = []
    for p in params:
        value = ctx.params.get(p.name)
        source = getattr(ctx.get_parameter_source(p.name), "name", None)
        if source == "ENVIRONMENT" and isinstance(value, str) and not value.strip():
            found.append(f"${p.envvar}")
    return found


_GIVEN: list[dict[str, str]] = []  # per running command: option -> where its value came from


def given(name: str, *, environment: bool = True) -> bool:
    """Whether the running command's option of parameter ``name`` was given on the command line
    (or, with ``environment``, in its environment variable), not left at its default: an option
    that does nothing in the combination given is refused, one nobody gave never is."""
    sources = ("COMMANDLINE", "ENVIRONMENT") if environment else ("COMMANDLINE",)
    return bool(_GIVEN) and _GIVEN[-1].get(name) in sources


def _given_names(ctx: Any, params: list[Any]) -> dict[str, str]:
    sources = ((p.name, getattr(ctx.get_parameter_source(p.name), "name", None)) for p in params)
    return {name: source for name, source in sources if source in ("COMMANDLINE", "ENVIRONMENT")}


class MqctlGroup(TyperGroup):
    """The root command: --help and --version under a closed stdout (see ``_make_context``)."""

    def make_context(self, info_name, args, parent=None, **extra):  # type: ignore[no-untyped-def,override]
        return _make_context(super().make_context, info_name, args, parent, extra)

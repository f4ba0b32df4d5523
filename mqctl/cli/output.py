"""The output flags, defined once: ``-o/--output table|plain|json|csv`` (table on a terminal,
mqadmin's plain layout when piped) and, where a command prints headers, ``--no-headers``.
``@output_options()`` adds them to a command, which receives one ``Output``; ``emit`` writes one
result in the chosen format, importing only that format's renderer (``after_answers``: while a
live backend waits for the answers it draws).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from mqctl.cli.blocks import Flag, block, opt
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.render import Views

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class OutputFormat(str, Enum):
    table = "table"
    plain = "plain"
    json = "json"
    csv = "csv"


def resolve_format(fmt: OutputFormat | None) -> OutputFormat:
    """table on a terminal, mqadmin's plain layout when piped (scripts written for mqadmin keep working)."""
    if fmt is not None:
        return fmt
    return OutputFormat.table if sys.stdout.isatty() else OutputFormat.plain


_OUTPUT_HELP = "table (default on a terminal), plain (mqadmin's layout, default when piped), json or csv."
OutputOpt = Annotated[
    OutputFormat | None,
    opt("--output", "-o", help=_OUTPUT_HELP, case_sensitive=False),
]
# resetOffsetByTime: -o is mqadmin's --offset there.
OutputLongOpt = Annotated[OutputFormat | None, opt("--output", help=_OUTPUT_HELP, case_sensitive=False)]
NoHeadersOpt = Annotated[bool, typer.Option("--no-headers", help="plain and csv: leave out the header line.")]


@record(frozen=True)
class Output:
    """The output flags of one command line."""

    requested: OutputFormat | None = None
    no_headers: bool = False

    @property
    def fmt(self) -> OutputFormat:
        return resolve_format(self.requested)

    @property
    def headers(self) -> bool:
        return not self.no_headers


def output_options(*, short: bool = True, headers: bool = False, arg: str = "out") -> Callable[[F], F]:
    """Add -o/--output (``short=False``: --output only) and, with ``headers``, --no-headers; the
    command then takes ``out: Output`` (or the name ``arg`` gives)."""
    flags = [Flag("requested", OutputOpt if short else OutputLongOpt)]
    if headers:
        flags.append(Flag("no_headers", NoHeadersOpt, False))
    return block(arg, flags, Output)


# The writer ``emit`` imports for a format (plain is the views' own drawing).
_WRITERS = {
    OutputFormat.table: "mqctl.render.table",
    OutputFormat.json: "mqctl.render.jsonout",
    OutputFormat.csv: "mqctl.render.csvout",
}


def after_answers(backend: Backend, fmt: OutputFormat, *drawing: str) -> Backend:
    """``backend``, told to import the modules that draw its answers (``drawing``, and the
    writer of ``fmt``) while it waits for them (``Backend.when_idle``)."""
    from functools import partial
    from importlib import import_module

    writer = _WRITERS.get(fmt)
    for module in (*drawing, writer) if writer else drawing:
        backend.when_idle(partial(import_module, module))
    return backend


def emit(fmt: OutputFormat, views: Views, *, headers: bool = True) -> None:
    """Write one result on stdout in the chosen format; only that format's drawing is called (and
    the JSON or CSV writer imported)."""
    out = sys.stdout
    if fmt is OutputFormat.plain:
        views.plain(out)
    elif fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        write_json(views.json_doc(), out)
    elif fmt is OutputFormat.csv:
        from mqctl.render.csvout import write_csv

        columns, rows = views.csv()
        write_csv(columns if headers else None, rows, out)
    else:
        views.table(out)
    out.flush()


def scanning(read: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``read(*args, **kwargs, on_progress=...)`` under a "scanning" bar on a terminal's stderr
    (after about a second)."""
    if not sys.stderr.isatty():
        return read(*args, **kwargs, on_progress=None)
    from mqctl.render.progressbar import DelayedProgress

    with DelayedProgress("scanning", sys.stderr, enabled=True) as bar:
        return read(*args, **kwargs, on_progress=bar.update)

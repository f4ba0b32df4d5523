"""mqctl's command list — mqadmin's names, registered in one place."""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from mqctl import __version__
from mqctl.cli import allocate, connection, demo, lagreport, progress, reset
from mqctl.cli.errors import set_debug


class CaseInsensitiveGroup(TyperGroup):
    """mqadmin matches command names case-insensitively (`consumerprogress` works); so do we."""

    def get_command(self, ctx, cmd_name):  # type: ignore[no-untyped-def]
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            return cmd
        lowered = cmd_name.lower()
        for name in self.list_commands(ctx):
            if name.lower() == lowered:
                return super().get_command(ctx, name)
        return None


app = typer.Typer(
    name="mqctl",
    cls=CaseInsensitiveGroup,
    help="Operations CLI for Apache RocketMQ consumer offsets: mqadmin's consumerProgress, allocateMQ, "
    "resetOffsetByTime and consumerConnection, fast, scriptable, and safe on broker store files.",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mqctl {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", envvar="MQCTL_DEBUG", help="Show tracebacks instead of one-line errors."
    ),
) -> None:
    set_debug(debug)


app.command("consumerProgress")(progress.consumer_progress)
app.command("allocateMQ")(allocate.allocate_mq)
app.command("resetOffsetByTime")(reset.reset_offset_by_time)
app.command("consumerConnection")(connection.consumer_connection)
app.command("lagReport")(lagreport.lag_report)
app.command("demo")(demo.demo)


def main() -> None:
    app(prog_name="mqctl")

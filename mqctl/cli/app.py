"""mqctl's command list — mqadmin's names, registered in one place."""

from __future__ import annotations

import sys

import typer

from mqctl import __version__
from mqctl.cli import allocate, connection, demo, exporter, lagreport, progress, reset
from mqctl.cli.command import MqctlCommand, MqctlGroup
from mqctl.cli.errors import set_debug
from mqctl.errors import ExitStatus


class CaseInsensitiveGroup(MqctlGroup):
    """mqadmin matches command names case-insensitively (`consumerprogress` works); so do we.

    Also the one place click's own errors are printed: a usage error is one ``mqctl: error:``
    line plus a hint, exit 2, like every error mqctl raises itself (click's default is a
    three-line Usage/Try/Error block)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[no-untyped-def,override]
        from mqctl.cli import streams
        from mqctl.cli.errors import report_click_error

        # consumerProgress -w takes an optional interval, which click cannot parse by itself.
        args = progress.normalise_argv(list(sys.argv[1:] if args is None else args))
        streams.prepare_stdout()
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            sys.stderr.write("mqctl: interrupted\n")
            rv = 130
        except Exception as e:
            # click's exceptions (typer vendors its own copy in newer versions): duck-typed.
            if not (hasattr(e, "format_message") and hasattr(e, "exit_code")):
                raise
            rv = report_click_error(e)
        try:
            streams.flush_stdout()  # what a command left buffered, while a closed pipe can be caught
        except BrokenPipeError:
            streams.quiet_stdout()
            rv = int(ExitStatus.BROKEN_PIPE)
        streams.warn_if_escaped()
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)

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
        False, "--debug", envvar="MQCTL_DEBUG", help="Print tracebacks too (same exit code)."
    ),
) -> None:
    set_debug(debug)


# Every command is an MqctlCommand: the checks every command line shares (cli/command.py).
app.command("consumerProgress", cls=MqctlCommand)(progress.consumer_progress)
app.command("allocateMQ", cls=MqctlCommand)(allocate.allocate_mq)
app.command("resetOffsetByTime", cls=MqctlCommand)(reset.reset_offset_by_time)
app.command("consumerConnection", cls=MqctlCommand)(connection.consumer_connection)
app.command("lagReport", cls=MqctlCommand)(lagreport.lag_report)
app.command("demo", cls=MqctlCommand)(demo.demo)
app.command("exporter", cls=MqctlCommand)(exporter.exporter)


def main() -> None:
    app(prog_name="mqctl")

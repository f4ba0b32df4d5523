"""Rich tables for terminals. The only module that imports rich."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class Column:
    header: str
    justify: str = "left"  # "left" | "right"
    style: str | None = None


@dataclass
class TableSpec:
    columns: list[Column]
    rows: list[Sequence[Any]]
    title: str | None = None
    footer_lines: list[str] = field(default_factory=list)
    row_styles: list[str | None] | None = None


def write_table(spec: TableSpec, out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    # A terminal gets its own width; a file or pipe (-o table forced) gets the table's natural
    # width instead of rich's 80-column default, which would crop columns.
    is_tty = hasattr(out, "isatty") and out.isatty()
    console = Console(file=out, highlight=False, soft_wrap=False, width=None if is_tty else 1000)
    table = Table(title=spec.title, title_justify="left", header_style="bold", box=None, pad_edge=False)
    for col in spec.columns:
        table.add_column(col.header, justify=col.justify, style=col.style, no_wrap=True)  # type: ignore[arg-type]
    for i, row in enumerate(spec.rows):
        style = spec.row_styles[i] if spec.row_styles else None
        table.add_row(*["" if v is None else str(v) for v in row], style=style)
    console.print(table)
    for line in spec.footer_lines:
        console.print(line)

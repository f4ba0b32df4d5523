"""Rich tables for terminals. The only module that imports rich.

Numbers and ids are never cut into ``…``: when a table is wider than the terminal, optional
columns are dropped first (and the footer says which), then free text wraps, then ids fold onto
a second line. A file or pipe gets the table's natural width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

Kind = Literal["number", "id", "text"]

# Between two columns (rich's default padding of one space each side, no box).
_GAP = 2


@dataclass
class Column:
    header: str
    justify: str = "left"  # "left" | "right"
    style: str | None = None
    kind: Kind = "id"
    optional: bool = False  # may be dropped to fit a narrow terminal (last optional first)


@dataclass
class TableSpec:
    columns: list[Column]
    rows: Sequence[Sequence[Any]]
    title: str | None = None
    footer_lines: list[str] = field(default_factory=list)
    row_styles: list[str | None] | None = None


def _natural_widths(spec: TableSpec, cells: list[list[str]]) -> list[int]:
    widths = [len(c.header) for c in spec.columns]
    for row in cells:
        for i, text in enumerate(row):
            widths[i] = max(widths[i], max((len(part) for part in text.split("\n")), default=0))
    return widths


def fit_columns(columns: Sequence[Column], widths: Sequence[int], width: int | None) -> list[int]:
    """Indexes of the columns to show: all if they fit in ``width``, else drop optional columns,
    last first, until they do (or none is left to drop)."""
    keep = list(range(len(columns)))
    if width is None:
        return keep

    def total() -> int:
        return sum(widths[i] for i in keep) + _GAP * max(len(keep) - 1, 0)

    for i in reversed(range(len(columns))):
        if total() <= width:
            break
        if columns[i].optional:
            keep.remove(i)
    return keep


def write_table(spec: TableSpec, out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    is_tty = hasattr(out, "isatty") and out.isatty()
    console = Console(file=out, highlight=False, soft_wrap=False, width=None if is_tty else 100_000)
    cells = [["" if v is None else str(v) for v in row] for row in spec.rows]
    widths = _natural_widths(spec, cells)
    keep = fit_columns(spec.columns, widths, console.width if is_tty else None)
    table = Table(title=spec.title, title_justify="left", header_style="bold", box=None, pad_edge=False)
    # Free text wraps first; ids keep their width unless even wrapped text cannot make room.
    room = console.width if is_tty else None
    fixed = sum(widths[i] for i in keep if spec.columns[i].kind != "text") + _GAP * (len(keep) - 1)
    texts = sum(min(widths[i], 12) for i in keep if spec.columns[i].kind == "text")
    ids_fixed = room is None or fixed + texts <= room
    for i in keep:
        col = spec.columns[i]
        pinned = col.kind == "number" or (col.kind == "id" and ids_fixed)
        table.add_column(
            col.header,
            justify=col.justify,  # type: ignore[arg-type]
            style=col.style,
            no_wrap=pinned,
            min_width=widths[i] if pinned else None,
            overflow="fold",  # never "…": a number or id cut short is a wrong one
        )
    for n, row in enumerate(cells):
        style = spec.row_styles[n] if spec.row_styles else None
        table.add_row(*[row[i] for i in keep], style=style)
    console.print(table)
    hidden = [spec.columns[i].header for i in range(len(spec.columns)) if i not in keep]
    for line in spec.footer_lines:
        console.print(line)
    if hidden:
        console.print(
            f"[dim]Hidden to fit {console.width} columns: {', '.join(hidden)} "
            "(a wider terminal shows them; -o json has every field).[/dim]"
        )

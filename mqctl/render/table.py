"""Rich tables for terminals. The only module that imports rich.

One rule for every table mqctl draws on a terminal (consumerProgress and its overview, --watch,
allocateMQ, consumerConnection, resetOffsetByTime's plan, lagReport): a number, an id or a name
is never cut, folded or wrapped, and no header either. When a table is wider than the terminal:

1. headers fold at their spaces ("Consumer Offset" over two lines), nothing else changes;
2. optional free text (``kind="text"``) wraps at its spaces, never inside a word, down to a
   readable width;
3. optional columns are dropped, the lowest ``priority`` first (ties: the rightmost), and a
   footer line names them (after each drop, 1 and 2 are tried again);
4. then required free text wraps the same way;
5. when even the required columns do not fit, every row becomes a record: one
   ``Header  value`` line per column, all columns shown; a line longer than the terminal is
   left for the terminal to wrap whole (nothing is cut).

A file or pipe gets the table's natural width. Colours carry a legend (``TableSpec.legend``),
printed only when colours are shown (not under NO_COLOR, TERM=dumb or on a pipe).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TextIO

from mqctl.records import field, record

Kind = Literal["number", "id", "text"]

# Between two columns (rich's default padding of one space each side, no box).
_GAP = 2


@record
class Column:
    header: str
    justify: str = "left"  # "left" | "right"
    style: str | None = None
    kind: Kind = "id"  # number and id cells keep their width; text wraps at its spaces
    optional: bool = False  # may be dropped to fit a narrow terminal
    priority: int = 0  # among optional columns: the lowest is dropped first (ties: the rightmost)


@record
class TableSpec:
    columns: list[Column]
    rows: Sequence[Sequence[Any]]
    title: str | None = None
    footer_lines: list[str] = field(default_factory=list)
    row_styles: list[str | None] | None = None
    legend: str | None = None  # what the colours mean: printed only when colours are shown
    status: str | None = None  # a first line above the title, plain text (wrapped at its spaces)


@record(frozen=True)
class Layout:
    """How a table fits a width: the columns shown and their widths, or one record per row."""

    keep: list[int]
    widths: list[int]  # per shown column (unused for records)
    hidden: list[str]  # headers of the dropped columns
    records: bool = False


def cells_of(spec: TableSpec) -> list[list[str]]:
    """The cells as strings (rich markup: user data in them has its ``[`` escaped)."""
    return [["" if v is None else str(v) for v in row] for row in spec.rows]


def _plain(markup: str) -> str:
    """What a cell shows (an escaped ``\\[`` is one character)."""
    if "[" not in markup:
        return markup
    from rich.text import Text

    return Text.from_markup(markup).plain


def _words(text: str) -> list[str]:
    return text.split() or [""]


# Free text wraps at its spaces, but not narrower than this (unless its cells are narrower):
# a column one word wide is harder to read than a column dropped and named.
_TEXT_MIN = 20


def _widths(spec: TableSpec, cells: list[list[str]]) -> tuple[list[int], list[int], list[int]]:
    """Per column: the natural width, the width with its header folded, the narrowest width
    that cuts no word (text wrapped at its spaces, down to a readable width)."""
    from rich.cells import cell_len

    natural, folded, least = [], [], []
    for i, col in enumerate(spec.columns):
        values = [line for row in cells for line in _plain(row[i]).split("\n")]
        header = _plain(col.header)
        head = max(cell_len(w) for w in _words(header))
        whole = max((cell_len(v) for v in values), default=0)
        natural.append(max(cell_len(header), whole))
        folded.append(max(head, whole))
        if col.kind == "text":
            word = max([head] + [cell_len(w) for v in values for w in _words(v)])
            least.append(max(word, min(folded[-1], _TEXT_MIN)))
        else:
            least.append(folded[-1])
    return natural, folded, least


def _total(widths: Sequence[int], keep: Sequence[int]) -> int:
    return sum(widths[i] for i in keep) + _GAP * max(len(keep) - 1, 0)


def plan_layout(spec: TableSpec, width: int | None, cells: list[list[str]] | None = None) -> Layout:
    """The layout of ``spec`` in ``width`` columns (None: no limit), by the rule of this module:
    headers fold, optional text wraps, optional columns drop one by one, required text wraps,
    then records."""
    cells = cells_of(spec) if cells is None else cells
    natural, folded, least = _widths(spec, cells)
    keep = list(range(len(spec.columns)))
    if width is None or _total(natural, keep) <= width:
        return Layout(keep, [natural[i] for i in keep], [])
    drop_order = sorted(
        (i for i, c in enumerate(spec.columns) if c.optional), key=lambda i: (spec.columns[i].priority, -i)
    )
    # Optional text may wrap before its column is dropped; required text only once no optional
    # column is left (a column of counts is not worth a row of five lines).
    optional_wrapped = [least[i] if c.optional else folded[i] for i, c in enumerate(spec.columns)]
    for i in [None, *drop_order]:
        if i is not None:
            keep.remove(i)
        for base in (folded, optional_wrapped):
            if _total(base, keep) <= width:
                return _grow(spec, keep, base, natural, width)
    if _total(least, keep) <= width:
        return _grow(spec, keep, least, natural, width)
    return Layout(list(range(len(spec.columns))), [], [], records=True)


def _grow(spec: TableSpec, keep: list[int], base: list[int], natural: list[int], width: int) -> Layout:
    """Give the room left back to the shown columns: wrapped text first (fewer lines per row),
    then folded headers unfold whole, the cheapest first (so that most do)."""
    widths = {i: base[i] for i in keep}
    spare = width - _total(base, keep)
    for i in keep:
        if spec.columns[i].kind == "text" and spare > 0:
            extra = min(natural[i] - widths[i], spare)
            widths[i] += extra
            spare -= extra
    folded = [i for i in keep if natural[i] > widths[i]]
    for i in sorted(folded, key=lambda i: (natural[i] - widths[i], i)):
        if natural[i] - widths[i] <= spare:
            spare -= natural[i] - widths[i]
            widths[i] = natural[i]
    hidden = [c.header for i, c in enumerate(spec.columns) if i not in keep]
    return Layout(keep, [widths[i] for i in keep], hidden)


def _hidden_note(hidden: list[str], width: int) -> str:
    return (
        f"[dim]Hidden to fit {width} columns: {', '.join(_markup_escape(h) for h in hidden)} "
        "(-o json has every field).[/dim]"
    )


def _markup_escape(text: str) -> str:
    return text.replace("[", "\\[")


def _table(spec: TableSpec, cells: list[list[str]], layout: Layout) -> Any:
    from rich.table import Table

    table = Table(header_style="bold", box=None, pad_edge=False)
    for i, w in zip(layout.keep, layout.widths, strict=True):
        col = spec.columns[i]
        # Every width holds its longest cell (a text cell: its longest word): nothing is cut.
        table.add_column(col.header, justify=col.justify, style=col.style, width=w, overflow="fold")  # type: ignore[arg-type]
    for n, row in enumerate(cells):
        style = spec.row_styles[n] if spec.row_styles else None
        table.add_row(*[row[i] for i in layout.keep], style=style)
    return table


def _records(spec: TableSpec, cells: list[list[str]], soft: bool) -> list[Any]:
    """Each row as ``Header  value`` lines; a blank line between rows."""
    from rich.text import Text

    heads = [Text.from_markup(c.header, style="bold") for c in spec.columns]
    label = max((h.cell_len for h in heads), default=0)
    out: list[Any] = []
    for n, row in enumerate(cells):
        style = (spec.row_styles[n] if spec.row_styles else None) or ""
        if n:
            out.append(Text(""))
        for head, value in zip(heads, row, strict=True):
            line = head.copy()
            line.append(" " * (label - head.cell_len + 2))
            line.append_text(Text.from_markup(value, style=style))
            # soft: the terminal wraps a long line whole; rich's Live folds it at the edge.
            line.no_wrap = soft
            out.append(line)
    return out


def renderables(spec: TableSpec, width: int | None, *, colour: bool, soft: bool = True) -> list[Any]:
    """The table as rich renderables for ``width`` columns (None: its natural width): status line,
    title, table or records, footer lines, the legend when ``colour``, the dropped columns named."""
    from rich.text import Text

    cells = cells_of(spec)
    layout = plan_layout(spec, width, cells)
    out: list[Any] = [] if spec.status is None else [Text(spec.status)]
    if spec.title:
        out.append(Text.from_markup(spec.title, style="italic"))
    if layout.records:
        out += _records(spec, cells, soft)
    else:
        out.append(_table(spec, cells, layout))
    lines = list(spec.footer_lines)
    if spec.legend and colour:
        lines.append(spec.legend)
    if layout.records and width is not None:
        lines.append(f"[dim]Too narrow for the table at {width} columns: one record per row.[/dim]")
    if layout.hidden and width is not None:
        lines.append(_hidden_note(layout.hidden, width))
    out += [Text.from_markup(line) for line in lines]
    return out


def shows_colour(console: Any) -> bool:
    return console.color_system is not None and not console.no_color


def _terminal_width(console: Any, out: TextIO) -> int:
    """rich's width (COLUMNS wins), but a dumb terminal's real one (rich assumes 80 there)."""
    import os

    if console.is_dumb_terminal and "COLUMNS" not in os.environ:
        try:
            return os.get_terminal_size(out.fileno()).columns
        except (OSError, ValueError, AttributeError):
            pass
    return int(console.width)


def write_table(spec: TableSpec, out: TextIO) -> None:
    from rich.console import Console

    is_tty = hasattr(out, "isatty") and out.isatty()
    console = Console(file=out, highlight=False, soft_wrap=False, width=None if is_tty else 100_000)
    width = _terminal_width(console, out) if is_tty else None
    if width is not None:
        console.size = (width, console.height)
    for item in renderables(spec, width, colour=shows_colour(console)):
        soft = getattr(item, "no_wrap", False) is True
        console.print(item, soft_wrap=soft)

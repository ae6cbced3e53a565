"""A table for the terminal (and a pipe alike): columns aligned by rich, plain text, no colour.

Every cell is plain text, never rich markup: a rule id or a sampled value that looks like
``[bold]`` is printed as it is.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text


def render_table(header: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "") -> list[str]:
    """The header and the rows, left-aligned, two spaces between columns, each line ``indent``ed."""
    table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0), header_style="", show_header=True)
    for name in header:
        table.add_column(Text(name), no_wrap=True, overflow="ignore")
    for row in rows:
        table.add_row(*(Text(str(cell)) for cell in row))
    out = io.StringIO()
    Console(file=out, width=100_000, color_system=None, highlight=False, emoji=False, markup=False).print(table)
    return [f"{indent}{line}".rstrip() for line in out.getvalue().splitlines()]

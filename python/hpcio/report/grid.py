"""A family's table as printed cells (the fio study's matrices, IOzone's table, the RTM
library table, the checkpoint table, the MLPerf AU table): one object that every output
(markdown, CSV, JSON, HTML) renders, so none has a table another lacks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Grid:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """As the study tables' JSON: title, columns, rows, notes."""
        return {
            "title": self.title,
            "columns": list(self.columns),
            "rows": [list(row) for row in self.rows],
            "notes": list(self.notes),
        }


def grid(title: str, columns: tuple[str, ...], rows: list[list[str]], *notes: str) -> Grid:
    return Grid(title, columns, tuple(tuple(r) for r in rows), tuple(n for n in notes if n))

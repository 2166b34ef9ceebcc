"""Cost what-ifs: cases (runs, data kept) x storage options (reserved or pay-per-use), with
compute beside them, priced from the catalogue: the table of reference study 004's costs."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hpcio import tomlfile
from hpcio.report.cost import markdown_table
from hpcio.report.prices import Catalogue, CatalogueError, Price, format_money

_TOP_KEYS = ("scenario", "case", "storage", "compute")
_SCENARIO_KEYS = ("title", "source", "months", "currency", "digits")
_CASE_KEYS = ("id", "label", "runs", "stored_gb", "requests_per_run")
_STORAGE_KEYS = ("label", "price", "reserved_gb")
_COMPUTE_KEYS = ("label", "per_run", "source")


@dataclass(frozen=True, slots=True)
class Case:
    """One column: `runs` runs in the period, keeping `stored_gb` GB (2^30 bytes)."""

    id: str
    label: str
    runs: int
    stored_gb: float
    #: Requests one run makes, by engine kind (put, get, ...): billed per run on pay-per-use.
    requests_per_run: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Cell:
    amount: float
    price: Price | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class ScenarioTable:
    """The priced what-if: one row per storage option and one for compute, one column per
    case, all in `currency`."""

    title: str
    source: str
    currency: str
    months: float
    digits: int
    cases: tuple[Case, ...]
    rows: tuple[tuple[str, tuple[Cell, ...]], ...]
    compute: tuple[str, tuple[Cell, ...]] | None
    prices: tuple[Price, ...]


def load_scenario(path: str | os.PathLike[str], catalogue: Catalogue) -> ScenarioTable:
    """Read a scenario file and price it.

    Raises:
        CatalogueError: "file:line: problem" in the scenario, or a price it needs is missing
            from the catalogue.
    """
    toml = tomlfile.load(path, CatalogueError)
    data = toml.data
    toml.check_keys(data, (), _TOP_KEYS, CatalogueError)
    about = data.get("scenario", {})
    toml.check_keys(about, ("scenario",), _SCENARIO_KEYS, CatalogueError)
    months = _number(toml, about, ("scenario", "months"), default=1.0)
    digits = int(_number(toml, about, ("scenario", "digits"), default=2))

    cases = tuple(_case(toml, index, entry) for index, entry in enumerate(_list(toml, "case")))
    if not cases:
        raise CatalogueError(f"{toml.path}: needs at least one [[case]]")
    ids = [c.id for c in cases]
    options = []
    for index, entry in enumerate(_list(toml, "storage")):
        where: tomlfile.KeyPath = ("storage", index)
        toml.check_keys(entry, where, _STORAGE_KEYS, CatalogueError)
        if "label" not in entry or "price" not in entry:
            raise toml.error(where, "[[storage]] needs 'label' and 'price'", CatalogueError)
        by_case = _prices_by_case(toml, catalogue, entry["price"], (*where, "price"), ids)
        options.append((index, entry, by_case))
    if not options:
        raise CatalogueError(f"{toml.path}: needs at least one [[storage]] option")
    used = {p.id: p for _, _, by_case in options for p in by_case.values()}
    currency = about.get("currency") or next(iter(used.values())).currency
    for index, _, by_case in options:
        for price in by_case.values():
            if price.currency != currency:
                raise toml.error(
                    ("storage", index, "price"),
                    f"price '{price.id}' is in {price.currency}, the scenario in {currency}; "
                    "a table adds up one currency only",
                    CatalogueError,
                )

    rows = []
    for index, entry, by_case in options:
        reserved_gb = _number(toml, entry, ("storage", index, "reserved_gb"), default=0.0)
        cells = [
            _storage_cell(catalogue, by_case[case.id], case, months, reserved_gb) for case in cases
        ]
        if len({by_case[i].id for i in ids}) > 1:
            # The study's "$602 (standard)", "$1608 (ultra)": say which product each cell is.
            cells = [Cell(c.amount, c.price, c.price.tier if c.price else "") for c in cells]
        rows.append((str(entry["label"]), tuple(cells)))

    compute = None
    if "compute" in data:
        table = data["compute"]
        toml.check_keys(table, ("compute",), _COMPUTE_KEYS, CatalogueError)
        per_run = _number(toml, table, ("compute", "per_run"), default=None)
        label = str(table.get("label", "Compute"))
        compute = (label, tuple(Cell(per_run * c.runs, None) for c in cases))
    return ScenarioTable(
        title=str(about.get("title", os.path.basename(toml.path))),
        source=str(about.get("source", "")),
        currency=currency,
        months=months,
        digits=digits,
        cases=cases,
        rows=tuple(rows),
        compute=compute,
        prices=tuple(used.values()),
    )


def _storage_cell(
    catalogue: Catalogue, price: Price, case: Case, months: float, reserved_gb: float
) -> Cell:
    """Reserved: the capacity (reserved_gb, at least the data and the product's minimum) for
    the period, whatever the runs. Pay-per-use: the data kept, plus every run's requests."""
    if price.model == "reserved":
        capacity = max(reserved_gb, case.stored_gb)
        return Cell(catalogue.storage_per_month(price, capacity) * months, price)
    amount = catalogue.storage_per_month(price, case.stored_gb) * months
    if not price.requests_included:
        for kind, count in case.requests_per_run.items():
            billing_class = catalogue.billing_class(price, kind)
            each = catalogue.request_price(price, billing_class)
            amount += count * case.runs / price.requests_per * each
    return Cell(amount, price)


def _prices_by_case(
    toml: tomlfile.TomlFile,
    catalogue: Catalogue,
    value: Any,
    where: tomlfile.KeyPath,
    case_ids: Sequence[str],
) -> dict[str, Price]:
    """'price = "id"' for every case, or 'price = { case_id = "id", ... }' one per case."""
    if isinstance(value, str):
        return {case_id: _get(toml, catalogue, value, where) for case_id in case_ids}
    if not isinstance(value, dict):
        raise toml.error(
            where, "'price' is a price id or a table case id -> price id", CatalogueError
        )
    for case_id in value:
        if case_id not in case_ids:
            raise toml.error((*where, case_id), f"no [[case]] with id '{case_id}'", CatalogueError)
    missing = [c for c in case_ids if c not in value]
    if missing:
        raise toml.error(where, f"no price for case '{missing[0]}'", CatalogueError)
    return {c: _get(toml, catalogue, str(value[c]), (*where, c)) for c in case_ids}


def _get(toml: tomlfile.TomlFile, catalogue: Catalogue, price_id: str, where: Any) -> Price:
    try:
        return catalogue.get(price_id)
    except CatalogueError as e:
        message = str(e).split(": ", 1)[1]
        raise toml.error(where, f"{message} in {catalogue.path}", CatalogueError) from None


def _case(toml: tomlfile.TomlFile, index: int, entry: Any) -> Case:
    where: tomlfile.KeyPath = ("case", index)
    toml.check_keys(entry, where, _CASE_KEYS, CatalogueError)
    for key in ("id", "runs", "stored_gb"):
        if key not in entry:
            raise toml.error(where, f"[[case]] needs '{key}'", CatalogueError)
    requests = entry.get("requests_per_run", {})
    if not isinstance(requests, dict) or not all(
        isinstance(v, int) and v >= 0 for v in requests.values()
    ):
        raise toml.error(
            (*where, "requests_per_run"),
            "'requests_per_run' maps request kinds to counts",
            CatalogueError,
        )
    return Case(
        id=str(entry["id"]),
        label=str(entry.get("label", entry["id"])),
        runs=int(_number(toml, entry, (*where, "runs"), default=None)),
        stored_gb=_number(toml, entry, (*where, "stored_gb"), default=None),
        requests_per_run=dict(requests),
    )


def _list(toml: tomlfile.TomlFile, key: str) -> list[dict[str, Any]]:
    value = toml.data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise toml.error((key,), f"'{key}' entries are [[{key}]] tables", CatalogueError)
    return value


def _number(
    toml: tomlfile.TomlFile, table: Mapping[str, Any], where: tomlfile.KeyPath, default: Any
) -> float:
    key = str(where[-1])
    value = table.get(key, default)
    if value is None:
        raise toml.error(where[:-1], f"needs '{key}'", CatalogueError)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise toml.error(where, f"'{key}' must be a number >= 0, got {value!r}", CatalogueError)
    return float(value)


def render_scenario(table: ScenarioTable, fmt: str) -> str:
    """The what-if as Markdown (the study's layout), CSV or JSON."""
    labels = [c.label for c in table.cases]
    body = [*table.rows, *([table.compute] if table.compute else [])]

    def cell(c: Cell) -> str:
        text = format_money(c.amount, table.currency, table.digits)
        return f"{text} ({c.note})" if c.note else text

    if fmt == "json":
        return (
            json.dumps(
                {
                    "title": table.title,
                    "source": table.source,
                    "currency": table.currency,
                    "months": table.months,
                    "cases": [
                        {"id": c.id, "label": c.label, "runs": c.runs, "stored_gb": c.stored_gb}
                        for c in table.cases
                    ],
                    "rows": [
                        {
                            "label": label,
                            "cells": [
                                {
                                    "case": case.id,
                                    "amount": c.amount,
                                    "price": c.price.id if c.price else None,
                                }
                                for case, c in zip(table.cases, cells, strict=True)
                            ],
                        }
                        for label, cells in body
                    ],
                    "prices": [p.describe() for p in table.prices],
                },
                indent=2,
            )
            + "\n"
        )
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["", *labels])
        for label, cells in body:
            writer.writerow([label, *(f"{c.amount:.{table.digits}f}" for c in cells)])
        return out.getvalue()
    lines = [f"### {table.title}", ""]
    rows = [[label, *(cell(c) for c in cells)] for label, cells in body]
    lines += [markdown_table(["", *labels], rows, right_from=1), ""]
    lines += _comparisons(table)
    period = "a month" if table.months == 1 else f"{table.months:g} months"
    lines.append(f"Storage for {period}: reserved capacity whatever is used; pay-per-use for the")
    lines.append("data kept and the requests made.")
    if table.source:
        lines.append(f"Source: {table.source}")
    lines += [f"Price: {p.describe()}" for p in table.prices]
    lines.append("Note: list prices from the catalogue, to be checked before relying on them.")
    return "\n".join(lines) + "\n"


def _comparisons(table: ScenarioTable) -> list[str]:
    """The study's sentences as figures: each storage option against the first, and storage
    against compute, per case."""
    lines = []
    (first_label, first), *others = table.rows
    for label, cells in others:
        shares = ", ".join(
            f"{_share(c.amount, f.amount)} ({case.label})"
            for case, c, f in zip(table.cases, cells, first, strict=True)
        )
        lines.append(f"{label} costs {shares} of {first_label}.")
    if table.compute:
        compute_label, compute = table.compute
        for label, cells in table.rows:
            shares = ", ".join(
                f"{_share(c.amount, k.amount)} ({case.label})"
                for case, c, k in zip(table.cases, cells, compute, strict=True)
            )
            lines.append(f"{label} is {shares} of {compute_label}.")
    return [*lines, ""] if lines else []


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"

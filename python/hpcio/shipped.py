"""The suites and cost scenarios hpcio ships as package data (python/hpcio/suites,
python/hpcio/scenarios), found by name so that `hpcio suite run output` works from an
installed wheel as from a checkout."""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path

from hpcio.errors import SpecError

_HERE = Path(__file__).resolve().parent
SUITES = _HERE / "suites"
SCENARIOS = _HERE / "scenarios"


def names(directory: Path) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.toml"))


def find(given: str, directory: Path, what: str) -> str:
    """`given` when it is a file; else the shipped `what` of that name ("output" or
    "output.toml").

    Raises:
        SpecError: neither a file nor a shipped name (the shipped ones listed).
    """
    if os.path.exists(given) or os.sep in given:
        return given
    shipped = directory / (given if given.endswith(".toml") else f"{given}.toml")
    if shipped.is_file():
        return str(shipped)
    close = difflib.get_close_matches(given, names(directory), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"shipped: {', '.join(names(directory))}"
    raise SpecError(f"no {what} file '{given}' and no shipped {what} of that name; {hint}")


def about(path: Path, table: str) -> str:
    """A shipped file's one line: its [table]'s description (or title)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")).get(table, {})
    except (OSError, tomllib.TOMLDecodeError) as e:
        return f"(unreadable: {e})"
    return str(data.get("description") or data.get("title") or "")

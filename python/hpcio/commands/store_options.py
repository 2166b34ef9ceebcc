"""`--store-option KEY=VALUE`: object store settings on the command line, for every command that
reaches a target (a module of its own: `hpcio env` and `hpcio clean` take it without importing
what `hpcio run` needs)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio.errors import SpecError


def add_store_option_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="object store setting (object_store's keys, e.g. endpoint, region, allow_http; "
        "max_retries, retry_timeout_s); repeatable. Never printed or recorded, and passed to "
        "the ranks in their environment, not their command line; but your own command line is "
        "visible to every user of the node (ps): give secrets in the environment (AWS_*, "
        "AZURE_STORAGE_*, GOOGLE_*) instead",
    )


def store_options(pairs: Sequence[str]) -> dict[str, str]:
    """--store-option key=value pairs (after those the launching hpcio passed in the
    environment) as a dict; later ones win.

    Raises:
        SpecError: a pair without `=`, named by its position: its text may be a secret.
    """
    options = {}
    for number, pair in enumerate(pairs, start=1):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError(
                f"--store-option number {number} is not KEY=VALUE (it has no '='; its text is "
                "not shown, as it may hold a secret)"
            )
        options[key.strip()] = value
    # Imported here: the launcher brings the engine and numpy, which parsing needs not.
    from hpcio.runner import launch

    return {**launch.inherited_store_options(), **options}

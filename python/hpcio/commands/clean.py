"""`hpcio clean`: delete hpcio's own files or objects under a target's prefix, nothing else,
and abort the uploads that dead runs on this node left open there."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio import _engine
from hpcio.commands.run import add_store_option_argument, store_options
from hpcio.errors import TargetError
from hpcio.runner import journal
from hpcio.spec.target import TargetSpec

HELP = "delete hpcio's own files or objects under a target"

#: Every file or object hpcio creates starts with this (workloads' keys, see workloads/).
OWN_PREFIX = "hpcio-"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, help="file:///dir, s3://bucket/prefix, ...")
    add_store_option_argument(parser)
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    spec = TargetSpec.from_url(args.target, **store_options(args.store_option))
    try:
        target = _engine.Target(spec.url, options=dict(spec.options))
        keys = target.list(OWN_PREFIX)
        removed = 0 if args.dry_run else target.remove(keys)
        # Uploads that runs on this node left open and whose process is gone (the journal).
        aborted = [] if args.dry_run else journal.abort_abandoned(spec.url, spec.options)
    except (OSError, ValueError) as e:
        raise TargetError(f"clean {spec.url}: {e}") from None
    for key in aborted:
        print(f"aborted the incomplete upload of {key}")
    for key in keys:
        print(f"{'would delete' if args.dry_run else 'deleted'} {key}")
    print(
        f"hpcio clean: {len(keys) if args.dry_run else removed} of hpcio's objects under {spec.url}"
    )
    return 0

"""`hpcio clean`: delete hpcio's own files or objects under a target's prefix, nothing else,
and abort the multipart uploads of hpcio's objects that runs left open there."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio.commands.store_options import add_store_option_argument, store_options
from hpcio.runner.cleanup import clean_target
from hpcio.spec.target import parse_targets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        required=True,
        help="file:///dir, s3://bucket/prefix, ...; the several targets of a run, "
        "comma-separated as `hpcio run --target` takes them, are cleaned one after another",
    )
    add_store_option_argument(parser)
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    for spec in parse_targets(args.target, **store_options(args.store_option)):
        found = clean_target(spec, dry_run=args.dry_run)
        for key in found.uploads:
            print(f"{'would abort' if args.dry_run else 'aborted'} the incomplete upload of {key}")
        for key in found.journaled:
            print(f"aborted the incomplete upload of {key}")
        for key in found.keys:
            print(f"{'would delete' if args.dry_run else 'deleted'} {key}")
        count = len(found.keys) if args.dry_run else found.removed
        print(f"hpcio clean: {count} of hpcio's objects under {spec.shown}")
    return 0
